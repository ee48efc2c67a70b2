"""``with`` scopes of a function body: where work runs and how tasks are ordered.

The parser records each scope as a ``ScopeStmt`` and leaves its body in place, as PyPTO's
parser does; the outlining passes (OutlineHierarchyScopes, OutlineIncoreScopes,
OutlineClusterScopes) later turn kernel regions into functions. A scope's body binds names
of the enclosing block (a Python ``with`` opens no new namespace), so a value computed
inside is used after it by name.

- ``with pl.at(level=pl.Level.CORE_GROUP, name_hint=..., deps=[...],
  optimizations=[pl.split(mode), pl.cross_core_slot(slot_num=N)]) [as tid]:`` an InCore
  region (one kernel; a mixed one is split by ExpandMixedKernel and friends); another
  ``level`` is a hierarchy region.
- ``with pl.spmd(n, sync_start=..., name_hint=..., deps=[...]) [as tid]:`` the same kernel
  on ``n`` blocks; ``for i in pl.spmd(n):`` is the loop form, whose body is an InCore region
  that starts by binding ``i = pl.tile.get_block_idx()``.
- ``with pl.cluster():`` co-schedules the cube and vector kernels it contains.
- ``with pl.scope(mode=...):`` / ``with pl.manual_scope():`` a runtime dependency scope
  (orchestration only; MANUAL turns the automatic dependency tracking off inside).

``as tid`` binds a task id (``pl.Scalar[pl.TASK_ID]``) that later scopes and submits name in
``deps=[...]``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ptoc.dtypes import DataType, Level, Role, ScopeKind, ScopeMode, SplitMode
from ptoc.ir.nodes import AssignStmt, ConstInt, Expr, ScopeStmt, SeqStmts, Stmt, Var
from ptoc.ir.types import ArrayType, ScalarType, TensorType

#: ``with pl.<name>(...)`` spellings and the scope kind they open
SCOPE_FUNCS = {"at": None, "spmd": ScopeKind.Spmd, "cluster": ScopeKind.Cluster,
               "scope": ScopeKind.Runtime, "manual_scope": ScopeKind.Runtime}
TASK_ID = ScalarType(DataType.TASK_ID)


def refuse_unsupported_options(ctx, call: ast.Call, name: str) -> None:
    """Refuse ``dumps=`` from the source, before its value is parsed, and ``predicate=`` where
    PyPTO has none (``pl.at`` and the non-task scopes: only ``pl.spmd`` and the submits carry
    a dispatch predicate)."""
    for kw in call.keywords:
        if kw.arg == "dumps":
            raise ctx.error(call, f"pl.{name}(..., dumps=...): ptoc does not support dumps= yet",
                            hint="ptoc has no selective tensor dump: read the tensor after the "
                                 "run instead")
        if kw.arg == "predicate" and name not in ("spmd", "submit", "spmd_submit"):
            spelled = "Unknown keyword argument 'predicate' in pl.at()" if name == "at" else \
                f"pl.{name}() got unknown options: predicate"
            raise ctx.error(call, spelled, hint="for a predicated region use 'with pl.spmd(1, "
                            "predicate=(t[i] > 0)):' or pl.submit(..., predicate=...)")


class ScopeParser:
    """Mixin for the function parser: ``_stmt_With`` and the ``pl.spmd`` loop form.

    Needs ``self.ctx``, ``self.scope``, ``self.block``, ``self.call_arguments``,
    ``self.expr``, ``self._is_dsl`` and ``self.function_name``; tracks ``self.runtime_scopes``
    (the modes of the runtime scopes being parsed, innermost last).
    """

    runtime_scopes: list[bool]

    def _stmt_With(self, node: ast.With) -> list[Stmt]:
        return self.with_stmt(node)[0]

    def is_runtime_scope(self, node: ast.stmt) -> bool:
        """``with pl.scope(...)`` / ``with pl.manual_scope()``."""
        return isinstance(node, ast.With) and len(node.items) == 1 and \
            self._scope_func(node.items[0].context_expr) in ("scope", "manual_scope")

    def with_stmt(self, node: ast.With, allow_yield: bool = False):
        """The scope statement, and the ``pl.yield_`` ending its body when it is the whole
        body of a loop or if (``allow_yield``: a runtime scope only)."""
        if len(node.items) != 1:
            raise self.ctx.error(node, "a scope is written with one item, e.g. 'with pl.at("
                                 "level=pl.Level.CORE_GROUP):'")
        item = node.items[0]
        call = item.context_expr
        name = self._scope_func(call)
        if name is None:
            raise self.ctx.error(node, f"'with {ast.unparse(call)}' is not a kernel scope",
                                 hint="write 'with pl.at(level=pl.Level.CORE_GROUP):' (or "
                                      "pl.spmd / pl.cluster / pl.scope / pl.manual_scope)")
        target = item.optional_vars
        if target is not None and not isinstance(target, ast.Name):
            raise self.ctx.error(node, f"'with pl.{name}(...) as {ast.unparse(target)}': a scope "
                                 "binds one name, optionally 'as task_id'")
        if target is not None and name in ("cluster", "scope", "manual_scope"):
            raise self.ctx.error(node, f"pl.{name}() binds no task id",
                                 hint="only pl.at and pl.spmd scopes are tasks ('as tid')")
        kind, attrs, deps, core_num, no_dep, predicate = self._scope_header(
            node, name, call, target is not None)
        manual = kind is ScopeKind.Runtime and attrs.get("manual", False)
        if kind is ScopeKind.Runtime:
            self._check_runtime_scope(node, manual)
            self.runtime_scopes.append(manual)
        self.open_scopes.append(kind)
        try:
            stmts, yld = self.block(node.body, allow_yield=allow_yield)
        finally:
            self.open_scopes.pop()
            if kind is ScopeKind.Runtime:
                self.runtime_scopes.pop()
        if kind is ScopeKind.Spmd:
            stmts = self._spmd_body(node, stmts)
        task_id = None
        if target is not None:
            task_id = Var(target.id, TASK_ID, self.ctx.loc(target))
            self.scope.bind(target.id, task_id)
            if kind is ScopeKind.Spmd:   # names the region binds are its task's results
                self.record_producers((self.scope.lookup(n) for n in _assigned(node.body)),
                                      task_id)
        return [ScopeStmt(kind, SeqStmts(tuple(stmts)), attrs, tuple(deps), task_id, core_num,
                          self.ctx.loc(node), no_dep, predicate)], yld

    def _spmd_body(self, node: ast.With, stmts: list[Stmt]) -> list[Stmt]:
        """A ``with pl.spmd(n):`` body as PyPTO shapes it: one written ``pl.at`` region is the
        per-block kernel; a body that reads the block index does the per-block work inline
        and becomes one (an InCore region, outlined like the ``for i in pl.spmd(n)`` form); a
        body that calls a kernel dispatches it (the kernel reads the index itself) — one
        kernel, as in PyPTO. A body that does neither would run the same work on every
        block."""
        if len(node.body) == 1 and isinstance(node.body[0], ast.With) \
                and self._scope_func(node.body[0].items[0].context_expr) == "at":
            return stmts
        if _calls(node.body, lambda f: isinstance(f, ast.Attribute) and f.attr == "get_block_idx"
                  or isinstance(f, ast.Name) and f.id == "get_block_idx"):
            return [ScopeStmt(ScopeKind.InCore, SeqStmts(tuple(stmts)), {}, loc=self.ctx.loc(node))]
        dispatches = sorted(_call_sites(node.body, self._dispatches),
                            key=lambda c: (c.lineno, c.col_offset))
        if not dispatches:
            raise self.ctx.error(node, "`with pl.spmd(...)` body neither reads the per-block "
                                 "index via `pl.tile.get_block_idx()` nor dispatches a "
                                 "`self.<kernel>(...)` call, so every block would run identical "
                                 "work", hint="add `i = pl.tile.get_block_idx()` inside the "
                                 "scope, dispatch a kernel that reads it, or use `for i in "
                                 "pl.spmd(n):` to bind the block index")
        if len(dispatches) > 1:
            # PyPTO lowers a dispatch body by its first call and refuses a second one rather
            # than drop it; ptoc could run them all, but such a program would not run there
            calls = ", ".join(f"{ast.unparse(c.func)} at line {self.ctx.loc(c).line}"
                              for c in dispatches)
            raise self.ctx.error(node, f"`with pl.spmd(...)` dispatch body launches "
                                 f"{len(dispatches)} kernels ({calls}); PyPTO launches one "
                                 "kernel per SPMD scope",
                                 hint="use one `with pl.spmd(...)` scope per kernel (a later "
                                 "one reading an earlier one's output waits for it), or read "
                                 "`pl.tile.get_block_idx()` in the body so the whole body "
                                 "becomes one per-block kernel")
        return stmts

    def _dispatches(self, func: ast.expr) -> bool:
        """A kernel launch: ``self.<kernel>(...)`` or a module-level ``@pl.function`` by name."""
        return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id == "self"
                or isinstance(func, ast.Name) and func.id in self.ctx.externals)

    def _scope_func(self, call: ast.AST) -> str | None:
        if isinstance(call, ast.Call):
            for name in SCOPE_FUNCS:
                if self._is_dsl(call.func, name):
                    return name
        return None

    def _scope_header(self, node: ast.With, name: str, call: ast.Call, binds: bool):
        """(kind, attrs, deps, core_num, no_dep_args, predicate) of ``with pl.<name>(...)``."""
        refuse_unsupported_options(self.ctx, call, name)
        call, written = self.take_predicate(call)
        args, kwargs = self.call_arguments(call)
        deps = self._deps(node, kwargs.pop("deps", None), name, binds)
        predicate = None
        if written is not None:
            predicate = self.dispatch_predicate(node, "pl.spmd", written)
            self.check_predicate_producer(node, "pl.spmd", predicate, deps, binds)
        no_dep = self._no_dep_args(node, kwargs.pop("no_dep_args", None), name)
        if name in ("at", "spmd"):   # a timing hint; ptoc's scheduler resolves no task early
            kwargs.pop("allow_early_resolve", None)
        attrs: dict = {}
        core_num = None
        if name == "at":
            kind = self._at_options(node, args, kwargs, attrs)
        elif name == "spmd":
            kind = ScopeKind.Spmd
            core_num = self._core_num(node, args, kwargs)
            if kwargs.pop("sync_start", False):
                attrs["sync_start"] = True
        elif name == "cluster":
            kind = ScopeKind.Cluster
            if args:
                raise self.ctx.error(node, "pl.cluster() takes no positional arguments")
        else:
            kind = ScopeKind.Runtime
            mode = kwargs.pop("mode", ScopeMode.MANUAL if name == "manual_scope" else
                              ScopeMode.AUTO)
            if args or not isinstance(mode, ScopeMode) or (name == "manual_scope" and
                                                           mode is not ScopeMode.MANUAL):
                raise self.ctx.error(node, f"'{ast.unparse(call)}' is not a runtime scope",
                                     hint="write pl.scope(), pl.scope(mode=pl.ScopeMode.MANUAL) "
                                          "or pl.manual_scope()")
            if mode is ScopeMode.MANUAL:
                attrs["manual"] = True
        if "name_hint" in kwargs and kind is not ScopeKind.Runtime:
            hint = kwargs.pop("name_hint")
            if not (isinstance(hint, str) and hint.isidentifier()):
                raise self.ctx.error(node, f"name_hint={hint!r} must be a Python identifier")
            attrs["name_hint"] = hint
        if "optimizations" in kwargs:
            if kind is not ScopeKind.InCore:
                raise self.ctx.error(node, f"pl.{name}(optimizations=...) applies to a "
                                     "pl.at(level=pl.Level.CORE_GROUP) scope only")
            attrs.update(self._optimizations(node, call, kwargs.pop("optimizations")))
        if kwargs:
            raise self.ctx.error(node, f"pl.{name}() got unknown options: {', '.join(kwargs)}")
        return kind, attrs, deps, core_num, no_dep, predicate

    def _no_dep_args(self, node, value, name: str) -> tuple[Expr, ...]:
        """``no_dep_args=[t, ...]``: tensors of the region's task the runtime does not track
        (no producer lookup, no producer insert) — PyPTO's scope form of ``pl.no_dep``."""
        if value is None:
            return ()
        if name not in ("at", "spmd"):
            raise self.ctx.error(node, f"pl.{name}() does not take no_dep_args=",
                                 hint="no_dep_args belongs to a task region: pl.at / pl.spmd")
        if not isinstance(value, (list, tuple)):
            raise self.ctx.error(node, f"no_dep_args= takes a list of tensors, got {value!r}",
                                 hint="write no_dep_args=[out]")
        for item in value:
            if not (isinstance(item, Var) and isinstance(item.type, TensorType)):
                raise self.ctx.error(node, f"no_dep_args=[...]: {item!r} is not a tensor "
                                     "variable", hint="name tensors the region uses")
        return tuple(value)

    def _optimizations(self, node: ast.With, call: ast.Call, value) -> dict:
        """``optimizations=[pl.split(mode), pl.cross_core_slot(slot_num=N)]`` as the scope's
        attrs ``split`` / ``slot_num``, which the outlined kernel inherits (PyPTO: an inline
        list literal, each kind once)."""
        written = next(k.value for k in call.keywords if k.arg == "optimizations")
        if not isinstance(written, ast.List):
            raise self.ctx.error(node, "pl.at(optimizations=...) must be an inline list literal",
                                 hint="write optimizations=[pl.split(pl.SplitMode.UP_DOWN)]")
        attrs: dict = {}
        for item in value:
            if not isinstance(item, ScopeOptimization):
                raise self.ctx.error(node, f"optimizations item {item!r} is not pl.split(...) or "
                                     "pl.cross_core_slot(...)")
            if item.key in attrs:
                raise self.ctx.error(node, f"optimizations names {item.key} twice",
                                     hint="keep one")
            attrs[item.key] = item.value
        return attrs

    def scope_optimization(self, node: ast.Call, name: str) -> "ScopeOptimization":
        """``pl.split(mode)`` / ``pl.cross_core_slot(slot_num=N)`` inside ``optimizations``."""
        args, kwargs = self.call_arguments(node)
        if name == "split":
            mode = args[0] if args else kwargs.pop("mode", None)
            if not isinstance(mode, SplitMode) or args[1:] or kwargs:
                raise self.ctx.error(node, f"'{ast.unparse(node)}' is not pl.split(mode)",
                                     hint="write pl.split(pl.SplitMode.UP_DOWN) (LEFT_RIGHT, "
                                          "NONE); the ring depth is pl.cross_core_slot(slot_num=N)")
            return ScopeOptimization("split", mode)
        slot = kwargs.pop("slot_num", args[0] if len(args) == 1 else None)
        if isinstance(slot, bool) or not isinstance(slot, int) or slot <= 0 or kwargs \
                or len(args) > 1:
            raise self.ctx.error(node, f"'{ast.unparse(node)}' needs slot_num=<positive int>",
                                 hint="write pl.cross_core_slot(slot_num=2)")
        return ScopeOptimization("slot_num", slot)

    def _at_options(self, node: ast.With, args, kwargs, attrs: dict) -> ScopeKind:
        level = kwargs.pop("level", args[0] if args else Level.CORE_GROUP)
        if len(args) > 1 or not isinstance(level, Level):
            raise self.ctx.error(node, "pl.at takes keyword options (level=pl.Level.X, "
                                 "name_hint=..., deps=[...])")
        role = kwargs.pop("role", None)
        if level is Level.CORE_GROUP and role is None:
            return ScopeKind.InCore
        attrs["level"] = level
        if role is not None:
            if not isinstance(role, Role) or role is Role.SubWorker:
                raise self.ctx.error(node, f"pl.at(role={role!r}) is not a scope role",
                                     hint="use pl.Role.Orchestrator or pl.Role.Worker; a "
                                          "SubWorker is a @pl.function of its own")
            attrs["role"] = role
        return ScopeKind.Hierarchy

    def _core_num(self, node: ast.With | ast.For, args, kwargs) -> Expr:
        value = kwargs.pop("core_num", args[0] if args else None)
        if value is None or len(args) > 1:
            raise self.ctx.error(node, "pl.spmd takes the block count: pl.spmd(4) or "
                                 "pl.spmd(core_num=4)")
        if isinstance(value, bool) or not isinstance(value, (int, Expr)):
            raise self.ctx.error(node, f"pl.spmd core_num must be an integer, got {value!r}")
        if isinstance(value, int):
            if value < 1:
                raise self.ctx.error(node, f"pl.spmd core_num must be positive, got {value}")
            return ConstInt(value)
        if not isinstance(value.type, ScalarType) or value.type.dtype.is_float:
            raise self.ctx.error(node, "pl.spmd core_num must be an integer scalar")
        return value

    def _deps(self, node, value, name: str, binds: bool) -> list[Expr]:
        """``deps=[t, ...]``: task ids (or TASK_ID arrays) bound earlier."""
        if value is None:
            return []
        if name not in ("at", "spmd"):
            raise self.ctx.error(node, f"pl.{name}() does not take deps=")
        if name == "spmd" and not binds:
            raise self.ctx.error(node, "pl.spmd() does not accept 'deps=' here",
                                 hint="bind the region with 'with pl.spmd(n, deps=[...]) as tid:'")
        return task_dependencies(self, node, value)

    def _check_runtime_scope(self, node: ast.With, manual: bool) -> None:
        if not self.orchestration_body:
            raise self.ctx.error(node, "a runtime scope (pl.scope / pl.manual_scope) belongs to "
                                 "the orchestration function, not a kernel",
                                 hint="move it to the function that launches the kernels")
        if manual and any(self.runtime_scopes):
            raise self.ctx.error(node, "pl.manual_scope may not nest inside pl.manual_scope",
                                 hint="flatten the two regions into one")
        if not manual and any(self.runtime_scopes):
            raise self.ctx.error(node, "an AUTO pl.scope() may not nest inside a MANUAL scope")
        if not manual and self.auto_scope:
            raise self.ctx.error(node, "pl.scope() (AUTO) is placed by the compiler in a function "
                                 "with auto_scope=True",
                                 hint="declare @pl.function(..., auto_scope=False) to place "
                                      "AUTO scopes yourself, or use pl.manual_scope()")


    def spmd_loop(self, node: ast.For) -> list[Stmt]:
        """``for i in pl.spmd(n): body`` -> Spmd(InCore(i = get_block_idx(); body))."""
        if not isinstance(node.target, ast.Name) or node.orelse:
            raise self.ctx.error(node, "write 'for i in pl.spmd(n):' (one loop variable, no else)")
        refuse_unsupported_options(self.ctx, node.iter, "spmd")
        call, written = self.take_predicate(node.iter)
        args, kwargs = self.call_arguments(call)
        if "deps" in kwargs:
            raise self.ctx.error(node, "pl.spmd() does not accept 'deps=' here",
                                 hint="bind the region with 'with pl.spmd(n, deps=[...]) as tid:'")
        predicate = None
        if written is not None:
            predicate = self.dispatch_predicate(node, "pl.spmd", written)
            self.check_predicate_producer(node, "pl.spmd", predicate, (), False)
        core_num = self._core_num(node, args, kwargs)
        kwargs.pop("allow_early_resolve", None)  # a timing hint, as on the with-form
        attrs: dict = {}
        if kwargs.pop("sync_start", False):
            attrs["sync_start"] = True
        if "name_hint" in kwargs:
            attrs["name_hint"] = kwargs.pop("name_hint")
        if kwargs:
            raise self.ctx.error(node, f"pl.spmd() got unknown options: {', '.join(kwargs)}")
        loc = self.ctx.loc(node)
        var, binding = block_index_binding(node.target.id, self.ctx.loc(node.target))
        self.scope.bind(node.target.id, var)
        self.open_scopes.append(ScopeKind.Spmd)
        try:
            stmts, _ = self.block(node.body, allow_yield=False)
        finally:
            self.open_scopes.pop()
        inner = ScopeStmt(ScopeKind.InCore, SeqStmts((binding, *stmts)), {}, loc=loc)
        return [ScopeStmt(ScopeKind.Spmd, SeqStmts((inner,)), attrs, (), None, core_num, loc,
                          predicate=predicate)]


