"""Happens-before race checker: vector clocks over pipes, flags and barriers.

Why vector clocks instead of comparing simulated time windows: two accesses that happen
not to overlap in time under one timing profile can overlap under another (or on the
device). A race is a *missing ordering*, so it is found from the synchronisation structure
alone and never depends on timing luck.

Ordering edges: program order on one pipe (in-order queues); set_flag -> the wait_flag
that consumes it (k-th set to k-th wait of a triple); barrier(PIPE_ALL) orders everything
its core issued before it before everything that core issues after it; a cross-core
dependence (``Instr.deps``: push -> pop, free -> the push that reuses the slot). In a core
group each (core, pipe) pair is a lane of the vector clocks, so accesses of different
cores to shared GM (or to a peer's ring slot) are checked the same way. Two accesses to overlapping bytes of one
buffer, at least one a write, with no path of such edges between them, are a race — except
two atomic-add writes, which commute.

Reports are grouped per pair of source ops (one unrolled loop gives one report with a
``count``), keeping the first dynamic occurrence's instructions and byte range.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from ptoc.backend.pipes import QUEUE_PIPES, Pipe

from ptoc.sim.instr import BARRIER, SET, WAIT, Access, Instr
from ptoc.sim.schedule import Schedule

_INDEX = {p: i for i, p in enumerate(QUEUE_PIPES)}


@dataclass
class Race:
    """An unordered pair of conflicting accesses (``kind`` RAW, WAR or WAW).

    ``first`` is the earlier-issued instruction; RAW means ``second`` reads bytes
    ``first`` writes. ``lo``/``hi`` is the overlapping byte range of ``buffer`` (for GM,
    byte offsets into the bound tensor). ``count`` is how many dynamic instances of this
    source pair raced.
    """

    kind: str
    buffer: str
    lo: int
    hi: int
    first: str
    first_where: str
    first_pipe: Pipe
    second: str
    second_where: str
    second_pipe: Pipe
    first_seq: int
    second_seq: int
    count: int = 1

    def __str__(self) -> str:
        times = f" ({self.count} occurrences)" if self.count > 1 else ""
        return (f"{self.kind} race on {self.buffer} bytes [{self.lo}, {self.hi}): "
                f"{self.first} on {self.first_pipe.name} at {self.first_where} and "
                f"{self.second} on {self.second_pipe.name} at {self.second_where} are not "
                f"ordered by a flag, barrier or same-pipe order{times}")


class _History:
    """The accesses of one lane to one buffer of one kind (read or write), in issue order.

    Epochs on one lane only grow, so the accesses a later instruction is *not* ordered
    after — epoch above its clock entry for this lane — are always a suffix, found by
    bisection. That keeps the checker O(n log n) (plus the races it reports) whatever the
    other lanes do; the earlier design could forget an access only once every lane with
    work left had synchronised past it, which a lane idle until the end never does.
    """

    __slots__ = ("epochs", "seqs", "accesses")

    def __init__(self):
        self.epochs: list[int] = []
        self.seqs: list[int] = []
        self.accesses: list[Access] = []

    def unordered(self, known: int) -> range:
        """Indices of the accesses with epoch > ``known``."""
        return range(bisect_right(self.epochs, known), len(self.epochs))


_WIDTH = len(QUEUE_PIPES)


def _lane(ins: Instr) -> int:
    """The in-order queue an instruction runs on (one vector-clock component): one per
    (core, pipe)."""
    return ins.core * _WIDTH + _INDEX[ins.pipe]


def find_races(instrs: list[Instr], sch: Schedule) -> list[Race]:
    """Every unordered conflicting access pair of a scheduled run (see module doc)."""
    ncores = 1 + max((ins.core for ins in instrs), default=0)
    nlanes = _WIDTH * ncores
    clocks = [[0] * nlanes for _ in range(nlanes)]
    set_clock: dict[int, list[int]] = {}
    sources = {d for ins in instrs for d in ins.deps if d >= 0}
    dep_clock: dict[int, list[int]] = {}      # clock after a cross-core dependence source
    history: dict[tuple[str, int, bool], _History] = {}
    reports: dict[tuple, Race] = {}
    for seq in sch.order:
        ins = instrs[seq]
        if ins.kind == BARRIER and ins.pipe is Pipe.PIPE_ALL:
            own = slice(ins.core * _WIDTH, (ins.core + 1) * _WIDTH)
            joined = [max(col) for col in zip(*clocks[own])]
            clocks[own] = [list(joined) for _ in range(_WIDTH)]
            if ncores == 1:
                history.clear()                # everything before is ordered before all after
            continue
        p = _lane(ins)
        clock = clocks[p]
        clock[p] += 1
        for dep in ins.deps:
            _join(clock, dep_clock.get(dep))
        if ins.kind == SET:
            set_clock[seq] = list(clock)
            continue
        if ins.kind == WAIT:
            _join(clock, set_clock.pop(sch.matched_set.get(seq, -1), None))
            continue
        if seq in sources:
            dep_clock[seq] = list(clock)
        if not ins.reads and not ins.writes:
            continue
        for write, accesses in ((False, ins.reads), (True, ins.writes)):
            for access in accesses:
                _check(reports, instrs, ins, write, access, clock, p, history)
        for write, accesses in ((False, ins.reads), (True, ins.writes)):
            for access in accesses:
                h = history.get((access.buffer, p, write))
                if h is None:
                    h = history[(access.buffer, p, write)] = _History()
                h.epochs.append(clock[p])
                h.seqs.append(seq)
                h.accesses.append(access)
    return sorted(reports.values(), key=lambda r: (r.first_seq, r.second_seq))


def _join(clock: list[int], other: list[int] | None) -> None:
    """clock = max(clock, other) element-wise (no-op when the partner left no snapshot)."""
    if other is not None:
        for i, value in enumerate(other):
            if value > clock[i]:
                clock[i] = value


def _check(reports, instrs, ins: Instr, write: bool, access: Access, clock: list[int],
           lane: int, history) -> None:
    """Report every earlier access to ``access``'s bytes that ``ins`` is not ordered after
    (a read only conflicts with writes)."""
    for old_write in ((False, True) if write else (True,)):
        for q in range(len(clock)):
            h = history.get((access.buffer, q, old_write)) if q != lane else None
            if h is None:
                continue
            for i in h.unordered(clock[q]):
                old = h.accesses[i]
                if old.atomic and access.atomic:
                    continue                   # atomic adds commute
                if old.overlaps(access):
                    _report(reports, instrs[h.seqs[i]], old_write, old, ins, write, access)


def _report(reports, a_ins: Instr, a_write: bool, a_acc: Access,
            b_ins: Instr, b_write: bool, b_acc: Access) -> None:
    if a_ins.seq > b_ins.seq:
        a_ins, a_write, a_acc, b_ins, b_write, b_acc = b_ins, b_write, b_acc, a_ins, a_write, a_acc
    kind = "WAW" if a_write and b_write else ("RAW" if a_write else "WAR")
    key = (kind, a_ins.core, a_ins.static_id, b_ins.core, b_ins.static_id, a_acc.buffer)
    found = reports.get(key)
    if found is not None:
        found.count += 1
        return
    lo, hi = a_acc.intersection(b_acc)
    reports[key] = Race(kind, a_acc.buffer, lo, hi, a_ins.tag(), a_ins.where(), a_ins.pipe,
                        b_ins.tag(), b_ins.where(), b_ins.pipe, a_ins.seq, b_ins.seq)
