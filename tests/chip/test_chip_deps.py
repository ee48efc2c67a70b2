"""Dependency inference follows the device runtime: reads wait for the latest overlapping
writer; writes wait for nothing; SPMD blocks never wait for each other."""

from __future__ import annotations

from ptoc.dtypes import DataType
from ptoc.sim.chip.deps import DependencyMap
from ptoc.sim.global_memory import GlobalMemory
from ptoc.sim.task import Task

F32 = DataType.FP32


def _task(index, reads=(), writes=(), deps=(), launch=None):
    return Task(index, "k", None, (), tuple(reads), tuple(writes), tuple(deps), launch=launch)


def _deps(tasks):
    dm = DependencyMap()
    return [dm.add(t) for t in tasks]


def test_a_read_waits_for_the_latest_writer_of_overlapping_bytes():
    gm = GlobalMemory()
    t, u = gm.alloc("t", (8, 8), F32), gm.alloc("u", (8, 8), F32)
    top, bottom = t.slice([0, 0], [4, 8]), t.slice([4, 0], [4, 8])
    got = _deps([_task(0, writes=[top]), _task(1, writes=[bottom]), _task(2, reads=[top]),
                 _task(3, reads=[t]), _task(4, reads=[u])])
    assert got == [(), (), (0,), (0, 1), ()]


def test_writes_get_no_edges_and_a_covering_write_hides_the_older_writer():
    gm = GlobalMemory()
    t = gm.alloc("t", (8, 8), F32)
    got = _deps([_task(0, writes=[t]), _task(1, reads=[t]), _task(2, writes=[t]),
                 _task(3, reads=[t.slice([0, 0], [2, 8])])])
    assert got == [(), (0,), (), (2,)]


def test_a_partial_write_keeps_the_older_writer_a_producer():
    gm = GlobalMemory()
    t = gm.alloc("t", (8, 8), F32)
    got = _deps([_task(0, writes=[t]), _task(1, writes=[t.slice([0, 0], [4, 8])]),
                 _task(2, reads=[t])])
    assert got[2] == (0, 1)


def test_column_blocks_are_disjoint_though_their_byte_spans_interleave():
    gm = GlobalMemory()
    t = gm.alloc("t", (8, 16), F32)
    left, right = t.slice([0, 0], [8, 8]), t.slice([0, 8], [8, 8])
    assert _deps([_task(0, writes=[left]), _task(1, reads=[right])]) == [(), ()]


def test_inout_reads_then_writes_and_explicit_deps_are_kept():
    gm = GlobalMemory()
    t = gm.alloc("t", (4, 4), F32)
    got = _deps([_task(0, writes=[t]), _task(1, reads=[t], writes=[t]),
                 _task(2, reads=[t]), _task(3, deps=[0])])
    assert got == [(), (0,), (1,), (0,)]


def test_blocks_of_one_launch_do_not_wait_for_each_other_and_readers_wait_for_all():
    gm = GlobalMemory()
    c = gm.alloc("c", (8, 8), F32)
    blocks = [_task(i, reads=[c], writes=[c], launch=0) for i in range(3)]
    got = _deps(blocks + [_task(3, reads=[c])])
    assert got == [(), (), (), (0, 1, 2)]
