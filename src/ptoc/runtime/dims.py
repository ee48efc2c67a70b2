"""Binding ``pl.dynamic`` dimensions to the sizes of the tensors a run passes.

A compiled program names each dynamic dimension by a symbol (``DimVar``); a run learns its
value from the first tensor argument whose declared shape names it bare (``[N, 64]``), and
every other dimension that names it — bare or in an expression such as ``N * 2`` — must
then agree. Never a guess: a dimension that disagrees, a size that is not a whole multiple
(``N * 2`` against 7 rows), or a symbol no argument determines is a RuntimeConfigError that
names the parameter, the dimension and both numbers.
"""

from __future__ import annotations

from ptoc.errors import RuntimeConfigError, SourceLoc
from ptoc.ir.nodes import BinOp, ConstInt, DimVar, Expr, UnaryOp

_EVAL = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
         "//": lambda a, b: a // b, "%": lambda a, b: a % b}


class DimBindings:
    """Values of the dynamic dimensions of one call, with where each value came from."""

    def __init__(self, values: dict[DimVar, int] | None = None):
        self.values: dict[DimVar, int] = dict(values or {})
        self.source: dict[DimVar, str] = {v: "the caller" for v in self.values}

    def bind_shape(self, declared: tuple, actual: tuple, what: str,
                   loc: SourceLoc | None = None) -> None:
        """Unify ``what``'s declared shape with the shape it got (bare symbols first)."""
        if len(declared) != len(actual):
            raise RuntimeConfigError(f"{what} has rank {len(declared)} but got a tensor of shape "
                                     f"{list(actual)}", loc, hint="pass a tensor of the declared "
                                     "rank")
        for axis, (dim, size) in enumerate(zip(declared, actual)):
            if isinstance(dim, DimVar):
                self.bind(dim, int(size), f"{what} dim {axis}", loc)
        for axis, (dim, size) in enumerate(zip(declared, actual)):
            if isinstance(dim, DimVar):
                continue
            if isinstance(dim, Expr):
                self.bind_expr(dim, int(size), f"{what} dim {axis}", loc)
            elif int(dim) != int(size):
                raise RuntimeConfigError(
                    f"{what} dim {axis} is {dim} (static) but the tensor passed has {size} "
                    f"(shape {list(actual)})", loc,
                    hint="pass a tensor of the declared shape, or declare the dimension "
                         "with pl.dynamic")

    def bind(self, var: DimVar, size: int, where: str, loc) -> None:
        known = self.values.get(var)
        if known is None:
            self.values[var] = size
            self.source[var] = where
        elif known != size:
            raise RuntimeConfigError(
                f"pl.dynamic dimension {var.name} is {size} for {where} but {known} for "
                f"{self.source[var]}", loc,
                hint=f"every tensor dimension declared {var.name} must have the same size")

    def bind_expr(self, expr: Expr, size: int, where: str, loc) -> None:
        """A compound dimension: solve ``N * c`` / ``N + c`` / ``N - c`` for a symbol not
        bound yet, then check the value."""
        unbound = [v for v in _symbols(expr) if v not in self.values]
        if len(unbound) == 1 and isinstance(expr, BinOp) and expr.op in ("*", "+", "-"):
            self._solve(expr, unbound[0], size, where, loc)
        value = self.evaluate(expr, where, loc)
        if value != size:
            raise RuntimeConfigError(
                f"{where} is {_text(expr)} = {value} but the tensor passed has {size}", loc,
                hint="pass tensors whose dimensions agree with the pl.dynamic sizes")

    def _solve(self, expr: BinOp, var: DimVar, size: int, where: str, loc) -> None:
        var_side, const_side = (expr.lhs, expr.rhs) if expr.lhs is var else (expr.rhs, expr.lhs)
        if var_side is not var or not isinstance(const_side, ConstInt):
            return
        c = const_side.value
        if expr.op == "*":
            if c <= 0 or size % c:
                raise RuntimeConfigError(
                    f"{where} is {_text(expr)}, but the tensor passed has {size}, which is not a "
                    f"multiple of {c}", loc, hint=f"pass a size that is a multiple of {c}")
            self.bind(var, size // c, where, loc)
        elif expr.op == "+":
            self.bind(var, size - c, where, loc)
        elif expr.lhs is var:
            self.bind(var, size + c, where, loc)

    def evaluate(self, expr, where: str, loc) -> int:
        """The value of a shape expression under these bindings."""
        if isinstance(expr, int):
            return expr
        if isinstance(expr, ConstInt):
            return expr.value
        if isinstance(expr, DimVar):
            if expr not in self.values:
                raise RuntimeConfigError(
                    f"pl.dynamic dimension {expr.name} of {where} is not known: no tensor "
                    "argument declares it as a dimension of its own", loc,
                    hint=f"name {expr.name} bare in some tensor parameter's shape")
            return self.values[expr]
        if isinstance(expr, BinOp) and expr.op in _EVAL:
            return _EVAL[expr.op](self.evaluate(expr.lhs, where, loc),
                                  self.evaluate(expr.rhs, where, loc))
        if isinstance(expr, UnaryOp) and expr.op == "-":
            return -self.evaluate(expr.operand, where, loc)
        raise RuntimeConfigError(f"{where} is {_text(expr)}, which ptoc cannot evaluate from "
                                 "the tensors passed", loc,
                                 hint="write dimensions with + - * // % of pl.dynamic symbols")

    def shape(self, declared: tuple, where: str, loc=None) -> tuple[int, ...]:
        return tuple(self.evaluate(d, f"{where} dim {i}", loc) for i, d in enumerate(declared))


def _symbols(expr) -> list[DimVar]:
    from ptoc.ir.dynamic import shape_dim_vars

    return shape_dim_vars((expr,))


def _text(expr) -> str:
    from ptoc.ir.printer import format_node

    return format_node(expr)
