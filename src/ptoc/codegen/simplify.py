"""Fold what is statically known before emitting PTO: constant scalars, one-trip loops, decided ifs.

PyPTO's kernels show that its codegen input has been simplified after AllocateMemoryAddr:

* a loop whose bounds are constants and that runs exactly once is not emitted as ``scf.for``;
  its body appears inline with the loop variable replaced by the start value (so
  ``extract(lm, i + 80, 0)`` becomes ``textract ... %c80_index``), its iter args by their
  initial values and its results by the values yielded on that one trip; a loop that never
  runs disappears and its results are the initial values;
* an ``if`` whose condition is decided is replaced by the taken branch, its results by the
  values that branch yields. Conditions are decided from constants and from the value range
  of enclosing loop variables: in ``for ko in range(0, 2048, 512)``, ``ko + 256 == 0`` can
  never hold, while ``ko == 0`` stays a run-time ``scf.if``;
* scalar expressions over constants are folded.

Doing this here (rather than in the emitter) keeps the emitter a plain one-to-one walk and
lets the SSA namer see exactly the statements that will be emitted.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.ir.nodes import (
    BinOp, ConstBool, ConstInt, Expr, ForStmt, Function, IfStmt, SeqStmts, Stmt, UnaryOp, Var,
    YieldStmt,
)
from ptoc.ir.types import ScalarType
from ptoc.ir.visitor import IRMutator


@dataclass(frozen=True)
class Interval:
    """Closed integer range [lo, hi] a scalar expression is known to lie in."""

    lo: int
    hi: int


def trip_count(start: int, stop: int, step: int) -> int:
    """Number of iterations of ``range(start, stop, step)`` (0 for a zero step)."""
    if step > 0:
        return max(0, -(-(stop - start) // step))
    if step < 0:
        return max(0, -(-(start - stop) // -step))
    return 0


class _Simplifier(IRMutator):
    def __init__(self):
        super().__init__()
        self.ranges: dict[Var, Interval] = {}

    # ---- expressions ---------------------------------------------------------------
    def mutate_bin_op(self, node: BinOp) -> Expr:
        new = super().mutate_bin_op(node)  # may already fold (IRMutator folds constants)
        if not isinstance(new, BinOp):
            return new
        folded = fold_binop(new)
        return folded if folded is not None else new

    def mutate_unary_op(self, node: UnaryOp) -> Expr:
        new = super().mutate_unary_op(node)
        if not isinstance(new, UnaryOp):
            return new
        x = new.operand
        if new.op == "-" and isinstance(x, ConstInt):
            return ConstInt(-x.value, x.dtype)
        if new.op == "not" and isinstance(x, ConstBool):
            return ConstBool(not x.value)
        return new

    # ---- loops ---------------------------------------------------------------------
    def mutate_for_stmt(self, node: ForStmt) -> Stmt | None:
        start, stop, step = (self.mutate(e) for e in (node.start, node.stop, node.step))
        if all(isinstance(e, ConstInt) for e in (start, stop, step)):
            trips = trip_count(start.value, stop.value, step.value)
            if trips == 0:
                for rv, ia in zip(node.return_vars, node.iter_args):
                    self.var_map[rv] = self.mutate(ia.init)
                return None
            if trips == 1:
                lv_dtype = getattr(node.loop_var.type, "dtype", start.dtype)
                self.var_map[node.loop_var] = ConstInt(start.value, lv_dtype)
                for ia in node.iter_args:
                    self.var_map[ia] = self.mutate(ia.init)
                return self._inline(node.body, node.return_vars, node.loc)
            last = start.value + (trips - 1) * step.value
            self.ranges[node.loop_var] = Interval(min(start.value, last), max(start.value, last))
        return super().mutate_for_stmt(node)

    # ---- branches ------------------------------------------------------------------
    def mutate_if_stmt(self, node: IfStmt) -> Stmt | None:
        cond = self.mutate(node.cond)
        decided = decide(cond, self.ranges)
        if decided is None:
            return super().mutate_if_stmt(node)
        body = node.then_body if decided else node.else_body
        if body is None:
            return None
        return self._inline(body, node.return_vars, node.loc)

    def _inline(self, body: SeqStmts, return_vars, loc) -> SeqStmts:
        """``body`` spliced in place; its trailing yield binds ``return_vars``."""
        stmts = list(body.stmts)
        yielded = None
        if stmts and isinstance(stmts[-1], YieldStmt):
            yielded = stmts.pop()
        out = self.mutate_body(SeqStmts(tuple(stmts), loc=body.loc))
        if yielded is not None:
            for rv, value in zip(return_vars, yielded.values):
                self.var_map[rv] = self.mutate(value)
        return SeqStmts(out.stmts, loc=loc)


def simplify_function(fn: Function) -> Function:
    """``fn`` with constants folded, one-trip/zero-trip loops inlined and decided ifs resolved."""
    return _Simplifier().mutate(fn)


# ---- constant folding and range reasoning ------------------------------------------------

_INT_FOLD = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b if b else None,
    "%": lambda a, b: a % b if b else None,
}
_CMP = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def fold_binop(node: BinOp) -> Expr | None:
    """A constant for ``node`` when both operands are constants, else None."""
    a, b = node.lhs, node.rhs
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        if node.op in _INT_FOLD:
            value = _INT_FOLD[node.op](a.value, b.value)
            return None if value is None else ConstInt(value, a.dtype)
        if node.op in _CMP:
            return ConstBool(_CMP[node.op](a.value, b.value))
    if isinstance(a, ConstBool) and isinstance(b, ConstBool):
        if node.op == "and":
            return ConstBool(a.value and b.value)
        if node.op == "or":
            return ConstBool(a.value or b.value)
        if node.op in ("==", "!="):
            return ConstBool((a.value == b.value) == (node.op == "=="))
    return None


def interval(expr: Expr, ranges: dict[Var, Interval]) -> Interval | None:
    """The range of an integer expression given loop-variable ranges, or None if unknown."""
    if isinstance(expr, ConstInt):
        return Interval(expr.value, expr.value)
    if isinstance(expr, Var):
        return ranges.get(expr)
    if isinstance(expr, UnaryOp) and expr.op == "-":
        x = interval(expr.operand, ranges)
        return None if x is None else Interval(-x.hi, -x.lo)
    if isinstance(expr, BinOp) and expr.op in ("+", "-", "*"):
        a, b = interval(expr.lhs, ranges), interval(expr.rhs, ranges)
        if a is None or b is None:
            return None
        if expr.op == "+":
            return Interval(a.lo + b.lo, a.hi + b.hi)
        if expr.op == "-":
            return Interval(a.lo - b.hi, a.hi - b.lo)
        products = (a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi)
        return Interval(min(products), max(products))
    return None


def decide(cond: Expr, ranges: dict[Var, Interval]) -> bool | None:
    """True/False when ``cond`` is decided by constants and loop ranges, else None."""
    if isinstance(cond, ConstBool):
        return cond.value
    if isinstance(cond, ConstInt):
        return bool(cond.value)
    if isinstance(cond, UnaryOp) and cond.op == "not":
        inner = decide(cond.operand, ranges)
        return None if inner is None else not inner
    if not isinstance(cond, BinOp):
        return None
    if cond.op in ("and", "or"):
        a, b = decide(cond.lhs, ranges), decide(cond.rhs, ranges)
        if cond.op == "and":
            if a is False or b is False:
                return False
            return True if (a and b) else None
        if a is True or b is True:
            return True
        return False if (a is False and b is False) else None
    if cond.op not in _CMP:
        return None
    if not isinstance(getattr(cond.lhs, "type", None), ScalarType):
        return None
    a, b = interval(cond.lhs, ranges), interval(cond.rhs, ranges)
    if a is None or b is None:
        return None
    op = cond.op
    if op in ("==", "!="):
        if a.lo == a.hi == b.lo == b.hi:
            result = True
        elif a.hi < b.lo or b.hi < a.lo:
            result = False
        else:
            return None
        return result if op == "==" else not result
    if op in (">", ">="):  # mirror to < / <=
        a, b, op = b, a, "<" if op == ">" else "<="
    if op == "<":
        if a.hi < b.lo:
            return True
        if a.lo >= b.hi:
            return False
        return None
    if a.hi <= b.lo:  # <=
        return True
    if a.lo > b.hi:
        return False
    return None
