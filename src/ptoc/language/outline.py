"""Outlining ``with pl.at(level=pl.Level.CORE_GROUP, ...):`` scopes into InCore functions.

A scope body is parsed like any other block; its free variables become the kernel's
parameters, and the DDR tensors it rebinds (``y = pl.store(..., y)``, ``y[:] = expr``)
become ``pl.Out`` parameters that the kernel returns. The scope is replaced by a call
``y = self.<kernel>(...)``, named by ``name_hint`` or ``<function>_incore_<n>`` as PyPTO
names them.
"""

from __future__ import annotations

import ast

from ptoc.dtypes import Direction, FunctionType, Level
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, Function, Param, ReturnStmt, SeqStmts, Stmt, Var,
)
from ptoc.ir.types import ScalarType, TensorType, TupleType
from ptoc.ir.visitor import IRVisitor, substitute

SCOPE_OPTIONS = ("level", "name_hint", "optimizations", "deps")


class _FreeVars(IRVisitor):
    """Variables a statement list uses but does not define, in first-use order."""

    def __init__(self):
        super().__init__()
        self.defined: set[int] = set()
        self.free: list[Var] = []
        self.seen: set[int] = set()

    def visit_def(self, var: Var) -> None:
        self.defined.add(id(var))

    def visit_var(self, node: Var) -> None:
        if id(node) not in self.defined and id(node) not in self.seen:
            self.seen.add(id(node))
            self.free.append(node)


class ScopeOutliner:
    """Mixin for the function parser: ``_stmt_With`` turns a ``pl.at`` scope into a kernel.

    Needs ``self.ctx``, ``self.scope``, ``self.block``, ``self.functions`` (signatures) and
    ``self.outlined`` (a list shared by the program parser that collects the new kernels)
    and ``self.function_name`` (the enclosing function, for default kernel names).
    """

    def _stmt_With(self, node: ast.With) -> list[Stmt]:
        options = self._scope_options(node)
        outer = self.scope
        self.scope = outer.child()
        try:
            stmts, _ = self.block(node.body, allow_yield=False)
            inner = self.scope
        finally:
            self.scope = outer
        outputs = self._scope_outputs(node, outer, inner)
        name = options.get("name_hint") or self._default_kernel_name()
        if name in self.functions:
            raise self.ctx.error(node, f"a function named '{name}' already exists",
                                 hint="give the scope a distinct name_hint")
        kernel, args = self._make_kernel(node, name, stmts, outputs, inner)
        self.outlined.append(kernel)
        self.functions[name] = ([(p.var.name, p.var.type) for p in kernel.params],
                                kernel.return_types)
        call_type = kernel.return_types[0] if len(kernel.return_types) == 1 else TupleType(())
        call = Call(name, tuple(args), (), call_type, {}, is_function=True, loc=self.ctx.loc(node))
        if not outputs:
            return [EvalStmt(call, self.ctx.loc(node))]
        out_name, out_var = outputs[0]
        result = Var(out_name, out_var.type, self.ctx.loc(node))
        outer.bind(out_name, result)
        return [AssignStmt(result, call, self.ctx.loc(node))]

    def _scope_options(self, node: ast.With) -> dict:
        if len(node.items) != 1 or node.items[0].optional_vars is not None:
            raise self.ctx.error(node, "a kernel scope is written 'with pl.at(level=pl.Level."
                                 "CORE_GROUP):' (one item, no 'as')")
        call = node.items[0].context_expr
        if not (isinstance(call, ast.Call) and self._is_dsl(call.func, "at")):
            raise self.ctx.error(node, f"'with {ast.unparse(call)}' is not a kernel scope",
                                 hint="write 'with pl.at(level=pl.Level.CORE_GROUP):'")
        args, kwargs = self.call_arguments(call)
        unknown = [k for k in kwargs if k not in SCOPE_OPTIONS]
        if args or unknown:
            raise self.ctx.error(node, f"pl.at takes keyword options only "
                                 f"({', '.join(SCOPE_OPTIONS)}); got "
                                 f"{', '.join(unknown) or 'positional arguments'}")
        level = kwargs.get("level", Level.CORE_GROUP)
        if level is not Level.CORE_GROUP:
            raise self.ctx.error(node, f"pl.at(level={level!r}) is not supported; ptoc simulates "
                                 "one core group", hint="use level=pl.Level.CORE_GROUP")
        if kwargs.get("optimizations"):
            raise self.ctx.error(node, "pl.at optimizations (mixed cube/vector splitting) are not "
                                 "supported by ptoc yet", hint="write separate cube and vector "
                                 "scopes that exchange data through a pl.create_tensor")
        hint = kwargs.get("name_hint")
        if hint is not None and not (isinstance(hint, str) and hint.isidentifier()):
            raise self.ctx.error(node, f"name_hint={hint!r} must be a Python identifier")
        return kwargs

    def _default_kernel_name(self) -> str:
        index = 0
        while f"{self.function_name}_incore_{index}" in self.functions:
            index += 1
        return f"{self.function_name}_incore_{index}"

    def _scope_outputs(self, node: ast.With, outer, inner) -> list[tuple[str, Var]]:
        """Outer DDR tensors the scope rebinds (name, final value inside the scope)."""
        from ptoc.language.stmts import assigned_names

        outputs = []
        for name in assigned_names(node.body):
            before, after = outer.lookup(name), inner.lookup(name)
            if before is None or after is None or after is before:
                continue
            if not isinstance(before.type, TensorType):
                raise self.ctx.error(node, f"the scope rebinds '{name}', a "
                                     f"{type(before.type).__name__}; only DDR tensors cross a "
                                     "kernel boundary", hint="compute it inside the scope")
            outputs.append((name, after))
        if len(outputs) > 1:
            names = ", ".join(n for n, _ in outputs)
            raise self.ctx.error(node, f"the scope writes {len(outputs)} tensors ({names}); "
                                 "ptoc kernels return one tensor",
                                 hint="split the scope into one scope per output tensor")
        return outputs

    def _make_kernel(self, node, name, stmts, outputs, inner) -> tuple[Function, list[Var]]:
        collector = _FreeVars()
        body = SeqStmts(tuple(stmts), self.ctx.loc(node))
        collector.visit(body)
        out_outer = {id(self.scope.lookup(n)) for n, _ in outputs}
        free = [v for v in collector.free if isinstance(v.type, (TensorType, ScalarType))]
        for n, _ in outputs:
            var = self.scope.lookup(n)
            if id(var) not in {id(v) for v in free}:
                free.append(var)
        params, mapping = [], {}
        for var in free:
            param = Var(var.name, var.type, var.loc)
            mapping[var] = param
            direction = Direction.Out if id(var) in out_outer else Direction.In
            params.append(Param(param, direction))
        body = substitute(body, mapping)
        returns = tuple(substitute(value, mapping) for _, value in outputs)
        stmts = body.stmts + (ReturnStmt(returns, self.ctx.loc(node)),)
        kernel = Function(name, tuple(params), tuple(r.type for r in returns),
                          SeqStmts(stmts, body.loc), FunctionType.InCore, {}, True,
                          self.ctx.loc(node))
        return kernel, free
