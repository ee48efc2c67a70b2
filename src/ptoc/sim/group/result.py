"""What a core-group simulation returns: one ``SimResult`` per core plus the group's view.

Why per core: each core has its own pipes, so busy cycles, the binding pipe and the trace
lanes are per core; wall time, races (which may pair two cores) and the cross-core flows
belong to the group. The trace nests as the hardware does: one process per core, one
thread per pipe, with the pipe protocol drawn as flow arrows between cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptoc.backend.pipes import TRACE_LANE_ORDER, Pipe

from ptoc.sim.instr import Instr
from ptoc.sim.races import Race
from ptoc.sim.result import SimResult, build_result
from ptoc.sim.schedule import Schedule

#: Process ids of core i are 1 + i * _PID_STRIDE (its occupancy processes follow it).
_PID_STRIDE = 16


@dataclass
class GroupResult:
    """The outcome of ``ptoc.sim.simulate_group``.

    Fields:
        outputs: every GM tensor after the run, by parameter name, in the caller's shape.
        cores: per core (``aic``, ``aiv0``, ``aiv1``) its records, pipe busy and binding pipe.
        races: unordered conflicting access pairs, within or across cores.
        flows: (producer seq, consumer seq) pairs of the cross-core pipe protocol.
        notes: human-readable remarks (sync insertion, target mismatch).
        complete: False for the partial timeline attached to a hard error.
    """

    outputs: dict[str, np.ndarray]
    cores: dict[str, SimResult]
    races: list[Race]
    flows: list[tuple[int, int]] = field(default_factory=list)
    target: str = ""
    profile: str = ""
    mode: str = ""
    notes: list[str] = field(default_factory=list)
    complete: bool = True

    @property
    def wall_cycles(self) -> float:
        return max((c.wall_cycles for c in self.cores.values()), default=0.0)

    @property
    def pipe_busy(self) -> dict[tuple[str, Pipe], float]:
        """Busy cycles per (core, pipe)."""
        return {(unit, pipe): busy for unit, core in self.cores.items()
                for pipe, busy in core.pipe_busy.items()}

    @property
    def binding(self) -> tuple[str, Pipe] | None:
        """The (core, pipe) with the most busy cycles: the max-pipe bound of the wall."""
        busy = self.pipe_busy
        return max(busy, key=busy.get) if any(busy.values()) else None

    @property
    def instructions(self):
        """Every core's records, in seq order."""
        return sorted((r for c in self.cores.values() for r in c.instructions),
                      key=lambda r: r.seq)

    def summary(self) -> str:
        """A few lines per core for a terminal: wall, binding pipe, busy per pipe, races."""
        unit, pipe = self.binding or ("-", None)
        lines = [f"core group: wall {self.wall_cycles:.1f} cycles; binding "
                 f"{unit}/{pipe.short if pipe else '-'}; {len(self.races)} race(s)"]
        for name, core in self.cores.items():
            lines.append(f" {name}: {len(core.instructions)} instructions, ends at "
                         f"{core.wall_cycles:.1f}")
            for p in TRACE_LANE_ORDER:
                busy = core.pipe_busy.get(p, 0.0)
                if busy:
                    share = 100 * busy / self.wall_cycles if self.wall_cycles else 0.0
                    lines.append(f"   {p.lane:<8} busy {busy:12.1f}  ({share:5.1f} %)")
        lines.extend(str(r) for r in self.races)
        lines.extend(self.notes)
        return "\n".join(lines)

    def pipe_summary_csv(self) -> str:
        """Per (core, pipe) CSV: the core's name, then its ``SimResult.pipe_summary_csv``
        columns (utilisation against that core's own span)."""
        rows = []
        for name, core in self.cores.items():
            head, *body = core.pipe_summary_csv().splitlines()
            rows = rows or [f"core,{head}"]
            rows.extend(f"{name},{row}" for row in body)
        return "\n".join(rows) + "\n"

    def write_csv(self, path) -> None:
        from ptoc.files import write_text

        write_text(path, self.pipe_summary_csv())

    def trace_events(self, *, occupancy: bool = False, pid: int = 1, ts_offset: float = 0.0,
                     tid_base: int = 0, label: str = "", region_names=None) -> list[dict]:
        """Chrome trace events: a process per core (``pid`` onwards, 16 apart), a thread per
        pipe, the pipe protocol as flows; ``region_names(kernel)`` names occupied bytes."""
        from ptoc.sim.trace import chrome_trace_events

        events: list[dict] = []
        where: dict[int, tuple[int, int, float, float]] = {}
        for index, (name, core) in enumerate(self.cores.items()):
            core_pid = pid + index * _PID_STRIDE
            base = tid_base + index * 1000
            events.extend(chrome_trace_events(
                core, pid=core_pid, ts_offset=ts_offset, tid_base=base, occupancy=occupancy,
                label=f"{label}{name} ({self.target}, {self.profile})",
                region_names=region_names(name) if region_names else None))
            tids = {pipe: base + i + 1 for i, pipe in enumerate(TRACE_LANE_ORDER)}
            for rec in core.instructions:
                where[rec.seq] = (core_pid, tids.get(rec.pipe, base), rec.start, rec.end)
        for flow_id, (src, dst) in enumerate(self.flows):
            if src not in where or dst not in where:
                continue
            (spid, stid, _, send), (dpid, dtid, dstart, _) = where[src], where[dst]
            ident = 900_000_000 + pid * 10_000 + flow_id
            events.append({"ph": "s", "pid": spid, "tid": stid, "id": ident, "name": "pipe",
                           "cat": "cross_core", "ts": send + ts_offset,
                           "args": {"from": src, "to": dst}})
            events.append({"ph": "f", "bp": "e", "pid": dpid, "tid": dtid, "id": ident,
                           "name": "pipe", "cat": "cross_core", "ts": dstart + ts_offset,
                           "args": {"from": src, "to": dst}})
        return events

    def write_trace(self, path, *, occupancy: bool = False) -> None:
        from ptoc.files import write_json

        unit, pipe = self.binding or (None, None)
        write_json(path, {"traceEvents": self.trace_events(occupancy=occupancy),
                          "displayTimeUnit": "ns",
                          "otherData": {"wall_cycles": self.wall_cycles,
                                        "binding": f"{unit}/{pipe.short}" if pipe else None,
                                        "races": [str(r) for r in self.races]}})


def build_group_result(instrs: list[Instr], sch: Schedule, units: list[str], *, races,
                       outputs, complete=True, notes=(), **meta) -> GroupResult:
    """Split a group run into per-core results; keep races and cross-core flows whole."""
    by_core: list[list[Instr]] = [[] for _ in units]
    for ins in instrs:
        by_core[ins.core].append(ins)
    core_of = {ins.seq: ins.core for ins in instrs}
    cores = {}
    for index, name in enumerate(units):
        mine = [r for r in races if core_of.get(r.second_seq) == index]
        result = build_result(by_core[index], sch, races=mine, outputs={},
                              complete=complete, **meta)
        result.flows = [(a, b) for a, b in result.flows
                        if core_of.get(a) == index and core_of.get(b) == index]
        cores[name] = result
    cross = [(a, b) for a, b in sch.flow if core_of.get(a) != core_of.get(b)]
    return GroupResult(outputs, cores, races, cross, notes=list(notes), complete=complete,
                       **meta)
