"""The chip runs a task graph: data as the tasks compute it, timing as the device runtime
dispatches it, races between tasks from the task graph."""

from __future__ import annotations

import numpy as np
import pytest

from chip_kernels import C, R, add_kernel, add_task
from ptoc.dtypes import DataType
from ptoc.errors import SourceLoc
from ptoc.sim import simulate
from ptoc.sim.chip import ChipConfigError, ChipSimulator, simulate_chip
from ptoc.sim.chip.examples import gemm_tasks
from ptoc.sim.examples import reference_gemm
from ptoc.sim.global_memory import GlobalMemory

F32 = DataType.FP32
M, N, K = 256, 512, 512


@pytest.mark.parametrize("mode", ["fast", "reference"])
def test_a_gemm_over_a_core_grid_equals_the_gemm_on_one_core(mode):
    """Each block runs the same K order as the whole GEMM does on one core: bit-equal."""
    tasks, (a, b, c) = gemm_tasks(M, N, K, grid=(2, 2), seed=1)
    res = simulate_chip(tasks, mode=mode)
    one = simulate(reference_gemm(M, N, K), [a.array(), b.array(), np.zeros((M, N), np.float32)],
                   mode=mode)
    np.testing.assert_array_equal(c.array(), one.outputs["arg2"])
    assert not res.races and not res.task_races
    assert res.reused == 3          # three blocks replayed the first block's instructions
    assert [t.cores for t in res.tasks] == [("AIC0",), ("AIC1",), ("AIC2",), ("AIC3",)]


def test_timing_only_reuses_one_record_and_times_like_the_numerics_run():
    full, _ = gemm_tasks(M, N, K, grid=(2, 2), seed=1)
    timed, (_, _, c) = gemm_tasks(M, N, K, grid=(2, 2), seed=1)
    with_data = simulate_chip(full, mode="fast")
    only = simulate_chip(timed, mode="fast", numerics=False)
    assert only.reused == with_data.reused == 3      # one block issued, three re-used
    assert only.wall_cycles == with_data.wall_cycles
    assert [(t.start, t.end) for t in only.tasks] == [(t.start, t.end) for t in with_data.tasks]
    assert only.memory == with_data.memory
    assert not c.array().any()                  # no data was computed


def test_a_task_alone_on_the_chip_takes_its_single_core_time():
    for tasks in (gemm_tasks(128, 256, 512, grid=(1, 1))[0],):
        res = simulate_chip(tasks, mode="fast")
        t = res.tasks[0]
        assert t.end - t.start == pytest.approx(t.alone_cycles)
        assert t.start == res.launch_cycles + res.dispatch_cycles


def _vectors(gm, n):
    rng = np.random.default_rng(0)
    return [gm.alloc(f"v{i}", (R, C), F32, init=rng.standard_normal((R, C)).astype(np.float32))
            for i in range(n)]


def test_a_dependent_task_starts_after_its_producer_and_independent_ones_overlap():
    gm = GlobalMemory()
    x, y, z0, z1, z2 = _vectors(gm, 5)
    k = add_kernel(scale_loop=50)                 # longer than a dispatch
    want0 = x.array() + y.array()
    tasks = [add_task(0, k, x, y, z0), add_task(1, k, z0, y, z1), add_task(2, k, x, x, z2)]
    res = simulate_chip(tasks, mode="fast")
    t0, t1, t2 = res.tasks
    np.testing.assert_array_equal(z0.array(), want0)
    np.testing.assert_array_equal(z1.array(), want0 + y.array())
    assert t1.deps == (0,) and t1.start >= t0.end and t1.ready == t0.end
    assert t2.start < t0.end and t2.cores != t0.cores          # ran beside task 0
    assert all(core.startswith("AIV") for t in res.tasks for core in t.cores)
    assert not res.races


def test_the_device_scheduler_hands_out_one_task_per_dispatch_time():
    gm = GlobalMemory()
    vs = _vectors(gm, 8)
    k = add_kernel()
    tasks = [add_task(i, k, vs[0], vs[1], vs[2 + i]) for i in range(6)]
    res = simulate_chip(tasks, mode="fast")
    starts = [t.start for t in res.tasks]
    assert starts == [res.launch_cycles + res.dispatch_cycles * (i + 1) for i in range(6)]


def test_one_core_group_runs_independent_vector_tasks_two_at_a_time():
    gm = GlobalMemory()
    vs = _vectors(gm, 8)
    k = add_kernel(scale_loop=50)
    tasks = [add_task(i, k, vs[0], vs[1], vs[2 + i]) for i in range(6)]
    res = simulate_chip(tasks, mode="fast", clusters=1)
    assert {t.cores for t in res.tasks} == {("AIV0.0",), ("AIV0.1",)}
    busy = sorted((t.start, t.end) for t in res.tasks)
    for (s1, e1), (s2, e2), (s3, _) in zip(busy, busy[1:], busy[2:]):
        assert s3 >= min(e1, e2)                # never three at once on two cores


