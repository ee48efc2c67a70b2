"""``structural_hash``: a hash that agrees with ``structural_equal`` (PyPTO's pair of functions).

Two structurally equal trees hash the same: locations, Var name hints, a program's name
and a standalone function's name do not enter the hash; variables enter by the order in
which their definitions are met (so consistent renaming keeps the hash), and a free
variable by identity unless ``enable_auto_mapping=True`` (then by order of first sight).
Nested statement lists are flattened, attrs and views are order-insensitive, as in the
comparison.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from ptoc.ir.nodes import (
    AssignStmt, ForStmt, Function, IfStmt, Node, Param, Program, ScopeStmt, SeqStmts, Var,
    WhileStmt,
)
from ptoc.ir.printer import flatten
from ptoc.ir.types import TileView

#: fields that never take part in structural equality
_IGNORED = frozenset({"loc", "has_self"})
#: fields holding definitions: their Vars are numbered where they are met
_DEFS = {AssignStmt: ("var",), ForStmt: ("loop_var", "iter_args", "return_vars"),
         IfStmt: ("return_vars",), Param: ("var",), ScopeStmt: ("task_id",),
         WhileStmt: ("iter_args", "return_vars")}
#: fields met in another order than declared: a while's condition reads its iter args
_ORDER = {WhileStmt: ("iter_args", "cond", "body", "return_vars")}


def structural_hash(node: Any, enable_auto_mapping: bool = False) -> int:
    """A hash of ``node`` (program, function, statement, expression or type) that equal
    nodes share (see the module docstring)."""
    return hash(_Hasher(enable_auto_mapping).key(node))


class _Hasher:
    def __init__(self, auto: bool):
        self.auto = auto
        self.numbers: dict[Var, int] = {}

    def var(self, v: Var, defining: bool) -> tuple:
        number = self.numbers.get(v)
        if number is None:
            if not (defining or self.auto):
                return ("free", id(v))
            number = self.numbers[v] = len(self.numbers)
            return (type(v).__name__, number, self.key(v.type, defining))
        return (type(v).__name__, number)

    def key(self, x: Any, defining: bool = False) -> Any:
        if isinstance(x, Var):
            return self.var(x, defining)
        if isinstance(x, Program):
            fns = sorted(x.functions, key=lambda f: f.name)
            return ("Program", tuple((f.name, self.key(f)) for f in fns))
        if isinstance(x, SeqStmts):
            return ("Seq", tuple(self.key(s) for s in flatten(x)))
        if isinstance(x, TileView):
            return ("TileView", frozenset((k, self.key(v)) for k, v in x.fields))
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            return self.fields(x, defining)
        if isinstance(x, (tuple, list)):
            return tuple(self.key(i, defining) for i in x)
        if isinstance(x, dict):
            return ("dict", frozenset((k, self.key(v)) for k, v in x.items()))
        if isinstance(x, enum.Enum):
            return (type(x).__name__, x.name)
        if isinstance(x, bool):
            return ("bool", x)
        return x

    def fields(self, x: Any, defining: bool) -> tuple:
        cls = type(x)
        defs = _DEFS.get(cls, ())
        out = [cls.__name__]
        fields = dataclasses.fields(x)
        if cls in _ORDER:
            fields = sorted(fields, key=lambda f: _ORDER[cls].index(f.name)
                            if f.name in _ORDER[cls] else len(_ORDER[cls]))
        for f in fields:
            if f.name in _IGNORED or (f.name == "name" and isinstance(x, (Var, Function))):
                continue
            value = getattr(x, f.name)
            if isinstance(x, (ForStmt, WhileStmt)) and f.name == "iter_args":
                out.append(tuple(self.key(ia.init) for ia in value))  # inits are uses
            if isinstance(value, SeqStmts) or (f.name in ("then_body", "else_body", "body")
                                               and isinstance(value, Node)):
                out.append(self.key(value))
            else:
                out.append(self.key(value, defining or f.name in defs))
        return tuple(out)


__all__ = ["structural_hash"]
