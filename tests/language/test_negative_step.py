"""``pl.range(start, stop, -s)`` counts down as in PyPTO (start, start - s, ... while > stop):
parsed into an upward count with the index computed first in the body, so the PTO loop
steps upwards; constant and run-time bounds, every loop kind."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir

SOURCE = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[128, 64], pl.FP32], first: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        acc = pl.tile.full([16, 64], dtype=pl.FP32, value=0.0)
        for i in pl.{kind}({start}, {stop}, -{step}):
            acc = pl.add(pl.mul(acc, 2.0), pl.load(a, [i * 16, 0], [16, 64]))
        out = pl.store(acc, [0, 0], out)
        return out
"""


def _expected(a, start, stop, step):
    acc = np.zeros((16, 64), np.float32)
    for i in range(start, stop, -step):
        acc = acc * np.float32(2.0) + a[i * 16:(i + 1) * 16]
    return acc


@settings(max_examples=6, deadline=None)
@given(start=st.integers(0, 7), stop=st.integers(-1, 7), step=st.integers(1, 3),
       dynamic=st.booleans())
def test_a_loop_with_a_negative_step_counts_down(start, stop, step, dynamic):
    """stop >= -1: the loop loads rows i * 16, so it must not visit i = -1."""
    source = SOURCE.format(kind="range", start="first" if dynamic else start, stop=stop, step=step)
    a = np.random.default_rng(start * 31 + stop + 2).integers(-4, 4, (128, 64)).astype(np.float32)
    out = np.full((16, 64), np.nan, np.float32)
    ir.compile(pl.parse(source)).run(a, start, out)
    np.testing.assert_array_equal(out, _expected(a, start, stop, step))


@pytest.mark.parametrize("kind", ["unroll", "pipeline"])
def test_other_loop_kinds_count_down_too(kind):
    source = SOURCE.format(kind=kind, start=7, stop=0, step=2)
    if kind == "pipeline":
        source = source.replace("-2):", "-2, stage=2):")
    a = np.random.default_rng(4).integers(-4, 4, (128, 64)).astype(np.float32)
    out = np.zeros((16, 64), np.float32)
    ir.compile(pl.parse(source)).run(a, 0, out)
    np.testing.assert_array_equal(out, _expected(a, 7, 0, 2))
