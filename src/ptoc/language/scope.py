"""Lexical scopes of a kernel body: name -> SSA variable, with parent chaining.

Rebinding a name makes a new variable; loop and if bodies get child scopes so that the
parser can see which outer names a body rebinds (those become carried values or phis).
"""

from __future__ import annotations

from ptoc.ir.nodes import Var


class Scope:
    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self.bindings: dict[str, Var] = {}

    def lookup(self, name: str) -> Var | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings:
                return scope.bindings[name]
            scope = scope.parent
        return None

    def bind(self, name: str, var: Var) -> None:
        self.bindings[name] = var

    def child(self) -> "Scope":
        return Scope(self)

    def names(self) -> list[str]:
        seen: list[str] = []
        scope: Scope | None = self
        while scope is not None:
            seen.extend(n for n in scope.bindings if n not in seen)
            scope = scope.parent
        return seen
