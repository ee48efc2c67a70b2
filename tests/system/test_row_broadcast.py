"""Tensor-level add/sub/mul/div with one [M, 1] operand broadcast it across each row (PyPTO's
tensor ops do; they lower to row_expand_<op>), exact against numpy; an [M, 1] left operand
of sub/div is refused with the rewrite."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PtocError

N = 128


def _program(rows: int):
    @pl.program
    class RowBroadcast:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[rows, N], pl.FP32], v: pl.Tensor[[rows, 1], pl.FP32],
              d: pl.Out[pl.Tensor[[rows, N], pl.FP32]], s: pl.Out[pl.Tensor[[rows, N], pl.FP32]]
              ) -> tuple[pl.Tensor[[rows, N], pl.FP32], pl.Tensor[[rows, N], pl.FP32]]:
            d[:] = pl.div(pl.sub(x, v), v)
            s[:] = pl.mul(v, x + v) - pl.add(v, x)
            return d, s

    return RowBroadcast


@settings(max_examples=4, deadline=None)
@given(rows=st.sampled_from([8, 16, 64]), seed=st.integers(0, 2**16))
def test_a_column_operand_is_broadcast_across_each_row(rows, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, N)).astype(np.float32)
    v = (rng.random((rows, 1)) + 0.5).astype(np.float32)
    d, s = np.zeros_like(x), np.zeros_like(x)
    ir.compile(_program(rows)).run(x, v, d, s)
    np.testing.assert_array_equal(d, (x - v) / v)
    np.testing.assert_array_equal(s, v * (x + v) - (v + x))


@pytest.mark.parametrize("op, fix", [("sub", "pl.neg(pl.row_expand_sub(rhs, lhs))"),
                                     ("div", "pl.row_expand_mul(pl.recip(rhs), lhs)")])
def test_a_column_left_operand_of_sub_or_div_is_refused(op, fix):
    source = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, {N}], pl.FP32], v: pl.Tensor[[16, 1], pl.FP32],
          o: pl.Out[pl.Tensor[[16, {N}], pl.FP32]]) -> pl.Tensor[[16, {N}], pl.FP32]:
        o[:] = pl.{op}(v, x)
        return o
"""
    with pytest.raises(PtocError, match=r"\[M, 1\] tensor \[16, 1\]") as info:
        pl.parse(source)
    assert fix in str(info.value)


def test_an_error_in_the_broadcast_op_names_the_op_the_user_wrote():
    source = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, {N}], pl.FP32], v: pl.Tensor[[16, 1], pl.FP16],
          o: pl.Out[pl.Tensor[[16, {N}], pl.FP32]]) -> pl.Tensor[[16, {N}], pl.FP32]:
        o[:] = pl.div(x, v)
        return o
"""
    with pytest.raises(PtocError, match=r"^.*pl\.div with an \[M, 1\] operand .*different dtypes"):
        pl.parse(source)
