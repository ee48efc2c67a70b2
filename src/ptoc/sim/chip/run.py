"""``ChipSimulator``: run a task graph on the simulated chip.

Two phases, because the orchestration that submits tasks may need their results before it
submits the next ones:

* ``submit(task)``, in program order: the task's dependencies are inferred
  (``deps.DependencyMap``); its kernel is issued, timed alone, race-checked and — with
  numerics — its data is computed into the shared GM right away (program order is a
  dependency order, so every task reads what its producers wrote). Its timing record
  (``stream.TaskStream``) is kept. An identical task (same kernel, same scalar arguments,
  arguments aliasing alike) is not issued again: without numerics its record is simply
  re-timed on its own regions; with numerics the recorded instructions are replayed on its
  regions (the kernel's GM pointers re-pointed), so its data is exact and only the data
  work is redone.
* ``finish()``: the timing engine (``engine.Engine``) runs every record together on the
  chip's cores with the device runtime's dispatch and the shared L2/HBM; races between
  tasks are checked on the task graph; the result says where and when everything ran.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.chip import chip_model
from ptoc.backend.cross_core import cluster_model
from ptoc.backend.pipes import QUEUE_PIPES
from ptoc.collector import collector_paused
from ptoc.errors import PtocError

from ptoc.sim.api import resolve_run, ready_kernel
from ptoc.sim.chip.deps import DependencyMap
from ptoc.sim.chip.engine import SKIPPED, Engine, Job
from ptoc.sim.chip.memory import ChipMemory
from ptoc.sim.chip.races import find_task_races
from ptoc.sim.chip.result import ChipResult, TaskTiming
from ptoc.sim.chip.stream import TaskStream, record_stream
from ptoc.sim.core.binding import bind_params
from ptoc.sim.core.issue import ScalarUnit
from ptoc.sim.core.memory import BufferMemory
from ptoc.sim.execute import execute
from ptoc.sim.global_memory import GMTensor
from ptoc.sim.group.run import is_group_module, issue_group, ready_group
from ptoc.sim.limits import DEFAULT_LIMITS, SimLimits
from ptoc.sim.races import find_races
from ptoc.sim.schedule import schedule
from ptoc.sim.task import Task, check_predicate_read, check_write_spans, check_writes
from ptoc.sim.unwritten import DefinedBytes

CHIP_MODES = ("reference", "fast")


class ChipConfigError(PtocError, ValueError):
    """A chip run asked for something the chip does not have (cores, modes, dependencies)."""


@dataclass
class _Replay:
    """A single-core task's issued stream kept to replay the data of identical tasks (same
    kernel, scalars and aliasing of arguments): the kernel's GM pointers (re-pointed per
    task), its instructions, their schedule and races."""

    pointers: dict
    names: tuple[str, ...]
    args: tuple
    instrs: list
    sch: object
    races: list
    alone: float


@dataclass
class _Submitted:
    task: Task
    deps: tuple[int, ...]
    stream: TaskStream
    alone: float | None
    reused: bool


class ChipSimulator:
    """A task graph on ``clusters`` core groups of ``target`` (default: all of the chip's).

    ``mode``: ``reference`` or ``fast`` numerics (as ``simulate``). ``numerics=False`` runs
    timing only: no tile data is computed, GM keeps whatever it held, and identical tasks are
    issued once (their record is re-timed on each task's own GM regions). A dispatch
    predicate is then evaluated on GM as it was before the run: one whose element an earlier
    task of the run writes is refused (``_check_pre_run``).
    """

    def __init__(self, *, target="a2a3", profile=None, mode: str = "reference",
                 numerics: bool = True, clusters: int | None = None, flag_mode: str = "bit",
                 limits: SimLimits | None = None, defined: DefinedBytes | None = None):
        self.tgt, self.prof = resolve_run(target, profile, mode, CHIP_MODES, flag_mode)
        self.model = chip_model(self.tgt)
        self.clusters = self.model.clusters if clusters is None else clusters
        if not isinstance(self.clusters, int) or self.clusters < 1:
            raise ChipConfigError(f"a chip needs at least one core group, got {clusters!r}",
                                  hint=f"pass clusters=1..{self.model.clusters}")
        self.mode = mode
        self.numerics = numerics
        self.flag_mode = flag_mode
        self.limits = limits or DEFAULT_LIMITS
        # which GM bytes the run wrote (with numerics: tasks run their data in program order)
        self.defined = defined or DefinedBytes()
        self.depmap = DependencyMap()
        self.submitted: list[_Submitted] = []
        self.task_races: list = []
        self._ready: dict[tuple, object] = {}
        self._records: dict[tuple, TaskStream] = {}
        self._replays: dict[tuple, _Replay] = {}
        # timing only: per allocation, the regions run tasks declared written (skipped tasks
        # write none)
        self._written: dict[str, list[tuple[GMTensor, Task]]] = {}
        # tasks run one at a time while submitted: they share one core's buffers, which keep
        # what earlier tasks left in them (as a core's buffers do between kernels)
        self._buffers = BufferMemory(dict(self.tgt.capacities), self.tgt.address_alignment)

    # -- phase 1: tasks in program order ---------------------------------------------------
    def submit(self, task: Task) -> None:
        if task.index != len(self.submitted):
            raise ChipConfigError(f"task {task.label()} has index {task.index}, but "
                                  f"{len(self.submitted)} tasks were submitted before it",
                                  task.loc, hint="number tasks 0, 1, 2, ... in program order")
        bad = [d for d in task.deps if not 0 <= d < task.index]
        if bad:
            raise ChipConfigError(f"task {task.label()} depends on task(s) {bad}, which are "
                                  "not earlier tasks", task.loc,
                                  hint="a task can only wait for tasks submitted before it")
        deps = self.depmap.add(task)
        if task.predicate is not None and not self.numerics:
            self._check_pre_run(task)
        if task.predicate is not None and self.numerics:
            check_predicate_read(self.defined, task)
        if task.predicate is not None and not task.predicate.holds():
            # data is computed in program order, so the element holds what every earlier
            # task wrote: what the dispatch point reads when its producer is a dependency
            # (when it is not, the race check reports the read)
            self.submitted.append(_Submitted(task, deps, TaskStream((), SKIPPED), 0.0, False))
            return
        if not self.numerics:
            for region in task.writes:
                self._written.setdefault(region.name, []).append((region, task))
        key = self._key(task)
        record = self._records.get(key)
        if record is not None and record.fits(task.args):
            if not self.numerics:
                self.submitted.append(_Submitted(task, deps, record, None, True))
                return
            replay = self._replays.get((key, _aliases(task.args)))
            if replay is not None:
                self._replay(task, record, replay)
                self.submitted.append(_Submitted(task, deps, record, replay.alone, True))
                return
        with collector_paused():
            stream, alone = self._issue(task)
        if record is not None and record.fits(task.args):
            stream = record                     # an identical task's record: share it
        else:
            self._records[key] = stream
        self.submitted.append(_Submitted(task, deps, stream, alone, False))

    def _check_pre_run(self, task: Task) -> None:
        """Without numerics GM holds what it held before the run, so a dispatch predicate is
        evaluated on those contents. That is its value at the dispatch point only when no
        earlier task of the run wrote (or may have written: its declared ``Out``/``InOut``
        regions) the element; otherwise the timing would be for a guessed set of tasks."""
        pred = task.predicate
        element = pred.element()
        for region, writer in self._written.get(element.name, ()):
            if region.overlaps(element):
                raise ChipConfigError(
                    f"task {task.label()}: its dispatch predicate ({pred.text}) reads "
                    f"element {list(pred.index)} of '{element.name}', which task {writer.label()} of this "
                    "run writes; a timing-only run (numerics=False) computes no data, so the "
                    "predicate would be evaluated on the contents from before the run and "
                    "the timing could be for the wrong set of tasks", task.loc,
                    hint="run with numerics (ChipSimulator(numerics=True), the default, or "
                         "RunConfig(chip=True)), or gate on a tensor the run does not write "
                         "(a host input)")

    def _key(self, task: Task) -> tuple:
        """Tasks with one key run the same instructions. A region overhanging its allocation
        (a slice past a tensor's last rows) also keys the bytes left after its start: the
        recorded windows fit those bytes, and only those (the simulator checks each window
        once, when it is issued)."""
        scalars = tuple(a for a in task.args if not isinstance(a, GMTensor))
        room = tuple(a.alloc.nbytes - a.start for a in task.args
                     if isinstance(a, GMTensor) and a.overhangs)
        return (id(task.module), task.kernel, scalars, room)

    def _issue(self, task: Task) -> tuple[TaskStream, float]:
        """Issue the task's kernel on its GM regions, time it alone, check its races and
        (with numerics) compute its data."""
        prof, tgt = self.prof, self.tgt
        group = is_group_module(task.module)
        ready = self._ready.get((id(task.module), task.kernel))
        if ready is None:
            ready = (ready_group(task.module, tgt) if group else
                     ready_kernel(task.module, tgt, mode=self.mode, kernel=task.kernel))
            self._ready[(id(task.module), task.kernel)] = ready
        unit = None
        if group:
            bound = bind_params(ready.aic, list(task.args), ready.filename)
            instrs, units, _ = issue_group(ready, bound, tgt, prof, mode=self.mode)
            dep_latency = cluster_model(tgt).flag_latency_cycles
        else:
            bound = bind_params(ready.kernel, list(task.args), ready.filename)
            unit = ScalarUnit(ready.kernel, bound.env, tgt, prof, self._buffers,
                              limits=self.limits, filename=ready.filename,
                              mad_mode="fast" if self.mode == "fast" else "reference",
                              regions=bound.regions)
            instrs = unit.run()
            units, dep_latency = ("core",), 0.0
        sch = schedule(instrs, issue_cycles=prof.issue_cycles,
                       sync_latency=prof.sync_latency_cycles, flag_mode=self.flag_mode,
                       dep_latency=dep_latency)
        races = find_races(instrs, sch)
        self.task_races.extend((task.name(), race) for race in races)
        check_writes(task, instrs)
        if self.numerics:
            execute(instrs, sch, timed=bool(races))
            buffers = self.defined.tracked(task.args)
            if buffers:
                self.defined.task(task.label(), ((sch.start[i.seq], sch.end[i.seq], i)
                                                 for i in instrs), buffers)
        stream = record_stream(instrs, task.args, task.params, tuple(units), task.label())
        alone = max(sch.end, default=0.0)
        replay_key = (self._key(task), _aliases(task.args))
        if unit is not None and self.numerics and replay_key not in self._replays:
            self._replays[replay_key] = _Replay(
                unit.pointers, tuple(p.name for p in ready.kernel.params), tuple(task.args),
                instrs, sch, races, alone)
        return stream, alone

    def _replay(self, task: Task, stream: TaskStream, replay: _Replay) -> None:
        """Compute ``task``'s data by replaying an identical task's instructions on its own
        GM regions: the same instructions, in the same order, re-pointed (no issue, no
        scheduling, no race check: all are the same as the recorded task's)."""
        for name, arg in zip(replay.names, task.args):
            pointer = replay.pointers.get(name)
            if pointer is not None:
                pointer.flat = arg.flat()
        check_write_spans(task, _write_spans(task, stream))
        execute(replay.instrs, replay.sch, timed=bool(replay.races))
        buffers = self.defined.replayed(replay.args, task.args)
        if buffers:
            sch = replay.sch
            self.defined.task(task.label(), ((sch.start[i.seq], sch.end[i.seq], i)
                                             for i in replay.instrs), buffers)
        self.task_races.extend((task.name(), race) for race in replay.races)

    # -- phase 2: the chip -----------------------------------------------------------------
    def finish(self) -> ChipResult:
        """Time every submitted task on the chip and check the races between tasks."""
        prof, model = self.prof, self.model
        jobs = [Job(s.task.index, s.task.name(), s.stream, _bases(s.task), s.deps)
                for s in self.submitted]
        gm_bytes = max((a.alloc.base + a.alloc.nbytes for s in self.submitted
                        for a in s.task.args if isinstance(a, GMTensor)), default=0)
        memory = ChipMemory(line_bytes=model.l2_line_bytes, l2_bytes=model.l2_bytes,
                            l2_bytes_per_cycle=model.l2_bytes_per_cycle,
                            hbm_bytes_per_cycle=model.hbm_bytes_per_cycle, gm_bytes=gm_bytes)
        launch = prof.launch
        launch_cycles = launch.fixed_cycles if launch else model.launch_cycles
        dispatch_cycles = launch.block_cycles if launch else model.dispatch_cycles
        for s in self.submitted:
            if s.stream.placement == "group" and len(s.stream.units) - 1 > model.aiv_per_aic:
                raise ChipConfigError(f"task {s.task.label()} needs {len(s.stream.units)} "
                                      "cores in one group", hint="check the group kernel")
        engine = Engine(jobs, clusters=self.clusters, aiv_per_aic=model.aiv_per_aic,
                        memory=memory, issue_cycles=prof.issue_cycles,
                        sync_latency=prof.sync_latency_cycles,
                        dep_latency=cluster_model(self.tgt).flag_latency_cycles,
                        launch_cycles=launch_cycles, dispatch_cycles=dispatch_cycles)
        timelines = engine.run()
        names = [t.name for t in timelines]
        races = find_task_races([s.task for s in self.submitted],
                                [s.stream for s in self.submitted],
                                [s.deps for s in self.submitted])
        tasks = [TaskTiming(j.index, j.name, s.task.where(), tuple(names[k] for k in j.cores),
                            j.deps, j.ready, j.dispatched, j.start, j.end,
                            dict(zip(QUEUE_PIPES, j.busy)), j.gm_cycles, s.alone,
                            s.stream.placement == SKIPPED)
                 for j, s in zip(jobs, self.submitted)]
        notes = [] if launch else [f"profile {prof.name} has no launch floor: the chip model's "
                                   f"launch ({launch_cycles:.0f}) and dispatch "
                                   f"({dispatch_cycles:.0f}) cycles are used"]
        return ChipResult(max((t.end for t in tasks), default=0.0), tasks, timelines, races,
                          list(self.task_races), memory.stats, self.tgt.name, prof.name,
                          self.mode, self.numerics, self.clusters, launch_cycles,
                          dispatch_cycles, sum(s.reused for s in self.submitted), notes)


def _aliases(args) -> tuple:
    """How a task's GM arguments share allocations: for each, the first argument in the same
    allocation and the byte distance to it."""
    first: dict[int, tuple[int, int]] = {}
    out = []
    for i, arg in enumerate(args):
        if isinstance(arg, GMTensor):
            j, start = first.setdefault(id(arg.alloc), (i, arg.start))
            out.append((i, j, arg.start - start))
    return tuple(out)


def _write_spans(task: Task, stream: TaskStream):
    """The (buffer, lo, hi, op) of every GM write of ``stream`` on ``task``'s regions."""
    for tr in stream.transfers:
        if tr.write:
            region = task.args[tr.param]
            lo = region.start + tr.offset
            yield (f"GM %{region.name}", lo, lo + (tr.rows - 1) * tr.pitch + tr.row_bytes,
                   tr.op)


def _bases(task: Task) -> list:
    """Absolute GM byte address of each parameter's region (None for scalars)."""
    return [a.alloc.base + a.start if isinstance(a, GMTensor) else None for a in task.args]


def simulate_chip(tasks, *, target="a2a3", profile=None, mode: str = "reference",
                  numerics: bool = True, clusters: int | None = None) -> ChipResult:
    """Run ``tasks`` (in program order) on the chip and return the ``ChipResult``."""
    chip = ChipSimulator(target=target, profile=profile, mode=mode, numerics=numerics,
                         clusters=clusters)
    for task in tasks:
        chip.submit(task)
    return chip.finish()


__all__ = ["CHIP_MODES", "ChipConfigError", "ChipSimulator", "simulate_chip"]
