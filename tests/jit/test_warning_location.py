"""A warning from a run names the user's line, not a frame inside ptoc, however many ptoc
frames lie between (a @pl.jit call goes through the decorator and the compiled program)."""

import warnings

import numpy as np

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import UnwrittenReadWarning

import jit_kernels as kernels


def _caught(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, UnwrittenReadWarning)]


def test_a_jit_call_warns_at_the_callers_line():
    bias = np.zeros((64, 64), np.float32)
    y = np.zeros((64, 64), np.float32)
    found = _caught(lambda: kernels.relu_of_unwritten(bias, y))
    assert len(found) == 1 and found[0].filename == __file__, \
        [(w.filename, w.lineno) for w in found]


def test_compiled_run_and_call_warn_at_the_callers_line():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, t: pl.Tensor[[16, 64], pl.FP32], o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
              ) -> pl.Tensor[[16, 64], pl.FP32]:
            o[:] = pl.add(t, t)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            t = pl.create_tensor([16, 64], dtype=pl.FP32)
            o = self.k(t, o)
            return o

    compiled = ir.compile(P, None)
    o = np.zeros((16, 64), np.float32)
    for call in (lambda: compiled.run(o), lambda: compiled(o)):
        found = _caught(call)
        assert len(found) == 1 and found[0].filename == __file__
