"""Small windows over pl.dynamic tensors: a few rows or columns at a time, the last window
partly out of range (valid only over what exists), exact against numpy; a window whose rows
are narrower than a Vec tile's 32-byte row is refused with the slice to write instead."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PtocError

M = pl.dynamic("M")
N = pl.dynamic("N")


@pl.program
class TwoRowWindows:
    """[2, 8] FP32 windows down M rows (one 32-byte row each; an odd M ends on one row)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 8], pl.FP32],
          out: pl.Out[pl.Tensor[[M, 8], pl.FP32]]) -> pl.Tensor[[M, 8], pl.FP32]:
        m = pl.tensor.dim(a, 0)
        for i in pl.range(0, m, 2):
            x = pl.slice(a, [2, 8], [i, 0], clamp=True)
            out = pl.assemble(out, pl.row_expand_sub(pl.add(x, x), pl.row_max(x)), [i, 0])
        return out


@pl.program
class HalfRowWindows:
    """[2, 8] FP16 windows are 16-byte rows: written as [2, 16] windows valid over 8 columns
    (the window reaches past the tensor's 8 columns; only valid ones are read and written)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 8], pl.FP16],
          out: pl.Out[pl.Tensor[[M, 8], pl.FP16]]) -> pl.Tensor[[M, 8], pl.FP16]:
        m = pl.tensor.dim(a, 0)
        for i in pl.range(0, m, 2):
            x = pl.slice(a, [2, 16], [i, 0], valid_shape=[pl.min(m - i, 2), 8])
            out = pl.assemble(out, pl.row_expand_sub(pl.add(x, x), pl.row_max(x)), [i, 0])
        return out


@pl.program
class ColumnWindows:
    """[2, 8] windows across N columns (the last one partly past the end) and a row max
    carried over [4, 8] column windows: rising columns put each row's max in the tail."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, N], pl.FP32], out: pl.Out[pl.Tensor[[4, N], pl.FP32]],
          mx: pl.Out[pl.Tensor[[4, 1], pl.FP32]]
          ) -> tuple[pl.Tensor[[4, N], pl.FP32], pl.Tensor[[4, 1], pl.FP32]]:
        n = pl.tensor.dim(a, 1)
        acc = pl.row_max(pl.slice(a, [4, 8], [0, 0], clamp=True))
        for j in pl.range(0, n, 8):
            for r in pl.range(0, 4, 2):
                x = pl.slice(a, [2, 8], [r, j], clamp=True)
                out = pl.assemble(out, pl.add(pl.mul(x, x), 1.0), [r, j])
        for j in pl.range(8, n, 8):
            acc = pl.maximum(acc, pl.row_max(pl.slice(a, [4, 8], [0, j], clamp=True)))
        mx[:] = acc
        return out, mx


@pytest.fixture(scope="module")
def compiled():
    return {name: ir.compile(p) for name, p in (("two_rows", TwoRowWindows),
                                                 ("half_rows", HalfRowWindows),
                                                 ("columns", ColumnWindows))}


def _data(shape, dtype, seed):
    return np.random.default_rng(seed).integers(-8, 8, shape).astype(dtype)


@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 200), which=st.sampled_from(["two_rows", "half_rows"]))
def test_two_row_windows_run_every_row_count_exact(compiled, m, which):
    dtype = np.float32 if which == "two_rows" else np.float16
    a = _data((m, 8), dtype, m)
    out = np.full((m, 8), 7.0, dtype)
    result = compiled[which].run(a, out)
    assert result.races == []
    np.testing.assert_array_equal(out, (a + a - a.max(axis=1, keepdims=True)).astype(dtype))


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 200))
def test_column_windows_run_every_column_count_exact(compiled, n):
    a = _data((4, n), np.float32, n) + np.arange(n, dtype=np.float32)
    out = np.full((4, n), 7.0, np.float32)
    mx = np.zeros((4, 1), np.float32)
    result = compiled["columns"].run(a, out, mx)
    assert result.races == []
    np.testing.assert_array_equal(out, a * a + 1)
    np.testing.assert_array_equal(mx[:, 0], a.max(axis=1))


def test_a_window_of_16_byte_rows_is_refused_naming_the_slice_to_write():
    @pl.program
    class Narrow:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 8], pl.FP16],
              out: pl.Out[pl.Tensor[[M, 8], pl.FP16]]) -> pl.Tensor[[M, 8], pl.FP16]:
            m = pl.tensor.dim(a, 0)
            for i in pl.range(0, m, 2):
                x = pl.slice(a, [2, 8], [i, 0], clamp=True)
                out = pl.assemble(out, pl.add(x, x), [i, 0])
            return out

    with pytest.raises(PtocError, match=r"2x8 f16: its rows are 16 bytes.*32 bytes.*"
                                        r"slice \[2, 16\] windows with valid_shape=\[rows, 8\]"):
        ir.compile(Narrow)
