"""CanonicalizeIOOrder: inside pipeline loops, loads first, then compute and stores by stage.

Reads top-down like its reference (pypto-passes.md §6):

1. Scope — every statement list at any depth inside a Pipeline loop is reordered, under
   the policy (``pipeline_overlap_stores``, ``pipeline_double_buffer_c``) of the nearest
   enclosing Pipeline loop; on leaving a Pipeline loop its kind is demoted to Sequential
   and the pipeline attrs are stripped. Nothing outside pipelines moves.
2. Categories — loads (``tile.load``, Mat->Left/Right ``tile.extract``), stores
   (``tile.store`` when stores overlap or under dbC; ``tile.assemble`` under dbC only),
   scalar computations, and everything else as tile compute.
3. Scheduling — a stable priority topological sort over use-def dependences: scalars,
   then loads, then compute/stores ordered by stage (``M0 S0 M1 S1``), or under dbC in
   depth-two chunks (``M0 M1 S0 S1``).
4. dbC rotation — in a dbC region the accumulators' innermost membership stage becomes
   ``stage mod 2``, so MemoryReuse keeps exactly two L0C buffers.

A ptoc refinement follows, only where AutoTileMatmulL0 spread a dbC grid's tails
(``ptoc.passes.dbc_parity``): the accumulators alternate buffers in program order across
loop/tail seams. PyPTO's own output (``spread_dbc_tails=False``) is left as PyPTO orders it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ptoc.ir.nodes import replace
from ptoc.dtypes import ForKind, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, ForStmt, Function, IfStmt, ReturnStmt, SeqStmts, Stmt, Var,
    WhileStmt, YieldStmt,
)
from ptoc.ir.types import ScalarType, TileType
from ptoc.ir.visitor import IRVisitor, map_if_bodies
from ptoc.passes.base import function_pass
from ptoc.passes.dbc_parity import alternate_accumulators, has_spread_tails
from ptoc.passes.lower_pipeline_loops import (
    DOUBLE_BUFFER_C, MEMBERSHIP, STAGES, is_cube_accumulator,
)
from ptoc.passes.manager import register_default_pass

OVERLAP_STORES = "pipeline_overlap_stores"
PIPELINE_ATTRS = (STAGES, OVERLAP_STORES, DOUBLE_BUFFER_C)
SCALAR, LOAD, STORE, COMPUTE = "scalar", "load", "store", "compute"


@function_pass(name="CanonicalizeIOOrder", required=("PipelineLoopsLowered",),
               produced=("IOOrderCanonical",), func_types=None,
               handles_while_loops=True)
def canonicalize_io_order(function: Function, ctx) -> Function:
    """Reorder pipeline bodies of one function, of any kind (see the module docstring)."""
    memberships = _memberships(function)
    body = _Reorderer(memberships).seq(function.body, policy=None)
    out = function if body is function.body else replace(function, body=body)
    return alternate_accumulators(out) if has_spread_tails(out) else out


register_default_pass(canonicalize_io_order)


# --- 1. scope ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Policy:
    """The ordering policy of the nearest enclosing Pipeline loop."""

    overlap_stores: bool
    double_buffer_c: bool


class _Reorderer:
    def __init__(self, memberships: dict[int, str]):
        self.memberships = memberships

    def seq(self, seq: SeqStmts, policy: _Policy | None) -> SeqStmts:
        stmts = [self.stmt(s, policy) for s in seq.stmts]
        if policy is not None and len(stmts) >= 2:
            stmts = _schedule(stmts, policy, self.memberships)
            if policy.double_buffer_c:
                stmts = [_rotate_accumulator(s) for s in stmts]
        if all(a is b for a, b in zip(stmts, seq.stmts)):
            return seq
        return replace(seq, stmts=tuple(stmts))

    def stmt(self, stmt: Stmt, policy: _Policy | None) -> Stmt:
        if isinstance(stmt, ForStmt):
            inner = policy
            if stmt.kind is ForKind.Pipeline:
                inner = _Policy(stmt.attrs.get(OVERLAP_STORES, True) is not False,
                                stmt.attrs.get(DOUBLE_BUFFER_C) is True)
            body = self.seq(stmt.body, inner)
            if stmt.kind is ForKind.Pipeline:
                attrs = {k: v for k, v in stmt.attrs.items() if k not in PIPELINE_ATTRS}
                return replace(stmt, body=body, kind=ForKind.Sequential, attrs=attrs)
            return stmt if body is stmt.body else replace(stmt, body=body)
        if isinstance(stmt, WhileStmt):
            body = self.seq(stmt.body, policy)
            return stmt if body is stmt.body else replace(stmt, body=body)
        if isinstance(stmt, IfStmt):
            return map_if_bodies(stmt, lambda b: self.seq(b, policy))
        return stmt


# --- 2. categories ----------------------------------------------------------------------------

def _category(stmt: Stmt, policy: _Policy) -> str:
    call = _call_of(stmt)
    if isinstance(stmt, AssignStmt) and isinstance(stmt.var.type, ScalarType):
        return SCALAR
    if call is None:
        return COMPUTE
    if call.op in ("tile.load", "tile.read"):
        return LOAD
    if call.op == "tile.extract" and _is_l0_feed(call):
        return LOAD
    if call.op in ("tile.store", "tile.write"):
        return STORE if policy.overlap_stores or policy.double_buffer_c else COMPUTE
    if call.op == "tile.assemble":
        return STORE if policy.double_buffer_c else COMPUTE
    return COMPUTE


def _is_l0_feed(call: Call) -> bool:
    src = call.args[0].type if call.args else None
    return (isinstance(src, TileType) and src.memory_space is MemorySpace.Mat
            and call.kwarg("target_memory") in (MemorySpace.Left, MemorySpace.Right))


def _call_of(stmt: Stmt) -> Call | None:
    value = stmt.value if isinstance(stmt, AssignStmt) else stmt.expr if isinstance(
        stmt, EvalStmt) else None
    return value if isinstance(value, Call) else None


# --- 3. scheduling ----------------------------------------------------------------------------

_TIER = {SCALAR: 0, LOAD: 1, COMPUTE: 2, STORE: 2}


def _schedule(stmts: list[Stmt], policy: _Policy, memberships: dict[int, str]) -> list[Stmt]:
    return schedule_by_priority(stmts, lambda i, s: _key(i, s, policy, memberships))


def schedule_by_priority(stmts: list[Stmt], key_of) -> list[Stmt]:
    """Stable priority topological sort over use-def dependences: among the ready statements
    the one with the smallest ``key_of(index, stmt)`` (a tuple ending with the index) goes
    next; a trailing yield/return stays last. MemoryReuse re-sequences pipeline stages with
    it when a shed depth must also serialise them (``pipeline_serialise``)."""
    terminator = stmts[-1] if isinstance(stmts[-1], (YieldStmt, ReturnStmt)) else None
    body = stmts[:-1] if terminator is not None else stmts
    preds = _dependences(body)
    keys = [key_of(i, s) for i, s in enumerate(body)]
    waiting = [len(p) for p in preds]
    succs: list[list[int]] = [[] for _ in body]
    for j, ps in enumerate(preds):
        for i in ps:
            succs[i].append(j)
    ready = [keys[i] for i in range(len(body)) if waiting[i] == 0]
    heapq.heapify(ready)
    order: list[Stmt] = []
    while ready:
        key = heapq.heappop(ready)
        index = key[-1]
        order.append(body[index])
        for j in succs[index]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, keys[j])
    return order + ([terminator] if terminator is not None else [])


def _key(index: int, stmt: Stmt, policy: _Policy, memberships: dict[int, str]) -> tuple:
    category = _category(stmt, policy)
    tier = _TIER[category]
    sub = 1 if category == STORE else 0
    membership = _stage_string(stmt, memberships) if tier == 2 else ""
    if not policy.double_buffer_c:
        return (tier, membership, sub, index)
    stage = _first_stage(membership)
    group = stage // 2 if stage >= 0 else -1
    return (tier, "", group, sub, stage, index)


def _stage_string(stmt: Stmt, memberships: dict[int, str]) -> str:
    """The membership of the tile a statement defines, else of its first tagged argument."""
    if isinstance(stmt, AssignStmt) and id(stmt.var) in memberships:
        return memberships[id(stmt.var)]
    call = _call_of(stmt)
    if call is not None:
        for arg in call.args:
            if isinstance(arg, Var) and id(arg) in memberships:
                return memberships[id(arg)]
    return ""


def _first_stage(membership: str) -> int:
    for token in membership.split(";"):
        group, _, stage = token.partition(":")
        if group.strip().lstrip("-").isdigit() and stage.strip().lstrip("-").isdigit():
            return int(stage)
    return -1


def _dependences(stmts: list[Stmt]) -> list[set[int]]:
    """For each statement, the earlier statements defining a variable it uses (effect-only
    statements also stay in their relative order)."""
    defined_by: dict[int, int] = {}
    preds: list[set[int]] = []
    last_effect: int | None = None
    for j, stmt in enumerate(stmts):
        uses, defs = _uses_and_defs(stmt)
        deps = {defined_by[u] for u in uses if u in defined_by}
        if isinstance(stmt, (EvalStmt, WhileStmt)):   # a while's trips may store anything
            if last_effect is not None:
                deps.add(last_effect)
            last_effect = j
        preds.append(deps)
        for d in defs:
            defined_by[d] = j
    return preds


class _UseDefCollector(IRVisitor):
    def __init__(self):
        super().__init__()
        self.uses: set[int] = set()
        self.defs: set[int] = set()

    def visit_var(self, node: Var) -> None:
        self.uses.add(id(node))

    def visit_def(self, var: Var) -> None:
        self.defs.add(id(var))


def _uses_and_defs(stmt: Stmt) -> tuple[set[int], set[int]]:
    """Variables a statement reads from outside itself, and those it makes visible after it."""
    collector = _UseDefCollector()
    collector.visit(stmt)
    if isinstance(stmt, AssignStmt):
        visible = {id(stmt.var)}
    elif isinstance(stmt, (ForStmt, WhileStmt, IfStmt)):
        visible = {id(v) for v in stmt.return_vars}
    else:
        visible = set()
    return collector.uses - collector.defs, visible


# --- 4. dbC rotation --------------------------------------------------------------------------

def _rotate_accumulator(stmt: Stmt) -> Stmt:
    """Innermost membership stage of a dbC accumulator -> ``stage mod 2``."""
    if not (isinstance(stmt, AssignStmt) and isinstance(stmt.value, Call)
            and is_cube_accumulator(stmt.value) and MEMBERSHIP in stmt.value.attrs):
        return stmt
    pairs = stmt.value.attrs[MEMBERSHIP].split(";")
    group, _, stage = pairs[0].partition(":")
    if not stage.strip().lstrip("-").isdigit():
        return stmt
    pairs[0] = f"{group}:{((int(stage) % 2) + 2) % 2}"
    attrs = dict(stmt.value.attrs)
    attrs[MEMBERSHIP] = ";".join(pairs)
    return replace(stmt, value=replace(stmt.value, attrs=attrs))


def _memberships(function: Function) -> dict[int, str]:
    """Var id -> membership of the call defining it, over the whole function."""
    collect = _CollectMemberships()
    collect.visit(function)
    return collect.found


class _CollectMemberships(IRVisitor):
    def __init__(self):
        self.found: dict[int, str] = {}

    def visit_assign_stmt(self, node: AssignStmt) -> None:
        # no statement sits inside an assignment: its value and types are not walked
        if isinstance(node.value, Call) and MEMBERSHIP in node.value.attrs:
            self.found[id(node.var)] = node.value.attrs[MEMBERSHIP]
