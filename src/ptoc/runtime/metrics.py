"""Measures of a simulated run that the dbC feature is judged by.

The FIXPIPE drain of an output tile is "hidden" for the cycles during which the cube (M
pipe) is busy with other work; with one L0C accumulator the cube waits for each drain, with
two the next tile's MADs run underneath it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.pipes import Pipe

DRAIN_OPS = ("pto.tstore", "pto.tinsert", "pto.tmov")


@dataclass(frozen=True)
class DrainOverlap:
    total: float
    hidden: float

    @property
    def share(self) -> float:
        return self.hidden / self.total if self.total else 0.0


def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def drain_overlap(sim) -> DrainOverlap:
    """Total FIX drain cycles of a SimResult and how many of them overlap M-pipe work."""
    cube = _union(sim.busy_intervals(Pipe.PIPE_M))
    total = hidden = 0.0
    for record in sim.on_pipe(Pipe.PIPE_FIX):
        if record.name not in DRAIN_OPS:
            continue
        total += record.end - record.start
        for start, end in cube:
            hidden += max(0.0, min(end, record.end) - max(start, record.start))
    return DrainOverlap(total, hidden)
