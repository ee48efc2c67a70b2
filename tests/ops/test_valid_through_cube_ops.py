"""A partly valid tile keeps its valid region through the cube data path, as PyPTO infers it:
tile.move keeps it, tile.extract reads clamp(valid - offset, 0, window) of it, and a matmul's
result is valid over lhs's valid rows by rhs's valid columns (so a tail block's store writes
only its rows)."""

from hypothesis import given, strategies as st

from ptoc.dtypes import DataType, MemorySpace as Mem
from ptoc.ir.nodes import Call, ConstInt, Var
from ptoc.ir.types import ScalarType, TileType, TileView
from ptoc.ops import make_call
from ptoc.ops.checks import valid_of


def _tile(shape, valid, space=Mem.Mat, dtype=DataType.FP16):
    view = TileView((("valid_shape", tuple(valid)),)) if valid is not None else None
    return Var("t", TileType(tuple(shape), dtype, space, view=view))


def _valid(call):
    return valid_of(call.type) or tuple(call.type.shape)


@given(rows=st.integers(1, 64), off=st.sampled_from([0, 16, 32, 48]))
def test_extract_reads_the_valid_part_of_its_window(rows, off):
    src = _tile((64, 32), (rows, 32))
    ext = make_call("tile.extract", (src, ConstInt(off), ConstInt(0), [16, 32]),
                    {"target_memory": Mem.Left})
    assert _valid(ext) == (max(0, min(rows - off, 16)), 32)


def test_extract_of_a_run_time_extent():
    n = Var("n", ScalarType(DataType.INDEX))
    src = _tile((64, 32), (n, 32))
    at_zero = make_call("tile.extract", (src, ConstInt(0), ConstInt(0), [16, 32]),
                        {"target_memory": Mem.Left})
    rows = _valid(at_zero)[0]
    assert isinstance(rows, Call) and rows.op == "tile.min" and rows.args[0] is n
    whole = make_call("tile.extract", (src, ConstInt(0), ConstInt(0), [64, 32]),
                      {"target_memory": Mem.Left})
    assert _valid(whole) == (n, 32)
    later = make_call("tile.extract", (src, ConstInt(16), ConstInt(0), [16, 32]),
                      {"target_memory": Mem.Left})
    rows = _valid(later)[0]        # min(max(n, 16) - 16, 16)
    assert rows.op == "tile.min" and rows.args[0].lhs.op == "tile.max"


def test_move_keeps_the_valid_region_and_matmul_takes_lhs_rows_by_rhs_cols():
    n = Var("n", ScalarType(DataType.INDEX))
    lhs = make_call("tile.move", (_tile((16, 64), (n, 64)),), {"target_memory": Mem.Left})
    assert _valid(lhs) == (n, 64)
    rhs = make_call("tile.move", (_tile((64, 32), (64, 20)),), {"target_memory": Mem.Right})
    a, b = Var("a", lhs.type), Var("b", rhs.type)
    assert _valid(make_call("tile.matmul", (a, b))) == (n, 20)
    full = Var("f", TileType((64, 32), DataType.FP16, Mem.Right))
    assert _valid(make_call("tile.matmul", (a, full))) == (n, 32)
