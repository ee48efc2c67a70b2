"""MemoryReuse: let tiles whose lifetimes do not overlap share a buffer (reference §9).

PYPTO planner only (PTOAS plans memory itself). Per kernel function:

1. lifetimes (``memory_lifetimes``): one interval per ``tile.alloc``, loop-extended;
2. packing (``memory_packing``): first-fit-decreasing per memory space under the overlap
   test, the no-alias guard and the pipeline-stage guard with its capacity gate
   (``pipeline_capacity_gate``), shedding pipeline depth until the space fits;
3. if a space still overflows because the stages' hoisted loads keep them co-live, the
   loop bodies of the fewest overflowing groups that suffice are re-sequenced in chunks of
   the largest depth that fits (``pipeline_serialise``) and everything is planned again;
4. findings: PH-MR-001 for every pipeline group that got fewer buffers than stages, and a
   warning (W-MR-001) when even depth 1 did not fit and the legacy packing was used;
5. post-packing: every member of a buffer is retyped onto its representative's MemRef,
   ``tile.alloc``s nobody uses any more are removed, ``pipeline_membership`` is stripped.

For a double-buffered accumulator pair (dbC) nothing special is needed: after
CanonicalizeIOOrder's ``M0 M1 S0 S1`` order the two accumulators are co-live, and their
modulo-2 memberships keep accumulator i+2 on accumulator i's buffer, so the gate
(``F = min(2, L0C // slot)``) leaves exactly two Acc buffers; split-K ``matmul_acc``
chains were already put on one buffer by MaterializeSemanticAliases.
"""

from __future__ import annotations

import itertools
from typing import Mapping

from ptoc.ir.nodes import replace
from ptoc.dtypes import FunctionType, MemorySpace
from ptoc.errors import PassError
from ptoc.ir.nodes import AssignStmt, Call, ForStmt, Function, IfStmt, Var, WhileStmt
from ptoc.ir.types import MemRef, TileType
from ptoc.ops import make_call
from ptoc.passes.base import function_pass
from ptoc.passes.dbc_parity import undo_alternation
from ptoc.passes.decisions import record_decision
from ptoc.passes.diagnostics import report_diagnostic
from ptoc.passes.manager import register_default_pass
from ptoc.passes.mixed.rings import reserved_bytes
from ptoc.passes.memory_lifetimes import Interval, analyze_lifetimes
from ptoc.passes.memory_packing import SpacePlan, plan_space
from ptoc.passes.no_alias import NoAliasGuard
from ptoc.passes.memref_rewrite import (
    Retyper, defined_vars, is_alloc, last_yield, memref_of, with_memref, zero_offset,
)
from ptoc.passes.pipeline_capacity_gate import align32
from ptoc.passes.pipeline_serialise import serialise_groups

#: every function that can hold tiles (PyPTO skips only orchestration, which submits tasks)
TILE_FUNCTION_TYPES = tuple(t for t in FunctionType if t is not FunctionType.Orchestration)


@function_pass(name="MemoryReuse", required={"MemRefsAssigned"}, produced={"MemoryReused"},
               func_types=TILE_FUNCTION_TYPES,
               handles_while_loops=True)
def memory_reuse(fn: Function, ctx, *, capacities: Mapping[MemorySpace, int] | None = None,
                 reserved: Mapping[MemorySpace, int] | None = None) -> Function:
    """Coalesce MemRefs by lifetime.

    ``capacities`` overrides the target's bytes per space (a missing space or 0 means
    "unknown": the legacy stage rule, no fit loop); ``reserved`` is a region at the bottom
    of a space that nothing may use (PyPTO's ``reserve_buffer``), which shrinks what the
    capacity gate can hand out. Give AllocateMemoryAddr the same ``reserved``.
    """
    intervals = analyze_lifetimes(fn)
    if not intervals:
        return fn
    target = ctx.get_backend()
    if reserved is None:
        reserved = reserved_bytes(fn)      # the kernel's cross-core rings

    def capacity(space: MemorySpace) -> int:
        if capacities is None:
            return target.capacities.get(space, 0)
        return int(capacities.get(space, 0))

    def plan_all(function: Function, ivs: list[Interval], caps=None) -> list[SpacePlan]:
        guard = NoAliasGuard(ivs)
        return [plan_space(space, [iv for iv in ivs if iv.space is space], capacity(space),
                           guard.forbids, reserved=int((reserved or {}).get(space, 0)),
                           caps=caps)
                for space in _spaces(ivs)]

    plans = plan_all(fn, intervals)
    if any(plan.overflows for plan in plans):
        fn, plans = _serialise_to_fit(fn, plans, plan_all)
    if any(plan.overflows for plan in plans) and (pypto := undo_alternation(fn)) is not fn:
        # ptoc's accumulator alternation (dbc_parity) could not be fitted: PyPTO's stages can
        record_decision("capacity_serialise", "the dbC accumulators keep PyPTO's pipeline "
                        "stages: with ptoc's program-order alternation no serialised order "
                        "fitted", function=fn.name)
        fn, plans = pypto, plan_all(pypto, analyze_lifetimes(pypto))
        if any(plan.overflows for plan in plans):
            fn, plans = _serialise_to_fit(fn, plans, plan_all)
    for plan in plans:
        _report(fn, plan, ctx)
    rep_of: dict[Var, tuple[Interval, Interval]] = {}
    for plan in plans:
        for buf in plan.buffers:
            for member in buf.members[1:]:
                rep_of[member.base] = (buf.rep, member)
    out = _Finish(lambda v: _shared_type(v, rep_of) if rep_of else None).mutate(fn)
    return _drop_unused_allocs(out)


