"""Views of a tile on the PTOAS path (``pto.treshape``, ``pto.subview``): parsed, printed,
verified, and placed by PlanMemory at their source's bytes (the source stays alive while a
view is used), including a subview at a run-time row of a loop."""

import numpy as np
import pytest

from ptoc.errors import PtoError
from ptoc.pto import parse, print_module, verify
from ptoc.pto.planner import PlanMemoryError

from test_planner import T16, alloc, exp, kernel, load, plan, run, store

ROW = ("!pto.tile_buf<loc=vec, dtype=f32, rows={r}, cols={c}, v_row={r}, v_col={c}, "
       "blayout=row_major, slayout=none_box, fractal=512, pad=0>")
FLAT = ROW.format(r=1, c=1024)
QUARTER = ROW.format(r=4, c=64)
I32 = T16.replace("dtype=f32", "dtype=i32")


def treshape(src, dst, a=T16, b=FLAT):
    return f"  %{dst} = pto.treshape %{src} : {a} -> {b}\n"


def subview(src, dst, row, rows=4, a=T16, b=QUARTER, cols=64, col="%c0"):
    return f"  %{dst} = pto.subview %{src}[{row}, {col}] sizes [{rows}, {cols}] : {a} -> {b}\n"


def test_views_round_trip_and_verify():
    body = (alloc("a") + load("a") + treshape("a", "f") + treshape("a", "i", b=I32)
            + subview("a", "w", "%c1") + store("a"))
    module = parse(kernel(body))
    assert parse(print_module(module)) == module
    verify(module, "a2a3")


@pytest.mark.parametrize("view,message", [
    (subview("a", "w", "%c16"), "row offset 16 \\+ 4 is outside"),
    (subview("a", "w", "%c0", rows=2), "sizes \\[2, 64\\] differ"),
    (subview("a", "w", "%c0", b=QUARTER.replace("f32", "f16")), "element types must match"),
    (treshape("a", "f", b=ROW.format(r=1, c=2048)), "needs 8192 bytes"),
    (treshape("a", "f", b=T16.replace("loc=vec", "loc=mat")), "stays in its source's memory"),
])
def test_bad_views_are_rejected(view, message):
    with pytest.raises(PtoError, match=message):
        verify(parse(kernel(alloc("a") + load("a") + view + store("a"))), "a2a3")


def test_views_sit_in_their_source_and_keep_it_alive():
    # a's last direct use is the treshape; b is written while the view f is still read,
    # so b must not take a's bytes.
    body = (alloc("a") + load("a") + treshape("a", "f") + subview("a", "w", "%c1")
            + alloc("b") + exp("a", "b") + exp("w", "w", QUARTER) + store("b")
            + exp("f", "f", FLAT))
    planned, at = plan(kernel(body))
    assert at["f"] == at["a"] and at["w"] == at["a"] + 1 * 64 * 4
    assert abs(at["b"] - at["a"]) >= 4096


def test_a_subview_at_a_loop_row_gets_a_computed_address():
    body = (alloc("a") + load("a")
            + "  scf.for %i = %c0 to %c16 step %c16 {\n"
            + subview("a", "w", "%i") + exp("w", "w", QUARTER) + "  }\n" + store("a"))
    planned, at = plan(kernel(body))
    assert "w" not in at                            # a run-time address
    text = print_module(planned)
    assert "arith.muli" in text and "pto.subview" not in text
    x, y = run(planned)
    want = x.copy()
    want[:4] = np.exp(x[:4])
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_a_column_window_of_several_rows_is_refused():
    body = alloc("a") + load("a") + subview(
        "a", "w", "%c0", rows=4, cols=16, b=ROW.format(r=4, c=16), col="%c16") + store("a")
    with pytest.raises(PlanMemoryError, match="not one contiguous byte range"):
        plan(kernel(body))
