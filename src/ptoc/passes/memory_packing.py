"""Packing intervals into buffers, and the capacity fit loop (reference §9.2, §9.3).

Per memory space, first-fit-decreasing: intervals sorted by size (largest first), then
definition point, then index; each joins the first buffer all of whose members it may
share with, else opens a new buffer whose first member is its representative. Sharing is
refused when lifetimes overlap (unless both are arms of one if-phi), when an op would
write its result over an operand it is still reading (the no-alias guard), or when the
pipeline-stage guard says the two belong to different stages.

The fit loop then measures the space like the allocator will (32-byte aligned bump from
the reserved end) and, while it does not fit, lowers the depth of the pipeline group with
the largest slot by one (ties: lowest group id) and re-packs, at most 256 times. If no
depth is left to give up, the space is re-packed with the legacy stage rule and a warning
says so; if some single buffer is larger than the space on its own, that is left to
AllocateMemoryAddr's error instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ptoc.dtypes import MemorySpace
from ptoc.passes.memory_lifetimes import Interval, overlaps
from ptoc.passes.pipeline_capacity_gate import PipelineGate, align32

MAX_REPACKS = 256


@dataclass(eq=False)
class Buffer:
    """One physical buffer: the representative (largest, first) and the intervals it hosts."""

    members: list[Interval]

    @property
    def rep(self) -> Interval:
        return self.members[0]

    @property
    def slot(self) -> int:
        return max(m.size for m in self.members)

    @property
    def pinned(self) -> bool:
        return self.rep.pinned


def pack(intervals: list[Interval], can_share: Callable[[Interval, Interval], bool]) -> list[Buffer]:
    """First-fit-decreasing; pinned intervals always get a buffer of their own."""
    buffers: list[Buffer] = []
    for cand in sorted(intervals, key=lambda iv: (-iv.size, iv.def_point, iv.index)):
        home = None
        if not cand.pinned:
            for buf in buffers:
                if buf.pinned:
                    continue
                for m in buf.members:
                    if not can_share(cand, m):
                        break
                else:
                    home = buf
                    break
        if home is None:
            buffers.append(Buffer([cand]))
        else:
            home.members.append(cand)
    return buffers


def footprint(buffers: list[Buffer], reserved: int = 0) -> int:
    """High-water mark of a 32-byte aligned bump allocation starting at ``reserved``."""
    cursor = reserved
    for buf in buffers:
        cursor = align32(cursor + buf.slot)
    return cursor


@dataclass
class SpacePlan:
    """The packing chosen for one space, with what the gate did to get there."""

    space: MemorySpace
    capacity: int
    buffers: list[Buffer]
    gate: PipelineGate
    reserved: int = 0
    fell_back: bool = False
    warning: str | None = None
    repacks: int = 0
    shed: list[int] = field(default_factory=list)
    #: (kind, summary, fields) to record if MemoryReuse keeps this plan (it may try another)
    decisions: list[tuple[str, str, dict]] = field(default_factory=list)

    @property
    def overflows(self) -> bool:
        return bool(self.capacity) and footprint(self.buffers, self.reserved) > self.capacity


def plan_space(space: MemorySpace, intervals: list[Interval], capacity: int,
               no_alias: Callable[[Interval, Interval], bool], reserved: int = 0,
               caps: Mapping[int, int] | None = None) -> SpacePlan:
    """Pack one memory space under the pipeline guard, shedding depth until it fits
    (``caps``: depth bounds per group, see ``PipelineGate.build``)."""
    gate = PipelineGate.build(space, intervals, capacity, caps)

    def can_share(c: Interval, m: Interval) -> bool:
        if overlaps(c, m):
            return False
        if no_alias(c, m):
            return False
        return not gate.blocks(c, m)

    plan = SpacePlan(space, capacity, pack(intervals, can_share), gate, reserved)
    if not capacity:
        return plan
    while footprint(plan.buffers, reserved) > capacity:
        victim = gate.shed_candidate()
        if victim is None or plan.repacks >= MAX_REPACKS:
            _fall_back(plan, intervals, can_share)
            break
        victim.depth -= 1
        plan.shed.append(victim.group)
        plan.decisions.append((
            "capacity_shed", f"{space.value}: pipeline group {victim.group} depth "
            f"{victim.depth + 1} -> {victim.depth} (footprint "
            f"{footprint(plan.buffers, reserved)} B > capacity {capacity} B)",
            dict(space=space.value, group=victim.group, depth_from=victim.depth + 1,
                 depth_to=victim.depth, requested=victim.requested, slot_bytes=victim.slot,
                 footprint_bytes=footprint(plan.buffers, reserved), capacity_bytes=capacity)))
        plan.buffers = pack(intervals, can_share)
        plan.repacks += 1
    return plan


def _fall_back(plan: SpacePlan, intervals: list[Interval], can_share) -> None:
    plan.gate.force_legacy = True
    plan.fell_back = True
    plan.buffers = pack(intervals, can_share)
    if any(buf.slot > plan.capacity for buf in plan.buffers):
        return  # one buffer alone is too big: AllocateMemoryAddr reports it
    text = (f"capacity-gated reuse could not fit memory space {plan.space.value} at any "
            "double-buffering depth; fell back to the legacy packing")
    if footprint(plan.buffers, plan.reserved) > plan.capacity:
        text += " (which also overflows \u2014 reduce tile size or stage count)"
    plan.warning = text + "."
    plan.decisions.append(("capacity_fallback", plan.warning,
                           dict(space=plan.space.value, capacity_bytes=plan.capacity)))


__all__ = ["Buffer", "SpacePlan", "pack", "footprint", "plan_space", "MAX_REPACKS"]
