"""Lexical scopes of a kernel body: name -> SSA variable, with parent chaining.

Rebinding a name makes a new variable; loop and if bodies get child scopes so that the
parser can see which outer names a body rebinds (those become carried values or phis). A
retired name (a loop-local value whose value after the loop the parser does not keep) looks
unbound, and a read of it says why.
"""

from __future__ import annotations

from ptoc.ir.nodes import Var


class Scope:
    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self.bindings: dict[str, Var] = {}
        self.retired: dict[str, str] = {}

    def lookup(self, name: str) -> Var | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings:
                return scope.bindings[name]
            if name in scope.retired:
                return None
            scope = scope.parent
        return None

    def bind(self, name: str, var: Var) -> None:
        self.bindings[name] = var
        self.retired.pop(name, None)

    def retire(self, name: str, reason: str) -> None:
        """From here on ``name`` is unbound; reading it reports ``reason``."""
        self.bindings.pop(name, None)
        self.retired[name] = reason

    def retired_reason(self, name: str) -> str | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings:
                return None
            if name in scope.retired:
                return scope.retired[name]
            scope = scope.parent
        return None

    def child(self) -> "Scope":
        return Scope(self)

    def names(self) -> list[str]:
        seen: list[str] = []
        scope: Scope | None = self
        hidden: set[str] = set()
        while scope is not None:
            seen.extend(n for n in scope.bindings if n not in seen and n not in hidden)
            hidden.update(scope.retired)
            scope = scope.parent
        return seen
