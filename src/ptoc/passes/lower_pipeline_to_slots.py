"""LowerPipelineToSlots (PTOAS planner only): keep one loop, rotate staged loads over F slots.

Reference semantics (pypto-passes.md §11.1): for a ``pl.pipeline(stage=F)`` loop with F in
[2, 16], step 1, ``start % F == 0`` and no declined enclosing pipeline, every eligible
top-level ``tile.load`` result is bound to slot ``iv % F`` of an F-slot buffer and the loop is
demoted to an ordinary loop; a loop with no eligible load (e.g. a dbC L1->L0 loop, whose
operands are ``tile.extract``s) is declined and left to LowerPipelineLoops.

How ptoc expresses the slots. PyPTO writes ``pl.MemRef(name, slots=F)[iv % F]`` and its
codegen emits ``pto.alloc_multi_tile`` + ``pto.multi_tile_get``; ptoc's IR and PTO subset
have neither. Instead the demoted loop's body becomes an if-cascade on ``iv % F``: arm k is
the body with every eligible load re-bound to a fresh variable (so InitMemRef gives it a
buffer of its own: slot k) and tagged ``pipeline_slot = "k/F"``. One loop iteration runs
exactly one arm, so the program computes what the pipeline loop computed, stays in the IR
and PTO that codegen, the planner, InsertSync and the simulator already understand, and
every slot is a distinct ``alloc_tile`` for ``ptoc.pto.planner`` to place (with room, on
distinct bytes; correctness never depends on that).

InsertSync knows the cascade (``ptoc.pto.sync_slots``): it synchronises each arm with its
own previous visit, F trips back, so consecutive trips in different slots overlap.
Measured on the simulator (a2a3, 8 trips of load/exp/store on 16x64 f32): 665 cycles
slotted (1099 before sync was slot-aware), 752 replicated under PYPTO.

Eligible load (§11.1): a top-level ``x = tile.load(...)`` of the loop body landing in Vec or
Mat, not already bound to a buffer (no MemRef), with a constant valid shape, whose result is not yielded, not the source of a view op
and not the in-place operand of an op that writes its input (``matmul_acc``, ``assemble``),
and whose F slots fit the space's capacity on the context's target.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.backend.targets import align_up, get_target
from ptoc.dtypes import ForKind, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, Expr, ForStmt, Function, IfStmt, ListExpr, SeqStmts, Stmt,
    WhileStmt, Var, YieldStmt,
)
from ptoc.ir.types import TileType
from ptoc.ir.visitor import IRVisitor, clone_with_fresh_vars, map_if_bodies
from ptoc.ops.registry import get_op, has_op
from ptoc.passes.base import function_pass
from ptoc.passes.context import MemoryPlanner
from ptoc.passes.manager import register_default_pass

STAGES = "pipeline_stages"
SLOT = "pipeline_slot"
MAX_SLOTS = 16
SLOT_SPACES = (MemorySpace.Vec, MemorySpace.Mat)


@function_pass(name="LowerPipelineToSlots", required=("SSAForm",), func_types=None,
               handles_while_loops=True)
def lower_pipeline_to_slots(function: Function, ctx) -> Function:
    """Rotate the staged loads of every eligible pipeline loop (see the module docstring)."""
    target = get_target(getattr(ctx, "target", "a2a3"))
    body = _Slotter(target).body(function.body, declined_above=False)
    return function if body is function.body else replace(function, body=body)


register_default_pass(lower_pipeline_to_slots, planners={MemoryPlanner.PTOAS})


class _Slotter:
    def __init__(self, target):
        self.target = target

    def body(self, seq: SeqStmts, declined_above: bool) -> SeqStmts:
        out = [self.stmt(s, declined_above) for s in seq.stmts]
        if all(a is b for a, b in zip(out, seq.stmts)):
            return seq
        return replace(seq, stmts=tuple(out))

    def stmt(self, stmt: Stmt, declined_above: bool) -> Stmt:
        if isinstance(stmt, IfStmt):
            return map_if_bodies(stmt, lambda b: self.body(b, declined_above))
        if not isinstance(stmt, (ForStmt, WhileStmt)):
            return stmt
        if isinstance(stmt, WhileStmt) or stmt.kind is not ForKind.Pipeline or stmt.attrs.get(STAGES, 1) <= 1:
            body = self.body(stmt.body, declined_above)
            return stmt if body is stmt.body else replace(stmt, body=body)
        slots = stmt.attrs[STAGES]
        candidates = [] if declined_above else self.candidates(stmt, slots)
        if not candidates:  # declined: LowerPipelineLoops replicates it
            body = self.body(stmt.body, True)
            return stmt if body is stmt.body else replace(stmt, body=body)
        lowered = _demote(stmt, slots, candidates)
        return replace(lowered, body=self.body(lowered.body, False))

    # -- eligibility ---------------------------------------------------------------------------
    def candidates(self, loop: ForStmt, slots: int) -> list[Var]:
        if not (2 <= slots <= MAX_SLOTS):
            return []
        if not (isinstance(loop.step, ConstInt) and loop.step.value == 1):
            return []
        if not (isinstance(loop.start, ConstInt) and loop.start.value % slots == 0):
            return []
        blocked = _blocked_vars(loop.body)
        used: dict[MemorySpace, int] = {}
        out: list[Var] = []
        for s in loop.body.stmts:
            if not (isinstance(s, AssignStmt) and isinstance(s.value, Call)
                    and s.value.op == "tile.load" and isinstance(s.var.type, TileType)):
                continue
            ty = s.var.type
            if ty.memory_space not in SLOT_SPACES or ty.memref is not None or s.var in blocked \
                    or not _static_valid(s.value):
                continue
            dims = [d.value if isinstance(d, ConstInt) else d for d in ty.shape]
            if len(dims) != 2 or not all(isinstance(d, int) for d in dims):
                continue
            nbytes = align_up(self.target.tile_bytes(ty.memory_space, dims[0], dims[1], ty.dtype),
                              self.target.address_alignment)
            if used.get(ty.memory_space, 0) + slots * nbytes > self.target.capacity(ty.memory_space):
                continue
            used[ty.memory_space] = used.get(ty.memory_space, 0) + slots * nbytes
            out.append(s.var)
        return out


def _static_valid(load: Call) -> bool:
    valid = load.args[3] if len(load.args) > 3 else None
    if valid is None:
        return True
    return isinstance(valid, ListExpr) and all(isinstance(e, ConstInt) for e in valid.items)


class _Uses(IRVisitor):
    """Variables a slot may not hold: yielded, viewed, or updated in place."""

    def __init__(self):
        super().__init__()
        self.blocked: set[Var] = set()

    def visit_yield_stmt(self, node):
        self.blocked.update(v for v in node.values if isinstance(v, Var))
        return super().visit_yield_stmt(node)

    def visit_call(self, node):
        if not node.is_function and has_op(node.op):
            op = get_op(node.op)
            if op.view and node.args and isinstance(node.args[0], Var):
                self.blocked.add(node.args[0])
            if op.reuses_input is not None and op.reuses_input < len(node.args) and \
                    isinstance(node.args[op.reuses_input], Var) and \
                    isinstance(node.args[op.reuses_input].type, TileType):
                self.blocked.add(node.args[op.reuses_input])
        return super().visit_call(node)


def _blocked_vars(body: SeqStmts) -> set[Var]:
    uses = _Uses()
    uses.visit(body)
    return uses.blocked


# -- the rewrite -------------------------------------------------------------------------------

def _demote(loop: ForStmt, slots: int, loads: list[Var]) -> ForStmt:
    """The loop with kind Sequential and an if-cascade over ``iv % slots`` as its body."""
    stmts = list(loop.body.stmts)
    yield_stmt = stmts.pop() if stmts and isinstance(stmts[-1], YieldStmt) else None
    body = SeqStmts(tuple(stmts), loop.body.loc)
    slot = BinOp("%", loop.loop_var, ConstInt(slots))
    cascade = _cascade(loop, body, yield_stmt, slot, slots, loads, 0)
    new_stmts: list[Stmt] = [cascade]
    if yield_stmt is not None:
        new_stmts.append(YieldStmt(cascade.return_vars, yield_stmt.loc))
    attrs = {k: v for k, v in loop.attrs.items() if not k.startswith("pipeline_")}
    return replace(loop, kind=ForKind.Sequential, attrs=attrs,
                   body=SeqStmts(tuple(new_stmts), loop.body.loc))


def _cascade(loop: ForStmt, body: SeqStmts, yield_stmt, slot: Expr, slots: int,
             loads: list[Var], k: int) -> IfStmt:
    arm = _arm(body, yield_stmt, slots, loads, k)
    results = tuple(Var(f"{rv.name}_s{k}", rv.type, rv.loc) for rv in loop.return_vars) \
        if yield_stmt is not None else ()
    if k + 2 == slots:
        other = _arm(body, yield_stmt, slots, loads, k + 1)
    else:
        inner = _cascade(loop, body, yield_stmt, slot, slots, loads, k + 1)
        tail: list[Stmt] = [inner]
        if yield_stmt is not None:
            tail.append(YieldStmt(inner.return_vars, loop.loc))
        other = SeqStmts(tuple(tail), loop.loc)
    return IfStmt(BinOp("==", slot, ConstInt(k)), arm, other, results, loop.loc)


def _arm(body: SeqStmts, yield_stmt, slots: int, loads: list[Var], k: int) -> SeqStmts:
    """Slot ``k``'s copy of the body: fresh variables, loads tagged with their slot."""
    var_map: dict[Var, Expr] = {}
    clone = clone_with_fresh_vars(body, {}, var_map_out=var_map)
    fresh_loads = {var_map[v] for v in loads if v in var_map}
    stmts = [replace(s, value=replace(s.value, attrs={**s.value.attrs, SLOT: f"{k}/{slots}"}))
             if isinstance(s, AssignStmt) and s.var in fresh_loads else s
             for s in clone.stmts]
    if yield_stmt is not None:
        values = tuple(var_map.get(v, v) if isinstance(v, Var) else
                       clone_with_fresh_vars(v, dict(var_map)) for v in yield_stmt.values)
        stmts.append(YieldStmt(values, yield_stmt.loc))
    return SeqStmts(tuple(stmts), body.loc)
