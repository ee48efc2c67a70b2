"""tile.load of a tensor whose pl.TensorView leaves part of it without data: the tile is valid
only over what the view leaves under the window (PyPTO's derivation), never past it."""

import pytest
from hypothesis import given, strategies as st

from ptoc.dtypes import DataType
from ptoc.errors import PtocError
import ptoc.language as pl
from ptoc.ir.nodes import Var
from ptoc.ir.types import ScalarType, TensorLayout, TensorType, TensorView
from ptoc.ops import make_call


def _tensor(valid_cols):
    view = TensorView((("valid_shape", (16, valid_cols)), ("stride", ()),
                       ("layout", TensorLayout.ND)))
    return Var("s", TensorType((16, 64), DataType.FP32, view=view))


@given(valid=st.integers(1, 64), col=st.integers(0, 48), width=st.sampled_from([8, 16]))
def test_constant_extents_give_the_part_of_the_window_the_view_covers(valid, col, width):
    expected = min(max(valid - col, 0), width)
    load = lambda: make_call("tile.load", (_tensor(valid), [0, col], [16, width]))  # noqa: E731
    if expected == 0:          # the window holds no data at all: refused, never garbage
        with pytest.raises(PtocError, match=r"valid only over .* holds no data"):
            load()
    else:
        view = load().type.view        # None: the tile is valid over its whole window
        assert (view.get("valid_shape") if view else (16, width)) == (16, expected)


def test_an_explicit_narrower_valid_shape_is_kept():
    n = Var("n", ScalarType(DataType.INDEX))
    load = make_call("tile.load", (_tensor(pl.dynamic("V").var), [0, 0], [16, 64], [16, n]))
    assert load.type.view.get("valid_shape") == (16, n)


def test_a_run_time_extent_at_offset_zero_spanning_the_axis_is_the_views_symbol():
    v = pl.dynamic("V").var
    load = make_call("tile.load", (_tensor(v), [0, 0], [16, 64]))
    assert load.type.view.get("valid_shape") == (16, v)
    assert load.args[3].items[1] is v        # printed explicitly, so the text parses back


def test_a_run_time_offset_into_a_run_time_extent_is_the_clamp_expression():
    v, col = pl.dynamic("V").var, Var("col", ScalarType(DataType.INDEX))
    load = make_call("tile.load", (_tensor(v), [0, col], [16, 16]))
    cols = load.type.view.get("valid_shape")[1]
    assert cols.op == "tile.min" and cols.args[1].value == 16        # min(max(V, col) - col, 16)
    assert cols.args[0].lhs.op == "tile.max" and cols.args[0].rhs is col
