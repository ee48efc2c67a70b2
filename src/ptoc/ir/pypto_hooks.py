"""PyPTO's visitor hook names for ptoc's nodes, and which ones a subclass overrides.

A PyPTO ``IRVisitor``/``IRMutator`` subclass overrides ``visit_expr`` / ``visit_stmt`` (every
expression / statement passes through them), ``visit_<kind>`` (``visit_call``,
``visit_for_stmt``, ``visit_add``, ``visit_make_tuple``, ...) or the group hooks
``visit_binary_expr`` / ``visit_unary_expr``. ``hooks_for`` lists, for one node, the names
PyPTO would route it through, most general first; ``overridden`` finds which of a class's
``visit_*`` methods come from a subclass rather than from ptoc's base class.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ptoc.ir.nodes import (
    PYPTO_BINARY, PYPTO_UNARY, BinOp, Expr, Function, ListExpr, Program, Stmt, TupleGetItem,
    UnaryOp,
)


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


#: ptoc operator -> PyPTO's per-operator hook
BINARY_HOOK = {sym: f"visit_{snake(name)}" for name, sym in PYPTO_BINARY.items()}
UNARY_HOOK = {sym: f"visit_{snake(name)}" for name, sym in PYPTO_UNARY.items()}
#: ptoc node kinds whose PyPTO hook has another name
RENAMED = {ListExpr: "visit_make_tuple", TupleGetItem: "visit_tuple_get_item_expr"}


def hooks_for(node: Any) -> tuple[str, ...]:
    """PyPTO's hook names for ``node``: the generic dispatcher, the kind, then the group."""
    if isinstance(node, BinOp):
        return ("visit_expr", BINARY_HOOK[node.op], "visit_binary_expr")
    if isinstance(node, UnaryOp):
        return ("visit_expr", UNARY_HOOK[node.op], "visit_unary_expr")
    return kind_hooks(type(node))


@lru_cache(maxsize=None)
def kind_hooks(cls: type) -> tuple[str, ...]:
    """``hooks_for`` of any node of class ``cls`` other than BinOp / UnaryOp (whose hooks
    depend on the operator)."""
    kind = RENAMED.get(cls) or f"visit_{snake(cls.__name__)}"
    if issubclass(cls, Expr):
        return ("visit_expr", kind)
    if issubclass(cls, Stmt):
        return ("visit_stmt", kind)
    if issubclass(cls, (Program, Function)):
        return (kind,)
    return ()


@lru_cache(maxsize=None)
def overridden(cls: type, base: type) -> frozenset[str]:
    """The ``visit_*`` names that ``cls`` defines in a class below ``base`` in its MRO."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is base:
            break
        names.update(k for k in vars(klass) if k.startswith("visit_"))
    return frozenset(names)
