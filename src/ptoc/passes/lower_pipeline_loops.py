"""LowerPipelineLoops: replicate each ``pl.pipeline(stage=F)`` body F times per outer step.

Reads top-down like its reference (pypto-passes.md §5):

1. Replication — bodies are lowered inside-out; the main loop gets a fresh loop variable,
   fresh iter-args seeded from the originals' inits, stride ``F·step``, and F clones of the
   body (clone k sees ``loop_var + k·step`` and the previous clone's yields); the loop keeps
   its kind and attrs, with ``pipeline_stages`` rewritten to 1. Every replicated region (the
   main loop, each static tail, each dynamic cascade branch) takes a new group id.
2. Static bounds — ``T`` trips: ``T // F`` in the main loop, ``T % F`` straight-line tail
   clones (own group), then the original return vars bound to the tail's results.
3. Dynamic bounds — the main loop runs to ``unroll_main_end``; the remainder is dispatched
   through an if-cascade on ``unroll_rem`` (one branch per possible remainder).
4. Membership tagging — each clone's tile-producing calls get ``"group:stage"`` appended to
   their ``pipeline_membership``; cube accumulators are skipped unless the loop being
   replicated carries ``pipeline_double_buffer_c`` (the dbC carve-out). So is a fresh Acc tile
   that becomes the loop's own carried accumulator (qwen3's ``if k0 == 0: acc = matmul(..)
   else: acc = matmul_acc(acc, ..)``: AutoTileMatmulL0's ``tile.create`` init in the first arm):
   the carry is one L0C buffer, and a per-stage copy could only rejoin it by an Acc -> Acc
   move, which does not exist.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import DataType, ForKind, MemorySpace
from ptoc.errors import PassError
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, Expr, ForStmt, Function, IfStmt, IterArg, SeqStmts, Stmt,
    WhileStmt, UnaryOp, Var, YieldStmt,
)
from ptoc.ir.types import ScalarType, TileType
from ptoc.ir.visitor import IRMutator, clone_with_fresh_vars, map_if_bodies
from ptoc.passes.base import function_pass
from ptoc.passes.manager import register_default_pass

STAGES = "pipeline_stages"
MEMBERSHIP = "pipeline_membership"
DOUBLE_BUFFER_C = "pipeline_double_buffer_c"
INDEX = ScalarType(DataType.INDEX)


@function_pass(name="LowerPipelineLoops", required=("SSAForm",),
               produced=("PipelineLoopsLowered",), func_types=None,
               handles_while_loops=True)
def lower_pipeline_loops(function: Function, ctx) -> Function:
    """Replicate every pipeline loop of one function, of any kind (see the module docstring)."""
    lowered = _Lowerer().body(function.body)
    return function if lowered is function.body else replace(function, body=lowered)


register_default_pass(lower_pipeline_loops)


# --- 1. replication -------------------------------------------------------------------------

class _Lowerer:
    """Walks a function inside-out; owns the per-function group counter."""

    def __init__(self):
        self.next_group = 0

    def body(self, seq: SeqStmts) -> SeqStmts:
        out: list[Stmt] = []
        changed = False
        for stmt in seq.stmts:
            new = self.stmt(stmt)
            changed |= len(new) != 1 or new[0] is not stmt
            out.extend(new)
        return replace(seq, stmts=tuple(out)) if changed else seq

    def stmt(self, stmt: Stmt) -> list[Stmt]:
        if isinstance(stmt, ForStmt):
            return self.loop(stmt)
        if isinstance(stmt, WhileStmt):
            body = self.body(stmt.body)
            return [stmt if body is stmt.body else replace(stmt, body=body)]
        if isinstance(stmt, IfStmt):
            return [map_if_bodies(stmt, self.body)]
        return [stmt]

    def loop(self, loop: ForStmt) -> list[Stmt]:
        body = self.body(loop.body)
        if body is not loop.body:
            loop = replace(loop, body=body)
        stages = loop.attrs.get(STAGES, 1)
        if loop.kind is not ForKind.Pipeline or stages <= 1:
            return [loop]
        step = _static_step(loop)
        if isinstance(loop.start, ConstInt) and isinstance(loop.stop, ConstInt):
            return self.static_bounds(loop, stages, step)
        if step <= 0:
            raise PassError(f"pipeline loop over '{loop.loop_var.name}' has dynamic bounds and "
                            f"step {step}; dynamic pipeline loops need a positive step", loop.loc)
        return self.dynamic_bounds(loop, stages, step)

    def replicate(self, loop: ForStmt, count: int, base, carried: list[Expr]):
        """``count`` tagged clones of the body; clone k sees ``base + k·step``.

        Returns the cloned statements (trailing yields stripped) and the values the last
        clone yields (``carried`` when the loop carries nothing).
        """
        group = self.next_group
        self.next_group += 1
        dbc = loop.attrs.get(DOUBLE_BUFFER_C) is True
        step = _static_step(loop)
        stmts = list(loop.body.stmts)
        yield_stmt = stmts.pop() if stmts and isinstance(stmts[-1], YieldStmt) else None
        body = SeqStmts(tuple(stmts), loop.body.loc)
        out: list[Stmt] = []
        values = list(carried)
        carry_sources = carried_accumulator_sources(loop, yield_stmt)
        for k in range(count):
            mapping: dict[Var, Expr] = {loop.loop_var: _offset(base, k * step)}
            mapping.update(zip(loop.iter_args, values))
            cloner = _MembershipTagger(f"{group}:{k}", dbc, mapping, carry_sources)
            out.extend(cloner.body(body).stmts)
            var_map = cloner.var_map
            if yield_stmt is not None:
                values = [var_map.get(v, v) if isinstance(v, Var) else
                          clone_with_fresh_vars(v, dict(var_map)) for v in yield_stmt.values]
        return out, values

    def main_loop(self, loop: ForStmt, stages: int, stop: Expr, fresh_results: bool) -> ForStmt:
        """The replicated main loop ``[start, stop)`` with stride ``F·step``."""
        step = _static_step(loop)
        loop_var = Var(loop.loop_var.name, loop.loop_var.type, loop.loop_var.loc)
        iter_args = tuple(IterArg(ia.name, ia.type, ia.loc, init=ia.init) for ia in loop.iter_args)
        stmts, values = self.replicate(loop, stages, loop_var, list(iter_args))
        if iter_args:
            stmts.append(YieldStmt(tuple(values), loop.body.stmts[-1].loc))
        results = tuple(Var(f"{rv.name}_main", rv.type, rv.loc) for rv in loop.return_vars) \
            if fresh_results else loop.return_vars
        attrs = {k: (1 if k == STAGES else v) for k, v in loop.attrs.items()}
        return ForStmt(loop_var, loop.start, stop, ConstInt(stages * step), iter_args,
                       SeqStmts(tuple(stmts), loop.body.loc), results, ForKind.Pipeline, attrs,
                       loop.loc)

    # --- 2. static bounds -------------------------------------------------------------------

    def static_bounds(self, loop: ForStmt, stages: int, step: int) -> list[Stmt]:
        start, stop = loop.start.value, loop.stop.value
        trips = max(0, -(-(stop - start) // step)) if step > 0 else max(0, -(-(start - stop) // -step))
        if trips == 0:
            attrs = {k: v for k, v in loop.attrs.items() if k != STAGES}
            return [replace(loop, kind=ForKind.Sequential, attrs=attrs)]
        main, rem = divmod(trips, stages)
        out: list[Stmt] = []
        carried: list[Expr] = [ia.init for ia in loop.iter_args]
        if main > 0:
            main_loop = self.main_loop(loop, stages, ConstInt(start + main * stages * step), rem > 0)
            out.append(main_loop)
            carried = list(main_loop.return_vars)
        if rem > 0:
            tail, finals = self.replicate(loop, rem, ConstInt(start + main * stages * step), carried)
            out.extend(tail)
            out.extend(AssignStmt(rv, value, loop.loc) for rv, value in zip(loop.return_vars, finals))
        return out

    # --- 3. dynamic bounds ------------------------------------------------------------------

    def dynamic_bounds(self, loop: ForStmt, stages: int, step: int) -> list[Stmt]:
        span = BinOp("-", loop.stop, loop.start)
        trip = span if step == 1 else BinOp("//", BinOp("+", span, ConstInt(step - 1)), ConstInt(step))
        full = BinOp("*", BinOp("//", trip, ConstInt(stages)), ConstInt(stages * step))
        main_end = Var("unroll_main_end", INDEX, loop.loc)
        rem = Var("unroll_rem", INDEX, loop.loc)
        rem_value = BinOp("-", loop.stop, main_end) if step == 1 else \
            BinOp("-", trip, BinOp("*", BinOp("//", trip, ConstInt(stages)), ConstInt(stages)))
        main_loop = self.main_loop(loop, stages, main_end, fresh_results=True)
        cascade = self.cascade(loop, rem, main_end, list(main_loop.return_vars), 1, stages)
        return [AssignStmt(main_end, BinOp("+", loop.start, full), loop.loc), main_loop,
                AssignStmt(rem, rem_value, loop.loc), cascade]

    def cascade(self, loop: ForStmt, rem: Var, base: Var, main_results: list[Var], k: int,
                stages: int) -> IfStmt:
        """``if rem == k: <k clones> else <cascade for k+1>``; the last else yields the main results."""
        outermost = k == 1
        results = tuple(rv if outermost else Var(f"{rv.name}_rem{k}", rv.type, rv.loc)
                        for rv in loop.return_vars)
        stmts, values = self.replicate(loop, k, base, list(main_results))
        if loop.iter_args:
            stmts.append(YieldStmt(tuple(values), loop.loc))
        if k + 1 < stages:
            inner = self.cascade(loop, rem, base, main_results, k + 1, stages)
            else_stmts: list[Stmt] = [inner]
            if loop.iter_args:
                else_stmts.append(YieldStmt(inner.return_vars, loop.loc))
            else_body = SeqStmts(tuple(else_stmts), loop.loc)
        else:
            else_body = SeqStmts((YieldStmt(tuple(main_results), loop.loc),), loop.loc) \
                if loop.iter_args else None
        return IfStmt(BinOp("==", rem, ConstInt(k)), SeqStmts(tuple(stmts), loop.loc), else_body,
                      results if loop.iter_args else (), loop.loc)


# --- 4. membership tagging --------------------------------------------------------------------

class _MembershipTagger(IRMutator):
    """Clones a pipeline body with fresh variables (``mapping`` substituted first, as in
    ``clone_with_fresh_vars``; ``var_map`` then holds old -> new) and appends one
    ``group:stage`` pair to every tile-producing call of the clone, in one walk."""

    def __init__(self, pair: str, loop_double_buffers_c: bool, mapping: dict[Var, Expr],
                 carry_sources: frozenset[Var]):
        super().__init__(mapping, fresh=True)
        self.pair = pair
        self.tag_accumulators = loop_double_buffers_c
        self.carry_sources = carry_sources

    def body(self, seq: SeqStmts) -> SeqStmts:
        return self.mutate_body(seq)

    def mutate_assign_stmt(self, node: AssignStmt):
        out = super().mutate_assign_stmt(node)
        value = out.value
        if not (isinstance(out.var.type, TileType) and isinstance(value, Call)):
            return out
        if (is_cube_accumulator(value) or node.var in self.carry_sources) and \
                not self.tag_accumulators:
            return out
        return replace(out, value=with_membership(value, self.pair))


def is_cube_accumulator(call: Call) -> bool:
    """A matmul-family result in Acc: the only tiles pipelines do not duplicate by default."""
    return call.op.startswith("tile.matmul") and isinstance(call.type, TileType) and \
        call.type.memory_space is MemorySpace.Acc


def carried_accumulator_sources(loop: ForStmt, yield_stmt: YieldStmt | None) -> frozenset[Var]:
    """The Acc tiles of ``loop``'s body whose value becomes its carried Acc accumulator.

    Walks back from the body's yield through nested loop/if results (their inits and
    yields) and ``matmul_acc``'s accumulator operand, to the Acc-space assignments.
    """
    if yield_stmt is None:
        return frozenset()
    defs: dict[Var, Stmt] = {}
    _collect_defs(loop.body.stmts, defs)
    todo = [v for arg, v in zip(loop.iter_args, yield_stmt.values) if _in_acc(arg.type)]
    seen: set[Var] = set()
    sources: set[Var] = set()
    while todo:
        var = todo.pop()
        if not isinstance(var, Var) or var in seen or var not in defs:
            continue
        seen.add(var)
        stmt = defs[var]
        if isinstance(stmt, AssignStmt):
            if _in_acc(var.type):
                sources.add(var)
                if isinstance(stmt.value, Call) and stmt.value.op.startswith("tile.matmul_acc"):
                    todo.append(stmt.value.args[0])
                elif isinstance(stmt.value, Var):
                    todo.append(stmt.value)
            continue
        i = stmt.return_vars.index(var)
        if isinstance(stmt, IfStmt):
            todo.extend(_yielded(body, i) for body in (stmt.then_body, stmt.else_body) if body)
        else:
            todo.extend((stmt.iter_args[i].init, _yielded(stmt.body, i)))
    return frozenset(sources)


def _collect_defs(stmts, defs: dict[Var, Stmt]) -> None:
    """Var -> the statement defining it, through nested bodies (SSA: one each)."""
    for stmt in stmts:
        if isinstance(stmt, AssignStmt):
            defs[stmt.var] = stmt
            continue
        for var in getattr(stmt, "return_vars", ()):
            defs[var] = stmt
        for body in (getattr(stmt, "body", None), getattr(stmt, "then_body", None),
                     getattr(stmt, "else_body", None)):
            if isinstance(body, SeqStmts):
                _collect_defs(body.stmts, defs)


def _yielded(body: SeqStmts, i: int) -> Expr | None:
    last = body.stmts[-1] if body.stmts else None
    return last.values[i] if isinstance(last, YieldStmt) and i < len(last.values) else None


def _in_acc(ty) -> bool:
    return isinstance(ty, TileType) and ty.memory_space is MemorySpace.Acc


def with_membership(call: Call, pair: str) -> Call:
    """``call`` with ``pair`` appended to its membership (strip-then-add keeps attr order last)."""
    attrs = dict(call.attrs)
    existing = attrs.pop(MEMBERSHIP, "")
    attrs[MEMBERSHIP] = f"{existing};{pair}" if existing else pair
    return replace(call, attrs=attrs)


def _static_step(loop: ForStmt) -> int:
    step = loop.step
    if isinstance(step, ConstInt):
        value = step.value
    elif isinstance(step, UnaryOp) and step.op == "-" and isinstance(step.operand, ConstInt):
        value = -step.operand.value
    else:
        raise PassError(f"pipeline loop over '{loop.loop_var.name}' needs a compile-time step",
                        loop.loc, hint="write the step as an integer literal or closure constant")
    if value == 0:
        raise PassError(f"pipeline loop over '{loop.loop_var.name}' has step 0", loop.loc)
    return value


def _offset(base, delta: int) -> Expr:
    """``base + delta``, folded when ``base`` is a constant and omitted when ``delta`` is 0."""
    if isinstance(base, ConstInt):
        return ConstInt(base.value + delta)
    return base if delta == 0 else BinOp("+", base, ConstInt(delta))
