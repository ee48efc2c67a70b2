"""Views of a tile on the PTOAS path (``pto.treshape``, ``pto.subview``): parsed, printed,
verified, and placed by PlanMemory at their source's bytes (the source stays alive while a
view is used), including a subview at a run-time row of a loop."""

import numpy as np
import pytest

from ptoc.errors import PtocError, PtoError
from ptoc.pto import insert_sync, parse, print_module, verify
from ptoc.pto.planner import PlanMemoryError
from ptoc.sim import simulate

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


def test_a_column_window_of_several_rows_keeps_its_source_row_stride():
    """A 4x16 window at column 16 of a 16x64 tile: its rows stay 64 elements apart
    (row_stride), so exp changes exactly that window and not the neighbouring columns a dense
    4x16 tile at the same address would cover."""
    narrow = ROW.format(r=4, c=16)
    body = (alloc("a") + load("a") + subview("a", "w", "%c1", rows=4, cols=16, b=narrow,
                                              col="%c16")
            + exp("w", "w", narrow) + store("a"))
    planned, at = plan(kernel(body))
    assert at["w"] == at["a"] + (1 * 64 + 16) * 4
    text = print_module(planned)
    assert "row_stride = %c64_i64" in text and parse(text) == planned
    x, y = run(planned)
    want = x.copy()
    want[1:5, 16:32] = np.exp(x[1:5, 16:32])
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_a_column_window_at_a_loop_column_gets_a_computed_address():
    narrow = ROW.format(r=16, c=16)
    body = (alloc("a") + load("a")
            + "  scf.for %i = %c0 to %c64 step %c16 {\n"
            + subview("a", "w", "%c0", rows=16, cols=16, b=narrow, col="%i")
            + exp("w", "w", narrow) + "  }\n" + store("a"))
    planned, at = plan(kernel(body))
    assert "w" not in at and "row_stride" in print_module(planned)
    x, y = run(planned)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


def test_a_reshape_of_a_column_window_is_refused():
    narrow = ROW.format(r=4, c=16)
    body = (alloc("a") + load("a") + subview("a", "w", "%c0", rows=4, cols=16, b=narrow,
                                             col="%c16")
            + treshape("w", "f", a=narrow, b=ROW.format(r=1, c=64)) + store("a"))
    with pytest.raises(PlanMemoryError, match="not one dense range"):
        plan(kernel(body))


def test_a_row_stride_shorter_than_the_row_is_refused_by_the_simulator():
    narrow = ROW.format(r=4, c=16)
    body = ("  %a0 = arith.constant 0 : i64\n"
            f"  %w = pto.alloc_tile addr = %a0 row_stride = %c1 : {narrow}\n"
            + exp("w", "w", narrow))
    with pytest.raises(PtocError, match="row_stride 1 needs a row-major Vec tile"):
        simulate(parse(kernel(body)), {"arg0": np.zeros((16, 64), np.float32),
                                        "arg1": np.zeros((16, 64), np.float32)})


def test_an_element_of_a_column_window_is_read_through_its_source():
    narrow = ROW.format(r=4, c=16)
    body = ("  %a0 = arith.constant 0 : i64\n"
            f"  %w = pto.alloc_tile addr = %a0 row_stride = %c64 : {narrow}\n"
            "  %e = pto.tgetval ins(%w, %c1 : " + narrow + ", index) outs : f32\n")
    with pytest.raises(PtocError, match="column window of a wider tile"):
        simulate(insert_sync(parse(kernel(body)), "a2a3").module,
                 {"arg0": np.zeros((16, 64), np.float32), "arg1": np.zeros((16, 64), np.float32)})
