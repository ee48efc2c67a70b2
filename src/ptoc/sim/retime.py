"""Timing without numerics: build a kernel's instruction stream once, time it under any profile.

Why: a kernel's control flow, addresses and the arguments of every cost are fixed before any
tile value exists (``ptoc.sim.core.issue``), so only the costs change from one timing
profile to the next. Calibrating a profile times the same streams hundreds of times; this
module rebuilds nothing and runs no arithmetic — it recomputes each instruction's cost from
the profile method and arguments recorded on it (``Instr.cost_key``) and re-runs the
scheduler.

Usage::

    stream = build_stream(pto_text, tensors, target="a2a3")
    t = retime(stream, get_profile("a2a3-device").for_cores(24))
    t.wall_cycles, t.pipe_busy, t.floor_cycles, t.total_cycles
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend import QUEUE_PIPES, Pipe, TimingProfile
from ptoc.sim.api import _guarded, _prepare, _resolve
from ptoc.sim.limits import DEFAULT_LIMITS
from ptoc.sim.instr import WORK, Instr
from ptoc.sim.schedule import schedule


@dataclass
class Stream:
    """One kernel's issued instructions and the GM bytes its tensors span."""

    instrs: list[Instr]
    target: str
    staged_bytes: int


@dataclass(frozen=True)
class StreamTiming:
    """Wall and per-pipe busy cycles of a stream under one profile, and its launch floor."""

    wall_cycles: float
    pipe_busy: dict[Pipe, float]
    floor_cycles: float

    @property
    def total_cycles(self) -> float:
        """Core cycles plus the launch/staging floor."""
        return self.wall_cycles + self.floor_cycles


def build_stream(pto, tensors, *, target="a2a3", profile=None, kernel: str | None = None
                 ) -> Stream:
    """The instruction stream ``simulate`` would time, without running it.

    Arguments as for ``ptoc.sim.simulate`` (Level-2 input is synchronised first); the
    tensors only need the right shapes and dtypes — their values are never read.
    """
    tgt, prof = _resolve(target, profile, "fast", "bit")
    prep = _prepare(pto, tensors, tgt, prof, mode="fast", kernel=kernel, limits=DEFAULT_LIMITS)
    instrs = _guarded(prep, prep.unit.run)
    staged = prep.tensor_bytes
    return Stream(instrs, tgt.name, staged)


def retime(stream: Stream, profile: TimingProfile, *, blocks: int = 1,
           staged: bool = True) -> StreamTiming:
    """Time ``stream`` under ``profile``: costs recomputed, flags and queues re-scheduled.

    ``blocks`` is the number of cores the kernel is launched on and ``staged`` whether the
    run copies the kernel's tensors in and out; both only enter the floor.
    """
    costs: dict[tuple, float] = {}
    for ins in stream.instrs:
        key = ins.cost_key
        if key is None:
            continue
        cost = costs.get(key)
        if cost is None:
            method, *args = key
            cost = costs[key] = getattr(profile, method)(*args)
        # as at issue: a data instruction must span time so its commit follows its read
        ins.cost = cost if cost > 0 or ins.commit is None else 1.0
    sch = schedule(stream.instrs, issue_cycles=profile.issue_cycles,
                   sync_latency=profile.sync_latency_cycles)
    busy = {p: 0.0 for p in QUEUE_PIPES}
    for ins in stream.instrs:
        if ins.kind == WORK and ins.pipe in busy:
            busy[ins.pipe] += sch.end[ins.seq] - sch.start[ins.seq]
    floor = profile.floor_cycles(blocks=blocks,
                                 staged_bytes=stream.staged_bytes if staged else 0)
    return StreamTiming(max(sch.end, default=0.0), busy, floor)