def test_two_tasks_writing_the_same_bytes_without_a_dependency_race():
    gm = GlobalMemory()
    x, y, z = _vectors(gm, 3)
    k = add_kernel()
    a = add_task(0, k, x, y, z)
    b = add_task(1, k, y, y, z)
    a.loc, b.loc = SourceLoc("prog.py", 10, 0), SourceLoc("prog.py", 11, 0)
    res = simulate_chip([a, b], mode="fast")
    (race,) = res.races
    assert (race.kind, race.buffer, race.lo, race.hi) == ("WAW", "GM %v2", 0, R * C * 4)
    assert (race.first.where, race.second.where) == ("prog.py:10", "prog.py:11")
    assert (race.first.task, race.second.task) == ("add#0", "add#1")
    assert "pto.tstore at add.pto line" in race.first.op
    assert "add#0 (pto.tstore at add.pto line" in str(race) and "prog.py:11" in str(race)
    ordered = add_task(1, k, y, y, z, deps=[0])
    assert not simulate_chip([add_task(0, k, x, y, z), ordered], mode="fast").races


def test_an_overwrite_of_what_an_earlier_task_reads_races_unless_stated():
    """Write-after-read is not inferred (as in the device runtime): it is a race."""
    gm = GlobalMemory()
    x, y, z, w = _vectors(gm, 4)
    k = add_kernel()
    res = simulate_chip([add_task(0, k, x, y, z), add_task(1, k, w, w, x)], mode="fast")
    assert [(r.kind, r.buffer) for r in res.races] == [("WAR", "GM %v0")]
    res = simulate_chip([add_task(0, k, x, y, z), add_task(1, k, w, w, x, deps=[0])],
                        mode="fast")
    assert not res.races


def test_blocks_writing_disjoint_rows_and_columns_of_one_tensor_do_not_race():
    tasks, _ = gemm_tasks(M, N, K, grid=(2, 2), seed=None)
    assert not simulate_chip(tasks, numerics=False).races


def test_bad_task_graphs_are_refused():
    gm = GlobalMemory()
    x, y, z = _vectors(gm, 3)
    k = add_kernel()
    chip = ChipSimulator()
    with pytest.raises(ChipConfigError, match="not earlier tasks"):
        chip.submit(add_task(0, k, x, y, z, deps=[0]))
    with pytest.raises(ChipConfigError, match="at least one core group"):
        ChipSimulator(clusters=0)


def test_the_chip_trace_has_a_track_per_core_a_slice_per_task_and_dependency_flows(tmp_path):
    import json

    gm = GlobalMemory()
    x, y, z0, z1 = _vectors(gm, 4)
    k = add_kernel()
    tasks = [add_task(0, k, x, y, z0), add_task(1, k, z0, y, z1)]
    tasks[0].loc = SourceLoc("prog.py", 7, 0)
    res = simulate_chip(tasks, mode="fast")
    res.write_trace(tmp_path / "chip.json")
    doc = json.loads((tmp_path / "chip.json").read_text())
    events = doc["traceEvents"]
    threads = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    slices = [e for e in events if e["ph"] == "X"]
    assert sorted(threads.values()) == sorted({c for t in res.tasks for c in t.cores})
    assert [(threads[e["tid"]], e["name"], e["ts"], e["dur"]) for e in slices] == \
        [(t.cores[0], t.name, t.start, t.end - t.start) for t in res.tasks]
    assert slices[0]["args"]["where"] == "prog.py:7"
    starts = [e for e in events if e["ph"] == "s"]
    ends = [e for e in events if e["ph"] == "f"]
    assert len(starts) == len(ends) == 1 and ends[0]["ts"] == res.tasks[1].start
    assert [row["core"] for row in doc["otherData"]["utilisation"]] == \
        [c.name for c in res.used_cores()]


def test_replayed_tasks_compute_their_own_data_whatever_their_arguments_alias():
    """Identical tasks are replayed on their own regions: the data equals running each task
    alone; a task whose output is one of its inputs (another aliasing) is issued anew."""
    gm = GlobalMemory()
    vs = _vectors(gm, 6)
    before = [v.array().copy() for v in vs]
    k = add_kernel()
    tasks = [add_task(0, k, vs[0], vs[1], vs[2]), add_task(1, k, vs[1], vs[3], vs[4]),
             add_task(2, k, vs[5], vs[3], vs[5])]          # z is x: another aliasing
    res = simulate_chip(tasks, mode="reference")
    assert res.reused == 1 and [t.alone_cycles is not None for t in res.tasks] == [True] * 3
    np.testing.assert_array_equal(vs[2].array(), before[0] + before[1])
    np.testing.assert_array_equal(vs[4].array(), before[1] + before[3])
    np.testing.assert_array_equal(vs[5].array(), before[5] + before[3])


def test_a_replayed_task_reports_the_races_of_its_kernel():
    from ptoc.pto import parse
    from ptoc.sim.examples import vector_add

    racy = parse(vector_add(R, C, synced=False, name="racy"), filename="racy.pto")
    gm = GlobalMemory()
    x, y, z, w = _vectors(gm, 4)
    tasks = [add_task(0, racy, x, y, x), add_task(1, racy, w, y, w)]
    res = simulate_chip(tasks, mode="fast")
    assert res.reused == 1
    assert [(name, race.kind) for name, race in res.task_races] == \
        [("racy#0", "WAR"), ("racy#1", "WAR")]
