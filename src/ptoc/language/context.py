"""What the parser knows besides the AST: file name, the DSL module alias, closure constants.

Closure folding: names that are not kernel variables resolve to Python constants captured
from the scope that defined the kernel (ints, floats, bools, strings, dtypes, enums), so
``pl.Tensor[[M, K], pl.FP32]`` with ``M = 64`` outside the class parses to a static shape;
a ``pl.dynamic`` object resolves to its dimension symbol.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ptoc.errors import ParseError, SourceLoc

DSL_MODULES = ("ptoc.language", "pypto.language")


@dataclass(frozen=True)
class DslPath:
    """A dotted name under the DSL module, e.g. ``pl.tile.load`` -> ("tile", "load")."""

    parts: tuple[str, ...] = ()

    def child(self, name: str) -> "DslPath":
        return DslPath(self.parts + (name,))

    @property
    def dotted(self) -> str:
        return ".".join(self.parts)


class SelfRef:
    """The ``self`` of a program method; ``self.kernel`` names a program function."""


@dataclass
class ParseContext:
    """``env``: foldable closure constants. ``specialization``: ``@pl.jit`` scalar arguments
    (constants that replace their parameters). ``kernels``: names of ``@pl.jit.incore``
    functions callable from the body, and ``resolve_kernel(obj, arg_types, node) -> name``
    which specialises and registers one (set by ``ptoc.jit``). ``externals``: module-level
    ``@pl.function``s (``ir.Function``) a ``@pl.program`` may call by name; ``joined``: those
    already added to the program, by function name."""

    filename: str
    env: dict[str, Any] = field(default_factory=dict)
    dsl_aliases: frozenset[str] = frozenset({"pl"})
    specialization: dict[str, Any] = field(default_factory=dict)
    kernels: dict[str, Any] = field(default_factory=dict)
    resolve_kernel: Any = None
    externals: dict[str, Any] = field(default_factory=dict)
    joined: dict[str, Any] = field(default_factory=dict)

    def loc(self, node: ast.AST | None) -> SourceLoc:
        if node is None or not hasattr(node, "lineno"):
            return SourceLoc(self.filename, 0, 0)
        return SourceLoc(self.filename, node.lineno, node.col_offset)

    def error(self, node: ast.AST | None, message: str, hint: str | None = None) -> ParseError:
        return ParseError(message, self.loc(node), hint=hint)


def is_dsl_module(value: Any) -> bool:
    return getattr(value, "__name__", None) in DSL_MODULES and hasattr(value, "program")


_FOLDABLE = (int, float, bool, str, type(None))


def constant_env(namespace: dict[str, Any]) -> tuple[dict[str, Any], frozenset[str]]:
    """Split a Python namespace into foldable constants and the names bound to the DSL module."""
    import enum

    from ptoc.dtypes import DataType
    from ptoc.language.dynamic import DynVar

    env: dict[str, Any] = {}
    aliases: set[str] = set()
    for name, value in namespace.items():
        if is_dsl_module(value):
            aliases.add(name)
        elif isinstance(value, _FOLDABLE + (DataType, enum.Enum)):
            env[name] = value
        elif isinstance(value, DynVar):
            env[name] = value.var
        elif isinstance(value, (tuple, list)) and all(isinstance(v, _FOLDABLE) for v in value):
            env[name] = tuple(value)
    return env, frozenset(aliases)
