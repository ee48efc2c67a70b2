"""Serialise pipeline stages that a shed depth makes share storage (MemoryReuse's last resort).

When the capacity gate lowers a pipeline group from depth D to F, stages F apart may share
a buffer — but only if their lifetimes allow it. CanonicalizeIOOrder has already hoisted
every stage's loads to the top of the body (``L0 L1 C0 S0 C1 S1``), so stage 1's load is
live while stage 0 computes and no depth makes the two share: a softmax over 16-row blocks
with ``stage=2`` then overflows UB at any depth. What "depth F" means is that stage k+F
waits for stage k, so the body is re-sequenced in chunks of F stages (``L0 C0 S0 L1 C1
S1`` at F = 1, ``L0 L1 C0 C1 S0 S1 L2 L3 ...`` at F = 2 of 4), keeping the existing order
inside a chunk and every use-def dependence. MemoryReuse then recomputes lifetimes and
packs again; the PH-MR-001 hint it emits ("stages F apart share storage and serialize")
then describes what the program really does.
"""

from __future__ import annotations

from typing import Mapping

from ptoc.ir.nodes import replace
from ptoc.ir.nodes import (
    AssignStmt, Call, ForStmt, Function, IfStmt, SeqStmts, Stmt, Var, WhileStmt,
)
from ptoc.ir.visitor import IRVisitor, map_if_bodies
from ptoc.passes.canonicalize_io_order import schedule_by_priority
from ptoc.passes.memref_rewrite import membership_of, walk_stmts
from ptoc.passes.pipeline_capacity_gate import parse_membership


def group_stages(fn: Function) -> dict[int, list[int]]:
    """Every pipeline group of ``fn`` with its sorted stage ids (the gate's ordinals)."""
    stages: dict[int, set[int]] = {}
    for s in walk_stmts(fn.body):
        if isinstance(s, AssignStmt):
            for g, stage in parse_membership(membership_of(s.value)).items():
                stages.setdefault(g, set()).add(stage)
    return {g: sorted(v) for g, v in stages.items()}


def serialise_groups(fn: Function, depths: Mapping[int, int]) -> Function:
    """``fn`` with the stages of each group in ``depths`` sequenced in chunks of that depth."""
    stages = group_stages(fn)
    depths = {g: max(1, f) for g, f in depths.items() if g in stages}
    if not depths:
        return fn
    defined = {s.var: parse_membership(membership_of(s.value))
               for s in walk_stmts(fn.body) if isinstance(s, AssignStmt)}
    order = sorted(depths)

    def chunk(stmt: Stmt) -> tuple[int, ...]:
        found = _memberships_in(stmt, defined)
        key = []
        for g in order:
            stage = next((m[g] for m in found if g in m), None)
            key.append(-1 if stage is None else stages[g].index(stage) // depths[g])
        return tuple(key)

    def seq(body: SeqStmts, in_loop: bool) -> SeqStmts:
        stmts = [_inner(s, seq) for s in body.stmts]
        if in_loop and len(stmts) >= 2:
            chunks = [chunk(s) for s in stmts]
            if len(set(chunks)) > 1:
                stmts = schedule_by_priority(stmts, lambda i, s: (chunks[i], i))
        if all(a is b for a, b in zip(stmts, body.stmts)):
            return body
        return replace(body, stmts=tuple(stmts))

    body = seq(fn.body, in_loop=False)
    return fn if body is fn.body else replace(fn, body=body)


def _inner(stmt: Stmt, seq) -> Stmt:
    """Descend: loop bodies are where CanonicalizeIOOrder hoisted loads (a pipeline body is
    always a loop body), so only statement lists inside a loop are re-sequenced."""
    if isinstance(stmt, (ForStmt, WhileStmt)):
        body = seq(stmt.body, True)
        return stmt if body is stmt.body else replace(stmt, body=body)
    if isinstance(stmt, IfStmt):
        return map_if_bodies(stmt, lambda b: seq(b, False))
    return stmt


def _memberships_in(stmt: Stmt, defined: dict[Var, dict[int, int]]) -> list[dict[int, int]]:
    """Memberships of the calls inside ``stmt``, then of the tiles it reads (a store has none
    of its own: it belongs to the stage of the tile it stores)."""
    found: list[dict[int, int]] = []

    class _Collect(IRVisitor):
        def visit_call(self, node: Call) -> None:
            m = parse_membership(membership_of(node))
            if m:
                found.append(m)
            super().visit_call(node)

        def visit_var(self, node: Var) -> None:
            if defined.get(node):
                found.append(defined[node])

    _Collect().visit(stmt)
    return found


__all__ = ["serialise_groups", "group_stages"]