def _serialise_to_fit(fn: Function, plans: list[SpacePlan], plan_all):
    """Shedding depth could not make a space fit because the stages' lifetimes overlap
    (their loads were hoisted): sequence some of the overflowing spaces' pipeline groups in
    chunks of F stages (``pipeline_serialise``) and re-plan, keeping the first order that
    fits without shedding. The largest F is tried first and, at each F, the fewest groups
    (an outer loop's clones sequenced may be enough while the inner, double-buffered loop
    keeps its overlap: serialising that one too can cost more storage than it saves); among
    as many groups, the later-numbered first (LowerPipelineLoops numbers an inner loop's
    groups before its outer loop's)."""
    requested = {g: info.requested for plan in plans if plan.overflows
                 for g, info in plan.gate.groups.items() if info.requested > 1}
    for depth in range(max(requested.values(), default=1) - 1, 0, -1):
        deep = sorted((g for g, d in requested.items() if d > depth), reverse=True)
        for groups in _subsets(deep):
            caps = {g: depth for g in groups}
            candidate = serialise_groups(fn, caps)
            if candidate is fn:
                continue
            new_plans = plan_all(candidate, analyze_lifetimes(candidate), caps)
            if any(plan.overflows or plan.shed for plan in new_plans):
                continue
            for g in sorted(caps):
                record_decision("capacity_serialise", f"pipeline group {g}: stages sequenced "
                                f"in chunks of {caps[g]} of {requested[g]} so that stages "
                                f"{caps[g]} apart can share storage (the hoisted loads kept "
                                "them co-live at every depth)", group=g, depth=caps[g],
                                requested=requested[g])
            return candidate, new_plans
    return fn, plans


#: beyond this many overflowing groups only single groups and all of them are tried
_MAX_SUBSET_GROUPS = 4


def _subsets(groups: list[int]) -> list[tuple[int, ...]]:
    """Non-empty subsets of ``groups`` by size, each size in the order of ``groups``."""
    sizes = range(1, len(groups) + 1) if len(groups) <= _MAX_SUBSET_GROUPS \
        else (1, len(groups))
    return [c for n in sizes for c in itertools.combinations(groups, n)]


def _spaces(intervals: list[Interval]) -> list[MemorySpace]:
    seen: list[MemorySpace] = []
    for iv in intervals:
        if iv.space not in seen:
            seen.append(iv.space)
    return seen


# ---- findings -----------------------------------------------------------------------

def _report(fn: Function, plan: SpacePlan, ctx) -> None:
    for kind, summary, fields in plan.decisions:
        record_decision(kind, summary, **fields)
    if plan.warning is not None:
        report_diagnostic("W-MR-001", plan.warning, location=fn.loc, ctx=ctx)
    if not plan.capacity or plan.fell_back:
        return
    for info in plan.gate.groups.values():
        if info.depth < info.requested:
            report_diagnostic("PH-MR-001", depth_hint(plan, info.group), location=fn.loc, ctx=ctx)


def depth_hint(plan: SpacePlan, group: int) -> str:
    """PH-MR-001's text: which depth was asked, what fits, and the fix that applies."""
    info = plan.gate.groups[group]
    d, f = info.requested, info.depth
    aligned = align32(info.slot)
    free = plan.capacity - plan.reserved
    need = aligned * d
    reserved = f" after {plan.reserved} B reserved" if plan.reserved else ""
    text = (f"software pipelining requested depth {d} for pipeline group {group} in "
            f"{plan.space.value}, but only {f} of {d} buffers fit ({aligned} B per stage, "
            f"{free} B free{reserved}) \u2014 stages {f} apart share storage and serialize. ")
    if free == 0 or need > free:
        per_stage = free // d
        text += (f"This operand alone needs {need} B for depth {d}; shrink the per-stage tile "
                 f"to <= {per_stage} B, or reduce the pipeline depth "
                 f"(e.g. `pl.pipeline(stage=)`) to {f}.")
    else:
        text += (f"The operand would fit depth {d} on its own, but co-resident buffers / other "
                 f"pipeline groups over-subscribe the space; relieve the co-residents (smaller "
                 f"or fewer co-live tiles) or reduce the pipeline depth to {f}.")
    return text


