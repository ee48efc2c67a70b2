"""Races between tasks on GM: two tasks touch the same bytes, at least one writes, and no
chain of dependencies orders them.

The same happens-before design as the core's checker (``ptoc.sim.races``): a race is a
*missing ordering*, found from the synchronisation structure alone — here the task graph
(inferred and stated dependencies) — never from which core a task happened to run on or
when. Ordering is reachability in the task graph (bitsets of ancestors, one big integer per
task). Accesses are each task's actual GM transfers (``TaskStream.transfers`` re-based on
its regions), compared byte-exactly: runs of rows with one pitch by their rows and columns,
anything else by bytes. Two atomic-add stores to the same bytes do not race (the adds
commute); an atomic add and a plain access do.

A task's dispatch predicate is a read of its one element (whether or not the task then
runs): the scheduler reads it when the task's dependencies are met, so a producer of the
element that is not a dependency races with it.

Reports are one per (task pair, buffer, kind), with both tasks' source lines and the PTO ops.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from ptoc.sim.chip.stream import TaskStream, Transfer
from ptoc.sim.task import Task


@dataclass(frozen=True)
class RaceSide:
    """One task of a race: its name, where it was launched, the PTO op that touched GM."""

    task: str
    where: str
    op: str

    def __str__(self) -> str:
        return f"{self.task} ({self.op}) launched at {self.where}"


@dataclass
class TaskRace:
    """An unordered conflicting pair of tasks on GM (``kind`` RAW, WAR or WAW; ``first`` is
    the earlier-submitted task; ``lo``/``hi`` the shared bytes of ``buffer``)."""

    kind: str
    buffer: str
    lo: int
    hi: int
    first: RaceSide
    second: RaceSide
    count: int = 1

    def __str__(self) -> str:
        times = f" ({self.count} overlapping accesses)" if self.count > 1 else ""
        return (f"{self.kind} race on {self.buffer} bytes [{self.lo}, {self.hi}) between tasks: "
                f"{self.first} and {self.second} are not ordered by any dependency{times} "
                f"(fix: make the later task read what the earlier writes, or state "
                f"deps=[...])")


@dataclass(frozen=True, slots=True)
class _Access:
    task: int
    write: bool
    atomic: bool
    start: int          # first byte in the allocation
    rows: int
    pitch: int
    row_bytes: int
    op: str

    @property
    def lo(self) -> int:
        return self.start

    @property
    def hi(self) -> int:
        return self.start + (self.rows - 1) * self.pitch + self.row_bytes

    def overlap(self, other: "_Access") -> tuple[int, int] | None:
        """None when no byte is touched by both, else the bytes from the first to the last
        shared one."""
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        if lo >= hi:
            return None
        if self.rows == 1 and other.rows == 1:
            return lo, hi
        if self.pitch == other.pitch and self.pitch >= max(self.row_bytes, other.row_bytes):
            p = self.pitch
            r1, c1 = divmod(self.start, p)
            r2, c2 = divmod(other.start, p)
            if c1 + self.row_bytes <= p and c2 + other.row_bytes <= p:
                rows = max(r1, r2), min(r1 + self.rows, r2 + other.rows)
                cols = max(c1, c2), min(c1 + self.row_bytes, c2 + other.row_bytes)
                if rows[0] >= rows[1] or cols[0] >= cols[1]:
                    return None
                return rows[0] * p + cols[0], (rows[1] - 1) * p + cols[1]
        # different shapes: compare row by row on the smaller side
        small, big = (self, other) if self.rows <= other.rows else (other, self)
        for i in range(small.rows):
            s = small.start + i * small.pitch
            e = s + small.row_bytes
            found = big._row_overlap(s, e)
            if found is not None:
                return found
        return None

    def _row_overlap(self, s: int, e: int) -> tuple[int, int] | None:
        if self.rows == 1:
            lo, hi = max(s, self.start), min(e, self.start + self.row_bytes)
            return (lo, hi) if lo < hi else None
        first = max(0, (s - self.start - self.row_bytes) // self.pitch)
        last = min(self.rows - 1, (e - self.start) // self.pitch)
        for r in range(first, last + 1):
            rs = self.start + r * self.pitch
            lo, hi = max(s, rs), min(e, rs + self.row_bytes)
            if lo < hi:
                return lo, hi
        return None


def _ancestors(deps: list[tuple[int, ...]]) -> list[int]:
    """For each task (in submission order), the bitset of the tasks it is ordered after."""
    reach: list[int] = []
    for ds in deps:
        bits = 0
        for d in ds:
            bits |= reach[d] | (1 << d)
        reach.append(bits)
    return reach


def find_task_races(tasks: list[Task], streams: list[TaskStream],
                    deps: list[tuple[int, ...]]) -> list[TaskRace]:
    """Every unordered conflicting pair of tasks (see module doc); ``tasks[i].index == i``."""
    reach = _ancestors(deps)
    per_buffer: dict[str, list[_Access]] = {}
    for task, stream in zip(tasks, streams):
        for tr in stream.transfers:
            region = task.args[tr.param]
            start = region.start + tr.offset
            per_buffer.setdefault(f"GM %{region.name}", []).append(_access(task.index, tr, start))
        if task.predicate is not None:   # the scheduler reads the element at dispatch
            lo, hi = task.predicate.byte_span()
            per_buffer.setdefault(f"GM %{task.predicate.tensor.name}", []).append(
                _Access(task.index, False, False, lo, 1, hi - lo, hi - lo,
                        f"predicate=({task.predicate.text}) at dispatch"))
    reports: dict[tuple, TaskRace] = {}
    for buffer, accesses in per_buffer.items():
        accesses.sort(key=lambda a: a.lo)
        los = [a.lo for a in accesses]
        longest = max(a.hi - a.lo for a in accesses)
        for w in accesses:
            if not w.write:
                continue
            # every access starting before w ends and ending after w starts
            i = bisect_left(los, w.lo - longest)
            j = bisect_left(los, w.hi)
            for other in accesses[i:j]:
                if other.task == w.task or other.hi <= w.lo:
                    continue
                if other.write and other.task < w.task:
                    continue                   # the pair is seen from the earlier writer
                if w.atomic and other.atomic and other.write:
                    continue
                a, b = (w, other) if w.task < other.task else (other, w)
                if (reach[b.task] >> a.task) & 1:
                    continue
                span = w.overlap(other)
                if span is None:
                    continue
                _report(reports, buffer, a, b, span, tasks)
    return sorted(reports.values(), key=lambda r: (r.first.task, r.second.task))


def _access(task: int, tr: Transfer, start: int) -> _Access:
    return _Access(task, tr.write, tr.atomic, start, tr.rows, tr.pitch, tr.row_bytes, tr.op)


def _report(reports, buffer: str, a: _Access, b: _Access, span, tasks: list[Task]) -> None:
    kind = "WAW" if a.write and b.write else ("RAW" if a.write else "WAR")
    key = (a.task, b.task, buffer, kind)
    found = reports.get(key)
    if found is not None:
        found.count += 1
        return
    ta, tb = tasks[a.task], tasks[b.task]
    reports[key] = TaskRace(kind, buffer, span[0], span[1], RaceSide(ta.name(), ta.where(), a.op),
                            RaceSide(tb.name(), tb.where(), b.op))
