"""IR tile types -> ``!pto.tile_buf``: layouts per memory space, TileView overrides, padding."""

from __future__ import annotations

import pytest

from ptoc.codegen import CodegenError
from ptoc.codegen.tile_types import tile_buf_type, valid_shape
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtoError
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


def test_single_column_vec_tiles_are_dn_column_vectors():
    t = tile_buf_type(TileType((16, 1), F32, M.Vec), "t")
    assert (t.rows, t.cols, t.blayout, t.slayout) == (16, 1, "col_major", "none_box")
    assert tile_buf_type(TileType((16, 16), BF16, M.Vec), "t").blayout == "row_major"
    assert tile_buf_type(TileType((64,), F32, M.Vec), "t").shape == (1, 64)  # 1-D is one row


def test_vec_rows_narrower_than_32_bytes_are_rejected_with_the_fix():
    with pytest.raises(CodegenError, match=r"16x4 f32.*16 bytes") as info:
        tile_buf_type(TileType((16, 4), F32, M.Vec), "'t'")
    assert "[16, 8]" in info.value.hint and "valid_shape=[16, 4]" in info.value.hint
    assert tile_buf_type(TileType((16, 4), F32, M.Acc), "t").cols == 4  # only Vec rows


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


def test_pto_verifier_accepts_dn_column_vectors_it_can_address():
    """The (small) rule codegen needed in ptoc.pto.verify: a col_major [N, 1] Vec tile is one
    contiguous column, so its *column* must be 32-byte aligned, not its 4-byte row."""
    import ptoc.pto as pto

    def kernel(rows: int) -> str:
        t = (f"!pto.tile_buf<loc=vec, dtype=f32, rows={rows}, cols=1, v_row=?, v_col=?, "
             "blayout=col_major, slayout=none_box, fractal=512, pad=0>")
        return ('module attributes {pto.target_arch = "a2a3"} {\n'
                "  func.func @k() attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
                "  %c0_i64 = arith.constant 0 : i64\n"
                f"  %c{rows}_index = arith.constant {rows} : index\n"
                "  %c1_index = arith.constant 1 : index\n"
                f"  %t = pto.alloc_tile addr = %c0_i64 valid_row = %c{rows}_index "
                f"valid_col = %c1_index : {t}\n  return\n  }}\n}}\n")

    pto.verify(pto.parse(kernel(16)))
    with pytest.raises(PtoError, match="column of 12 f32 is 48 bytes"):
        pto.verify(pto.parse(kernel(12)))
