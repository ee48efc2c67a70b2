"""``pl.dynamic`` dimensions in IR: which ``DimVar``s a program or function names, and how
a concrete shape binds them.

Why one module: the printer (declarations), the verifier (scope), codegen (a kernel's
trailing ``index`` parameters) and the runtime (values at launch) must agree on the same
list in the same order — the order in which the tensor parameters' shapes name them, as
PyPTO's kernel signature appends them.
"""

from __future__ import annotations

from typing import Any

from ptoc.ir.nodes import BinOp, DimVar, Expr, Function, Program, UnaryOp
from ptoc.ir.types import TensorType, TileView
from ptoc.ir.visitor import IRVisitor


class _DimVars(IRVisitor):
    """Collects DimVars in first-seen order, inside types and expressions alike."""

    def __init__(self):
        self.found: dict[DimVar, None] = {}

    def visit_var(self, node) -> None:
        if isinstance(node, DimVar):
            self.found.setdefault(node)

    def visit_type(self, ty: Any) -> None:
        super().visit_type(ty)
        view = getattr(ty, "view", None)
        if isinstance(view, TileView):
            self.view(view)

    def view(self, view: TileView) -> None:
        for _, value in view.fields:
            for item in value if isinstance(value, tuple) else (value,):
                if isinstance(item, Expr):
                    self.visit(item)


def program_dim_vars(node: Program | Function) -> tuple[DimVar, ...]:
    """Every DimVar a program (or one function) names, in first-seen order."""
    collector = _DimVars()
    collector.visit(node)
    return tuple(collector.found)


def shape_dim_vars(shape) -> list[DimVar]:
    """The DimVars one shape names, in order (a dim may be ``M * 2``)."""
    out: dict[DimVar, None] = {}

    def walk(e) -> None:
        if isinstance(e, DimVar):
            out.setdefault(e)
        elif isinstance(e, BinOp):
            walk(e.lhs)
            walk(e.rhs)
        elif isinstance(e, UnaryOp):
            walk(e.operand)

    for d in shape:
        walk(d)
    return list(out)


def dynamic_dims(fn: Function) -> tuple[DimVar, ...]:
    """The DimVars a function's tensor parameters' shapes name, in parameter order: a
    kernel receives them as trailing ``index`` arguments (PyPTO's signature)."""
    out: dict[DimVar, None] = {}
    for p in fn.params:
        ty = p.var.type
        if isinstance(ty, TensorType):
            for v in shape_dim_vars(ty.shape):
                out.setdefault(v)
    return tuple(out)

