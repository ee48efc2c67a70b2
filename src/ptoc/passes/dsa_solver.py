"""Capacity-constrained dynamic storage allocation with reuse penalties (the DSA_RP search).

The problem is one memory space: buffers with a size and an alignment, pairs that must not
share bytes (hard: their lifetimes interfere, an op reads one while writing the other, the
author pinned one, or they are different stages of a software pipeline) and pairs that may
share but pay a weight when they do (soft: reuse that hands storage from one pipe to another
and so costs a cross-pipe synchronisation). A placement gives each buffer an offset; it is
feasible when every buffer fits below the capacity and outside the reserved ranges, and no
hard pair overlaps. Among feasible placements the search prefers the lowest total weight of
overlapping soft pairs, then the lowest peak.

Canonical greedy (the reference's search, re-derived): buffers are placed one by one; the
candidate offsets of a buffer are 0, the end of every reserved range and the aligned top of
every already placed neighbour (hard or soft) — any feasible placement can be slid down to
such a boundary. Each buffer takes the candidate with the lowest added weight, then the
lowest offset. This runs in several deterministic orders (size, birth, weight) and a few
seeded shuffles; a penalty-blind first fit in size order is kept as an incumbent, so a
placement known to fit is never lost because a greedy order got stuck. The result is
checked by ``validate`` independently of the search. Not finding a placement is a bounded
search failing, not a proof that none exists.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

RESTARTS = 4


@dataclass(frozen=True)
class DsaBuffer:
    id: int
    size: int
    align: int
    birth: int = 0


@dataclass
class DsaProblem:
    """One memory space's placement problem (pairs are frozensets of two buffer ids)."""

    capacity: int
    buffers: list[DsaBuffer]
    hard: set[frozenset] = field(default_factory=set)
    soft: dict[frozenset, int] = field(default_factory=dict)
    reserved: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class DsaResult:
    offsets: dict[int, int] | None
    cost: int = 0
    peak: int = 0
    orders_tried: int = 0


def _align_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _overlap(lo1: int, hi1: int, lo2: int, hi2: int) -> bool:
    return lo1 < hi2 and lo2 < hi1


class _Graph:
    def __init__(self, problem: DsaProblem):
        self.by_id = {b.id: b for b in problem.buffers}
        self.hard: dict[int, set[int]] = {b.id: set() for b in problem.buffers}
        self.soft: dict[int, dict[int, int]] = {b.id: {} for b in problem.buffers}
        for pair in problem.hard:
            a, b = tuple(pair)
            self.hard[a].add(b)
            self.hard[b].add(a)
        for pair, weight in problem.soft.items():
            if pair in problem.hard:
                continue
            a, b = tuple(pair)
            self.soft[a][b] = weight
            self.soft[b][a] = weight


def _place(problem: DsaProblem, graph: _Graph, order: list[int], *, blind: bool
           ) -> dict[int, int] | None:
    offsets: dict[int, int] = {}
    for bid in order:
        buf = graph.by_id[bid]
        hard = [(offsets[n], offsets[n] + graph.by_id[n].size)
                for n in graph.hard[bid] if n in offsets]
        soft = [(offsets[n], offsets[n] + graph.by_id[n].size, w)
                for n, w in graph.soft[bid].items() if n in offsets]
        candidates = {0} | {hi for _, hi in problem.reserved} | {hi for _, hi in hard} \
            | {hi for _, hi, _ in soft}
        best = None
        for start in sorted(_align_up(c, buf.align) for c in candidates):
            end = start + buf.size
            if end > problem.capacity:
                break
            if any(_overlap(start, end, lo, hi) for lo, hi in problem.reserved) \
                    or any(_overlap(start, end, lo, hi) for lo, hi in hard):
                continue
            cost = 0 if blind else sum(w for lo, hi, w in soft if _overlap(start, end, lo, hi))
            if best is None or cost < best[0]:
                best = (cost, start)
                if cost == 0:
                    break  # candidates ascend: nothing later is cheaper and lower
        if best is None:
            return None
        offsets[bid] = best[1]
    return offsets


