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
* No pipe can move while a queue still holds work -> deadlock, reported with the blocked
  pipes and flags (never a hang).
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
             sync_latency: float = 0.0, flag_mode: str = "bit",
             make_timeline=None) -> Schedule:
    """Time ``instrs`` (in issue order; ``instrs[i].seq == i``).

    ``issue_cycles`` and ``sync_latency`` come from the timing profile;
    ``flag_mode="counter"`` counts sets like the pto-isa perf-sim ``EventChannel`` (a second
    set before the wait is then legal) instead of hardware bits;
    ``make_timeline(schedule)`` builds the partial timeline attached to a hard error.
    """
    n = len(instrs)
    sch = Schedule(start=[-1] * n, end=[-1] * n)
    if serial:
        _schedule_serial(instrs, sch, issue_cycles)
    else:
        _Timed(instrs, sch, make_timeline, issue_cycles, sync_latency,
               counter=flag_mode == "counter").run()
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
    def __init__(self, instrs, sch: Schedule, make_timeline, issue_cycles, sync_latency, *,
                 counter: bool = False):
        self.instrs = instrs
        self.counter = counter
        self.issue = issue_cycles
        self.latency = sync_latency
        self.sch = sch
        self.make_timeline = make_timeline
        self.free = {p: 0 for p in QUEUE_PIPES}
        self.queues: dict[Pipe, list[Instr]] = {p: [] for p in QUEUE_PIPES}
        self.ptr = {p: 0 for p in QUEUE_PIPES}
        self.ready: dict[int, int] = {}
        self.sets: dict[tuple, list[Instr]] = {}       # fired sets per flag, in firing order
        self.waits: dict[tuple, list[Instr]] = {}      # satisfied waits per flag

    # -- driver ------------------------------------------------------------------------
    def run(self) -> None:
        clock = 0.0
        for ins in self.instrs:
            if ins.kind == BARRIER and ins.pipe is Pipe.PIPE_ALL:
                self._drain()
                drained = max([clock + self.issue, *self.free.values()])
                self.sch.start[ins.seq], self.sch.end[ins.seq] = clock, drained
                self.sch.order.append(ins.seq)
                clock = drained
                continue
            if ins.pipe not in self.queues:
                raise DeadlockError(f"{ins.label()} is on {ins.pipe.name}, which has no queue",
                                    ins.pto_loc, hint="use one of " +
                                    ", ".join(p.name for p in QUEUE_PIPES))
            clock += self.issue
            self.ready[ins.seq] = clock
            self.queues[ins.pipe].append(ins)
        self._drain()
        self._check_protocol(final=True)

    def _drain(self) -> None:
        progress = True
        while progress:
            progress = False
            for pipe in QUEUE_PIPES:
                if self._advance(pipe):
                    progress = True
        blocked = [(p, self.queues[p][self.ptr[p]]) for p in QUEUE_PIPES
                   if self.ptr[p] < len(self.queues[p])]
        if blocked:
            self._check_protocol(final=False)
            self._deadlock(blocked)

    def _advance(self, pipe: Pipe) -> bool:
        queue, moved = self.queues[pipe], False
        sch = self.sch
        while self.ptr[pipe] < len(queue):
            ins = queue[self.ptr[pipe]]
            start = max(self.free[pipe], self.ready[ins.seq])
            if ins.kind == WAIT:
                fired = self.sets.get(ins.flag, ())
                done = self.waits.setdefault(ins.flag, [])
                if len(done) >= len(fired):
                    break                               # blocked until the matching set fires
                partner = fired[len(done)]
                start = max(start, sch.end[partner.seq] + self.latency)
                done.append(ins)
                sch.matched_set[ins.seq] = partner.seq
                sch.flow.append((partner.seq, ins.seq))
                end = start
            elif ins.kind == SET:
                self.sets.setdefault(ins.flag, []).append(ins)
                end = start
            else:
                end = start + ins.cost
            sch.start[ins.seq], sch.end[ins.seq] = start, end
            sch.order.append(ins.seq)
            self.free[pipe] = end
            self.ptr[pipe] += 1
            moved = True
        return moved

    # -- errors ------------------------------------------------------------------------
    def _timeline(self):
        return self.make_timeline(self.sch) if self.make_timeline else None

    def _check_protocol(self, *, final: bool) -> None:
        end = self.sch.end
        for flag, fired in self.sets.items():
            done = self.waits.get(flag, [])
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

    def _deadlock(self, blocked) -> None:
        issued: dict[tuple, int] = {}
        for ins in self.instrs:
            if ins.kind == SET:
                issued[ins.flag] = issued.get(ins.flag, 0) + 1
        lines, roots = [], []
        for pipe, ins in blocked:
            if ins.kind == WAIT:
                fired = len(self.sets.get(ins.flag, ()))
                waited = len(self.waits.get(ins.flag, ()))
                never = issued.get(ins.flag, 0) <= waited
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
        raise DeadlockError(
            "deadlock: no pipe can make progress; " + "; ".join(lines), first.pto_loc,
            hint="every wait_flag needs an earlier-or-concurrent set_flag of the same "
                 "(src, dst, id) that is not itself stuck behind a wait; check the matching "
                 "set_flag exists on the source pipe (a barrier(PIPE_ALL) cannot pass a wait "
                 "whose set is issued after it)", timeline=self._timeline())
