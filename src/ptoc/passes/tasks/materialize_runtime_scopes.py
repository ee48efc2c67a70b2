"""MaterializeRuntimeScopes: the runtime scopes of an orchestration function, made explicit.

The device runtime tracks task dependencies per scope (``PTO2_SCOPE``) and always has an
implicit top-level one, so scopes place tracking, they never decide correctness. In a
function left to the compiler (``auto_scope=True``, the default) this pass wraps, as PyPTO
does, the whole body and every ``for`` body and ``if`` arm in an AUTO runtime scope
(``with pl.scope():``) — not inside a MANUAL scope (the runtime forbids AUTO in MANUAL) and
not a body that already is one AUTO scope — and then marks the function
``auto_scope=False``: the scopes are placed, the output parses back (the parser refuses a
hand-placed AUTO scope in a compiler-placed function) and a second run changes nothing.
A loop or if body's trailing ``pl.yield_`` stays inside its scope. ``auto_scope=False``
functions keep the scopes their author wrote; other function types are never touched.

ptoc's runtime (``ptoc.runtime.orchestration``) runs an AUTO scope as its body: task
dependencies are inferred program-wide, which is what nested AUTO scopes give.
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import FunctionType, ScopeKind
from ptoc.ir.nodes import ForStmt, Function, IfStmt, Program, ScopeStmt, SeqStmts, body_scope
from ptoc.ir.printer import flatten
from ptoc.ir.visitor import IRMutator
from ptoc.passes.base import program_pass, with_functions, refuse_orchestration_while_loops
from ptoc.passes.manager import register_default_pass
from ptoc.passes.properties import IRProperty, register_property_checker


def _is_manual(stmt) -> bool:
    return isinstance(stmt, ScopeStmt) and stmt.kind is ScopeKind.Runtime \
        and bool(stmt.attrs.get("manual"))


class ManualDepth(IRMutator):
    """A mutator that knows how many ``pl.manual_scope()`` regions enclose the node it is
    at (``self.manual``)."""

    def __init__(self):
        super().__init__()
        self.manual = 0

    def mutate_scope_stmt(self, node: ScopeStmt):
        manual = _is_manual(node)
        self.manual += manual
        try:
            return super().mutate_scope_stmt(node)
        finally:
            self.manual -= manual


def _wrap(body: SeqStmts) -> SeqStmts:
    """``body`` as one AUTO runtime scope (itself when it already is one)."""
    stmts = flatten(body)
    scope = body_scope(stmts)
    if scope is not None and not _is_manual(scope):
        return body
    return SeqStmts((ScopeStmt(ScopeKind.Runtime, SeqStmts(tuple(stmts), body.loc), {},
                               loc=body.loc),), body.loc)


class _InsertAutoScopes(ManualDepth):
    """Wraps for bodies and if arms, except inside a MANUAL scope."""

    def mutate_for_stmt(self, node: ForStmt):
        node = super().mutate_for_stmt(node)
        if self.manual or not isinstance(node, ForStmt):
            return node
        return dataclasses.replace(node, body=_wrap(node.body))

    def mutate_if_stmt(self, node: IfStmt):
        node = super().mutate_if_stmt(node)
        if self.manual or not isinstance(node, IfStmt):
            return node
        other = _wrap(node.else_body) if node.else_body is not None else None
        return dataclasses.replace(node, then_body=_wrap(node.then_body), else_body=other)


def _compiler_places_scopes(fn: Function) -> bool:
    return fn.func_type is FunctionType.Orchestration and fn.attrs.get("auto_scope", True)


def _materialize(fn: Function) -> Function:
    if not _compiler_places_scopes(fn):
        return fn
    body = _wrap(_InsertAutoScopes().mutate_body(fn.body))
    return dataclasses.replace(fn, body=body, attrs={**fn.attrs, "auto_scope": False})


@program_pass(name="MaterializeRuntimeScopes",
              required={"SplitIncoreOrch", "CallDirectionsResolved"},
              produced={"RuntimeScopesMaterialized"},
              handles_while_loops=True)
def materialize_runtime_scopes(program: Program, ctx) -> Program:
    """Place the AUTO runtime scopes of compiler-scoped orchestration functions (module
    docstring)."""
    refuse_orchestration_while_loops("MaterializeRuntimeScopes", program)
    functions = tuple(_materialize(fn) for fn in program.functions)
    return with_functions(program, functions)


register_default_pass(materialize_runtime_scopes)


def runtime_scopes_materialized(program: Program) -> bool:
    """RuntimeScopesMaterialized: no orchestration function is left for the compiler to
    scope."""
    return not any(_compiler_places_scopes(fn) for fn in program.functions)


register_property_checker(IRProperty.RuntimeScopesMaterialized, runtime_scopes_materialized)
