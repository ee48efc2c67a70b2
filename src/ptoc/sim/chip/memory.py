"""The chip's GM timing: a shared L2 in front of HBM, both shared by the cores moving data.

Why at transfer granularity: a core's own GM paths are already priced by its timing
profile (the per-core MTE2/MTE3 limits); what the chip adds is that the cores compete —
for the L2's aggregate bandwidth on every transfer, and for HBM on the bytes the L2 does not
hold. A transfer starting at cycle t takes

    max(own cost, bytes / (L2 bandwidth / transfers in flight),
        HBM bytes / (HBM bandwidth / transfers in flight that use HBM))

(bandwidth is shared equally among the transfers in flight when it starts [A]). The L2
keeps the lines transfers touched, least recently used first out (approximated: a line
touched when ``fills`` lines had been brought in is still held while fewer than the
capacity's worth have been brought in since [A]); a read brings its missing lines from
HBM, a write allocates its lines and sends its bytes to HBM [A].
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np


@dataclass
class MemoryStats:
    """What the cores moved: all GM bytes, the bytes the L2 served, the HBM bytes."""

    transfers: int = 0
    gm_bytes: int = 0
    l2_hit_bytes: int = 0
    hbm_bytes: int = 0
    stalled_cycles: float = 0.0      # cycles transfers took beyond their own cost

    @property
    def l2_hit_rate(self) -> float:
        return self.l2_hit_bytes / self.gm_bytes if self.gm_bytes else 0.0


class ChipMemory:
    """L2 residency per line and the transfers in flight (see module doc)."""

    def __init__(self, *, line_bytes: int, l2_bytes: int, l2_bytes_per_cycle: float,
                 hbm_bytes_per_cycle: float, gm_bytes: int):
        self.line = line_bytes
        self.capacity = max(1, l2_bytes // line_bytes)
        self.l2_bw = l2_bytes_per_cycle
        self.hbm_bw = hbm_bytes_per_cycle
        self.stamp = np.zeros(gm_bytes // line_bytes + 2, dtype=np.int64)
        self.fills = 0
        self._in_flight: list[float] = []
        self._hbm_in_flight: list[float] = []
        self.stats = MemoryStats()

    def lines(self, start: int, rows: int, pitch: int, row_bytes: int) -> np.ndarray:
        """The distinct L2 lines of ``rows`` runs of ``row_bytes`` bytes, ``pitch`` apart."""
        line = self.line
        if rows == 1:
            return np.arange(start // line, (start + row_bytes - 1) // line + 1)
        starts = start + np.arange(rows, dtype=np.int64) * pitch
        first = starts // line
        count = (starts + row_bytes - 1) // line - first + 1
        if (count == count[0]).all():
            found = (first[:, None] + np.arange(count[0])).ravel()
        else:
            offsets = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
            found = np.repeat(first, count) + offsets
        return np.unique(found) if pitch < row_bytes + line else found

    def transfer(self, t: float, own_cost: float, start: int, rows: int, pitch: int,
                 row_bytes: int, nbytes: int, write: bool) -> float:
        """Cycles a transfer starting at ``t`` takes; updates the L2 and the in-flight set."""
        lines = self.lines(start, rows, pitch, row_bytes)
        stamps = self.stamp[lines]
        held = (stamps > 0) & (self.fills - stamps < self.capacity)
        missing = int(lines.size - np.count_nonzero(held))
        self.fills += missing
        self.stamp[lines] = self.fills
        hbm = nbytes if write else missing * self.line
        while self._in_flight and self._in_flight[0] <= t:
            heapq.heappop(self._in_flight)
        while self._hbm_in_flight and self._hbm_in_flight[0] <= t:
            heapq.heappop(self._hbm_in_flight)
        cost = max(own_cost, nbytes * (len(self._in_flight) + 1) / self.l2_bw)
        if hbm:
            cost = max(cost, hbm * (len(self._hbm_in_flight) + 1) / self.hbm_bw)
            heapq.heappush(self._hbm_in_flight, t + cost)
        heapq.heappush(self._in_flight, t + cost)
        stats = self.stats
        stats.transfers += 1
        stats.gm_bytes += nbytes
        stats.hbm_bytes += hbm
        stats.l2_hit_bytes += 0 if write else max(0, nbytes - missing * self.line)
        stats.stalled_cycles += cost - own_cost
        return cost
