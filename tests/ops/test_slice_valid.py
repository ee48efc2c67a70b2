"""tensor.slice of a partly valid tensor: the window is valid over what its source holds under
it, clamp(valid - offset, 0, window), narrowed further by a requested valid_shape (the exact
run-time min, not the request taken on trust)."""

from hypothesis import given, strategies as st

from ptoc.dtypes import DataType
from ptoc.ir.nodes import Call, Var
from ptoc.ir.types import ScalarType, TensorLayout, TensorType, TensorView
from ptoc.ops import make_call


def _view(rows, cols=64):
    view = TensorView((("valid_shape", (rows, cols)), ("stride", ()), ("layout", TensorLayout.ND)))
    return Var("v", TensorType((64, 64), DataType.FP32, view=view))


def _valid(call):
    view = call.type.view
    return tuple(view.valid_shape) if view is not None else None


def _index(name):
    return Var(name, ScalarType(DataType.INDEX))


@given(valid=st.integers(1, 64), row=st.integers(0, 48), request=st.integers(1, 16))
def test_constant_extents_compose(valid, row, request):
    slice_ = make_call("tensor.slice", (_view(valid), [16, 64], [row, 0], [request, 64]))
    assert _valid(slice_) == (min(request, max(valid - row, 0)), 64)


def test_a_fully_valid_source_keeps_the_request_or_no_view():
    x = Var("x", TensorType((64, 64), DataType.FP32))
    n = _index("n")
    assert _valid(make_call("tensor.slice", (x, [16, 64], [16, 0]))) is None
    assert _valid(make_call("tensor.slice", (x, [16, 64], [16, 0], [16, n]))) == (16, n)


def test_a_run_time_extent_and_offset_give_the_clamp_expression_and_the_min_with_a_request():
    n, j, k = _index("n"), _index("j"), _index("k")
    rows = _valid(make_call("tensor.slice", (_view(n), [16, 64], [j, 0])))[0]
    assert isinstance(rows, Call) and rows.op == "tile.min"        # min(max(n, j) - j, 16)
    assert rows.args[1].value == 16 and rows.args[0].lhs.op == "tile.max"
    both = _valid(make_call("tensor.slice", (_view(n), [16, 64], [j, 0], [k, 64])))[0]
    assert both.op == "tile.min" and both.args[0] is k               # min(k, clamp(...))
    at_zero = _valid(make_call("tensor.slice", (_view(n), [16, 64], [0, 0])))[0]
    assert at_zero.op == "tile.min" and at_zero.args[0] is n       # min(n, 16)
