"""Event-driven timing of the per-pipe in-order queues (hw-model.md §6.1).

Why separate from the data path: timing depends only on costs and flags, never on tile
values, so it is computed first; the data executor then replays reads (at start) and
commits (at end) in the order this schedule fixes.

Rules:

* The scalar unit issues one instruction per cycle in program order; an instruction
  issued at cycle t is in its pipe's queue from t + 1.
* A pipe runs one instruction at a time: start = max(pipe free, in queue);
  end = start + cost.
* ``set_flag`` sits in its source pipe's queue, takes no time and fires when everything
  before it on that pipe has finished. ``wait_flag`` sits in the destination pipe's queue
  and blocks it until the flag is set, then clears it. Flags are bits: the k-th wait of a
  (src, dst, id) triple consumes its k-th set; a set that lands while the bit is still 1
  is a protocol error, and so is a bit still set at kernel end.
* ``barrier(PIPE_ALL)`` stops the scalar unit until every queue has drained.
* Several cores (a core group) each have a scalar unit and their own queues and flags; an
  instruction with ``deps`` (the cross-core pipe protocol) starts ``dep_latency`` after the
  last of them ends. A barrier drains only its own core's queues.
* No pipe can move while a queue still holds work -> deadlock, reported with the blocked
  pipes, flags and cross-core partners (never a hang).
* ``serial``: every instruction starts after the previous one ended (golden timing).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.backend.pipes import QUEUE_PIPES, Pipe
from ptoc.errors import DeadlockError, FlagProtocolError

from ptoc.sim.instr import BARRIER, SET, WAIT, Instr, flag_name


@dataclass
class Schedule:
    """Start/end cycle of every instruction (indexed by ``seq``) and how flags matched.

    ``order`` is the order the scheduler committed instructions in; it respects every
    happens-before edge (same pipe, flag, barrier) and is what the race checker walks.
    ``matched_set[wait_seq]`` is the ``seq`` of the set a wait consumed.
    """

    start: list[int]
    end: list[int]
    order: list[int] = field(default_factory=list)
    matched_set: dict[int, int] = field(default_factory=dict)
    flow: list[tuple[int, int]] = field(default_factory=list)   # (set seq, wait seq)


FLAG_MODES = ("bit", "counter")


def schedule(instrs: list[Instr], *, serial: bool = False, issue_cycles: float = 1.0,
             sync_latency: float = 0.0, flag_mode: str = "bit", make_timeline=None,
             dep_latency: float = 0.0) -> Schedule:
    """Time ``instrs`` (in issue order per core; ``instrs[i].seq == i``).

    ``issue_cycles`` and ``sync_latency`` come from the timing profile;
    ``flag_mode="counter"`` counts sets like the pto-isa perf-sim ``EventChannel`` (a second
    set before the wait is then legal) instead of hardware bits;
    ``make_timeline(schedule)`` builds the partial timeline attached to a hard error;
    ``dep_latency`` is the delay of a cross-core dependence (``Instr.deps``).
    """
    n = len(instrs)
    sch = Schedule(start=[-1] * n, end=[-1] * n)
    if serial:
        _schedule_serial(instrs, sch, issue_cycles)
    else:
        _Timed(instrs, sch, make_timeline, issue_cycles, sync_latency,
               counter=flag_mode == "counter", dep_latency=dep_latency).run()
    return sch


def _schedule_serial(instrs: list[Instr], sch: Schedule, issue_cycles: float) -> None:
    """Every instruction starts after the previous one ended; issue slots as in timed mode."""
    clock = prev_end = 0.0
    for ins in instrs:
        if ins.kind == BARRIER and ins.pipe is Pipe.PIPE_ALL:
            drained = max(clock + issue_cycles, prev_end)
            sch.start[ins.seq], sch.end[ins.seq] = clock, drained
            clock = drained
        else:
            clock += issue_cycles
            start = max(prev_end, clock)
            prev_end = start + ins.cost
            sch.start[ins.seq], sch.end[ins.seq] = start, prev_end
        sch.order.append(ins.seq)


class _Timed:
    """The event-driven run of one or more cores: each core's scalar unit issues its own
    stream into its own pipe queues (a lane is a (core, pipe) pair); cores interact only
    through ``Instr.deps``."""

    def __init__(self, instrs, sch: Schedule, make_timeline, issue_cycles, sync_latency, *,
                 counter: bool = False, dep_latency: float = 0.0):
        self.instrs = instrs
        self.counter = counter
        self.issue = issue_cycles
        self.latency = sync_latency
        self.dep_latency = dep_latency
        self.sch = sch
        self.make_timeline = make_timeline
        ncores = 1 + max((ins.core for ins in instrs), default=0)
        self.streams: list[list[Instr]] = [[] for _ in range(ncores)]
        for ins in instrs:
            self.streams[ins.core].append(ins)
        self.lanes = [(c, p) for c in range(ncores) for p in QUEUE_PIPES]
        self.free = {lane: 0 for lane in self.lanes}
        self.queues: dict[tuple, list[Instr]] = {lane: [] for lane in self.lanes}
        self.ptr = {lane: 0 for lane in self.lanes}
        self.ready: dict[int, int] = {}
        self.sets: dict[tuple, list[Instr]] = {}       # fired sets per (core, flag), in order
        self.waits: dict[tuple, list[Instr]] = {}      # satisfied waits per (core, flag)

    # -- driver ------------------------------------------------------------------------
    def run(self) -> None:
        pos = [0] * len(self.streams)
        clock = [0.0] * len(self.streams)
        while True:
            issued = False
            for core, stream in enumerate(self.streams):
                while pos[core] < len(stream):
                    ins = stream[pos[core]]
                    if ins.kind == BARRIER and ins.pipe is Pipe.PIPE_ALL:
                        if not self._drained(core):
                            break              # the scalar unit waits for its queues to drain
                        drained = max([clock[core] + self.issue,
                                       *(self.free[(core, p)] for p in QUEUE_PIPES)])
                        self.sch.start[ins.seq], self.sch.end[ins.seq] = clock[core], drained
                        self.sch.order.append(ins.seq)
                        clock[core] = drained
                    else:
                        if ins.pipe not in QUEUE_PIPES:
                            raise DeadlockError(
                                f"{ins.label()} is on {ins.pipe.name}, which has no queue",
                                ins.pto_loc, hint="use one of " +
                                ", ".join(p.name for p in QUEUE_PIPES))
                        clock[core] += self.issue
                        self.ready[ins.seq] = clock[core]
                        self.queues[(core, ins.pipe)].append(ins)
                    pos[core] += 1
                    issued = True
            moved = self._advance_all()
            done = all(p == len(s) for p, s in zip(pos, self.streams))
            if done and all(self._drained(c) for c in range(len(self.streams))):
                break
            if not issued and not moved:
                self._check_protocol(final=False)
                self._deadlock()
        self._check_protocol(final=True)

    def _drained(self, core: int) -> bool:
        return all(self.ptr[(core, p)] == len(self.queues[(core, p)]) for p in QUEUE_PIPES)

    def _advance_all(self) -> bool:
        moved_any, progress = False, True
        while progress:
            progress = False
            for lane in self.lanes:
                if self._advance(lane):
                    progress = moved_any = True
        return moved_any

    def _advance(self, lane: tuple) -> bool:
        queue, moved = self.queues[lane], False
        sch = self.sch
        while self.ptr[lane] < len(queue):
            ins = queue[self.ptr[lane]]
            start = max(self.free[lane], self.ready[ins.seq])
            if ins.deps:
                ends = [sch.end[d] if d >= 0 else -1 for d in ins.deps]
                if min(ends) < 0:
                    break                               # a partner on another core is pending
                start = max(start, max(ends) + self.dep_latency)
            if ins.kind == WAIT:
                key = (ins.core, ins.flag)
                fired = self.sets.get(key, ())
                done = self.waits.setdefault(key, [])
                if len(done) >= len(fired):
                    break                               # blocked until the matching set fires
                partner = fired[len(done)]
                start = max(start, sch.end[partner.seq] + self.latency)
                done.append(ins)
                sch.matched_set[ins.seq] = partner.seq
                sch.flow.append((partner.seq, ins.seq))
                end = start
            elif ins.kind == SET:
                self.sets.setdefault((ins.core, ins.flag), []).append(ins)
                end = start
            else:
                end = start + ins.cost
            sch.start[ins.seq], sch.end[ins.seq] = start, end
            sch.order.append(ins.seq)
            sch.flow.extend((d, ins.seq) for d in ins.deps)
            self.free[lane] = end
            self.ptr[lane] += 1
            moved = True
        return moved

    # -- errors ------------------------------------------------------------------------
    def _timeline(self):
        return self.make_timeline(self.sch) if self.make_timeline else None

    def _check_protocol(self, *, final: bool) -> None:
        end = self.sch.end
        for (core, flag), fired in self.sets.items():
            done = self.waits.get((core, flag), [])
            for k in range(1, 0 if self.counter else len(fired)):
                second = fired[k]
                if k - 1 < len(done):
                    if end[second.seq] >= end[done[k - 1].seq]:
                        continue
                    cleared = f"its wait {done[k - 1].label()} clears it only at cycle " \
                              f"{end[done[k - 1].seq]:.1f}"
                elif not final:
                    continue
                else:
                    cleared = "no wait_flag ever clears it"
                first = fired[k - 1]
                raise FlagProtocolError(
                    f"flag {flag_name(flag)} set twice: {first.label()} set it at cycle "
                    f"{end[first.seq]:.1f}, {second.label()} sets it again at cycle "
                    f"{end[second.seq]:.1f} while it is still set ({cleared}); flags are bits, "
                    f"so one set is lost", second.pto_loc,
                    hint="add the matching wait_flag between the two sets, or use a "
                         "different event id", timeline=self._timeline())
            if final and len(fired) > len(done):
                last = fired[-1]
                raise FlagProtocolError(
                    f"flag {flag_name(flag)} is still set at kernel end (set by "
                    f"{last.label()}, never waited); on hardware it corrupts the next "
                    f"kernel's synchronisation", last.pto_loc,
                    hint=f"add pto.wait_flag[{flag[0].name}, {flag[1].name}, "
                         f"EVENT_ID{flag[2]}] before the end of the kernel, or remove the set",
                    timeline=self._timeline())

    def _deadlock(self) -> None:
        blocked = [(lane[1], self.queues[lane][self.ptr[lane]]) for lane in self.lanes
                   if self.ptr[lane] < len(self.queues[lane])]
        issued: dict[tuple, int] = {}
        for ins in self.instrs:
            if ins.kind == SET:
                key = (ins.core, ins.flag)
                issued[key] = issued.get(key, 0) + 1
        lines, roots = [], []
        for pipe, ins in blocked:
            pending = [d for d in ins.deps if d < 0 or self.sch.end[d] < 0]
            if pending:
                never = any(d < 0 for d in pending)
                if never:
                    roots.append(ins)
                lines.append(f"{pipe.name} blocked at {ins.label()}, which {ins.wait_note}"
                             + (" (never issued)" if never else ""))
            elif ins.kind == WAIT:
                key = (ins.core, ins.flag)
                fired = len(self.sets.get(key, ()))
                waited = len(self.waits.get(key, ()))
                never = issued.get(key, 0) <= waited
                if never:
                    roots.append(ins)
                lines.append(f"{pipe.name} blocked at {ins.label()} waiting for "
                             f"{flag_name(ins.flag)} (set {fired} time(s), already waited "
                             f"{waited} time(s)"
                             + ("; no further set_flag of it is ever issued)" if never else ")"))
            else:
                lines.append(f"{pipe.name} blocked at {ins.label()}")
        # point at a wait that can never be met (the root cause), else the first blocked one
        first = roots[0] if roots else blocked[0][1]
        cross = any(ins.deps for _, ins in blocked)
        raise DeadlockError(
            "deadlock: no pipe can make progress; " + "; ".join(lines), first.pto_loc,
            hint=("every pop needs a push of the same pipe on the peer core, and every push "
                  "beyond the ring depth needs the consumer to free a slot (tfree after the "
                  "popped tile's last reader); " if cross else "")
                 + "every wait_flag needs an earlier-or-concurrent set_flag of the same "
                 "(src, dst, id) that is not itself stuck behind a wait; check the matching "
                 "set_flag exists on the source pipe (a barrier(PIPE_ALL) cannot pass a wait "
                 "whose set is issued after it)", timeline=self._timeline())
