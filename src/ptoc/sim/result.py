"""What a simulation returns: outputs, per-instruction timeline, per-pipe busy, races.

Why one class for full and partial runs: a hard error (deadlock, flag protocol) carries
the timeline up to the point of failure, and a user inspects or writes that trace with
the same methods as a successful run's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptoc.backend.pipes import QUEUE_PIPES, TRACE_LANE_ORDER, Pipe
from ptoc.errors import SourceLoc

from ptoc.sim.instr import BARRIER, SET, WAIT, Instr
from ptoc.sim.races import Race
from ptoc.sim.schedule import Schedule

KIND_NAMES = {0: "work", SET: "set_flag", WAIT: "wait_flag", BARRIER: "barrier"}


@dataclass(slots=True)
class InstrRecord:
    """One executed instruction: pipe, [start, end) in cycles and where it came from.

    ``reads``/``writes`` are the byte ranges it touched (``Access``), kept so a trace can
    draw buffer occupancy; ``file`` names the PTO text ``line`` refers to.
    """

    seq: int
    name: str
    pipe: Pipe
    kind: str
    start: float
    end: float
    line: int
    loc: SourceLoc | None
    flag: tuple | None = None
    reads: tuple = ()
    writes: tuple = ()
    file: str = "<pto>"

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass
class SimResult:
    """The outcome of ``ptoc.sim.simulate``.

    Fields:
        outputs: every GM tensor after the run, by parameter name, in the caller's shape.
        wall_cycles: end of the last instruction.
        pipe_busy: cycles each pipe spent executing (flags and barriers count zero).
        binding_pipe: the busiest pipe (the one that bounds the wall time), or None.
        instructions: per-instruction records in issue order (only scheduled ones for a
            partial timeline).
        races: unordered conflicting access pairs (empty for a correctly synced program).
        flows: (set seq, wait seq) pairs — which set each wait consumed.
        sync_level: 3 when the input had explicit sync, 2 when it had none (then
            ``insert_sync`` added it, unless the run was serial).
        serial: True when the run used serial timing (mode="serial").
        notes: human-readable remarks (sync insertion, memory planning, target mismatch).
        complete: False for the partial timeline attached to a hard error.
        floor_cycles: the launch/staging floor of the kernel under the profile (launch plus
            staging of its GM tensors), reported on its own line; ``wall_cycles`` stays the
            core-only figure and ``total_cycles`` adds the two.
    """

    outputs: dict[str, np.ndarray]
    wall_cycles: float
    pipe_busy: dict[Pipe, float]
    binding_pipe: Pipe | None
    instructions: list[InstrRecord]
    races: list[Race]
    flows: list[tuple[int, int]] = field(default_factory=list)
    target: str = ""
    profile: str = ""
    mode: str = ""
    sync_level: int = 3
    serial: bool = False
    notes: list[str] = field(default_factory=list)
    complete: bool = True
    floor_cycles: float = 0.0

    @property
    def total_cycles(self) -> float:
        """Core cycles plus the launch/staging floor (what a device run of the kernel takes)."""
        return self.wall_cycles + self.floor_cycles

    # -- queries -------------------------------------------------------------------------
    def on_pipe(self, pipe: Pipe | str, *, name: str | None = None) -> list[InstrRecord]:
        """Work records of one pipe (``Pipe`` or ``"M"``/``"PIPE_FIX"``), optionally one op."""
        p = pipe if isinstance(pipe, Pipe) else Pipe.parse(pipe)
        return [r for r in self.instructions
                if r.pipe is p and r.kind == "work" and (name is None or r.name == name)]

    def busy_intervals(self, pipe: Pipe | str) -> list[tuple[float, float]]:
        return [(r.start, r.end) for r in self.on_pipe(pipe)]

    def utilisation(self) -> dict[Pipe, float]:
        wall = self.wall_cycles or 1.0
        return {p: busy / wall for p, busy in self.pipe_busy.items()}

    # -- writers -------------------------------------------------------------------------
    def write_trace(self, path, *, occupancy: bool = False) -> None:
        """Chrome/Perfetto trace JSON (lanes MTE2, MTE1, CUBE, VECTOR, FIXPIPE, MTE3), plus
        buffer occupancy tracks per memory space when ``occupancy``."""
        from ptoc.sim.trace import write_chrome_trace
        write_chrome_trace(self, path, occupancy=occupancy)

    def pipe_summary_csv(self) -> str:
        """Per-pipe CSV: pipe, lane, instructions, busy cycles, utilisation, first start, last end."""
        rows = ["pipe,lane,instructions,busy_cycles,utilisation,first_start,last_end"]
        for pipe in TRACE_LANE_ORDER:
            recs = self.on_pipe(pipe)
            first = min((r.start for r in recs), default=0.0)
            last = max((r.end for r in recs), default=0.0)
            busy = self.pipe_busy.get(pipe, 0.0)
            util = busy / self.wall_cycles if self.wall_cycles else 0.0
            rows.append(f"{pipe.short},{pipe.lane},{len(recs)},{busy:.2f},{util:.4f},"
                        f"{first:.2f},{last:.2f}")
        return "\n".join(rows) + "\n"

    def write_csv(self, path) -> None:
        from ptoc.files import write_text

        write_text(path, self.pipe_summary_csv())

    def summary(self) -> str:
        """A few lines for a terminal: wall, binding pipe, busy per pipe, race count."""
        lines = [f"wall {self.wall_cycles:.1f} cycles; binding pipe "
                 f"{self.binding_pipe.short if self.binding_pipe else '-'}; "
                 f"{len(self.instructions)} instructions; {len(self.races)} race(s)"]
        for pipe in TRACE_LANE_ORDER:
            busy = self.pipe_busy.get(pipe, 0.0)
            share = 100 * busy / self.wall_cycles if self.wall_cycles else 0.0
            lines.append(f"  {pipe.lane:<8} busy {busy:12.1f}  ({share:5.1f} %)")
        if self.floor_cycles:
            lines.append(f"launch/staging floor {self.floor_cycles:.1f} cycles (outside the core); "
                         f"with it {self.total_cycles:.1f} cycles")
        lines.extend(str(r) for r in self.races)
        lines.extend(self.notes)
        return "\n".join(lines)


def build_result(instrs: list[Instr], sch: Schedule, *, races, outputs, complete=True,
                 **meta) -> SimResult:
    records, busy = [], {p: 0.0 for p in QUEUE_PIPES}
    wall = 0.0
    for ins in instrs:
        start, end = sch.start[ins.seq], sch.end[ins.seq]
        if start < 0:
            continue
        records.append(InstrRecord(ins.seq, ins.name, ins.pipe, KIND_NAMES[ins.kind], start,
                                   end, ins.line, ins.loc, ins.flag, ins.reads, ins.writes,
                                   ins.file))
        if ins.kind == 0 and ins.pipe in busy:
            busy[ins.pipe] += end - start
        wall = max(wall, end)
    binding = max(busy, key=lambda p: busy[p]) if any(busy.values()) else None
    return SimResult(outputs, wall, busy, binding, records, races, list(sch.flow),
                     complete=complete, **meta)
