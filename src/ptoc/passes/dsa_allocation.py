"""AllocateMemoryAddr under the DSA_RP planner: lifetime-aware placement within capacity
(reference §11.2).

MemoryReuse does not run under DSA_RP, so every allocation identity left by
MaterializeSemanticAliases is still its own base; instead of packing bases into shared
buffers first and bump-allocating those, each base gets an address chosen by the DSA
search (``dsa_solver``) per memory space, so tiles whose lifetimes never meet may sit on
the same bytes. The problem per space:

* hard separations: lifetimes that interfere (``memory_lifetimes.overlaps``, per value
  ranges), the no-alias rule (``no_alias``), author-pinned allocations (apart from every
  other buffer), and requested pipeline stages (same group, different stage);
* soft unit penalties: two lifetime-compatible buffers on the same bytes where the earlier
  one's last reader and the later one's writer are on different pipes (the reuse costs a
  cross-pipe synchronisation);
* the capacity, with ``reserved`` bytes at the bottom of the space.

Pipeline intent is strict first: if the bounded search finds no placement with every
stage separation hard, the pairs kept apart only by pipeline intent become soft and the
search runs again; if some of them then share bytes, PH-DSA-001 says how many. If that
search fails too, the space does not fit: an AllocationError names the tiles that are live
together at the tightest point.
"""

from __future__ import annotations

from typing import Mapping

from ptoc.dtypes import MemorySpace
from ptoc.errors import AllocationError
from ptoc.ir.nodes import AssignStmt, Call, EvalStmt, Function, Var
from ptoc.ops import get_op
from ptoc.ops.registry import has_op
from ptoc.passes.diagnostics import report_diagnostic
from ptoc.passes.dsa_solver import DsaBuffer, DsaProblem, overlapping, relax, solve
from ptoc.passes.memory_lifetimes import Interval, analyze_lifetimes, overlaps
from ptoc.passes.memref_rewrite import memref_of, walk_stmts
from ptoc.passes.no_alias import NoAliasGuard
from ptoc.passes.pipeline_capacity_gate import parse_membership
from ptoc.passes.tile_sources import describe_tile, source_loc, tile_definitions


def plan_dsa_addresses(fn: Function, target, bases: dict, reserved: Mapping | None = None
                       ) -> list:
    """Place ``bases`` (``collect_bases`` output: Placements per space) and return them."""
    intervals = {iv.base.name: iv for iv in analyze_lifetimes(fn)}
    guard = NoAliasGuard(list(intervals.values()))
    pipes = _pipes(fn)
    placed = []
    for space, places in bases.items():
        low = int((reserved or {}).get(space, 0))
        problem, pipeline_pairs = _problem(places, intervals, guard, pipes, target, space, low)
        result = solve(problem)
        relaxed = 0
        if result.offsets is None and pipeline_pairs:
            result = solve(relax(problem, pipeline_pairs))
            if result.offsets is not None:
                relaxed = overlapping(problem, result.offsets, pipeline_pairs)
        if result.offsets is None:
            raise _no_fit(fn, space, places, intervals, problem.capacity)
        if relaxed:
            report_diagnostic(
                "PH-DSA-001", f"DSA-RP's bounded strict search did not retain all "
                f"software-pipeline buffer separations for '{fn.name}'; {relaxed} of "
                f"{len(pipeline_pairs)} relaxed pair(s) reuse physical storage. Pipeline "
                "overlap may be reduced.", location=fn.loc)
        for index, place in enumerate(places):
            place.addr = result.offsets[index]
        placed.extend(places)
    return placed


