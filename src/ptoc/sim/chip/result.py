"""What a chip run returns: the makespan, every task's placement and times, every core's
utilisation, the GM traffic, and the races within and between tasks."""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.backend.pipes import QUEUE_PIPES, Pipe

from ptoc.sim.chip.engine import CoreTimeline
from ptoc.sim.chip.memory import MemoryStats


@dataclass
class TaskTiming:
    """One task on the chip: where it ran and when (cycles from the run's start).

    ``ready`` is when its last dependency ended, ``dispatched`` when the device scheduler
    took it, ``start``/``end`` its first issue and last instruction; ``busy`` its cycles per
    pipe; ``alone_cycles`` its wall when timed alone on one core (None when its record was
    reused); ``gm_cycles`` the cycles of its GM transfers under contention; ``skipped``: its
    dispatch predicate was false, so the scheduler retired it at dispatch on no core.
    """

    index: int
    name: str
    where: str
    cores: tuple[str, ...]
    deps: tuple[int, ...]
    ready: float
    dispatched: float
    start: float
    end: float
    busy: dict[Pipe, float]
    gm_cycles: float
    alone_cycles: float | None
    skipped: bool = False


@dataclass
class ChipResult:
    """The outcome of ``ChipSimulator.finish``.

    Fields:
        wall_cycles: end of the last task, from the run's launch (launch and dispatch
            included).
        tasks: one ``TaskTiming`` per task, in submission order.
        cores: one ``CoreTimeline`` per core (AICs first, then AIVs).
        races: ``TaskRace`` s between tasks; ``task_races``: (task name, ``Race``) within
            tasks.
        memory: GM bytes moved, L2 hits, HBM bytes, cycles transfers lost to contention.
        launch_cycles / dispatch_cycles: the runtime costs used.
        reused: how many tasks were timed from another task's record (timing-only runs).
        numerics: False when the run computed no data (timing only).
    """

    wall_cycles: float
    tasks: list[TaskTiming]
    cores: list[CoreTimeline]
    races: list
    task_races: list
    memory: MemoryStats
    target: str
    profile: str
    mode: str
    numerics: bool
    clusters: int
    launch_cycles: float
    dispatch_cycles: float
    reused: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def pipe_busy(self) -> dict[Pipe, float]:
        """Busy cycles per pipe, summed over every core."""
        busy = {p: 0.0 for p in QUEUE_PIPES}
        for core in self.cores:
            for p, cycles in zip(QUEUE_PIPES, core.busy):
                busy[p] += cycles
        return busy

    def used_cores(self) -> list[CoreTimeline]:
        return [core for core in self.cores if core.jobs]

    def utilisation_rows(self) -> list[dict]:
        """Per used core: tasks run, share of the wall it held a task, and each pipe's busy
        share of the wall."""
        wall = self.wall_cycles or 1.0
        rows = []
        for core in self.used_cores():
            row = {"core": core.name, "tasks": len(core.jobs),
                   "occupied": core.task_cycles / wall}
            for p, cycles in zip(QUEUE_PIPES, core.busy):
                row[p.short] = cycles / wall
            rows.append(row)
        return rows

    def utilisation_csv(self) -> str:
        names = [p.short for p in QUEUE_PIPES]
        lines = ["core,tasks,occupied," + ",".join(names)]
        for row in self.utilisation_rows():
            lines.append(f"{row['core']},{row['tasks']},{row['occupied']:.4f}," +
                         ",".join(f"{row[n]:.4f}" for n in names))
        return "\n".join(lines) + "\n"

    def overview(self) -> list[str]:
        """Wall, tasks and cores used, GM traffic, race counts, reused records."""
        used = self.used_cores()
        mem = self.memory
        lines = [f"chip wall {self.wall_cycles:,.1f} cycles ({len(self.tasks)} tasks on "
                 f"{len(used)} of {len(self.cores)} cores; launch {self.launch_cycles:,.0f} + "
                 f"{self.dispatch_cycles:,.0f} per task dispatch; {self.target}, "
                 f"{self.profile}, {self.mode}{'' if self.numerics else ', timing only'})",
                 f"GM {mem.gm_bytes / 2**20:,.1f} MiB in {mem.transfers:,} transfers, L2 hits "
                 f"{100 * mem.l2_hit_rate:.1f} %, HBM {mem.hbm_bytes / 2**20:,.1f} MiB, "
                 f"{mem.stalled_cycles:,.0f} cycles lost to contention",
                 f"{len(self.races)} race(s) between tasks, {len(self.task_races)} within tasks"]
        if self.reused:
            lines.append(f"{self.reused} task(s) timed from an identical task's record")
        skipped = sum(t.skipped for t in self.tasks)
        if skipped:
            lines.append(f"{skipped} task(s) skipped at dispatch (predicate false)")
        return lines

    def utilisation_table(self) -> list[str]:
        """One line per used core: tasks, share of the wall it held a task, pipe shares."""
        names = [p.short for p in QUEUE_PIPES]
        lines = [f"  {'core':<8} {'tasks':>5} {'occupied':>9} " +
                 " ".join(f"{n:>6}" for n in names)]
        for row in self.utilisation_rows():
            lines.append(f"  {row['core']:<8} {row['tasks']:>5} {100 * row['occupied']:8.1f}% " +
                         " ".join(f"{100 * row[n]:5.1f}%" for n in names))
        return lines

    def summary(self) -> str:
        """A few lines for a terminal: the overview, per-core utilisation, races, notes."""
        lines = self.overview() + self.utilisation_table()
        lines.extend(str(r) for r in self.races)
        lines.extend(f"{name}: {race}" for name, race in self.task_races)
        lines.extend(self.notes)
        return "\n".join(lines)

    def write_trace(self, path) -> None:
        """Chrome/Perfetto trace: one track per core, a slice per task (name, source line),
        a flow arrow per dependency."""
        from ptoc.sim.chip.trace import write_chip_trace

        write_chip_trace(self, path)
