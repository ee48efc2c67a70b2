"""InlineFunctions: splice every ``FunctionType.Inline`` function into its call sites.

An Inline function (``@pl.function(type=pl.FunctionType.Inline)`` or ``@pl.jit.inline``)
is a source-level helper: each call ``x = helper(args)`` (or a bare ``helper(args)``)
becomes a fresh copy of the helper's body with its parameters replaced by the arguments,
and later uses of ``x`` read the value the body returns (each element, for a helper that
returns several). Scopes in the body (``pl.at``) come along and are outlined later, as if
written at the call site. Inline helpers that call Inline helpers are expanded callee
first; a cycle among them is an error. Afterwards no Inline function is left (PyPTO's
first pass; it produces ``InlineFunctionsEliminated``).
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import FunctionType
from ptoc.errors import PassError
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, Function, Program, ReturnStmt, SeqStmts, TupleGetItem, Var,
)
from ptoc.ir.visitor import IRMutator, IRVisitor, clone_with_fresh_vars
from ptoc.passes.base import program_pass
from ptoc.passes.manager import register_default_pass
from ptoc.passes.properties import IRProperty, register_property_checker


@program_pass(name="InlineFunctions", produced={"InlineFunctionsEliminated"},
              handles_while_loops=True)
def inline_functions(program: Program, ctx) -> Program:
    """The program with every Inline function spliced into its callers and dropped."""
    inline = {fn.name: fn for fn in program.functions if fn.func_type is FunctionType.Inline}
    if not inline:
        return program
    expanded: dict[str, Function] = {}
    for name in _callees_first(inline):
        expanded[name] = _Splicer(expanded).mutate(inline[name])
    functions = tuple(_Splicer(expanded).mutate(fn) for fn in program.functions
                      if fn.func_type is not FunctionType.Inline)
    return replace(program, functions=functions)


def _inline_calls(fn: Function, inline: dict) -> list[str]:
    """Names of the Inline functions ``fn`` calls, in order of first call."""
    found: list[str] = []

    class _Calls(IRVisitor):
        def visit_call(self, node: Call) -> None:
            if node.is_function and node.op in inline and node.op not in found:
                found.append(node.op)
            super().visit_call(node)

    _Calls().visit(fn.body)
    return found


def _callees_first(inline: dict[str, Function]) -> list[str]:
    """The Inline functions ordered so that each comes after the ones it calls."""
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            cycle = " -> ".join(path[path.index(name):] + [name])
            raise PassError(f"InlineFunctions: Inline functions call each other in a cycle "
                            f"({cycle}), so they cannot be spliced", inline[name].loc,
                            hint="make one of them an InCore or Opaque function")
        state[name] = "open"
        for callee in _inline_calls(inline[name], inline):
            visit(callee, path + [name])
        state[name] = "done"
        order.append(name)

    for name in inline:
        visit(name, [])
    return order


class _Splicer(IRMutator):
    """Replaces statement-level calls of (already expanded) Inline functions by their bodies;
    later uses of a call's result read the returned value(s)."""

    def __init__(self, expanded: dict[str, Function]):
        super().__init__()
        self.expanded = expanded
        self.tuples: dict[Var, tuple] = {}

    def mutate_assign_stmt(self, node: AssignStmt):
        value = node.value
        if isinstance(value, TupleGetItem) and value.tuple in self.tuples:
            self.var_map[node.var] = self.tuples[value.tuple][value.index]  # p = ret[0]
            return None
        if not self._is_inline(value):
            return super().mutate_assign_stmt(node)
        stmts, values = self._splice(node.value)
        if len(values) == 1:
            self.var_map[node.var] = values[0]
        else:
            self.tuples[node.var] = values
        return SeqStmts(tuple(stmts), loc=node.loc)

    def mutate_eval_stmt(self, node: EvalStmt):
        if not self._is_inline(node.expr):
            return super().mutate_eval_stmt(node)
        stmts, _ = self._splice(node.expr)
        return SeqStmts(tuple(stmts), loc=node.loc)

    def mutate_tuple_get_item(self, node):
        values = self.tuples.get(node.tuple)
        if values is not None:
            return values[node.index]
        return super().mutate_tuple_get_item(node)

    def mutate_var(self, node: Var):
        if node in self.tuples:
            raise PassError(f"InlineFunctions: the tuple '{node.name}' returned by an Inline "
                            "function is used whole; only its elements can be read after "
                            "splicing", node.loc,
                            hint="unpack it at the call: a, b = helper(...)")
        return super().mutate_var(node)

    def mutate_call(self, node: Call):
        if self._is_inline(node):
            raise PassError(f"InlineFunctions: the Inline function '{node.op}' is called inside "
                            "an expression; only a call that is a whole statement can be "
                            "spliced", node.loc,
                            hint=f"assign it first: tmp = {node.op}(...), then use tmp")
        return super().mutate_call(node)

    def _is_inline(self, expr) -> bool:
        return isinstance(expr, Call) and expr.is_function and expr.op in self.expanded

    def _splice(self, call: Call) -> tuple[list, tuple]:
        """The callee's body with parameters bound to the (mutated) arguments, minus its
        final return, and the values that return gave."""
        callee = self.expanded[call.op]
        args = [self.mutate(arg) for arg in call.args]
        binding = {param.var: arg for param, arg in zip(callee.params, args)}
        body = clone_with_fresh_vars(callee.body, binding)
        stmts = list(body.stmts)
        values: tuple = ()
        if stmts and isinstance(stmts[-1], ReturnStmt):
            values = stmts.pop().values
        _check_no_inner_return(callee, stmts)
        return stmts, values


def _check_no_inner_return(callee: Function, stmts: list) -> None:
    class _Returns(IRVisitor):
        def visit_return_stmt(self, node: ReturnStmt) -> None:
            raise PassError(f"InlineFunctions: the Inline function '{callee.name}' returns "
                            "from inside a loop, branch or scope, which cannot be spliced",
                            node.loc, hint="end its body with the one return statement")

    _Returns().visit(SeqStmts(tuple(stmts)))


def no_inline_functions(program: Program) -> bool:
    """``InlineFunctionsEliminated``: no Inline function (and so no call of one) is left."""
    return all(fn.func_type is not FunctionType.Inline for fn in program.functions)


register_property_checker(IRProperty.InlineFunctionsEliminated, no_inline_functions)
register_default_pass(inline_functions)

__all__ = ["inline_functions", "no_inline_functions"]
