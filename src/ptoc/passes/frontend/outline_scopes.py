"""The outlining engine shared by OutlineHierarchyScopes, OutlineIncoreScopes and
OutlineClusterScopes: a ``with`` region becomes a function of its own and a call to it.

For a region of the kind being outlined:

- **Parameters** are the values the body uses but does not define, in first-use order:
  tensors and scalars. A tile crossing the boundary is an error (only DDR tensors and
  scalars are passed to a kernel).
- **Outputs** are the captured tensors the body writes in place (the destination of a
  ``pl.store`` / ``pl.assemble``, bare or assigned, through views, in loops and branches:
  ``ptoc.ir.aliases``), which become ``pl.Out`` parameters (``pl.InOut`` when the body also
  reads them) that the function returns, and then the tensors the body computes that are
  used after the region.
- **The call** replaces the region: ``y = self.f(...)``, or ``_tuple_tmp = self.f(...)`` and
  one item per output. Every later use of an output (a name defined inside, or a captured
  tensor the region wrote, in the rest of its block) reads the call's result, as PyPTO
  rewires them.
- **Names**: ``name_hint`` when given, else ``<function>_<kind>_<n>``; a taken name gets a
  free one by PyPTO's rule (``_free_name``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from ptoc.dtypes import DataType, Direction, FunctionType, ScopeKind
from ptoc.errors import PassError
from ptoc.ir.aliases import tensor_aliases
from ptoc.ir.nodes import (
    ARG_DIRECTION_OVERRIDES, AssignStmt, Call, EvalStmt, ForStmt, Function, IfStmt, Param, Program, ReturnStmt, ScopeStmt, WhileStmt,
    SeqStmts, Stmt, Submit, TupleGetItem, Var, DimVar,
)
from ptoc.ir.printer import flatten
from ptoc.ir.types import ArrayType, ScalarType, TensorType, TupleType
from ptoc.ir.visitor import IRVisitor, substitute

TASK_ID = ScalarType(DataType.TASK_ID)


@dataclass(frozen=True)
class OutlineSpec:
    """What one outlining pass lifts and how it names and types the new functions."""

    kind: ScopeKind
    func_type: Callable[[ScopeStmt], FunctionType]
    suffix: Callable[[ScopeStmt], str]
    promotes_to: FunctionType | None = None  # the parent's new type (OutlineIncoreScopes)
    inner_first: bool = False                # nested regions of the same kind outlined first
    call_attrs: Callable[[ScopeStmt], dict] = lambda scope: {}
    function_attrs: Callable[[ScopeStmt], dict] = lambda scope: {}


class _FreeVars(IRVisitor):
    """Variables a statement list uses but does not define, in first-use order."""

    def __init__(self):
        super().__init__()
        self.defined: set[int] = set()
        self.free: list[Var] = []
        self.seen: set[int] = set()

    def visit_def(self, var: Var) -> None:
        self.defined.add(id(var))
        super().visit_def(var)

    def visit_var(self, node: Var) -> None:
        if isinstance(node, DimVar):
            return   # a pl.dynamic symbol is program-wide: an outlined kernel names it too
        if id(node) not in self.defined and id(node) not in self.seen:
            self.seen.add(id(node))
            self.free.append(node)


def free_vars(body) -> list[Var]:
    collector = _FreeVars()
    collector.visit(body)
    return collector.free


def _uses(node) -> set[Var]:
    """Every variable ``node`` uses (definitions excluded)."""
    return set(free_vars(node))


def visible_definitions(stmts) -> list[Var]:
    """Names a statement list binds for the code after it: assignments and loop/branch
    results at its top level, and those of scopes inside it (a with-body binds names of
    its block)."""
    found: list[Var] = []
    for stmt in stmts:
        if isinstance(stmt, AssignStmt):
            found.append(stmt.var)
        elif isinstance(stmt, (ForStmt, WhileStmt, IfStmt)):
            found.extend(stmt.return_vars)
        elif isinstance(stmt, ScopeStmt):
            if stmt.task_id is not None:
                found.append(stmt.task_id)
            found.extend(visible_definitions(flatten(stmt.body)))
    return found


class _FirstScope(IRVisitor):
    """The first scope of one kind under a node."""

    def __init__(self, kind):
        self.kind = kind
        self.found: ScopeStmt | None = None

    def visit_scope_stmt(self, node: ScopeStmt) -> None:
        if node.kind is self.kind and self.found is None:
            self.found = node
        super().visit_scope_stmt(node)


@dataclass
class _Output:
    """One value a region hands back: a written captured tensor (``key`` is the outer Var,
    returned as its parameter) or a tensor computed inside (``local``, returned as is).
    ``aliases`` are the names defined inside that the call's result replaces."""

    key: Var
    read: bool
    local: bool = False
    aliases: list[Var] = dataclasses.field(default_factory=list)


