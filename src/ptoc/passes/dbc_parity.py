"""dbC accumulators alternate between the two L0C buffers in program order (a ptoc refinement).

MemoryReuse binds each stage of a pipeline group to one L0C buffer. A dbC loop tags its
accumulators ``g:0`` / ``g:1``; the loop's remainder clones and AutoTileMatmulL0's tail
strip (``spread_dbc_tails``) are groups of their own; every clone of an outer pipeline
carries the same inner group. So a loop that follows an odd number of accumulators (a
remainder tile, or the previous outer stage's inner loop plus its remainder) starts on the
buffer the previous tile is still draining from, and that tile's drain cannot overlap the
next matmul (320x320 dbC: 2 of 14 seams).

``alternate_accumulators`` re-tags every dbC accumulator of a function into one group whose
stage is its position's parity in program order, so consecutive accumulators always land
on different buffers. It applies only when every loop body holds an even number of them
(each trip then starts on the same buffer) and none sits in an ``if`` (a run-time choice);
otherwise the function is left as it is. CanonicalizeIOOrder calls it last, and only for
functions whose tails AutoTileMatmulL0 spread (``TAIL_GROUP_BASE`` groups): PyPTO's own
output (``spread_dbc_tails=False``) keeps PyPTO's buffers.

Each re-tagged accumulator keeps PyPTO's membership beside the new one (``PYPTO_MEMBERSHIP``)
so that MemoryReuse can ``undo_alternation`` when the refined grid does not fit: its
last resort (``pipeline_serialise``) re-sequences the stages of PyPTO's groups, which moves
accumulators the parity order counted on (304x64x448 FP32 dbC: with the parity tags no
serialised order fitted L0A and L0C at once; with PyPTO's it does).
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.ir.nodes import (
    AssignStmt, Call, ForStmt, Function, IfStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt,
)
from ptoc.ir.visitor import IRMutator, IRVisitor, calls_in
from ptoc.passes.auto_tile_emit import TAIL_GROUP_BASE
from ptoc.passes.lower_pipeline_loops import MEMBERSHIP, is_cube_accumulator
from ptoc.passes.memref_rewrite import PYPTO_MEMBERSHIP

#: the one pipeline group all re-tagged accumulators share (below the tail groups, above
#: any group LowerPipelineLoops numbers)
PARITY_GROUP = TAIL_GROUP_BASE - 1


class _Irregular(Exception):
    """The accumulators' buffer order depends on run time (odd loop body, inside an if)."""


def has_spread_tails(function: Function) -> bool:
    """Whether AutoTileMatmulL0 tagged dbC tail tiles in ``function`` (the refinement is on)."""
    return bool(calls_in(function, _spread_tail))


def _spread_tail(call: Call) -> bool:
    membership = call.attrs.get(MEMBERSHIP, "")
    return membership != "" and any(int(p.partition(":")[0]) >= TAIL_GROUP_BASE
               for p in membership.split(";") if p.partition(":")[0].isdigit())


def alternate_accumulators(function: Function) -> Function:
    """``function`` with its dbC accumulators re-tagged by parity (module docstring)."""
    try:
        body, _ = _seq(function.body, 0)
    except _Irregular:
        return function
    return function if body is function.body else replace(function, body=body)


def undo_alternation(function: Function) -> Function:
    """``function`` with PyPTO's memberships back on the re-tagged accumulators (itself when
    none was re-tagged)."""
    class _Undo(IRMutator):
        def mutate_call(self, node: Call):
            out = super().mutate_call(node)
            if PYPTO_MEMBERSHIP not in out.attrs:
                return out
            attrs = {k: v for k, v in out.attrs.items() if k != PYPTO_MEMBERSHIP}
            return replace(out, attrs={**attrs, MEMBERSHIP: out.attrs[PYPTO_MEMBERSHIP]})

    return _Undo().mutate(function)


def _is_accumulator(stmt: Stmt) -> bool:
    return isinstance(stmt, AssignStmt) and isinstance(stmt.value, Call) \
        and is_cube_accumulator(stmt.value) and MEMBERSHIP in stmt.value.attrs


def _seq(seq: SeqStmts, parity: int) -> tuple[SeqStmts, int]:
    out, changed = [], False
    for stmt in seq.stmts:
        new, parity = _stmt(stmt, parity)
        changed = changed or new is not stmt
        out.append(new)
    return (replace(seq, stmts=tuple(out)) if changed else seq), parity


def _stmt(stmt: Stmt, parity: int) -> tuple[Stmt, int]:
    if _is_accumulator(stmt):
        attrs = {**stmt.value.attrs, MEMBERSHIP: f"{PARITY_GROUP}:{parity}",
                 PYPTO_MEMBERSHIP: stmt.value.attrs[MEMBERSHIP]}
        return replace(stmt, value=replace(stmt.value, attrs=attrs)), 1 - parity
    if isinstance(stmt, SeqStmts):
        return _seq(stmt, parity)
    if isinstance(stmt, (ForStmt, WhileStmt)):
        body, after = _seq(stmt.body, parity)
        if after != parity:        # an odd body: trips alternate their first buffer
            raise _Irregular
        return (stmt if body is stmt.body else replace(stmt, body=body)), parity
    if isinstance(stmt, (IfStmt, ScopeStmt)) and _holds_accumulator(stmt):
        raise _Irregular
    return stmt, parity


def _holds_accumulator(stmt: Stmt) -> bool:
    found = False

    class _Find(IRVisitor):
        def visit_assign_stmt(self, node: AssignStmt) -> None:
            nonlocal found
            found = found or _is_accumulator(node)
            super().visit_assign_stmt(node)

    _Find().visit(stmt)
    return found
