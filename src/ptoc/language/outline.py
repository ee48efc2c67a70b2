"""Outlining ``with pl.at(level=pl.Level.CORE_GROUP, ...):`` scopes into InCore functions.

A scope body is parsed like any other block; its free variables become the kernel's
parameters. Every captured DDR tensor the body writes in place (``pl.store(t, offs, y)``,
bare or assigned, ``y[:] = expr``, ``pl.assemble``, in loops and branches alike) becomes a
``pl.Out`` parameter (``pl.InOut`` when the body also reads it) that the kernel returns, as
PyPTO's OutlineIncoreScopes does. The scope is replaced by a call ``y = self.<kernel>(...)``
(``_tuple_tmp = ...`` and one item per name for several outputs), named by ``name_hint`` or
``<function>_incore_<n>`` as PyPTO names them; a ``name_hint`` already taken (by the
enclosing ``@pl.jit`` function, say) gets a free name by PyPTO's rule (see ``_free_name``).

``with pl.at(...) as t`` binds a task id that a later scope names in ``deps=[t]``. ptoc runs
the scopes of a function one after another on one core, so every dependency is met by
program order; the parser checks that each dependency names an earlier scope's task id.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ptoc.dtypes import Direction, FunctionType, Level
from ptoc.ir.aliases import tensor_aliases
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, Function, Param, ReturnStmt, SeqStmts, Stmt, TupleGetItem, Var,
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

    Needs ``self.ctx``, ``self.scope``, ``self.block``, ``self.functions`` (signatures),
    ``self.outlined`` (a list shared by the program parser that collects the new kernels;
    this function's start at ``self.first_outlined``), ``self.function_name`` (the enclosing
    function, for kernel names) and ``self.task_ids`` (names bound by ``as``).
    """

    def _stmt_With(self, node: ast.With) -> list[Stmt]:
        options = self._scope_options(node)
        self._check_deps(node, options.pop("deps", ()))
        outer = self.scope
        self.scope = outer.child()
        try:
            stmts, _ = self.block(node.body, allow_yield=False)
            inner = self.scope
        finally:
            self.scope = outer
        body = SeqStmts(tuple(stmts), self.ctx.loc(node))
        outputs = self._scope_outputs(node, outer, inner, body)
        name = self._free_name(options["name_hint"]) if options.get("name_hint") else \
            self._default_kernel_name()
        kernel, args = self._make_kernel(node, name, body, outputs)
        self.outlined.append(kernel)
        self.functions[name] = ([(p.var.name, p.var.type) for p in kernel.params],
                                kernel.return_types)
        return self._call_site(node, name, kernel, args, outputs, outer)

    def _call_site(self, node, name, kernel, args, outputs, outer) -> list[Stmt]:
        """``y = self.k(...)`` (one output), ``_tuple_tmp = ...`` + items, or the bare call.

        Every outer name bound to a written tensor is rebound to the call's result, so code
        after the scope (and the next scope) sees the kernel's write.
        """
        loc = self.ctx.loc(node)
        types = kernel.return_types
        call_type = types[0] if len(types) == 1 else TupleType(tuple(types))
        call = Call(name, tuple(args), (), call_type, {}, is_function=True, loc=loc)
        if not outputs:
            return [EvalStmt(call, loc)]
        if len(outputs) == 1:
            result = Var(outputs[0].names[0], types[0], loc)
            self._rebind(outer, outputs[0], result)
            return [AssignStmt(result, call, loc)]
        whole = Var("_tuple_tmp", call_type, loc)
        stmts: list[Stmt] = [AssignStmt(whole, call, loc)]
        for index, out in enumerate(outputs):
            item = Var(out.names[0], types[index], loc)
            self._rebind(outer, out, item)
            stmts.append(AssignStmt(item, TupleGetItem(whole, index), loc))
        return stmts

    @staticmethod
    def _rebind(outer, out: "_Output", value: Var) -> None:
        for name in out.names:
            outer.bind(name, value)

    def _check_deps(self, node: ast.With, deps: ast.expr | tuple) -> None:
        """``deps=[t, ...]`` names task ids bound by earlier ``with pl.at(...) as t``."""
        tasks = self.task_ids
        if deps:
            items = deps.elts if isinstance(deps, (ast.List, ast.Tuple)) else None
            if items is None:
                raise self.ctx.error(deps, "pl.at(deps=...) takes a list of task ids, "
                                     f"got '{ast.unparse(deps)}'", hint="write deps=[t1, t2]")
            for item in items:
                if not (isinstance(item, ast.Name) and item.id in tasks):
                    raise self.ctx.error(item, f"pl.at(deps=[...]): '{ast.unparse(item)}' is not "
                                         "the task id of an earlier scope of this function",
                                         hint="bind it with 'with pl.at(...) as "
                                              f"{ast.unparse(item)}:' before this scope")
        target = node.items[0].optional_vars
        if target is not None:
            tasks.add(target.id)

    def _scope_options(self, node: ast.With) -> dict:
        target = node.items[0].optional_vars if len(node.items) == 1 else None
        if len(node.items) != 1 or not (target is None or isinstance(target, ast.Name)):
            raise self.ctx.error(node, "a kernel scope is written 'with pl.at(level=pl.Level."
                                 "CORE_GROUP):' (one item, optionally 'as task_id')")
        call = node.items[0].context_expr
        if not (isinstance(call, ast.Call) and self._is_dsl(call.func, "at")):
            raise self.ctx.error(node, f"'with {ast.unparse(call)}' is not a kernel scope",
                                 hint="write 'with pl.at(level=pl.Level.CORE_GROUP):'")
        deps = [k.value for k in call.keywords if k.arg == "deps"]
        call = ast.copy_location(
            ast.Call(call.func, call.args, [k for k in call.keywords if k.arg != "deps"]), call)
        args, kwargs = self.call_arguments(call)
        if deps:
            kwargs["deps"] = deps[0]
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

    def _free_name(self, hint: str) -> str:
        """``hint`` if free. Taken by this function or a scope of it: ``hint_<n>`` with the
        smallest free n; taken by another function's scope: ``<function>_<hint>`` (PyPTO's
        rule, so each function's first scope keeps the name it has when compiled alone)."""
        taken = set(self.functions) | {self.function_name}
        if hint not in taken:
            return hint
        mine = {self.function_name} | {k.name for k in self.outlined[self.first_outlined:]}
        if hint not in mine and f"{self.function_name}_{hint}" not in taken:
            return f"{self.function_name}_{hint}"
        index = 0
        while f"{hint}_{index}" in taken:
            index += 1
        return f"{hint}_{index}"

    def _default_kernel_name(self) -> str:
        index = 0
        while f"{self.function_name}_incore_{index}" in self.functions:
            index += 1
        return f"{self.function_name}_incore_{index}"

    def _scope_outputs(self, node: ast.With, outer, inner, body: SeqStmts) -> list[_Output]:
        """The tensors a scope hands back: captured tensors it writes, then local results.

        A captured tensor is written when it is the destination of an in-place tensor op
        (``pl.store``, ``pl.assemble``) anywhere in the body, whether or not the result is
        assigned: a bare ``pl.store(t, offs, c)`` writes ``c`` (PyPTO's OutlineIncoreScopes).
        An outer name the scope rebinds to a tensor computed inside is a local result.
        """
        from ptoc.language.stmts import assigned_names

        captured = [v for v in _free_vars(body) if isinstance(v.type, TensorType)]
        aliases = tensor_aliases(body, {v: v for v in captured})
        outputs = [_Output(var, _names_bound_to(outer, var), var in aliases.read)
                   for var in captured if var in aliases.written]
        for name in assigned_names(node.body):
            before, after = outer.lookup(name), inner.lookup(name)
            if before is None or after is None or after is before:
                continue
            if not isinstance(before.type, TensorType):
                raise self.ctx.error(node, f"the scope rebinds '{name}', a "
                                     f"{type(before.type).__name__}; only DDR tensors cross a "
                                     "kernel boundary", hint="compute it inside the scope")
            root = aliases.root_of(after)
            written = next((o for o in outputs if o.key is root), None)
            if written is not None:
                if name not in written.names:
                    written.names.append(name)
            elif root is not None:
                outer.bind(name, root)  # 'y = x' of a captured tensor the scope does not write
            else:
                outputs.append(_Output(after, [name], False, local=True))
        for out in outputs:
            if not out.names:
                out.names.append(out.key.name)
        return outputs

    def _make_kernel(self, node, name, body: SeqStmts, outputs) -> tuple[Function, list[Var]]:
        free = [v for v in _free_vars(body) if isinstance(v.type, (TensorType, ScalarType))]
        params, mapping = [], {}
        direction = {id(o.key): (Direction.InOut if o.read else Direction.Out)
                     for o in outputs if not o.local}
        for var in free:
            param = Var(var.name, var.type, var.loc)
            mapping[var] = param
            params.append(Param(param, direction.get(id(var), Direction.In)))
        body = substitute(body, mapping)
        returns = tuple(substitute(o.key, mapping) for o in outputs)
        stmts = body.stmts + (ReturnStmt(returns, self.ctx.loc(node)),)
        kernel = Function(name, tuple(params), tuple(r.type for r in returns),
                          SeqStmts(stmts, body.loc), FunctionType.InCore, {}, True,
                          self.ctx.loc(node))
        return kernel, free


@dataclass
class _Output:
    """One value a scope hands back: a written captured tensor (``key`` is the outer Var,
    returned as its parameter) or a tensor computed inside (``local``, returned as is)."""

    key: Var
    names: list[str]
    read: bool
    local: bool = False


def _free_vars(body: SeqStmts) -> list[Var]:
    collector = _FreeVars()
    collector.visit(body)
    return collector.free


def _names_bound_to(scope, var: Var) -> list[str]:
    return [n for n in scope.names() if scope.lookup(n) is var]