#: ``pl.<name>(...)`` spellings that only make sense in ``pl.at(optimizations=[...])``.
SCOPE_OPTIMIZATIONS = ("split", "cross_core_slot")
#: the scope attrs they set, which OutlineIncoreScopes copies onto the kernel
OPTIMIZATION_ATTRS = ("split", "slot_num")


@dataclass(frozen=True)
class ScopeOptimization:
    """One ``optimizations`` entry: the attr it sets (``split`` / ``slot_num``)."""

    key: str
    value: object


def task_dependencies(parser, node: ast.AST, value) -> list[Expr]:
    """The task ids of a ``deps=[...]`` list: TASK_ID scalars or arrays of them."""
    if not isinstance(value, (list, tuple)):
        raise parser.ctx.error(node, f"deps= takes a list of task ids, got {value!r}",
                               hint="write deps=[t1, t2]")
    deps = []
    for item in value:
        ok = isinstance(item, Expr) and isinstance(item.type, (ScalarType, ArrayType)) \
            and item.type.dtype is DataType.TASK_ID
        if not ok:
            raise parser.ctx.error(node, f"deps=[...]: {_describe(item)} is not a task id",
                                   hint="name a task id bound by 'with pl.at(...) as t' or "
                                        "returned by pl.submit (or a pl.array of them)")
        deps.append(item)
    return deps