# ---- post-packing -------------------------------------------------------------------

def _shared_type(var: Var, rep_of: dict[Var, tuple[Interval, Interval]]):
    """A member's root MemRef becomes the representative's; a view keeps its window."""
    m = memref_of(var)
    if m is None or not isinstance(m.base, Var) or m.base not in rep_of:
        return None
    rep, member = rep_of[m.base]
    if getattr(m.offset, "value", None) == 0 and m.size == member.size:
        new = MemRef(rep.base, zero_offset(), rep.size)
    else:
        new = MemRef(rep.base, m.offset, m.size)
    return with_memref(var.type, new)


class _Finish(Retyper):
    """The post-packing rewrite in one walk: members retyped onto their representative's
    MemRef, ``pipeline_membership`` stripped, and every join made to receive its value in
    the join's buffer (§9.4).

    After packing, the value a loop yields for an iter-arg may sit in another buffer than
    the carry, and the value an ``if``'s else-branch yields in another buffer than the
    result (which shares the then-branch's). Outside Acc a ``tile.move`` into the join's
    buffer is inserted before the yield; an Acc -> Acc move does not exist, so there the
    program is rejected (PyPTO's "cannot reconcile divergent L0C accumulator buffers").
    A loop or if is fixed after its body and results are retyped (the mutator is
    post-order), so the buffers compared are the packed ones.
    """

    def __init__(self, new_type):
        super().__init__(new_type, strip_membership=True)

    def mutate_for_stmt(self, node: ForStmt):
        return self._fix_carries(super().mutate_for_stmt(node))

    def mutate_while_stmt(self, node: WhileStmt):
        return self._fix_carries(super().mutate_while_stmt(node))

    def _fix_carries(self, out: ForStmt | WhileStmt) -> ForStmt | WhileStmt:
        body = self._fix(out.body, out.iter_args, "loop-carried accumulator", "the loop body",
                         "_carry")
        return out if body is out.body else replace(out, body=body)

    def mutate_if_stmt(self, node: IfStmt):
        out = super().mutate_if_stmt(node)
        if out.else_body is None:
            return out
        body = self._fix(out.else_body, out.return_vars, "if result", "the else branch", "_mv")
        return out if body is out.else_body else replace(out, else_body=body)

    @staticmethod
    def _fix(body, joins, what: str, source: str, suffix: str):
        y = last_yield(body)
        if y is None:
            return body
        extra, values = [], list(y.values)
        for i, (join, value) in enumerate(zip(joins, y.values)):
            a, b = memref_of(join), memref_of(value)
            if not (isinstance(join.type, TileType) and a is not None and b is not None
                    and isinstance(a.base, Var) and isinstance(b.base, Var)
                    and a.base is not b.base):
                continue
            if join.type.memory_space is MemorySpace.Acc:
                raise PassError(
                    f"MemoryReuse cannot reconcile divergent L0C accumulator buffers: {what} "
                    f"'{join.name}' lives in {a.base.name}, but {source} yields '{value.name}' "
                    f"from a different Acc buffer ({b.base.name}), and an Acc -> Acc move does "
                    "not exist", getattr(y, "loc", None),
                    hint="let every branch that feeds the accumulator write it in place "
                         "(matmul_acc on the carried or shared accumulator, or a matmul made in "
                         "that branch), not an accumulator computed before the join")
            moved = Var(f"{value.name}{suffix}", join.type)
            call = make_call("tile.move", (value,), {"target_memory": join.type.memory_space},
                             result_type=join.type)
            extra.append(AssignStmt(moved, call, y.loc))
            values[i] = moved
        if not extra:
            return body
        stmts = [s for s in body.stmts if s is not y]
        return replace(body, stmts=tuple(stmts + extra + [replace(y, values=tuple(values))]))


def _drop_unused_allocs(fn: Function) -> Function:
    used = set()
    for v in defined_vars(fn):
        m = memref_of(v)
        if m is not None and isinstance(m.base, Var):
            used.add(m.base)
    kept = tuple(s for s in fn.body.stmts
                 if not (is_alloc(s) and isinstance(s, AssignStmt) and s.var not in used))
    if len(kept) == len(fn.body.stmts):
        return fn
    return replace(fn, body=replace(fn.body, stmts=kept))


register_default_pass(memory_reuse)

__all__ = ["memory_reuse", "depth_hint"]