def evaluate(problem: DsaProblem, offsets: dict[int, int]) -> tuple[int, int]:
    """(soft weight of overlapping pairs, peak byte) of a placement."""
    size = {b.id: b.size for b in problem.buffers}
    cost = 0
    for pair, weight in problem.soft.items():
        a, b = tuple(pair)
        if pair not in problem.hard and _overlap(offsets[a], offsets[a] + size[a],
                                                 offsets[b], offsets[b] + size[b]):
            cost += weight
    peak = max((offsets[b.id] + b.size for b in problem.buffers), default=0)
    return cost, peak


def validate(problem: DsaProblem, offsets: dict[int, int]) -> list[str]:
    """Every violated invariant of a placement (empty: valid)."""
    problems = []
    size = {b.id: b.size for b in problem.buffers}
    for b in problem.buffers:
        lo = offsets.get(b.id)
        if lo is None:
            problems.append(f"buffer {b.id} has no offset")
            continue
        if lo % b.align or lo < 0 or lo + b.size > problem.capacity:
            problems.append(f"buffer {b.id} at {lo}+{b.size} is misaligned or past the capacity")
        if any(_overlap(lo, lo + b.size, r0, r1) for r0, r1 in problem.reserved):
            problems.append(f"buffer {b.id} overlaps a reserved range")
    for pair in problem.hard:
        a, b = tuple(pair)
        if a in offsets and b in offsets and _overlap(offsets[a], offsets[a] + size[a],
                                                      offsets[b], offsets[b] + size[b]):
            problems.append(f"buffers {a} and {b} must not overlap")
    return problems


def _orders(problem: DsaProblem, graph: _Graph) -> list[list[int]]:
    bufs = problem.buffers
    by_size = [b.id for b in sorted(bufs, key=lambda b: (-b.size, b.birth, b.id))]
    by_birth = [b.id for b in sorted(bufs, key=lambda b: (b.birth, -b.size, b.id))]
    by_weight = [b.id for b in sorted(bufs, key=lambda b: (
        -(len(graph.hard[b.id]) + sum(graph.soft[b.id].values())), -b.size, b.id))]
    orders = [by_size, by_birth, by_weight]
    rng = random.Random(0)
    for _ in range(RESTARTS):
        shuffled = list(by_size)
        rng.shuffle(shuffled)
        orders.append(shuffled)
    return orders


def solve(problem: DsaProblem) -> DsaResult:
    """The best placement the bounded canonical-greedy search finds (offsets None: no fit)."""
    graph = _Graph(problem)
    orders = _orders(problem, graph)
    best: tuple | None = None
    found = _place(problem, graph, orders[0], blind=True)  # the penalty-blind incumbent
    if found is not None:
        best = (*evaluate(problem, found), len(orders), found)
    for index, order in enumerate(orders):
        found = _place(problem, graph, order, blind=False)
        if found is None:
            continue
        key = (*evaluate(problem, found), index, found)
        if best is None or key[:3] < best[:3]:
            best = key
    if best is None:
        return DsaResult(None, orders_tried=len(orders) + 1)
    cost, peak, _, offsets = best
    broken = validate(problem, offsets)
    if broken:  # the search must never hand back an invalid placement
        raise AssertionError("DSA placement failed validation: " + "; ".join(broken))
    return DsaResult(offsets, cost, peak, len(orders) + 1)


def relax(problem: DsaProblem, pairs: set[frozenset], weight: int = 1) -> DsaProblem:
    """``problem`` with ``pairs`` moved from hard separations to soft penalties."""
    soft = dict(problem.soft)
    for pair in pairs:
        soft[pair] = soft.get(pair, 0) + weight
    return DsaProblem(problem.capacity, problem.buffers, problem.hard - pairs, soft,
                      problem.reserved)


def overlapping(problem: DsaProblem, offsets: dict[int, int], pairs: set[frozenset]) -> int:
    """How many of ``pairs`` share bytes in the placement."""
    size = {b.id: b.size for b in problem.buffers}
    count = 0
    for pair in pairs:
        a, b = tuple(pair)
        if _overlap(offsets[a], offsets[a] + size[a], offsets[b], offsets[b] + size[b]):
            count += 1
    return count


__all__ = ["DsaBuffer", "DsaProblem", "DsaResult", "solve", "relax", "validate", "evaluate",
           "overlapping"]