def _call_sites(body: list[ast.stmt], callee):
    """The calls in ``body`` (nested ones too) whose function expression ``callee`` accepts."""
    return (n for stmt in body for n in ast.walk(stmt)
            if isinstance(n, ast.Call) and callee(n.func))


def _calls(body: list[ast.stmt], callee) -> bool:
    """Whether any call in ``body`` has a function expression ``callee`` accepts."""
    return next(_call_sites(body, callee), None) is not None


def _assigned(body: list[ast.stmt]) -> list[str]:
    """The names a region's top-level assignments bind (PyPTO's producer tracking)."""
    names: list[str] = []

    def collect(target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                collect(elt)

    for stmt in body:
        for target in (stmt.targets if isinstance(stmt, ast.Assign) else
                       [stmt.target] if isinstance(stmt, ast.AnnAssign) else []):
            collect(target)
    return names


def _describe(item) -> str:
    if isinstance(item, Var):
        return f"'{item.name}'"
    return repr(item)


def block_index_binding(name: str, loc) -> tuple[Var, AssignStmt]:
    """``i = pl.tile.get_block_idx()``: the first statement of a ``for i in pl.spmd(n)`` body."""
    from ptoc.ops import make_call

    call = make_call("tile.get_block_idx", (), {}, loc=loc)
    var = Var(name, call.type, loc)
    return var, AssignStmt(var, call, loc)
