"""The pipeline-stage guard of MemoryReuse and its capacity gate (reference §9.3, #1475).

LowerPipelineLoops tags the tiles of each replicated pipeline stage with
``pipeline_membership = "group:stage[;group:stage...]"``. Two tiles of one group whose
stages differ must not share a buffer, or stage k+1 overwrites stage k while it is still
in flight: that is what buys the overlap. But a depth the memory space cannot hold is
worse than no pipelining, so each (space, group) gets an achievable depth

    F_g = max(1, min(D_g, floor(capacity / slot_g)))

where ``slot_g`` is the group's largest buffer and ``D_g`` its number of distinct stages.
Stages are compared by their dense ordinal (sorted stage ids 0, 2 -> ordinals 0, 1), and
two tiles are kept apart only when their ordinals differ modulo ``F_g``: stages F apart
then share storage (a balanced modulo colouring, so depth 4 at F=2 pairs {0,2} and {1,3}).

When the capacity is unknown, or after the fit loop gave up, the legacy rule applies:
never separate in the L0 spaces, elsewhere separate conflicting memberships only if one
side is a load.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ptoc.dtypes import MemorySpace
from ptoc.passes.memory_lifetimes import Interval

L0_SPACES = frozenset({MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias})
ALIGN = 32


def align32(x: int) -> int:
    return (x + ALIGN - 1) // ALIGN * ALIGN


def parse_membership(text: str) -> dict[int, int]:
    """``"0:1;3:0"`` -> {0: 1, 3: 0}; malformed tokens are skipped (never raises)."""
    out: dict[int, int] = {}
    for token in (text or "").split(";"):
        parts = token.strip().split(":")
        if len(parts) != 2:
            continue
        try:
            group, stage = int(parts[0]), int(parts[1])
        except ValueError:
            continue
        out.setdefault(group, stage)
    return out


def memberships_conflict(a: dict[int, int], b: dict[int, int]) -> bool:
    """Some common group with different stages."""
    return any(g in b and b[g] != s for g, s in a.items())


@dataclass
class GroupDepth:
    """One pipeline group in one memory space: its slot, requested and achieved depth."""

    group: int
    slot: int
    stages: tuple[int, ...]
    depth: int = 1  # F_g, achieved

    @property
    def requested(self) -> int:
        return len(self.stages)

    def ordinal(self, stage: int) -> int:
        return self.stages.index(stage)


@dataclass
class PipelineGate:
    """The stage guard for one memory space; ``shed`` lowers one group's depth by one."""

    space: MemorySpace
    capacity: int
    groups: dict[int, GroupDepth] = field(default_factory=dict)
    members: dict[int, dict[int, int]] = field(default_factory=dict)  # interval index -> membership
    force_legacy: bool = False

    @classmethod
    def build(cls, space: MemorySpace, intervals: list[Interval], capacity: int,
              caps: Mapping[int, int] | None = None) -> "PipelineGate":
        """``caps`` bounds a group's depth from the start (the depth its stages were
        serialised to when shedding alone could not make the space fit)."""
        gate = cls(space, capacity)
        slots: dict[int, int] = {}
        stages: dict[int, set[int]] = {}
        for iv in intervals:
            m = parse_membership(iv.membership)
            gate.members[iv.index] = m
            for g, s in m.items():
                slots[g] = max(slots.get(g, 0), iv.size)
                stages.setdefault(g, set()).add(s)
        for g in sorted(slots):
            info = GroupDepth(g, slots[g], tuple(sorted(stages[g])))
            if capacity and info.slot:
                info.depth = max(1, min(info.requested, capacity // info.slot,
                                        (caps or {}).get(g, info.requested)))
            gate.groups[g] = info
        return gate

    @property
    def gated(self) -> bool:
        return bool(self.capacity) and not self.force_legacy

    def blocks(self, a: Interval, b: Interval) -> bool:
        """True when ``a`` and ``b`` must not share a buffer because of their stages."""
        ma = self.members.get(a.index)
        if not ma:
            return False
        mb = self.members.get(b.index)
        if not mb:
            return False
        if self.gated:
            for g, sa in ma.items():
                if g not in mb:
                    continue
                info = self.groups[g]
                if info.ordinal(sa) % info.depth != info.ordinal(mb[g]) % info.depth:
                    return True
            return False
        if self.space in L0_SPACES:
            return False
        return memberships_conflict(ma, mb) and (a.is_load or b.is_load)

    def shed_candidate(self) -> GroupDepth | None:
        """MaxRelief: the group with the largest aligned slot still above depth 1 (ties: lowest id)."""
        best = None
        for g in sorted(self.groups):
            info = self.groups[g]
            if info.depth > 1 and (best is None or align32(info.slot) > align32(best.slot)):
                best = info
        return best


__all__ = ["PipelineGate", "GroupDepth", "parse_membership", "memberships_conflict", "align32",
           "L0_SPACES"]
