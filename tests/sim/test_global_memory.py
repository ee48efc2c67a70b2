"""GM is one address space: regions of one allocation share bytes, in data and for races."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.dtypes import DataType
from ptoc.sim import simulate
from ptoc.sim.examples import vector_add
from ptoc.sim.gm import make_view, make_window
from ptoc.sim.global_memory import ALLOCATION_ALIGNMENT, GlobalMemory, GlobalMemoryError

R, C = 16, 64


def _copy_add_kernel(*, synced: bool) -> str:
    return vector_add(R, C, synced=synced)


def test_allocations_get_unique_names_and_aligned_distinct_addresses():
    gm = GlobalMemory()
    a = gm.alloc("t", (3, 5), DataType.FP32)
    b = gm.alloc("t", (2,), DataType.FP16)
    assert (a.name, b.name) == ("t", "t#2")
    assert b.alloc.base % ALLOCATION_ALIGNMENT == 0 and b.alloc.base >= a.alloc.nbytes


def test_slices_are_views_of_the_allocation():
    gm = GlobalMemory()
    t = gm.alloc("t", (4, 6), DataType.FP32, init=np.arange(24, dtype=np.float32).reshape(4, 6))
    s = t.slice([1, 2], [2, 3])
    np.testing.assert_array_equal(s.array(), [[8, 9, 10], [14, 15, 16]])
    s.array()[...] = -1
    assert (t.array()[1:3, 2:5] == -1).all() and t.array()[0, 0] == 0
    assert not s.is_contiguous and t.slice([1, 0], [2, 6]).is_contiguous
    assert s.overlaps(t) and not t.slice([0, 0], [1, 6]).overlaps(t.slice([1, 0], [1, 6]))
    with pytest.raises(GlobalMemoryError, match="dim 1 range \\[4, 7\\)"):
        t.slice([0, 4], [1, 3])


def test_two_parameters_on_one_tensor_share_its_bytes():
    """arg0 = rows [0, 16) and arg1 = rows [16, 32) of one tensor, arg2 = arg0's rows again:
    the kernel's store lands in the tensor and is what arg0 holds afterwards."""
    gm = GlobalMemory()
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2 * R, C)).astype(np.float32)
    t = gm.alloc("t", (2 * R, C), DataType.FP32, init=data)
    top, bottom = t.slice([0, 0], [R, C]), t.slice([R, 0], [R, C])
    res = simulate(_copy_add_kernel(synced=True), [top, bottom, top])
    assert not res.races
    np.testing.assert_array_equal(t.array()[:R], data[:R] + data[R:])
    np.testing.assert_array_equal(t.array()[R:], data[R:])
    buffers = {a.buffer for r in res.instructions for a in r.reads + r.writes
               if a.buffer.startswith("GM")}
    assert buffers == {"GM %t"}
    store = res.on_pipe("MTE3")[0].writes[0]
    assert (store.lo, store.hi) == (0, R * C * 4)
    load_y = res.on_pipe("MTE2")[1].reads[0]
    assert (load_y.lo, load_y.hi) == (R * C * 4, 2 * R * C * 4)


def test_aliased_parameters_race_where_distinct_tensors_do_not():
    """The store to arg2 is not ordered after the load of arg0: a race exactly when both
    are bound to the same bytes."""
    text = _copy_add_kernel(synced=False)
    gm = GlobalMemory()
    t = gm.alloc("t", (R, C), DataType.FP32)
    other = gm.alloc("u", (R, C), DataType.FP32)
    y = gm.alloc("y", (R, C), DataType.FP32)
    assert not simulate(text, [t, y, other]).races
    races = simulate(text, [t, y, t]).races
    assert [(r.kind, r.buffer, r.lo, r.hi) for r in races] == [("WAR", "GM %t", 0, R * C * 4)]


def test_windows_of_two_views_compare_by_rows_and_columns():
    """Two parameters on the column halves of one tensor (same row pitch): their windows'
    byte bounding boxes overlap, their rectangles in the tensor do not."""
    gm = GlobalMemory()
    t = gm.alloc("t", (R, 2 * C), DataType.FP32)
    whole = make_view("p", t.flat(), DataType.FP32, (R, 2 * C), (2 * C, 1), None, space="t")
    right = t.slice([0, C], [R, C])
    half = make_view("q", right.flat(), DataType.FP32, (R, C), (2 * C, 1), None, space="t",
                     origin=right.offset)
    left_win = make_window(whole, (0, 0), (R, C), None).access()
    right_win = make_window(half, (0, 0), (R, C), None).access()
    assert left_win.buffer == right_win.buffer == "GM %t"
    assert left_win.lo < right_win.hi and right_win.lo < left_win.hi
    assert not left_win.overlaps(right_win)
    assert make_window(whole, (2, C + 3), (1, 1), None).access().overlaps(right_win)
