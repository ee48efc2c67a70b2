"""Tensor-level ops on pl.dynamic tensors: one compile runs every size, the tail block (a row
count that is not a multiple of the tile) included, exact against numpy; what padding holds
never reaches a result; what ptoc cannot lower is an error naming the tensor and the fix."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PtocError
from ptoc.ir.nodes import ForStmt

M = pl.dynamic("M")
T = 16


@pl.program
class WholeRows:
    """Whole-tensor ops over M rows of 1024 columns (ConvertTensorToTileOps chunks the run
    into blocks of rows; one 1024-column row block of 8 rows fits Vec four times over)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 1024], pl.FP32], b: pl.Tensor[[M, 1024], pl.FP32],
          out: pl.Out[pl.Tensor[[M, 1024], pl.FP32]]) -> pl.Tensor[[M, 1024], pl.FP32]:
        out[:] = pl.row_expand_sub(pl.add(pl.mul(a, b), a), pl.row_max(a))
        return out


def _sliced(tail: bool = True, clamp: bool = False):
    """PyPTO's way: static windows over the dynamic tensor, the tail's extent in valid_shape
    (``clamp``: PyPTO's clamp=True, which means the same; ``tail=False``: plain windows
    a[i:i + T], which assume M is a multiple of T)."""

    @pl.program
    class SlicedTail:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
            m = pl.tensor.dim(a, 0)
            for i in pl.range(0, m, T):
                if clamp:
                    x = pl.slice(a, [T, 64], [i, 0], clamp=True)
                elif tail:
                    x = pl.slice(a, [T, 64], [i, 0], valid_shape=[pl.min(m - i, T), 64])
                else:
                    x = a[i:i + T, :]
                out = pl.assemble(out, pl.row_expand_sub(pl.mul(x, x), pl.row_max(x)), [i, 0])
            return out

    return ir.compile(SlicedTail)


def _expected_whole(a, b):
    return a * b + a - a.max(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def whole_rows():
    return ir.compile(WholeRows)


@pytest.fixture(scope="module", params=["valid_shape", "clamp"])
def sliced_tail(request):
    return _sliced(clamp=request.param == "clamp")


def _inputs(m, cols, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, cols)).astype(np.float32) for _ in range(2))


def test_the_whole_tensor_run_is_one_loop_over_the_dynamic_rows(whole_rows):
    loops = [s for s in whole_rows.program.get_function("k").body.stmts if isinstance(s, ForStmt)]
    assert len(loops) == 1 and loops[0].stop is M.var and loops[0].step.value == 8


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 40), seed=st.integers(0, 3))
def test_whole_tensor_ops_run_every_row_count_exact(whole_rows, m, seed):
    a, b = _inputs(m, 1024, seed)
    out = np.full((m, 1024), 7.0, np.float32)
    whole_rows(a, b, out)
    np.testing.assert_array_equal(out, _expected_whole(a, b))


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 70), seed=st.integers(0, 3))
def test_sliced_windows_with_a_valid_tail_run_every_row_count_exact(sliced_tail, m, seed):
    a, _ = _inputs(m, 64, seed)
    out = np.zeros((m, 64), np.float32)
    sliced_tail(a, out)
    np.testing.assert_array_equal(out, a * a - a.max(axis=1, keepdims=True))


def test_plain_windows_past_the_rows_are_an_error_naming_m_never_padding():
    compiled = _sliced(tail=False)
    a, _ = _inputs(40, 64, 0)
    with pytest.raises(PtocError, match=r"M = 40"):
        compiled(a, np.zeros((40, 64), np.float32))
    a, _ = _inputs(48, 64, 0)
    compiled(a, out := np.zeros((48, 64), np.float32))     # a multiple of T: fine
    np.testing.assert_array_equal(out, a * a - a.max(axis=1, keepdims=True))


VALID = pl.dynamic("VALID")


