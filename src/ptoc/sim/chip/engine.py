"""The chip's timing engine: a task graph dispatched over core groups, every core's pipes
timed as the core simulator times them, GM transfers sharing the chip's memory.

Why event-driven in simulated time: a transfer's cost depends on what the other cores move
at the moment it starts (``ChipMemory``), and a task starts when a core frees up and its
producers have ended — both need the cores' timelines to advance together. Everything else
follows the core timing model (``ptoc.sim.schedule``): one scalar unit per core issuing one
instruction per ``issue_cycles`` into in-order pipe queues, ``set_flag``/``wait_flag``
bits per core, ``barrier(PIPE_ALL)`` draining the core's queues, cross-core dependences of
a core group after ``dep_latency``. Work that touches no GM is timed greedily lane by lane;
a GM transfer starts only when simulated time reaches it, in time order.

The device runtime [S] (simpler docs/scheduler.md, docs/dfx/sched-overhead-model.md): a
task is ready when every task it depends on has ended; ready tasks wait in one FIFO; the
device scheduler hands them out one at a time (``dispatch_cycles`` each, after a run
``launch_cycles``) to the first idle cores that fit them: an AIC for a cube kernel, an AIV
for a vector kernel, a whole core group (an AIC and its AIVs) for a group kernel. A task
whose dispatch predicate was false (placement ``SKIPPED``) is retired by the scheduler when
it takes it: it costs the scheduler its dispatch and occupies no core, and its dependents are
released then.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ptoc.backend.pipes import QUEUE_PIPES
from ptoc.errors import DeadlockError

from ptoc.sim.chip.memory import ChipMemory
from ptoc.sim.chip.stream import ALL_PIPES, TaskStream
from ptoc.sim.instr import SET, WAIT, WORK

_NPIPES = len(QUEUE_PIPES)
_LANE, _ISSUE, _DONE, _DISPATCH = 0, 1, 2, 3
#: the placement of a task retired at dispatch (its predicate false): no core, no stream
SKIPPED = "skipped"


@dataclass
class Job:
    """A task as the engine times it: its stream, its GM regions (``bases``: absolute
    start byte of each parameter's region, None for scalars), the jobs it follows."""

    index: int
    name: str
    stream: TaskStream
    bases: list
    deps: tuple[int, ...]
    # filled by the engine
    ready: float = 0.0
    dispatched: float = -1.0
    start: float = -1.0
    end: float = -1.0
    cores: tuple[int, ...] = ()
    busy: list[float] = field(default_factory=list)
    gm_cycles: float = 0.0


@dataclass
class CoreTimeline:
    """What one physical core did: its jobs in order and its busy cycles per pipe."""

    name: str
    jobs: list[int] = field(default_factory=list)
    busy: list[float] = field(default_factory=lambda: [0.0] * _NPIPES)
    task_cycles: float = 0.0


class _Run:
    """The per-instruction state of a job while it runs."""

    __slots__ = ("job", "stream", "phys", "ready", "end", "remaining", "sets", "waits",
                 "flag_waiters", "dep_waiters", "last")

    def __init__(self, job: Job, phys: tuple[int, ...]):
        n = len(job.stream)
        self.job = job
        self.stream = job.stream
        self.phys = phys
        self.ready = [0.0] * n
        self.end = [-1.0] * n
        self.remaining = n
        self.sets: dict[int, list[float]] = {}
        self.waits: dict[int, int] = {}
        self.flag_waiters: dict[int, list[tuple[int, int]]] = {}
        self.dep_waiters: dict[int, list[tuple[int, int]]] = {}
        self.last = 0.0


class _Core:
    __slots__ = ("run", "local", "seqs", "pos", "clock", "queue", "head", "free", "parked",
                 "barrier", "timeline")

    def __init__(self, name: str):
        self.run: _Run | None = None
        self.timeline = CoreTimeline(name)


class Engine:
    """Time ``jobs`` (in submission order) on ``model``'s cores; see the module doc."""

    def __init__(self, jobs: list[Job], *, clusters: int, aiv_per_aic: int,
                 memory: ChipMemory, issue_cycles: float, sync_latency: float,
                 dep_latency: float, launch_cycles: float, dispatch_cycles: float):
        self.jobs = jobs
        self.clusters = clusters
        self.aiv_per_aic = aiv_per_aic
        self.memory = memory
        self.issue = issue_cycles
        self.latency = sync_latency
        self.dep_latency = dep_latency
        self.launch = launch_cycles
        self.dispatch_cycles = dispatch_cycles
        names = [f"AIC{k}" for k in range(clusters)] + \
            [f"AIV{k}.{j}" for k in range(clusters) for j in range(aiv_per_aic)]
        self.cores = [_Core(name) for name in names]
        self.heap: list = []
        self.order = 0
        self.waiting = [0] * len(jobs)
        self.dependents: list[list[int]] = [[] for _ in jobs]
        self.ready: dict[str, list[int]] = {"aic": [], "aiv": [], "group": [],
                                            SKIPPED: []}   # heaps
        self.free_aic = set(range(clusters))
        self.free_aiv = set(range(clusters, len(self.cores)))
        self.dispatcher_free = launch_cycles
        self.done = 0

    # -- driver ----------------------------------------------------------------------------
    def run(self) -> list[CoreTimeline]:
        for job in self.jobs:
            for d in job.deps:
                self.dependents[d].append(job.index)
            self.waiting[job.index] = len(job.deps)
            if not job.deps:
                job.ready = 0.0
                heapq.heappush(self.ready[job.stream.placement], job.index)
        self._push(self.launch, _DISPATCH, 0, 0)
        heap = self.heap
        while heap:
            t, _, kind, a, b = heapq.heappop(heap)
            if kind == _LANE:
                self._advance(a, b, t)
            elif kind == _ISSUE:
                self._issue(a)
            elif kind == _DONE:
                self._finish(a, t)
            else:
                self._dispatch(t)
        if self.done < len(self.jobs):
            self._deadlock()
        return [core.timeline for core in self.cores]

    def _push(self, t: float, kind: int, a: int, b: int) -> None:
        self.order += 1
        heapq.heappush(self.heap, (t, self.order, kind, a, b))

    # -- the device scheduler --------------------------------------------------------------
    def _dispatch(self, t: float) -> None:
        """Hand ready tasks, oldest first, to idle cores that fit them; a kind of task (AIC,
        AIV, group) that finds no idle core waits without holding up the other kinds."""
        queues = self.ready
        blocked: set[str] = set()
        while True:
            heads = [(q[0], kind) for kind, q in queues.items() if q and kind not in blocked]
            if not heads:
                return
            index, kind = min(heads)
            job = self.jobs[index]
            phys = self._place(kind, len(job.stream.units))
            if phys is None:
                blocked.add(kind)
                continue
            heapq.heappop(queues[kind])
            start = max(t, self.dispatcher_free) + self.dispatch_cycles
            self.dispatcher_free = start
            job.dispatched = t
            self._start(job, phys, start)

    def _place(self, placement: str, units: int) -> tuple[int, ...] | None:
        free_aic, free_aiv = self.free_aic, self.free_aiv
        if placement == SKIPPED:
            return ()
        if placement == "aic":
            return (min(free_aic),) if free_aic else None
        if placement == "aiv":
            return (min(free_aiv),) if free_aiv else None
        c = self.clusters
        for k in sorted(free_aic):
            aivs = [c + k * self.aiv_per_aic + j for j in range(units - 1)]
            if all(a in free_aiv for a in aivs):
                return (k, *aivs)
        return None

    def _start(self, job: Job, phys: tuple[int, ...], t: float) -> None:
        run = _Run(job, phys)
        job.start, job.cores = t, phys
        job.busy = [0.0] * _NPIPES
        seqs = job.stream.by_core()
        for local, k in enumerate(phys):
            (self.free_aic if k < self.clusters else self.free_aiv).discard(k)
            core = self.cores[k]
            core.run, core.local, core.seqs, core.pos, core.clock = run, local, seqs[local], 0, t
            core.queue = [[] for _ in range(_NPIPES)]
            core.head = [0] * _NPIPES
            core.free = [t] * _NPIPES
            core.parked = [False] * _NPIPES
            core.barrier = -1
            core.timeline.jobs.append(job.index)
            self._issue(k)
        if run.remaining == 0:
            self._push(t, _DONE, job.index, 0)

    def _finish(self, index: int, t: float) -> None:
        job = self.jobs[index]
        job.end = t
        self.done += 1
        for k in job.cores:
            core = self.cores[k]
            core.timeline.task_cycles += t - job.start
            core.run = None
            (self.free_aic if k < self.clusters else self.free_aiv).add(k)
        for dep in self.dependents[index]:
            self.waiting[dep] -= 1
            other = self.jobs[dep]
            other.ready = max(other.ready, t)
            if self.waiting[dep] == 0:
                heapq.heappush(self.ready[other.stream.placement], dep)
        self._dispatch(t)

    # -- one core's scalar unit ------------------------------------------------------------
    def _issue(self, k: int) -> None:
        core = self.cores[k]
        run = core.run
        stream = run.stream
        pipes, ready = stream.pipe, run.ready
        seqs, queue, head = core.seqs, core.queue, core.head
        clock, issue = core.clock, self.issue
        while core.pos < len(seqs):
            seq = seqs[core.pos]
            p = pipes[seq]
            if p == ALL_PIPES:
                core.clock = clock
                core.barrier = seq
                self._try_barrier(k)
                return
            clock += issue
            ready[seq] = clock
            q = queue[p]
            q.append(seq)
            core.pos += 1
            if head[p] == len(q) - 1 and not core.parked[p]:
                self._push(max(core.free[p], clock), _LANE, k, p)
        core.clock = clock

    def _try_barrier(self, k: int) -> None:
        core = self.cores[k]
        if core.barrier < 0 or any(core.head[p] < len(core.queue[p]) for p in range(_NPIPES)):
            return
        run, seq = core.run, core.barrier
        drained = max(core.clock + self.issue, *core.free)
        run.end[seq] = drained
        core.barrier = -1
        core.clock = drained
        core.pos += 1
        self._retire(run, drained)
        if core.run is run and core.pos < len(core.seqs):
            self._push(drained, _ISSUE, k, 0)

    def _retire(self, run: _Run, end: float) -> None:
        run.remaining -= 1
        if end > run.last:
            run.last = end
        if run.remaining == 0:
            self._push(run.last, _DONE, run.job.index, 0)

    # -- one pipe lane -----------------------------------------------------------------------
    def _advance(self, k: int, p: int, t: float) -> None:
        core = self.cores[k]
        run = core.run
        if run is None:
            return
        core.parked[p] = False
        stream = run.stream
        kinds, costs, flags, deps, gms = (stream.kind, stream.cost, stream.flag, stream.deps,
                                          stream.gm)
        ready, end = run.ready, run.end
        q, head = core.queue[p], core.head
        free = core.free[p]
        busy = core.timeline.busy
        job_busy = run.job.busy
        while head[p] < len(q):
            seq = q[head[p]]
            start = free if free > ready[seq] else ready[seq]
            dep = deps[seq]
            if dep:
                blocked = next((d for d in dep if end[d] < 0), None)
                if blocked is not None:
                    run.dep_waiters.setdefault(blocked, []).append((k, p))
                    core.parked[p] = True
                    break
                start = max(start, max(end[d] for d in dep) + self.dep_latency)
            kind = kinds[seq]
            if kind == WAIT:
                f = flags[seq]
                fired = run.sets.get(f)
                n = run.waits.get(f, 0)
                if fired is None or len(fired) <= n:
                    run.flag_waiters.setdefault(f, []).append((k, p))
                    core.parked[p] = True
                    break
                start = max(start, fired[n] + self.latency)
                run.waits[f] = n + 1
                finish = start
            elif kind == WORK:
                g = gms[seq]
                if g >= 0:
                    if start > t:
                        self._push(start, _LANE, k, p)
                        break
                    tr = stream.transfers[g]
                    own = costs[seq]
                    cost = self.memory.transfer(start, own, run.job.bases[tr.param] + tr.offset,
                                                tr.rows, tr.pitch, tr.row_bytes, tr.nbytes,
                                                tr.write)
                    run.job.gm_cycles += cost
                else:
                    cost = costs[seq]
                finish = start + cost
                busy[p] += cost
                job_busy[p] += cost
            else:
                finish = start
            end[seq] = finish
            free = finish
            head[p] += 1
            if kind == SET:
                f = flags[seq]
                run.sets.setdefault(f, []).append(finish)
                for lane in run.flag_waiters.pop(f, ()):
                    self._push(max(finish, t), _LANE, *lane)
            if run.dep_waiters:
                for kk, pp in run.dep_waiters.pop(seq, ()):
                    self._push(max(finish + self.dep_latency, t), _LANE, kk, pp)
            run.remaining -= 1
            if finish > run.last:
                run.last = finish
            if not run.remaining:
                self._push(run.last, _DONE, run.job.index, 0)
        core.free[p] = free
        if head[p] == len(q):
            self._try_barrier(k)

    # -- errors ------------------------------------------------------------------------------
    def _deadlock(self) -> None:
        stuck = [job for job in self.jobs if job.end < 0]
        running = [job for job in stuck if job.start >= 0]
        if running:
            job = running[0]
            raise DeadlockError(
                f"task {job.name} never finishes on the chip: a wait_flag or a cross-core "
                f"dependence of it is never met ({len(running)} task(s) stuck)",
                hint="run the task alone (ptoc.sim.simulate) to see the blocked pipes")
        job = stuck[0]
        waits = [self.jobs[d].name for d in job.deps if self.jobs[d].end < 0]
        raise DeadlockError(
            f"task {job.name} never starts: " + (f"it waits for {', '.join(waits)}" if waits
                                                 else "no core of the chip can run it"),
            hint="check the tasks' dependencies form no cycle and the chip has the cores "
                 "the task needs")