def _problem(places, intervals: dict[str, Interval], guard: NoAliasGuard, pipes: dict,
             target, space: MemorySpace, low: int) -> tuple[DsaProblem, set[frozenset]]:
    ivs = [intervals.get(p.name) for p in places]
    buffers = [DsaBuffer(i, p.size, target.address_alignment, iv.def_point if iv else -1)
               for i, (p, iv) in enumerate(zip(places, ivs))]
    hard: set[frozenset] = set()
    soft: dict[frozenset, int] = {}
    pipeline: set[frozenset] = set()
    stages = [parse_membership(iv.membership) if iv else {} for iv in ivs]
    for i in range(len(places)):
        for j in range(i + 1, len(places)):
            a, b, pair = ivs[i], ivs[j], frozenset((i, j))
            if a is None or b is None or a.pinned or b.pinned or guard.forbids(a, b) \
                    or overlaps(a, b):
                hard.add(pair)
            elif any(g in stages[j] and stages[j][g] != s for g, s in stages[i].items()):
                hard.add(pair)
                pipeline.add(pair)
            elif _cross_pipe_handoff(a, b, pipes):
                soft[pair] = 1
    capacity = target.capacities.get(space, 0) or max(1, sum(p.size for p in places))
    return DsaProblem(capacity, buffers, hard, soft, [(0, low)] if low else []), pipeline


def _cross_pipe_handoff(a: Interval, b: Interval, pipes: dict) -> bool:
    """The later buffer's writer and the earlier one's last reader run on different pipes."""
    first, second = (a, b) if a.last_use <= b.def_point else (b, a)
    reader = pipes["read"].get(first.base)
    writer = pipes["write"].get(second.base)
    return reader is not None and writer is not None and reader != writer


def _pipes(fn: Function) -> dict[str, dict[Var, str]]:
    """Per base: the pipe of its first writer and of its last reader, in program order."""
    write: dict[Var, str] = {}
    read: dict[Var, str] = {}
    for stmt in walk_stmts(fn.body):
        call = stmt.value if isinstance(stmt, AssignStmt) else \
            stmt.expr if isinstance(stmt, EvalStmt) else None
        if not isinstance(call, Call) or call.is_function or not has_op(call.op):
            continue
        pipe = get_op(call.op).pipe_for(call)
        if pipe is None:
            continue
        for arg in call.args:
            m = memref_of(arg) if isinstance(arg, Var) else None
            if m is not None and isinstance(m.base, Var):
                read[m.base] = str(pipe)
        if isinstance(stmt, AssignStmt):
            m = memref_of(stmt.var)
            if m is not None and isinstance(m.base, Var):
                write.setdefault(m.base, str(pipe))
    return {"read": read, "write": write}


def _no_fit(fn: Function, space: MemorySpace, places, intervals: dict[str, Interval],
            capacity: int) -> AllocationError:
    """The tiles live together at the point of highest demand, by the user's statements."""
    ivs = [(p, intervals.get(p.name)) for p in places]
    points = sorted({iv.def_point for _, iv in ivs if iv is not None})
    best, best_bytes = [], 0
    for t in points:
        live = [p for p, iv in ivs if iv is None or iv.def_point <= t < max(iv.last_use,
                                                                          iv.def_point + 1)]
        total = sum(p.size for p in live)
        if total > best_bytes:
            best, best_bytes = live, total
    defs = tile_definitions(fn)
    shown = "; ".join(f"{p.name} ({p.size} B: "
                      + ", ".join(dict.fromkeys(describe_tile(v, defs.get(v))
                                                for v in p.tile_vars[:3])) + ")"
                      for p in sorted(best, key=lambda p: -p.size))
    first = max(best, key=lambda p: p.size).tile_vars[0] if best else None
    loc = source_loc(first, defs.get(first)) if first is not None else None
    why = (f"{best_bytes} bytes are live together" if best_bytes > capacity else
           f"the bounded search found no placement although the tightest point needs "
           f"{best_bytes} bytes")
    return AllocationError(
        f"{space.value} buffers of function '{fn.name}' do not fit {capacity} bytes under the "
        f"DSA_RP planner: {why}: {shown}", loc or fn.loc,
        hint=f"use smaller tiles or fewer tiles live at once in {space.value}, or the PYPTO "
             "planner")


__all__ = ["plan_dsa_addresses"]
