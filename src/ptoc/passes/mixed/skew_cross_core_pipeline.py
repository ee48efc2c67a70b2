"""SkewCrossCorePipeline (PyPTO pass 26): a ``pl.pipeline`` loop of an AIC or AIV kernel that
talks to the other core is software-pipelined across the cores or made sequential.

Only loops with ``pipeline_stages`` F > 1 whose body holds both a push and a pop are touched
(same-core pipelines are LowerPipelineLoops' job). Each leaves as a ``Sequential`` loop without
``pipeline_stages``, so neither LowerPipelineLoops nor CanonicalizeIOOrder re-shapes it:

* **Producer skew** — exactly one push and one pop, the push first, and the push's backward
  slice (the *produce* half) shares no value with the rest (the *consume* half) and reads no
  loop carry: the producer runs D iterations ahead, ``D = max(2, F - 1)`` lowered to the
  largest D with ``trip % D == 0`` and ``trip >= 2 D`` (down to 1). Prologue: produce the first
  D; a steady loop over the rest, step ``D * step``, whose body produces the next D then
  consumes the D produced one group earlier (loop carries thread through the consumes);
  epilogue: consume the last D. A cube producing score tiles then keeps computing while the
  vector core works on the previous ones.
* **Demotion** — anything else (the lead op's result feeds the body, several messages per
  direction, dynamic bounds, fewer than two trips): the loop becomes Sequential, body
  unchanged, so the in-order pipe sees its messages in program order.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import FunctionType, ForKind
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, EvalStmt, Expr, ForStmt, Function, IfStmt, IterArg, SeqStmts,
    Stmt, Var, WhileStmt, YieldStmt,
)
from ptoc.ir.visitor import clone_with_fresh_vars, map_if_bodies
from ptoc.passes.base import function_pass
from ptoc.passes.manager import register_default_pass
from ptoc.passes.mixed.prune import uses

STAGES = "pipeline_stages"
PUSHES = ("tile.tpush_to_aiv", "tile.tpush_to_aic")
POPS = ("tile.tpop_from_aic", "tile.tpop_from_aiv")


@function_pass(name="SkewCrossCorePipeline", required=("SSAForm",),
               func_types=(FunctionType.AIC, FunctionType.AIV),
               handles_while_loops=True)
def skew_cross_core_pipeline(fn: Function, ctx) -> Function:
    """Skew or demote every cross-core pipeline loop of one kernel (module docstring)."""
    body = _Rewriter().seq(fn.body)
    return fn if body is fn.body else replace(fn, body=body)


register_default_pass(skew_cross_core_pipeline)


def _calls(stmts):
    for s in stmts:
        if isinstance(s, (AssignStmt, EvalStmt)):
            value = s.value if isinstance(s, AssignStmt) else s.expr
            if isinstance(value, Call):
                yield s, value
        elif isinstance(s, (ForStmt, WhileStmt)):
            yield from _calls(s.body.stmts)
        elif isinstance(s, IfStmt):
            yield from _calls(s.then_body.stmts)
            if s.else_body is not None:
                yield from _calls(s.else_body.stmts)


def _defs(s: Stmt) -> set[Var]:
    if isinstance(s, AssignStmt):
        return {s.var}
    if isinstance(s, (ForStmt, WhileStmt, IfStmt)):
        out = set(s.return_vars)
        for inner, _ in _calls([s]):
            if isinstance(inner, AssignStmt):
                out.add(inner.var)
        return out
    return set()


class _Rewriter:
    def seq(self, seq: SeqStmts) -> SeqStmts:
        out: list[Stmt] = []
        changed = False
        for s in seq.stmts:
            new = self.stmt(s)
            changed |= not (len(new) == 1 and new[0] is s)
            out.extend(new)
        return replace(seq, stmts=tuple(out)) if changed else seq

    def stmt(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, IfStmt):
            return [map_if_bodies(s, self.seq)]
        if isinstance(s, WhileStmt):
            body = self.seq(s.body)
            return [s if body is s.body else replace(s, body=body)]
        if not isinstance(s, ForStmt):
            return [s]
        body = self.seq(s.body)
        loop = s if body is s.body else replace(s, body=body)
        if loop.kind is not ForKind.Pipeline or loop.attrs.get(STAGES, 1) <= 1:
            return [loop]
        ops = [c.op for _, c in _calls(loop.body.stmts)]
        pushes, pops = sum(op in PUSHES for op in ops), sum(op in POPS for op in ops)
        if not pushes or not pops:
            return [loop]
        skewed = _producer_skew(loop) if pushes == 1 and pops == 1 else None
        return skewed if skewed is not None else [_demote(loop)]


def _demote(loop: ForStmt) -> ForStmt:
    attrs = {k: v for k, v in loop.attrs.items() if k != STAGES}
    return replace(loop, kind=ForKind.Sequential, attrs=attrs)


def _const(e) -> int | None:
    return e.value if isinstance(e, ConstInt) else None


def _producer_skew(loop: ForStmt) -> list[Stmt] | None:
    stmts = list(loop.body.stmts)
    yield_stmt = stmts.pop() if stmts and isinstance(stmts[-1], YieldStmt) else None
    lead = next((i for i, s in enumerate(stmts) if any(c.op in PUSHES + POPS
                                                       for _, c in _calls([s]))), None)
    if lead is None or not isinstance(stmts[lead], EvalStmt) \
            or stmts[lead].expr.op not in PUSHES:
        return None                     # consumer role: the popped tile feeds the body
    needed, producer = set(uses(stmts[lead])), {lead}
    for i in range(lead - 1, -1, -1):
        if _defs(stmts[i]) & needed:
            producer.add(i)
            needed |= uses(stmts[i])
    produced = set().union(*(_defs(stmts[i]) for i in producer))
    carries = set(loop.iter_args)
    consumer = [i for i in range(len(stmts)) if i not in producer]
    for i in producer:
        if uses(stmts[i]) & carries or any(c.op in POPS for _, c in _calls([stmts[i]])):
            return None
    for i in consumer:
        if uses(stmts[i]) & produced:
            return None                 # the produce half feeds the body: not skewable
    start, stop, step = (_const(e) for e in (loop.start, loop.stop, loop.step))
    if None in (start, stop, step) or step <= 0:
        return None
    trip = max(0, -(-(stop - start) // step))
    if trip < 2:
        return None
    depth = max(2, loop.attrs.get(STAGES, 2) - 1)
    while depth > 1 and not (trip % depth == 0 and trip >= 2 * depth):
        depth -= 1
    produce = [stmts[i] for i in sorted(producer)]
    consume = [stmts[i] for i in consumer]
    return _emit(loop, produce, consume, yield_stmt, start, step, trip, depth)


def _at(loop: ForStmt, stmts: list[Stmt], index: Expr, carry: dict | None = None) -> list[Stmt]:
    """A fresh copy of ``stmts`` for iteration ``index`` (and loop carries ``carry``)."""
    mapping: dict[Var, Expr] = {loop.loop_var: index}
    mapping.update(carry or {})
    out = clone_with_fresh_vars(SeqStmts(tuple(stmts), loop.body.loc), mapping)
    return list(out.stmts)


def _emit(loop, produce, consume, yield_stmt, start, step, trip, depth) -> list[Stmt]:
    loc = loop.loc
    values = yield_stmt.values if yield_stmt is not None else ()

    def consumed(index: Expr, carry: tuple) -> tuple[list[Stmt], tuple]:
        mapping = dict(zip(loop.iter_args, carry))
        body = SeqStmts(tuple(consume) + ((YieldStmt(values, loc),) if values else ()), loc)
        copy = clone_with_fresh_vars(body, {loop.loop_var: index, **mapping})
        stmts = list(copy.stmts)
        out = stmts.pop().values if values else ()
        return stmts, tuple(out)

    prologue: list[Stmt] = []
    for i in range(depth):
        prologue += _at(loop, produce, ConstInt(start + i * step))
    k = Var(loop.loop_var.name, loop.loop_var.type, loc)
    new_args = tuple(IterArg(ia.name, ia.type, ia.loc, ia.init) for ia in loop.iter_args)
    steady: list[Stmt] = []
    for i in range(depth):
        steady += _at(loop, produce, _plus(k, i * step))
    carry = new_args
    for i in range(depth):
        part, carry = consumed(_plus(k, -(depth - i) * step), carry)
        steady += part
    if new_args:
        steady.append(YieldStmt(carry, loc))
    results = tuple(Var(rv.name, rv.type, rv.loc) for rv in loop.return_vars)
    main = ForStmt(k, ConstInt(start + depth * step), ConstInt(start + trip * step),
                   ConstInt(depth * step), new_args, SeqStmts(tuple(steady), loc), results,
                   ForKind.Sequential, {a: v for a, v in loop.attrs.items() if a != STAGES},
                   loc)
    epilogue: list[Stmt] = []
    carry = results
    for i in range(depth):
        part, carry = consumed(ConstInt(start + (trip - depth + i) * step), carry)
        epilogue += part
    binds = [AssignStmt(rv, value, loc) for rv, value in zip(loop.return_vars, carry)]
    return prologue + [main] + epilogue + binds


def _plus(var: Var, offset: int) -> Expr:
    if offset == 0:
        return var
    return BinOp("+", var, ConstInt(offset)) if offset > 0 else \
        BinOp("-", var, ConstInt(-offset))


__all__ = ["skew_cross_core_pipeline"]
