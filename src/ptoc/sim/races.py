"""Happens-before race checker: vector clocks over pipes, flags and barriers.

Why vector clocks instead of comparing simulated time windows: two accesses that happen
not to overlap in time under one timing profile can overlap under another (or on the
device). A race is a *missing ordering*, so it is found from the synchronisation structure
alone and never depends on timing luck.

Ordering edges: program order on one pipe (in-order queues); set_flag -> the wait_flag
that consumes it (k-th set to k-th wait of a triple); barrier(PIPE_ALL) orders everything
issued before it before everything after it. Two accesses to overlapping bytes of one
buffer, at least one a write, with no path of such edges between them, are a race.

Reports are grouped per pair of source ops (one unrolled loop gives one report with a
``count``), keeping the first dynamic occurrence's instructions and byte range.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.pipes import QUEUE_PIPES, Pipe

from ptoc.sim.instr import BARRIER, SET, WAIT, Access, Instr
from ptoc.sim.schedule import Schedule

_INDEX = {p: i for i, p in enumerate(QUEUE_PIPES)}
_GC_EVERY = 64


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


@dataclass(slots=True)
class _Live:
    seq: int
    pipe_index: int
    epoch: int
    access: Access
    write: bool


def find_races(instrs: list[Instr], sch: Schedule) -> list[Race]:
    """Every unordered conflicting access pair of a scheduled run (see module doc)."""
    npipes = len(QUEUE_PIPES)
    clocks = [[0] * npipes for _ in range(npipes)]
    set_clock: dict[int, list[int]] = {}
    remaining = [0] * npipes
    for ins in instrs:
        if ins.pipe in _INDEX:
            remaining[_INDEX[ins.pipe]] += 1
    live: dict[str, list[_Live]] = {}
    reports: dict[tuple, Race] = {}
    since_gc = 0
    for seq in sch.order:
        ins = instrs[seq]
        if ins.kind == BARRIER and ins.pipe is Pipe.PIPE_ALL:
            joined = [max(col) for col in zip(*clocks)]
            clocks = [list(joined) for _ in range(npipes)]
            live.clear()                       # everything before is ordered before all after
            continue
        p = _INDEX[ins.pipe]
        clock = clocks[p]
        clock[p] += 1
        remaining[p] -= 1
        if ins.kind == SET:
            set_clock[seq] = list(clock)
            continue
        if ins.kind == WAIT:
            src = set_clock.get(sch.matched_set.get(seq, -1))
            if src is not None:
                for i in range(npipes):
                    if src[i] > clock[i]:
                        clock[i] = src[i]
            continue
        if not ins.reads and not ins.writes:
            continue
        for write, accesses in ((False, ins.reads), (True, ins.writes)):
            for access in accesses:
                entries = live.get(access.buffer)
                if entries is None:
                    entries = live[access.buffer] = []
                for old in entries:
                    if old.seq == seq or not (write or old.write) \
                            or clock[old.pipe_index] >= old.epoch:
                        continue               # same op, read-read, or ordered before
                    if old.access.overlaps(access):
                        _report(reports, instrs[old.seq], old.write, old.access, ins, write,
                                access)
                entries.append(_Live(seq, p, clock[p], access, write))
        since_gc += 1
        if since_gc >= _GC_EVERY:
            since_gc = 0
            _collect(live, clocks, remaining)
    return sorted(reports.values(), key=lambda r: (r.first_seq, r.second_seq))


def _collect(live: dict[str, list[_Live]], clocks, remaining) -> None:
    """Drop accesses every future instruction is already ordered after."""
    active = [c for c, left in zip(clocks, remaining) if left > 0]
    if not active:
        live.clear()
        return
    known = [min(c[i] for c in active) for i in range(len(clocks))]
    for buffer, entries in live.items():
        live[buffer] = [e for e in entries if e.epoch > known[e.pipe_index]]


def _report(reports, a_ins: Instr, a_write: bool, a_acc: Access,
            b_ins: Instr, b_write: bool, b_acc: Access) -> None:
    if a_ins.seq > b_ins.seq:
        a_ins, a_write, a_acc, b_ins, b_write, b_acc = b_ins, b_write, b_acc, a_ins, a_write, a_acc
    kind = "WAW" if a_write and b_write else ("RAW" if a_write else "WAR")
    key = (kind, a_ins.static_id, b_ins.static_id, a_acc.buffer)
    found = reports.get(key)
    if found is not None:
        found.count += 1
        return
    lo, hi = a_acc.intersection(b_acc)
    reports[key] = Race(kind, a_acc.buffer, lo, hi, a_ins.label(), a_ins.where(), a_ins.pipe,
                        b_ins.label(), b_ins.where(), b_ins.pipe, a_ins.seq, b_ins.seq)
