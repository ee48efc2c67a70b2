"""IR tile types -> ``!pto.tile_buf``: layouts per memory space, TileView overrides, padding."""

from __future__ import annotations

import pytest

from ptoc.codegen import CodegenError
from ptoc.codegen.tile_types import padded_tile_bytes, tile_buf_type, valid_shape
from ptoc.dtypes import DataType, MemorySpace
from ptoc.ir.nodes import ConstInt
from ptoc.ir.types import TileLayout, TileType, TileView

M = MemorySpace
F32, BF16 = DataType.FP32, DataType.BF16


@pytest.mark.parametrize("space, blayout, slayout, fractal", [
    (M.Mat, "col_major", "row_major", 512),
    (M.Left, "row_major", "row_major", 512),
    (M.Right, "row_major", "col_major", 512),
    (M.Acc, "col_major", "row_major", 1024),
    (M.Vec, "row_major", "none_box", 512),
    (M.Bias, "row_major", "none_box", 512),
])
def test_default_layout_per_space(space, blayout, slayout, fractal):
    t = tile_buf_type(TileType((32, 64), F32, space), "t")
    assert (t.blayout, t.slayout, t.fractal, t.pad) == (blayout, slayout, fractal, 0)
    assert (t.rows, t.cols, t.v_row, t.v_col) == (32, 64, None, None)
    assert t.loc is space and t.dtype is F32


def test_tile_view_overrides_the_defaults():
    view = TileView((("blayout", TileLayout.col_major), ("slayout", TileLayout.none_box)))
    t = tile_buf_type(TileType((16, 64), BF16, M.Left, view=view), "t")
    assert (t.blayout, t.slayout) == ("col_major", "none_box")


def test_vec_rows_are_padded_to_32_bytes_and_others_are_not():
    t = tile_buf_type(TileType((16, 1), F32, M.Vec), "t")
    assert (t.rows, t.cols) == (16, 8)
    assert padded_tile_bytes(TileType((16, 1), F32, M.Vec)) == 512
    assert tile_buf_type(TileType((16, 4), BF16, M.Vec), "t").cols == 16
    assert tile_buf_type(TileType((16, 16), F32, M.Acc), "t").cols == 16
    assert tile_buf_type(TileType((64,), F32, M.Vec), "t").shape == (1, 64)  # 1-D is one row


def test_valid_shape_sources():
    ty = TileType((16, 64), F32, M.Vec)
    assert valid_shape(ty) == (16, 64)
    assert valid_shape(ty, (10, 64)) == (10, 64)
    view = TileView((("valid_shape", (ConstInt(3), 64)),))
    assert valid_shape(TileType((16, 64), F32, M.Vec, view=view), (10, 64))[1] == 64


@pytest.mark.parametrize("ty, words", [
    (TileType((16, 64), F32, None), "no on-chip memory space"),
    (TileType((16, 64), F32, M.DDR), "no on-chip memory space"),
    (TileType((2, 16, 64), F32, M.Vec), "2-D"),
])
def test_unlowerable_tile_types(ty, words):
    with pytest.raises(CodegenError, match=words):
        tile_buf_type(ty, "'t'")
