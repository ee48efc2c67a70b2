"""Which on-chip bytes hold live data when: buffer occupancy over cycles, from a run's accesses.

Why from the run and not the program: the trace shows what the simulated core did, so a
region is occupied from the cycle an instruction starts writing it until the last read of
that value ends. A region is one written byte range of one buffer (``Mat``, ``Vec``, ...);
a later write to it starts a new occupancy span (the old value is dead), except when the
same instruction also reads it (an in-place accumulate keeps the value alive). A read
extends every region it overlaps, so a window read keeps its whole tile alive.
"""

from __future__ import annotations

from dataclasses import dataclass

#: On-chip buffers in the order the traces and the memory map show them.
SPACE_ORDER = ("Mat", "Left", "Right", "Acc", "Bias", "Vec")


@dataclass
class LiveSpan:
    """Bytes [lo, hi) of ``buffer`` live from ``start`` to ``end`` (cycles); who wrote them."""

    buffer: str
    lo: int
    hi: int
    start: float
    end: float
    writer: int          # seq of the instruction that wrote the value
    readers: int = 0

    @property
    def nbytes(self) -> int:
        return self.hi - self.lo


def on_chip(buffer: str) -> bool:
    return not buffer.startswith("GM")


def occupancy(records) -> dict[str, list[LiveSpan]]:
    """Per on-chip buffer, every live span of the run, in start order."""
    current: dict[tuple[str, int, int], LiveSpan] = {}
    spans: dict[str, list[LiveSpan]] = {}
    by_buffer: dict[str, list[tuple[int, int]]] = {}
    for rec in sorted(records, key=lambda r: (r.start, r.seq)):
        for acc in rec.reads:
            if not on_chip(acc.buffer):
                continue
            for lo, hi in by_buffer.get(acc.buffer, ()):
                span = current[(acc.buffer, lo, hi)]
                if lo < acc.hi and acc.lo < hi and span.start <= rec.start:
                    span.end = max(span.end, rec.end)
                    span.readers += 1
        for acc in rec.writes:
            if not on_chip(acc.buffer):
                continue
            key = (acc.buffer, acc.lo, acc.hi)
            span = current.get(key)
            in_place = span is not None and any(
                r.buffer == acc.buffer and r.lo < acc.hi and acc.lo < r.hi for r in rec.reads)
            if in_place:
                span.end = max(span.end, rec.end)
                continue
            span = LiveSpan(acc.buffer, acc.lo, acc.hi, rec.start, rec.end, rec.seq)
            if key not in current:
                by_buffer.setdefault(acc.buffer, []).append((acc.lo, acc.hi))
            current[key] = span
            spans.setdefault(acc.buffer, []).append(span)
    return spans


def live_bytes(spans: list[LiveSpan]) -> list[tuple[float, int]]:
    """(cycle, bytes live) steps for one buffer; overlapping spans count their bytes once."""
    real = [i for i, s in enumerate(spans) if s.end > s.start]   # instants hold nothing
    events = sorted([(spans[i].start, 1, i) for i in real] + [(spans[i].end, 0, i) for i in real])
    active: set[int] = set()
    steps: list[tuple[float, int]] = []
    k = 0
    while k < len(events):
        t = events[k][0]
        while k < len(events) and events[k][0] == t:   # every change at this cycle
            _, opening, i = events[k]
            (active.add if opening else active.discard)(i)
            k += 1
        total = union_length(sorted((spans[i].lo, spans[i].hi) for i in active))
        if not steps or steps[-1][1] != total:
            steps.append((t, total))
    return steps


def union_length(ranges: list[tuple[int, int]]) -> int:
    """Bytes covered by sorted ``[lo, hi)`` ranges, overlaps counted once."""
    total, cur_lo, cur_hi = 0, 0, None
    for lo, hi in ranges:
        if cur_hi is None or lo > cur_hi:
            total += (cur_hi - cur_lo) if cur_hi is not None else 0
            cur_lo, cur_hi = lo, hi
        else:
            cur_hi = max(cur_hi, hi)
    return total + ((cur_hi - cur_lo) if cur_hi is not None else 0)
