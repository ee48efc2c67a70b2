"""InlineFunctions: Inline helpers spliced into their call sites (Before / Expected), their
errors, and the numbers of a program that uses one twice."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.dtypes import DataType, FunctionType
from ptoc.errors import PassError
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import BinOp, ConstInt, ReturnStmt, SeqStmts
from ptoc.passes import PassContext, PassManager
from ptoc.passes.inline_functions import inline_functions
from ptoc.runtime import run

T = "pl.Tensor[[16, 64], pl.FP32]"
HEAD = "import ptoc.language as pl\n\n@pl.program\nclass P:\n"


def inlined(src: str):
    with PassContext():
        return inline_functions()(pl.parse_program(src))


TWICE = HEAD + f"""    @pl.function(type=pl.FunctionType.Inline)
    def bump(self, a: {T}, c: pl.Out[{T}]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 64])
            pl.store(pl.add(t, 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        tmp = pl.create_tensor([16, 64], dtype=pl.FP32)
        tmp = self.bump(a, tmp)
        out = self.bump(tmp, out)
        return out
"""

TWICE_EXPECTED = HEAD + f"""    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        tmp = pl.create_tensor([16, 64], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 64])
            pl.store(pl.add(t, 1.0), [0, 0], tmp)
        with pl.at(level=pl.Level.CORE_GROUP):
            t2 = pl.load(tmp, [0, 0], [16, 64])
            pl.store(pl.add(t2, 1.0), [0, 0], out)
        return out
"""


def test_each_call_site_gets_its_own_copy_of_the_body():
    assert_structural_equal(inlined(TWICE), pl.parse_program(TWICE_EXPECTED))


def test_a_program_using_an_inline_helper_twice_computes_both_steps():
    a = np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32)
    out = np.zeros_like(a)
    run(pl.parse_program(TWICE), a, out)
    np.testing.assert_allclose(out, a + 2.0, rtol=1e-6)


NESTED = HEAD + """    @pl.function(type=pl.FunctionType.Inline)
    def pair(self, x: pl.Scalar[pl.INT32]):
        y = x * 2
        z = x + 3
        return y, z

    @pl.function(type=pl.FunctionType.Inline)
    def outer(self, x: pl.Scalar[pl.INT32]):
        p, q = self.pair(x)
        return p + q

    @pl.function(type=pl.FunctionType.InCore)
    def main(self, n: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        r = self.outer(n + 1)
        return r
"""

NESTED_EXPECTED = HEAD + """    @pl.function(type=pl.FunctionType.InCore)
    def main(self, n: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        y = (n + 1) * 2
        z = n + 1 + 3
        return y + z
"""


def test_inline_calling_inline_and_tuple_results_are_expanded_callee_first():
    result = inlined(NESTED)
    assert [fn.func_type for fn in result.functions] == [FunctionType.InCore]
    assert_structural_equal(result, pl.parse_program(NESTED_EXPECTED))


def test_a_program_without_inline_functions_is_returned_unchanged():
    program = pl.parse_program(TWICE_EXPECTED)
    with PassContext():
        assert inline_functions()(program) is program


def test_inline_functions_is_the_first_pass_of_the_pipeline():
    assert PassManager.get_strategy().passes[0].name == "InlineFunctions"


CYCLE = HEAD + """    @pl.function(type=pl.FunctionType.Inline)
    def ping(self, x: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        y = self.pong(x)
        return y

    @pl.function(type=pl.FunctionType.Inline)
    def pong(self, x: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        y = self.ping(x)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def main(self, n: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        r = self.ping(n)
        return r
"""


def test_a_cycle_of_inline_functions_is_an_error_naming_it():
    with pytest.raises(PassError, match=r"cycle \(ping -> pong -> ping\)"):
        inlined(CYCLE)


def test_a_call_inside_an_expression_is_refused_not_left_behind():
    # the parser hoists calls into statements; IR built by hand can still nest one
    program = pl.parse_program(NESTED)
    main = program.functions["main"]
    call = main.body.stmts[0].value
    body = SeqStmts((ReturnStmt((BinOp("+", call, ConstInt(1, DataType.INT32)),)),))
    nested = replace(program, functions=tuple(
        replace(fn, body=body) if fn is main else fn for fn in program.functions))
    with pytest.raises(PassError, match="'outer' is called inside an expression"):
        with PassContext():
            inline_functions()(nested)


def test_a_return_inside_a_branch_is_refused():
    src = HEAD + """    @pl.function(type=pl.FunctionType.Inline)
    def pick(self, x: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        if x > 0:
            return x
        return x + 1

    @pl.function(type=pl.FunctionType.InCore)
    def main(self, n: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        r = self.pick(n)
        return r
"""
    program = pl.parse_program(src)
    with pytest.raises(PassError, match="returns from inside a loop, branch or scope"):
        with PassContext():
            inline_functions()(program)
