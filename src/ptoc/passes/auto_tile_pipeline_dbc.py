"""AutoTileMatmulL0, part 3: dbC for pipeline loops the user wrote (pypto-passes.md §3.6).

A user ``pl.pipeline(stage=F)`` loop of the canonical stationary-panel shape — one
``tile.matmul`` of a held L0 operand and one streamed from Mat, its accumulator drained by
one store/assemble into the loop-carried output — gets ``pipeline_double_buffer_c`` so two
L0C accumulators ping-pong. It runs under the PYPTO planner only (the other planners
place the accumulators themselves), independently of ``enable_pypto_l0c_double_buffer``,
which only changes the whole-function capacity formula. A loop is marked only when the
drain is worth hiding (profitability) and two accumulators fit L0C next to every other
accumulator of the function (capacity).
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.ir.nodes import replace
from ptoc.backend.targets import Target, align_up
from ptoc.dtypes import ForKind, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstInt, ForStmt, Function, IfStmt, IterArg, SeqStmts, Stmt, Var, WhileStmt,
    YieldStmt,
)
from ptoc.ir.types import TileType, static_shape
from ptoc.passes.auto_tile_decisions import record_pipeline_dbc
from ptoc.passes.context import MemoryPlanner, PassContext

Mem = MemorySpace
STAGES = "pipeline_stages"
OVERLAP_STORES = "pipeline_overlap_stores"
DOUBLE_BUFFER_C = "pipeline_double_buffer_c"
STORE_LIKE = {"tile.store": (0, 2), "tile.write": (0, 2), "tile.assemble": (1, 0)}  # (src, target)
MATMUL_FAMILY = ("tile.matmul", "tile.matmul_acc", "tile.matmul_bias")
#: Minimum trip counts for a profitable dbC (``kMinAutoDirectGmDbCTripCount`` and
#: ``kMinAutoMatScratchDbCTripCount``): with fewer tiles there is too little drain to hide.
MIN_DIRECT_STORE_TRIPS = 4
MIN_MAT_SCRATCH_TRIPS = 8


@dataclass(frozen=True)
class Candidate:
    """A qualifying loop: its trip count, accumulator bytes and drain kind."""

    loop: ForStmt
    trips: int
    acc_bytes: int
    drain: str


def build_pipeline_dbc_plan(fn: Function, target: Target, ctx: PassContext) -> set[int]:
    """ids of the loops to mark (empty off the PYPTO planner or when two accumulators do not fit)."""
    l0c = target.capacity(Mem.Acc)
    if ctx.memory_planner is not MemoryPlanner.PYPTO or l0c <= 0:
        return set()
    candidates = [c for c in (_analyze(loop, target) for loop in _loops(fn.body)) if c is not None]
    if not candidates:
        return set()
    total = acc_footprint(fn, target)
    if ctx.enable_pypto_l0c_double_buffer:
        worst = 2 * total
    else:
        worst = total + sum(c.acc_bytes for c in candidates)
    if worst > l0c:
        for c in candidates:
            record_pipeline_dbc(c.loop, False, "capacity", f"two accumulators need {worst} B of "
                                f"L0C in the worst case, L0C holds {l0c} B", trips=c.trips,
                                acc_bytes=c.acc_bytes, drain=c.drain)
        return set()
    for c in candidates:
        ok = _profitable(c, l0c)
        record_pipeline_dbc(c.loop, ok, "profitability", f"{c.trips} trips, {c.acc_bytes} B "
                            f"accumulator, {c.drain} drain" + ("" if ok else ": too little drain "
                            "to hide"), trips=c.trips, acc_bytes=c.acc_bytes, drain=c.drain)
    return {id(c.loop) for c in candidates if _profitable(c, l0c)}


def apply_pipeline_dbc(loop: ForStmt) -> ForStmt:
    """The marker: one-accumulator store overlap off, dbC on (any previous values replaced)."""
    attrs = {k: v for k, v in loop.attrs.items() if k not in (OVERLAP_STORES, DOUBLE_BUFFER_C)}
    attrs[OVERLAP_STORES] = False
    attrs[DOUBLE_BUFFER_C] = True
    return replace(loop, attrs=attrs)


def _profitable(c: Candidate, l0c: int) -> bool:
    if c.drain == "tile.assemble":
        return c.trips >= MIN_MAT_SCRATCH_TRIPS and c.acc_bytes >= -(-l0c // 4)
    return c.trips >= MIN_DIRECT_STORE_TRIPS


def _loops(stmt: Stmt):
    if isinstance(stmt, SeqStmts):
        for s in stmt.stmts:
            yield from _loops(s)
    elif isinstance(stmt, ForStmt):
        yield stmt
        yield from _loops(stmt.body)
    elif isinstance(stmt, WhileStmt):
        yield from _loops(stmt.body)
    elif isinstance(stmt, IfStmt):
        yield from _loops(stmt.then_body)
        if stmt.else_body is not None:
            yield from _loops(stmt.else_body)


def _const(e) -> int | None:
    return e.value if isinstance(e, ConstInt) else None


def _acc_tile(ty) -> bool:
    return isinstance(ty, TileType) and ty.memory_space is Mem.Acc


def _uses_in(stmts, var: Var) -> int:
    """How many times ``var`` is read in a flat statement list."""
    count = 0

    def expr(e):
        nonlocal count
        if e is var:
            count += 1
        elif isinstance(e, Call):
            for a in e.args:
                expr(a)
            for _, v in e.kwargs:
                expr(v)
        elif hasattr(e, "items"):
            for item in e.items:
                expr(item)
        elif hasattr(e, "lhs"):
            expr(e.lhs)
            expr(e.rhs)

    for s in stmts:
        if isinstance(s, AssignStmt):
            expr(s.value)
        elif isinstance(s, YieldStmt):
            for v in s.values:
                expr(v)
        elif hasattr(s, "expr"):
            expr(s.expr)
    return count


def _analyze(loop: ForStmt, target: Target) -> Candidate | None:
    """Every qualification rule of §3.6 for one loop; None on the first that fails."""
    stages = loop.attrs.get(STAGES)
    if loop.kind is not ForKind.Pipeline or not isinstance(stages, int) or stages < 2:
        return None
    if OVERLAP_STORES in loop.attrs or DOUBLE_BUFFER_C in loop.attrs:
        return None  # chooser-emitted or already decided: never re-marked
    start, stop, step = _const(loop.start), _const(loop.stop), _const(loop.step)
    if start is None or stop is None or step is None or step <= 0:
        return None
    trips = max(0, -(-(stop - start) // step))
    if trips < stages or trips % stages:
        return None  # a separately lowered tail group would break the ping-pong
    body = list(loop.body.stmts)
    if any(isinstance(s, (ForStmt, IfStmt, SeqStmts)) for s in body):
        return None
    assigns = [s for s in body if isinstance(s, AssignStmt)]
    defined = {s.var: s for s in assigns}
    acc_defs = [s for s in assigns if _acc_tile(s.var.type)]
    if len(acc_defs) != 1:
        return None
    mm = acc_defs[0]
    call = mm.value
    if not isinstance(call, Call) or call.op != "tile.matmul" or len(call.args) != 2:
        return None
    lhs, rhs = call.args
    if not _l0_operand(lhs, Mem.Left) or not _l0_operand(rhs, Mem.Right) \
            or lhs.type.shape[1] != rhs.type.shape[0]:
        return None
    inside = [x for x in (lhs, rhs) if x in defined]
    if len(inside) != 1:
        return None
    moving = inside[0]
    held = rhs if moving is lhs else lhs
    if isinstance(held, IterArg) or held in loop.iter_args:
        return None
    mv = defined[moving].value
    if not (isinstance(mv, Call) and mv.op in ("tile.extract", "tile.move") and mv.args
            and isinstance(mv.args[0], Var) and isinstance(mv.args[0].type, TileType)
            and mv.args[0].type.memory_space is Mem.Mat):
        return None
    acc = mm.var
    dims = static_shape(tuple(acc.type.shape))
    if dims is None or len(dims) != 2 or _uses_in(body, acc) != 1:
        return None
    # No other accumulator may be read in the body.
    for s in assigns:
        if s is mm or not isinstance(s.value, Call):
            continue
        for a in s.value.args:
            if isinstance(a, Var) and _acc_tile(a.type) and a is not acc:
                return None
    drains = [s for s in assigns if isinstance(s.value, Call) and s.value.op in STORE_LIKE]
    if len(drains) != 1:
        return None
    drain = drains[0]
    d_call = drain.value
    if len(d_call.args) != 3:
        return None
    src_i, tgt_i = STORE_LIKE[d_call.op]
    if d_call.args[src_i] is not acc:
        return None
    target_var = d_call.args[tgt_i]
    yields = [s for s in body if isinstance(s, YieldStmt)]
    if len(yields) != 1:
        return None
    values = list(yields[0].values)
    hits = [i for i, v in enumerate(values) if v is drain.var]
    if len(hits) != 1 or hits[0] >= len(loop.iter_args) or loop.iter_args[hits[0]] is not target_var:
        return None
    if _uses_in(body, drain.var) != 1 or _uses_in(body, target_var) != 1:
        return None
    if d_call.op == "tile.assemble":
        if not (isinstance(target_var.type, TileType) and target_var.type.memory_space is Mem.Mat
                and isinstance(drain.var.type, TileType) and drain.var.type.memory_space is Mem.Mat):
            return None
    acc_bytes = align_up(target.acc_physical_bytes(dims[0], dims[1], acc.type.dtype),
                         target.address_alignment)
    return Candidate(loop, trips, acc_bytes, d_call.op)


def _l0_operand(x, space: MemorySpace) -> bool:
    if not isinstance(x, Var) or not isinstance(x.type, TileType) or x.type.memory_space is not space:
        return False
    dims = static_shape(tuple(x.type.shape))
    return dims is not None and len(dims) == 2


def acc_footprint(fn: Function, target: Target) -> int:
    """``AccFootprintCollector``: every Acc value defined by a call, once, at its aligned
    physical size; values a pipeline replicates (non-MAD Acc defs, and everything in a loop
    that is already dbC) count once per stage of every enclosing pipeline."""
    total = 0
    seen: set[int] = set()

    def walk(stmt: Stmt, stage_product: int, in_dbc: bool) -> None:
        nonlocal total
        if isinstance(stmt, SeqStmts):
            for s in stmt.stmts:
                walk(s, stage_product, in_dbc)
        elif isinstance(stmt, ForStmt):
            product = stage_product
            if stmt.kind is ForKind.Pipeline and isinstance(stmt.attrs.get(STAGES), int):
                product *= max(1, stmt.attrs[STAGES])
            walk(stmt.body, product, in_dbc or bool(stmt.attrs.get(DOUBLE_BUFFER_C)))
        elif isinstance(stmt, WhileStmt):
            walk(stmt.body, stage_product, in_dbc)
        elif isinstance(stmt, IfStmt):
            walk(stmt.then_body, stage_product, in_dbc)
            if stmt.else_body is not None:
                walk(stmt.else_body, stage_product, in_dbc)
        elif isinstance(stmt, AssignStmt) and isinstance(stmt.value, Call) \
                and _acc_tile(stmt.var.type) and id(stmt.var) not in seen:
            seen.add(id(stmt.var))
            dims = static_shape(tuple(stmt.var.type.shape))
            if dims is None or len(dims) < 2:
                return
            batch = 1
            for d in dims[:-2]:
                batch *= d
            size = align_up(target.acc_physical_bytes(dims[-2], dims[-1], stmt.var.type.dtype)
                            * batch, target.address_alignment)
            if stmt.value.op not in MATMUL_FAMILY or in_dbc:
                size *= stage_product
            total += size

    walk(fn.body, 1, False)
    return total