@pl.program
class SliceWithValid:
    """A kernel slicing a static tensor with a run-time valid_shape, then a tensor-level row
    max: the window past the valid columns holds padding the max must not see."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        s = pl.slice(x, [16, 64], [0, 0], valid_shape=[16, n])
        out[:] = pl.row_max(s)
        return out


@settings(max_examples=6, deadline=None)
@given(n=st.integers(1, 63))
def test_a_tensor_op_on_a_slice_with_valid_shape_reads_only_the_valid_part(n):
    x = np.random.default_rng(n).standard_normal((16, 64)).astype(np.float32)
    x[:, n:] = 1e6                     # the full window's max before the fix
    out = np.zeros((16, 1), np.float32)
    ir.compile(SliceWithValid)(x, n, out)
    np.testing.assert_array_equal(out[:, 0], x[:, :n].max(axis=1))


@pl.program
class SliceOfATail:
    """32-row windows of M rows (the last one a tail), each cut into 16-row windows whose
    columns are narrowed to n: the inner slices' valid region composes, rows
    clamp(valid - j, 0, 16) of the outer tail, columns min(n, 64)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        m = pl.tensor.dim(a, 0)
        for i in pl.range(0, m, 32):
            x = pl.slice(a, [32, 64], [i, 0], valid_shape=[pl.min(m - i, 32), 64])
            for j in pl.range(0, pl.min(m - i, 32), 16):
                y = pl.slice(x, [16, 64], [j, 0], valid_shape=[16, n])
                out = pl.assemble(out, pl.row_expand_sub(pl.mul(y, y), pl.row_max(y)), [i + j, 0])
        return out


@pytest.fixture(scope="module")
def slice_of_a_tail():
    return ir.compile(SliceOfATail)


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 300), n=st.integers(1, 64))
def test_a_slice_of_a_tail_slice_is_valid_where_both_are(slice_of_a_tail, m, n):
    """Columns past n hold 1e6 (a row max over them shows); rows past the tail would be
    read or written past M (an error); rows short of it would keep the 7.0 fill."""
    a = np.random.default_rng(m).standard_normal((m, 64)).astype(np.float32)
    a[:, n:] = 1e6
    out = np.full((m, 64), 7.0, np.float32)
    result = slice_of_a_tail.run(a, n, out)
    assert result.races == []
    want = out.copy()
    want[:, :n] = a[:, :n] * a[:, :n] - a[:, :n].max(axis=1, keepdims=True)
    np.testing.assert_array_equal(out, want)


@pl.program
class ColumnReductions:
    """Column reductions over M rows: reduced in row blocks, the blocks combined; the tail
    block's tile still holds the previous block's rows past its valid ones."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 64], pl.FP32], s: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
          hi: pl.Out[pl.Tensor[[1, 64], pl.FP32]], lo: pl.Out[pl.Tensor[[1, 64], pl.FP32]]
          ) -> tuple[pl.Tensor[[1, 64], pl.FP32], pl.Tensor[[1, 64], pl.FP32],
                     pl.Tensor[[1, 64], pl.FP32]]:
        s[:] = pl.col_sum(a)
        hi[:] = pl.mul(pl.col_max(a), 2.0)
        lo[:] = pl.col_min(a)
        return s, hi, lo


@pytest.fixture(scope="module")
def column_reductions():
    return ir.compile(ColumnReductions)


@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 600), order=st.sampled_from(["random", "falling", "rising"]))
def test_column_reductions_over_dynamic_rows_run_every_row_count_exact(column_reductions, m,
                                                                        order):
    """Integer-valued data whose column sums stay below 2**24, so block sums are exact;
    'falling'/'rising' rows put the extreme values in the rows a tail block's padding still
    holds from the block before."""
    rng = np.random.default_rng(m)
    a = rng.integers(-50, 50, (m, 64)).astype(np.float32)
    if order != "random":
        a += (np.arange(m, 0, -1) if order == "falling" else np.arange(m))[:, None] * 20
    outs = [np.full((1, 64), 7.0, np.float32) for _ in range(3)]
    result = column_reductions.run(a, *outs)
    assert result.races == []
    for got, want in zip(outs, (a.sum(0), 2 * a.max(0), a.min(0))):
        np.testing.assert_array_equal(got[0], want)


@pl.program
class ArgReductions:
    """Arg reductions over M rows: column ones reduced in row blocks (the block's index
    offset by its first row, the earlier block winning a tie), row ones row by row."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 64], pl.FP32], hi: pl.Out[pl.Tensor[[1, 64], pl.INT32]],
          lo: pl.Out[pl.Tensor[[1, 64], pl.INT32]], r: pl.Out[pl.Tensor[[M, 1], pl.INT32]]
          ) -> tuple[pl.Tensor[[1, 64], pl.INT32], pl.Tensor[[1, 64], pl.INT32],
                     pl.Tensor[[M, 1], pl.INT32]]:
        hi[:] = pl.col_argmax(a)
        lo[:] = pl.col_argmin(a)
        r[:] = pl.row_argmax(a)
        return hi, lo, r


