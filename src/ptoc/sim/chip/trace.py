"""Chrome / Perfetto trace of a chip run: one track per core, one slice per task.

Why this layout: a task graph is read as "which core ran what, when, waiting for whom" —
the chip-level view of the simulator's nested traces (chip -> core -> pipe; the per-pipe
view of one task is ``ptoc.sim.simulate``'s trace). Each task slice is named by the task
(``matmul#3[5/24]``) and carries its source line, dependencies, when it became ready and
was dispatched, its busy cycles per pipe and its GM cycles; each dependency is a flow arrow
from the producer's slice to the consumer's; each race between tasks is an instant marker on
the later task; a task skipped at dispatch (its predicate false) is an instant on a
"scheduler" track. Cores that ran nothing are left out. Timestamps are cycles written in the
trace's microsecond field (1 cycle shows as 1 us), as in the core trace.
"""

from __future__ import annotations

from ptoc.files import write_json

_PID = 1
#: the track of tasks the scheduler retired at dispatch (dispatch predicate false)
SCHEDULER = "scheduler"


def chip_trace_events(result) -> list[dict]:
    """The trace events of a ``ChipResult``."""
    title = (f"chip ({result.target}, {result.profile}, {result.clusters} core groups, "
             f"wall {result.wall_cycles:,.0f} cycles)")
    events: list[dict] = [{"ph": "M", "pid": _PID, "name": "process_name",
                           "args": {"name": title}}]
    tids = {}
    for sort, core in enumerate(result.cores):
        if not core.jobs:
            continue
        tid = tids[core.name] = sort + 1
        events.append({"ph": "M", "pid": _PID, "tid": tid, "name": "thread_name",
                       "args": {"name": core.name}})
        events.append({"ph": "M", "pid": _PID, "tid": tid, "name": "thread_sort_index",
                       "args": {"sort_index": sort}})
    if any(task.skipped for task in result.tasks):   # retired by the scheduler on no core
        tids[SCHEDULER] = len(result.cores) + 1
        events.append({"ph": "M", "pid": _PID, "tid": tids[SCHEDULER], "name": "thread_name",
                       "args": {"name": SCHEDULER}})
    slices = {}
    for task in result.tasks:
        if task.skipped:
            events.append({"ph": "i", "s": "t", "pid": _PID, "tid": tids[SCHEDULER],
                           "ts": task.start, "name": f"{task.name} skipped", "cat": "task",
                           "args": {"where": task.where, "deps": list(task.deps),
                                    "why": "dispatch predicate false"}})
            slices[task.index] = (task, tids[SCHEDULER])
            continue
        tid = tids[task.cores[0]]
        args = {"where": task.where, "cores": list(task.cores), "deps": list(task.deps),
                "ready": task.ready, "dispatched": task.dispatched, "gm_cycles": task.gm_cycles,
                "busy": {p.short: round(c, 1) for p, c in task.busy.items() if c}}
        if task.alone_cycles is not None:
            args["alone_cycles"] = task.alone_cycles
        for core in task.cores:
            events.append({"ph": "X", "pid": _PID, "tid": tids[core], "name": task.name,
                           "cat": "task", "ts": task.start, "dur": task.end - task.start,
                           "args": args})
        slices[task.index] = (task, tid)
    flow = 0
    for task in result.tasks:
        for dep in task.deps:
            producer, p_tid = slices[dep]
            flow += 1
            events.append({"ph": "s", "pid": _PID, "tid": p_tid, "id": flow, "cat": "dep",
                           "name": "dependency", "ts": producer.end - 1e-3})
            events.append({"ph": "f", "bp": "e", "pid": _PID, "tid": slices[task.index][1],
                           "id": flow, "cat": "dep", "name": "dependency", "ts": task.start})
    by_name = {task.name: task for task in result.tasks}
    for race in result.races:
        later = by_name.get(race.second.task)
        if later is not None:
            events.append({"ph": "i", "s": "t", "pid": _PID, "tid": slices[later.index][1],
                           "ts": later.start, "name": f"{race.kind} race", "cat": "race",
                           "args": {"what": str(race)}})
    return events


def write_chip_trace(result, path) -> None:
    write_json(path, {"traceEvents": chip_trace_events(result), "displayTimeUnit": "ns",
                      "otherData": {"format": "ptoc chip trace v1", "time_unit": "cycle",
                                    "wall_cycles": result.wall_cycles,
                                    "utilisation": result.utilisation_rows()}})
