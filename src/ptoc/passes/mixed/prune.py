"""Cleaning one side of a split mixed kernel: dangling values, dead code, dead loop carries.

ExpandMixedKernel copies a mixed body twice and keeps one core's statements in each copy;
loops and branches are kept on both sides with their contents pruned. What the other side
computed is then missing, and this module repairs and shrinks what is left (PyPTO pass 21,
"loop-state repair after splitting"):

* ``repair``: a yield of a value the other side computed becomes an identity yield (the
  loop carry itself) or, for a DDR tensor, the parameter it writes; a return likewise. Any
  other use of a missing value is an error: a statement of this side reads a tile of the
  other side without a boundary move.
* ``dce``: statements without an effect whose results are unused go; a loop or branch with no
  effect and unused results goes; loop carries and branch results nothing reads are
  stripped. Effects: stores, the cross-core pipe ops, ``system.*`` ops and function calls.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.errors import PassError
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, Expr, ForStmt, IfStmt, ReturnStmt, SeqStmts, Stmt, Var, WhileStmt,
    YieldStmt,
)
from ptoc.ir.types import TensorType
from ptoc.ir.visitor import IRVisitor, substitute

EFFECT_OPS = frozenset({"tile.store", "tile.tpush_to_aiv", "tile.tpush_to_aic",
                        "tile.tpop_from_aic", "tile.tpop_from_aiv"})


def has_effect(e) -> bool:
    return isinstance(e, Call) and (e.is_function or e.op in EFFECT_OPS
                                    or e.op.startswith("system."))


def uses(node) -> set[Var]:
    """Every Var read in ``node`` (definitions excluded)."""
    found: set[Var] = set()

    class _Uses(IRVisitor):
        def visit_var(self, var):
            found.add(var)

    _Uses().visit(node)
    return found


# ---- repair -----------------------------------------------------------------------------------

def tensor_parents(body: SeqStmts) -> dict[Var, Expr]:
    """For DDR tensor values: the tensor each one is a new version of (a store's result -> the
    stored-to tensor; a loop carry -> its init; a loop result -> its carry; a branch result
    -> its then-value), so a missing version can fall back to the buffer it names."""
    parent: dict[Var, Expr] = {}

    def walk(seq: SeqStmts) -> None:
        for s in seq.stmts:
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) \
                    and s.value.op == "tile.store":
                parent[s.var] = s.value.args[2]
            elif isinstance(s, (ForStmt, WhileStmt)):
                for ia, rv in zip(s.iter_args, s.return_vars):
                    if isinstance(ia.type, TensorType):
                        parent[ia] = ia.init
                        parent[rv] = ia
                walk(s.body)
            elif isinstance(s, IfStmt):
                walk(s.then_body)
                if s.else_body is not None:
                    walk(s.else_body)
                last = s.then_body.stmts[-1] if s.then_body.stmts else None
                if isinstance(last, YieldStmt):
                    for rv, v in zip(s.return_vars, last.values):
                        if isinstance(rv.type, TensorType):
                            parent[rv] = v
    walk(body)
    return parent


class Repair:
    """Fix uses of values this side no longer computes (see the module doc)."""

    def __init__(self, fn_name: str, side: str, params, parents: dict[Var, Expr]):
        self.fn_name = fn_name
        self.side = side
        self.parents = parents
        self.defined: set[Var] = {p.var for p in params}

    def root(self, v: Expr) -> Expr | None:
        seen = 0
        while isinstance(v, Var) and v not in self.defined and seen < 10_000:
            v = self.parents.get(v)
            seen += 1
        return v if isinstance(v, Var) and v in self.defined else None

    def seq(self, seq: SeqStmts, carries: tuple = ()) -> SeqStmts:
        out = []
        for s in seq.stmts:
            out.append(self.stmt(s, carries))
        return replace(seq, stmts=tuple(out))

    def stmt(self, s: Stmt, carries: tuple) -> Stmt:
        if isinstance(s, ForStmt):
            self.defined.add(s.loop_var)
            iter_args, mapping = self.carries(s)
            body = self.seq(substitute(s.body, mapping) if mapping else s.body, tuple(iter_args))
            self.defined.update(s.return_vars)
            return replace(s, iter_args=tuple(iter_args), body=body)
        if isinstance(s, WhileStmt):
            return self.while_loop(s)
        if isinstance(s, IfStmt):
            then_body = self.seq(s.then_body, ())
            else_body = self.seq(s.else_body, ()) if s.else_body is not None else None
            self.defined.update(s.return_vars)
            return replace(s, then_body=then_body, else_body=else_body)
        if isinstance(s, YieldStmt):
            values = []
            for i, v in enumerate(s.values):
                if isinstance(v, Var) and v not in self.defined:
                    v = self.root(v) or (carries[i] if i < len(carries) else v)
                values.append(v)
            return replace(s, values=tuple(values))
        if isinstance(s, ReturnStmt):
            values = []
            for v in s.values:
                if isinstance(v, Var) and v not in self.defined:
                    fixed = self.root(v)
                    if fixed is None:
                        raise PassError(f"ExpandMixedKernel in '{self.fn_name}': the returned "
                                        f"value '{v.name}' is not a DDR tensor the kernel writes",
                                        s.loc, hint="return the output tensor parameters")
                    v = fixed
                values.append(v)
            return replace(s, values=tuple(values))
        v = self.missing(s)
        if v is not None:
            raise PassError(
                f"ExpandMixedKernel in '{self.fn_name}': a {self.side} statement uses "
                f"'{v.name}', which the other core computes", s.loc,
                hint="move the value across with pl.move(x, target_memory=...) (a cross-"
                     "core transfer) before using it")
        if isinstance(s, AssignStmt):
            self.defined.add(s.var)
        return s

    def missing(self, node) -> Var | None:
        """A variable ``node`` uses that this side does not define, if any."""
        return next((v for v in uses(node) if v not in self.defined), None)

    def carries(self, s: ForStmt | WhileStmt) -> tuple[list, dict]:
        """A loop's iter args, an init this side does not compute replaced by the tensor it
        versions (a carry of the other side: stripped by DCE later), and old -> new."""
        iter_args = []
        for ia in s.iter_args:
            init = ia.init
            if isinstance(init, Var) and init not in self.defined:
                init = self.root(init) or init
            iter_args.append(ia if init is ia.init else replace(ia, init=init))
        self.defined.update(iter_args)
        return iter_args, {old: new for old, new in zip(s.iter_args, iter_args) if old is not new}

    def while_loop(self, s: WhileStmt) -> WhileStmt:
        """A while loop runs on both cores: its condition must read only values this core
        has (the carries and scalars both compute)."""
        iter_args, mapping = self.carries(s)
        cond = substitute(s.cond, mapping) if mapping else s.cond
        v = self.missing(cond)
        if v is not None:
            raise PassError(f"ExpandMixedKernel in '{self.fn_name}': the while condition reads "
                            f"'{v.name}', which only the other core computes", s.loc,
                            hint=_SHARED_CONDITION)
        body = substitute(s.body, mapping) if mapping else s.body
        repaired = self.seq(body, tuple(iter_args))
        before, after = _tail_yield(body), _tail_yield(repaired)
        for i, ia in enumerate(iter_args):
            if ia in uses(cond) and before is not None and \
                    after.values[i] is not before.values[i]:
                raise PassError(
                    f"ExpandMixedKernel in '{self.fn_name}': the while condition tests "
                    f"'{ia.name}', whose next value only the other core computes, so the "
                    f"{self.side} core could not tell when the loop ends", s.loc,
                    hint=_SHARED_CONDITION)
        self.defined.update(s.return_vars)
        return replace(s, cond=cond, iter_args=tuple(iter_args), body=repaired)


_SHARED_CONDITION = ("compute the values the condition tests from scalars both cores have "
                     "(parameters, pl.tensor.read of inputs, loop counters)")


def _tail_yield(body: SeqStmts) -> YieldStmt | None:
    last = body.stmts[-1] if body.stmts else None
    return last if isinstance(last, YieldStmt) else None


# ---- dead code -------------------------------------------------------------------------------

def dce(seq: SeqStmts, live_out: set[Var]) -> SeqStmts:
    """``seq`` without the statements nothing needs (see the module doc)."""
    used = set(live_out)
    out: list[Stmt] = []
    for s in reversed(seq.stmts):
        kept = _dce_stmt(s, used)
        if kept is not None:
            out.append(kept)
    out.reverse()
    return replace(seq, stmts=tuple(out))


def _dce_stmt(s: Stmt, used: set[Var]) -> Stmt | None:
    if isinstance(s, AssignStmt):
        if s.var not in used and not has_effect(s.value):
            return None
        used |= uses(s.value)
        return s
    if isinstance(s, EvalStmt):
        if not has_effect(s.expr):
            return None
        used |= uses(s.expr)
        return s
    if isinstance(s, (YieldStmt, ReturnStmt)):
        used |= uses(s)
        return s
    if isinstance(s, (ForStmt, WhileStmt)):
        return _dce_loop(s, used)
    if isinstance(s, IfStmt):
        return _dce_branch(s, used)
    used |= uses(s)
    return s


def _dce_loop(s: ForStmt | WhileStmt, used: set[Var]) -> Stmt | None:
    tested = uses(s.cond) if isinstance(s, WhileStmt) else set()  # a while's condition
    live = {i for i, rv in enumerate(s.return_vars) if rv in used}
    while True:
        body = _body_dce(s.body, live)
        inner = _uses_but_dead_yields(body, live) | tested
        grown = live | {i for i, ia in enumerate(s.iter_args) if ia in inner}
        if grown == live:
            break
        live = grown
    if not live and not _effectful(body):
        return None
    keep = sorted(live)
    iter_args = tuple(s.iter_args[i] for i in keep)
    body = _strip_yield(body, keep)
    new = replace(s, iter_args=iter_args, return_vars=tuple(s.return_vars[i] for i in keep),
                  body=body)
    used |= uses(new)
    return new


def _dce_branch(s: IfStmt, used: set[Var]) -> Stmt | None:
    keep = [i for i, rv in enumerate(s.return_vars) if rv in used]
    then_body = _strip_yield(_body_dce(s.then_body, set(keep)), keep)
    else_body = _strip_yield(_body_dce(s.else_body, set(keep)), keep) \
        if s.else_body is not None else None
    if not keep and not _effectful(then_body) and (else_body is None or not _effectful(else_body)):
        return None
    new = replace(s, then_body=then_body, else_body=else_body,
                  return_vars=tuple(s.return_vars[i] for i in keep))
    used |= uses(new)
    return new


def _uses_but_dead_yields(body: SeqStmts, live: set[int]) -> set[Var]:
    """Vars ``body`` reads, counting only the yielded values at ``live`` positions."""
    stmts = body.stmts
    if not stmts or not isinstance(stmts[-1], YieldStmt):
        return uses(body)
    found = uses(replace(body, stmts=stmts[:-1]))
    found |= {v for i, v in enumerate(stmts[-1].values) if i in live and isinstance(v, Var)}
    return found


def _body_dce(body: SeqStmts, live: set[int]) -> SeqStmts:
    """DCE of a loop/branch body whose yield keeps only the ``live`` positions."""
    stmts = body.stmts
    if stmts and isinstance(stmts[-1], YieldStmt):
        needed = {v for i, v in enumerate(stmts[-1].values) if i in live and isinstance(v, Var)}
        rest = dce(replace(body, stmts=stmts[:-1]), needed)
        return replace(rest, stmts=rest.stmts + (stmts[-1],))
    return dce(body, set())


def _strip_yield(body: SeqStmts, keep) -> SeqStmts:
    stmts = body.stmts
    if not stmts or not isinstance(stmts[-1], YieldStmt):
        return body
    last = stmts[-1]
    values = tuple(last.values[i] for i in keep)
    tail = (replace(last, values=values),) if values else ()
    return replace(body, stmts=stmts[:-1] + tail)


def _effectful(body: SeqStmts) -> bool:
    for s in body.stmts:
        if isinstance(s, AssignStmt) and has_effect(s.value):
            return True
        if isinstance(s, EvalStmt) and has_effect(s.expr):
            return True
        if isinstance(s, (ForStmt, WhileStmt)) and _effectful(s.body):
            return True
        if isinstance(s, IfStmt) and (_effectful(s.then_body) or (
                s.else_body is not None and _effectful(s.else_body))):
            return True
    return False