@pytest.fixture(scope="module")
def arg_reductions():
    return ir.compile(ArgReductions)


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 600), order=st.sampled_from(["ties", "falling", "rising"]))
def test_arg_reductions_over_dynamic_rows_give_the_first_global_index(arg_reductions, m, order):
    """'ties': values from a handful, so most columns repeat their extreme across blocks
    (the first row must win); 'falling'/'rising' put the extremes in the first rows or in
    the tail, whose padding still holds the larger (smaller) rows of the block before."""
    rng = np.random.default_rng(m)
    a = rng.integers(-3, 3, (m, 64)).astype(np.float32)
    if order != "ties":
        a += (np.arange(m, 0, -1) if order == "falling" else np.arange(m))[:, None] * 8
    outs = [np.full((1, 64), 7, np.int32), np.full((1, 64), 7, np.int32),
            np.full((m, 1), 7, np.int32)]
    result = arg_reductions.run(a, *outs)
    assert result.races == []
    np.testing.assert_array_equal(outs[0][0], a.argmax(axis=0))
    np.testing.assert_array_equal(outs[1][0], a.argmin(axis=0))
    np.testing.assert_array_equal(outs[2][:, 0], a.argmax(axis=1))


def test_a_row_block_value_used_after_its_run_is_refused_naming_the_tensor():
    @pl.program
    class ReusedBlock:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]],
              s: pl.Out[pl.Tensor[[1, 64], pl.FP32]]
              ) -> tuple[pl.Tensor[[M, 64], pl.FP32], pl.Tensor[[1, 64], pl.FP32]]:
            t = pl.add(a, a)
            out[:] = t
            s[:] = pl.col_sum(t)
            return out, s

    with pytest.raises(PtocError, match=r"tensor '.*' has a dynamic shape \[M, 64\].*fix: work "
                                        r"on static windows"):
        ir.compile(ReusedBlock)


@pytest.mark.parametrize("rows, kwargs, valid", [
    ("40", "clamp=True", "[8, 64]"),                      # constant: 40 - 32 rows are left
    ("M", "clamp=True", "[pl.tile.min(M - 32, 16), 64]"),  # run-time: the tail's extent
])
def test_clamp_is_stored_as_the_valid_shape_it_means(rows, kwargs, valid):
    program = pl.parse_program(CLAMPED.format(rows=rows, kwargs=kwargs))
    text = program.as_python()
    assert "clamp" not in text and f"pl.tensor.slice(a, [16, 64], [32, 0], {valid})" in text


def test_clamp_with_a_valid_shape_too_is_refused():
    with pytest.raises(PtocError, match=r"valid_shape= or clamp=True, not both"):
        pl.parse_program(CLAMPED.format(rows="40", kwargs="valid_shape=[4, 64], clamp=True"))


CLAMPED = """import ptoc.language as pl

M = pl.dynamic("M")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{rows}, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        x = pl.slice(a, [16, 64], [32, 0], {kwargs})
        out = pl.assemble(out, pl.mul(x, x), [0, 0])
        return out
"""