class ScopeOutliner:
    """Outlines every region of ``spec.kind`` in one program (see the module docstring)."""

    def __init__(self, program: Program, spec: OutlineSpec, pass_name: str):
        self.program = program
        self.spec = spec
        self.pass_name = pass_name
        self.taken = {f.name for f in program.functions}
        self.mine: set[str] = set()
        self.new_functions: list[Function] = []
        self.owner = ""  # the function a new region's name starts with
        self.counter = 0

    def run(self) -> Program:
        functions = []
        for fn in self.program.functions:
            if fn.func_type.is_kernel:
                self._reject_nested(fn, "kernel function")
                functions.append(fn)
            else:
                functions.append(self.outline_function(fn))
        if not self.new_functions:
            return self.program
        return dataclasses.replace(self.program,
                                   functions=tuple(self.new_functions) + tuple(functions))

    def outline_function(self, fn: Function) -> Function:
        self.owner, self.counter, self.mine = fn.name, 0, {fn.name}
        before = len(self.new_functions)
        stmts, _ = self.block(flatten(fn.body), fn.body, ())
        if len(self.new_functions) == before:
            return fn
        new = dataclasses.replace(fn, body=SeqStmts(tuple(stmts), fn.body.loc))
        if self.spec.promotes_to is not None and fn.func_type is FunctionType.Opaque:
            new = dataclasses.replace(new, func_type=self.spec.promotes_to)
        return new

    # ---- walking --------------------------------------------------------------------
    def block(self, stmts: list[Stmt], owner, after: tuple) -> tuple[list[Stmt], dict]:
        """Outline the regions of one statement list. ``after`` holds the statement lists
        that follow it in enclosing transparent scopes (uses there see its outputs too).
        Returns the new list and the rewiring its regions ask of the code after it."""
        out: list[Stmt] = []
        pending: dict[Var, Var] = {}
        stmts = list(stmts)
        index = 0
        while index < len(stmts):
            stmt = stmts[index]
            rest = stmts[index + 1:]
            if isinstance(stmt, ScopeStmt) and stmt.kind is self.spec.kind:
                new, rewire = self.outline(stmt, (rest, *after))
            else:
                new, rewire = self.descend(stmt, (rest, *after))
            out.extend(new)
            if rewire:
                stmts[index + 1:] = [substitute(s, rewire) for s in rest]
                pending.update(rewire)
            index += 1
        return out, pending

    def descend(self, stmt: Stmt, after: tuple) -> tuple[list[Stmt], dict]:
        if isinstance(stmt, (ForStmt, WhileStmt)):
            body, _ = self.block(flatten(stmt.body), stmt, ())
            return [dataclasses.replace(stmt, body=SeqStmts(tuple(body), stmt.body.loc))], {}
        if isinstance(stmt, IfStmt):
            then, _ = self.block(flatten(stmt.then_body), stmt, ())
            other = None
            if stmt.else_body is not None:
                other, _ = self.block(flatten(stmt.else_body), stmt, ())
                other = SeqStmts(tuple(other), stmt.else_body.loc)
            return [dataclasses.replace(stmt, then_body=SeqStmts(tuple(then), stmt.then_body.loc),
                                        else_body=other)], {}
        if isinstance(stmt, ScopeStmt):  # another kind: transparent, its outputs flow out
            body, rewire = self.block(flatten(stmt.body), stmt, after)
            return [dataclasses.replace(stmt, body=SeqStmts(tuple(body), stmt.body.loc))], rewire
        return [stmt], {}

    # ---- one region -----------------------------------------------------------------
    def outline(self, scope: ScopeStmt, after: tuple) -> tuple[list[Stmt], dict]:
        body_stmts = flatten(scope.body)
        name = self.name_for(scope)
        inner: dict[Var, Var] = {}
        if self.spec.inner_first:  # inner regions first, named after this one's function
            saved = (self.owner, self.counter, self.mine)
            self.owner, self.counter, self.mine = name, 0, {name}
            try:
                body_stmts, inner = self.block(body_stmts, scope, after)
            finally:
                self.owner, self.counter, self.mine = saved
            after = tuple([substitute(s, inner) for s in part] for part in after) \
                if inner else after
        else:
            self._reject_nested(scope)
        body = SeqStmts(tuple(body_stmts), scope.body.loc)
        used_after = set().union(*(_uses(SeqStmts(tuple(part))) for part in after)) \
            if after else set()
        outputs = self.outputs(scope, body, used_after)
        function, args = self.make_function(scope, name, body, outputs)
        self.new_functions.append(function)
        self.taken.add(name)
        self.mine.add(name)
        stmts, rewire = self.call_site(scope, function, args, outputs)
        combined = {old: rewire.get(new, new) for old, new in inner.items()}
        combined.update(rewire)
        return stmts, combined

    def _reject_nested(self, scope: ScopeStmt | Function, where: str | None = None) -> None:
        finder = _FirstScope(self.spec.kind)
        finder.visit(scope.body)
        if finder.found is not None:
            where = where or f"another {self.spec.kind.value} scope"
            raise PassError(f"a {self.spec.kind.value} scope is nested inside {where}",
                            finder.found.loc,
                            hint="a kernel region cannot contain another one; flatten them")

    def outputs(self, scope: ScopeStmt, body: SeqStmts, used_after: set[Var]) -> list[_Output]:
        """Captured tensors the body writes, then tensors it computes that are used later."""
        captured = [v for v in free_vars(body) if isinstance(v.type, TensorType)]
        aliases = tensor_aliases(body, {v: v for v in captured}, self)
        outputs = [_Output(var, var in aliases.read) for var in captured if var in aliases.written]
        for var in visible_definitions(flatten(body)):
            if var not in used_after:
                continue
            if not isinstance(var.type, TensorType):
                raise PassError(
                    f"'{var.name}' is computed inside the {self._scope_name(scope)} scope and "
                    f"used after it, but it is a {type(var.type).__name__}; only DDR tensors "
                    "cross a kernel boundary", var.loc or scope.loc,
                    hint="compute it inside the scope, or store it to a tensor")
            root = aliases.root_of(var)
            written = next((o for o in outputs if o.key is root), None)
            if written is not None:
                written.aliases.append(var)
            elif root is not None:
                raise PassError(
                    f"'{var.name}' names the captured tensor '{root.name}', which the "
                    f"{self._scope_name(scope)} scope does not write; use '{root.name}' after "
                    "the scope", var.loc or scope.loc)
            else:
                outputs.append(_Output(var, False, local=True))
        return outputs

    def _scope_name(self, scope: ScopeStmt) -> str:
        return {ScopeKind.InCore: "pl.at", ScopeKind.Spmd: "pl.spmd",
                ScopeKind.Cluster: "pl.cluster"}.get(scope.kind, "pl.at")

    def make_function(self, scope, name, body: SeqStmts, outputs) -> tuple[Function, list[Var]]:
        free = [v for v in free_vars(body)
                if isinstance(v.type, (TensorType, ScalarType, ArrayType))]
        for var in free_vars(body):
            if not isinstance(var.type, (TensorType, ScalarType, ArrayType)):
                raise PassError(
                    f"the {self._scope_name(scope)} scope reads '{var.name}', a "
                    f"{type(var.type).__name__} made outside it; only DDR tensors and scalars "
                    "cross a kernel boundary", scope.loc,
                    hint="compute it inside the scope, or store it to a tensor first")
        params, mapping = [], {}
        direction = {id(o.key): (Direction.InOut if o.read else Direction.Out)
                     for o in outputs if not o.local}
        for var in free:
            param = Var(var.name, var.type, var.loc)
            mapping[var] = param
            params.append(Param(param, direction.get(id(var), Direction.In)))
        body = substitute(body, mapping)
        returns = tuple(substitute(o.key, mapping) for o in outputs)
        stmts = body.stmts + (ReturnStmt(returns, scope.loc),)
        function = Function(name, tuple(params), tuple(r.type for r in returns),
                            SeqStmts(stmts, body.loc), self.spec.func_type(scope),
                            self.spec.function_attrs(scope), True, scope.loc)
        return function, free

    def call_site(self, scope, function, args, outputs) -> tuple[list[Stmt], dict]:
        """``y = self.f(...)`` / ``_tuple_tmp = ...`` + items; the rewiring for later code."""
        loc = scope.loc
        types = function.return_types
        attrs = dict(self.spec.call_attrs(scope))
        if scope.no_dep_args:
            attrs[ARG_DIRECTION_OVERRIDES] = self.no_dep_slots(scope, args)
        if scope.task_id is not None or scope.deps or scope.predicate is not None:
            # a named (or predicated) task: pl.submit(...)
            return self.submit_site(scope, function, args, outputs, attrs)
        call_type = types[0] if len(types) == 1 else TupleType(tuple(types))
        call = Call(function.name, tuple(args), (), call_type, attrs, is_function=True, loc=loc)
        if not outputs:
            return [EvalStmt(call, loc)], {}
        rewire: dict[Var, Var] = {}
        results: list[Var] = []
        for out, ty in zip(outputs, types):
            result = Var((out.aliases[-1] if out.aliases else out.key).name, ty, loc)
            results.append(result)
            for var in [out.key, *out.aliases]:
                rewire[var] = result
        if len(outputs) == 1:
            return [AssignStmt(results[0], call, loc)], rewire
        whole = Var("_tuple_tmp", call_type, loc)
        stmts: list[Stmt] = [AssignStmt(whole, call, loc)]
        stmts.extend(AssignStmt(r, TupleGetItem(whole, i), loc) for i, r in enumerate(results))
        return stmts, rewire

    def get_function(self, name: str) -> Function | None:
        """Callee lookup for the alias analysis: functions outlined so far, then the program."""
        found = next((f for f in self.new_functions if f.name == name), None)
        return found if found is not None else self.program.get_function(name)

    def no_dep_slots(self, scope: ScopeStmt, args: list[Var]) -> list[int]:
        """The argument slots of ``no_dep_args=[...]`` (DeriveCallDirections makes them
        ``no_dep``)."""
        slots = []
        for tensor in scope.no_dep_args:
            if tensor not in args:
                raise PassError(f"no_dep_args names '{tensor.name}', which the "
                                f"{self._scope_name(scope)} region does not use", scope.loc,
                                hint=f"drop '{tensor.name}' from no_dep_args")
            slots.append(args.index(tensor))
        return sorted(slots)

    def submit_site(self, scope, function, args, outputs, attrs) -> tuple[list[Stmt], dict]:
        """``_tuple_tmp = pl.submit(self.f, ..., deps=[...])``, one item per output and the
        task id (the scope's ``as tid`` variable itself, so later ``deps`` still name it)."""
        loc = scope.loc
        call_type = TupleType((*function.return_types, TASK_ID))
        submit = Submit(function.name, tuple(args), (), call_type, attrs, True, loc,
                        deps=scope.deps, predicate=scope.predicate)
        whole = Var("_tuple_tmp", call_type, loc)
        stmts: list[Stmt] = [AssignStmt(whole, submit, loc)]
        rewire: dict[Var, Var] = {}
        for index, (out, ty) in enumerate(zip(outputs, function.return_types)):
            result = Var((out.aliases[-1] if out.aliases else out.key).name, ty, loc)
            for var in [out.key, *out.aliases]:
                rewire[var] = result
            stmts.append(AssignStmt(result, TupleGetItem(whole, index), loc))
        if scope.task_id is not None:
            stmts.append(AssignStmt(scope.task_id, TupleGetItem(whole, len(outputs)), loc))
        return stmts, rewire

    # ---- names ----------------------------------------------------------------------
    def name_for(self, scope: ScopeStmt) -> str:
        hint = scope.attrs.get("name_hint")
        if hint:
            return self._free_name(hint)
        fn = self.owner
        while True:
            name = f"{fn}_{self.spec.suffix(scope)}_{self.counter}"
            self.counter += 1
            if name not in self.taken:
                return name

    def _free_name(self, hint: str) -> str:
        """``hint`` if free. Taken by this function or a region of it: ``hint_<n>`` with the
        smallest free n; taken by another function's region: ``<function>_<hint>`` (PyPTO's
        rule, so each function's first region keeps the name it has when compiled alone)."""
        fn = self.owner
        if hint not in self.taken:
            return hint
        if hint not in self.mine and f"{fn}_{hint}" not in self.taken:
            return f"{fn}_{hint}"
        index = 0
        while f"{hint}_{index}" in self.taken:
            index += 1
        return f"{hint}_{index}"
