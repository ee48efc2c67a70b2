"""Generic IR traversal (``IRVisitor``) and rewriting (``IRMutator``), the base of every pass.

``IRVisitor`` walks every node in program order; override ``visit_<kind>`` hooks and call
the base method to keep descending. Definitions (parameters, assignment targets, loop
variables, iter args, return variables) go through ``visit_def``; uses through
``visit_var``.

Both also take PyPTO's hooks: a subclass may override ``visit_expr`` / ``visit_stmt``
(every expression / statement passes through them first), ``visit_binary_expr`` /
``visit_add`` / ... , ``visit_make_tuple``, and for ``IRMutator`` ``visit_<kind>`` returning
the new node (``visit_call``, ``visit_for_stmt``, ...); calling the base method keeps the
default recursion, as in PyPTO (``ptoc.ir.pypto_hooks``).

``IRMutator`` rebuilds a node only when one of its children changed, so an identity
rewrite returns the very same objects. It carries a Var substitution map: uses of a
mapped Var are replaced, and a definition whose type changes (or, in fresh mode, every
definition) gets a new Var recorded in the map so later uses follow. A statement hook
may return a SeqStmts (spliced into the enclosing list) or None (deleted).
"""

from __future__ import annotations

import re
from functools import lru_cache
from operator import is_
from typing import Any

from ptoc.ir.nodes import replace
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, EvalStmt, Expr, ForStmt, Function,
    IfStmt, IterArg, ListExpr, Param, Program, ReturnStmt, ScopeStmt, SeqStmts, Stmt, TupleGetItem,
    UnaryOp, Var, WhileStmt, YieldStmt,
)
from ptoc.ir.pypto_hooks import BINARY_HOOK, UNARY_HOOK, hooks_for, kind_hooks, overridden
from ptoc.ir.types import MemRef, TensorType, TileType, TupleType, Type


@lru_cache(maxsize=None)
def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# ---- dispatch -------------------------------------------------------------------------
# Which method handles a node depends only on the visitor's class and the node's class
# (BinOp / UnaryOp under a PyPTO-style subclass also on the operator), so the method name
# is looked up once per pair and kept: the traversal runs for every node of every pass.
# ``visit`` and ``mutate`` keep the function itself in a table of the visitor's class,
# keyed by the node's class (no key tuple, no bound method per node).

_SLOW = "<by operator>"   # route a BinOp/UnaryOp through its operator's hooks each time
_UNSET = object()
_ROUTES: dict[tuple, str | None] = {}
_USER_HOOKS: dict[tuple, frozenset[str]] = {}


def _shape(cls: type) -> tuple:
    """What the routes of visitor class ``cls`` depend on: its bases and the names it
    defines (a route follows which hook names exist, never their code). A class that a
    function defines anew on every call (a local ``_Find(IRVisitor)``) has one shape, so
    its routes are worked out once, and the caches keep no such class alive."""
    return cls.__dict__.get("_shape_key") or (cls,)


def _shape_key(cls: type) -> tuple:
    return (cls.__bases__, frozenset(vars(cls)))


def _user_hooks(cls: type, base: type) -> frozenset[str]:
    """``overridden(cls, base)``, cached by shape."""
    key = (_shape(cls), base)
    found = _USER_HOOKS.get(key)
    if found is None:
        found = _USER_HOOKS[key] = overridden.__wrapped__(cls, base)
    return found


def _table_entry(cls: type, node_cls: type, entry: str, table: dict) -> Any:
    """The function (None: nothing to call, ``_SLOW``: by operator) ``entry`` of ``cls``
    sends a ``node_cls`` node to, recorded in ``table`` (the class's own)."""
    name = _route(cls, node_cls, entry)
    fn = name if name is None or name is _SLOW else getattr(cls, name)
    table[node_cls] = fn
    return fn


def _kind_name(cls: type, node_cls: type, prefix: str) -> str | None:
    """``<prefix>_<kind>`` if ``cls`` has it, else the fallback of a Var / type; None: a
    plain value with nothing to visit (the mutator returns it unchanged)."""
    name = f"{prefix}_{_snake(node_cls.__name__)}"
    if hasattr(cls, name):
        return name
    if issubclass(node_cls, Var):
        return f"{prefix}_var"
    if issubclass(node_cls, Type) or (prefix == "visit" and issubclass(node_cls, MemRef)):
        return f"{prefix}_type"
    return None


def _route(cls: type, node_cls: type, entry: str) -> str | None:
    """The method name ``entry`` ("visit", "visit_kind", "mutate", "specific", "mutate_kind")
    of visitor class ``cls`` sends a ``node_cls`` node to (cached)."""
    key = (_shape(cls), node_cls, entry)
    try:
        return _ROUTES[key]
    except KeyError:
        pass
    if entry in ("visit", "visit_kind"):
        user = _user_hooks(cls, IRVisitor)
        name = _kind_name(cls, node_cls, "visit")
        if entry == "visit":
            if "visit_expr" in user and issubclass(node_cls, Expr):
                name = "visit_expr"
            elif "visit_stmt" in user and issubclass(node_cls, Stmt):
                name = "visit_stmt"
    else:
        user = _user_hooks(cls, IRMutator)
        name = _kind_name(cls, node_cls, "mutate")
        if entry != "mutate_kind" and user:
            if issubclass(node_cls, (BinOp, UnaryOp)):
                name = _SLOW
            else:
                hooks = kind_hooks(node_cls)
                for hook in hooks if entry == "mutate" else hooks[1:]:
                    if hook in user:
                        name = hook
                        break
    _ROUTES[key] = name
    return name


class IRVisitor:
    """Read-only traversal. Hooks: ``visit_program``, ``visit_function``, ``visit_<stmt>``
    (``visit_assign_stmt``, ``visit_for_stmt``, ...), ``visit_<expr>`` (``visit_call``,
    ``visit_bin_op``, ...), ``visit_var`` (uses), ``visit_def`` (definitions) and
    ``visit_type``."""

    #: node class -> the function ``visit`` calls (per visitor class: ``__init_subclass__``)
    _visit_table: dict[type, Any] = {}

    #: whether ``visit`` is this class's own (``visit_all`` then dispatches inline)
    _plain_visit = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._visit_table = {}
        cls._shape_key = _shape_key(cls)
        cls._plain_visit = cls.visit is IRVisitor.visit

    def visit(self, node: Any) -> None:
        if node is None:
            return
        fn = self._visit_table.get(type(node), _UNSET)
        if fn is _UNSET:
            fn = _table_entry(type(self), type(node), "visit", type(self)._visit_table)
        if fn is not None:
            fn(self, node)

    def visit_expr(self, node: Expr) -> None:
        """PyPTO's expression dispatcher (override it to see every expression)."""
        self._visit_kind(node)

    def visit_stmt(self, node: Stmt) -> None:
        """PyPTO's statement dispatcher (override it to see every statement)."""
        self._visit_kind(node)

    def _visit_kind(self, node: Any) -> None:
        """``visit_<kind>``; a Var subclass falls back to visit_var, a type to visit_type;
        plain values (enums, ints, strings) have nothing to visit."""
        name = _route(type(self), type(node), "visit_kind")
        if name is not None:
            getattr(self, name)(node)

    # ---- program structure ---------------------------------------------------------
    def visit_program(self, node: Program) -> None:
        for fn in node.functions:
            self.visit(fn)

    def visit_function(self, node: Function) -> None:
        for p in node.params:
            self.visit_def(p.var)
        for t in node.return_types:
            self.visit_type(t)
        self.visit(node.body)

    # ---- statements ----------------------------------------------------------------
    def visit_seq_stmts(self, node: SeqStmts) -> None:
        for s in node.stmts:
            self.visit(s)

    def visit_all(self, items) -> None:
        """``self.visit(x)`` for every ``x`` of ``items``, skipping the ones the class sends
        to IRVisitor's own no-op hooks (constants, a Var use when ``visit_var`` is not
        overridden): the same calls, without two per leaf."""
        if not self._plain_visit:
            for x in items:
                self.visit(x)
            return
        table = self._visit_table
        for x in items:
            fn = table.get(type(x), _UNSET)
            if fn is None or fn in _VISIT_NOOP:
                continue
            if fn is _UNSET:
                self.visit(x)
            else:
                fn(self, x)

    def visit_assign_stmt(self, node: AssignStmt) -> None:
        self.visit(node.value)
        self.visit_def(node.var)

    def visit_eval_stmt(self, node: EvalStmt) -> None:
        self.visit(node.expr)

    def visit_yield_stmt(self, node: YieldStmt) -> None:
        self.visit_all(node.values)

    def visit_return_stmt(self, node: ReturnStmt) -> None:
        self.visit_all(node.values)

    def visit_for_stmt(self, node: ForStmt) -> None:
        self.visit(node.start)
        self.visit(node.stop)
        self.visit(node.step)
        for ia in node.iter_args:
            self.visit(ia.init)
        self.visit_def(node.loop_var)
        for ia in node.iter_args:
            self.visit_def(ia)
        self.visit(node.body)
        for rv in node.return_vars:
            self.visit_def(rv)

    def visit_while_stmt(self, node: WhileStmt) -> None:
        for ia in node.iter_args:
            self.visit(ia.init)
        for ia in node.iter_args:
            self.visit_def(ia)
        self.visit(node.cond)  # reads the iter args, before every trip
        self.visit(node.body)
        for rv in node.return_vars:
            self.visit_def(rv)

    def visit_if_stmt(self, node: IfStmt) -> None:
        self.visit(node.cond)
        self.visit(node.then_body)
        self.visit(node.else_body)
        for rv in node.return_vars:
            self.visit_def(rv)

    def visit_scope_stmt(self, node: ScopeStmt) -> None:
        for dep in (*node.deps, *node.no_dep_args):
            self.visit(dep)
        self.visit(node.core_num)
        self.visit(node.predicate)
        if node.task_id is not None:
            self.visit_def(node.task_id)
        self.visit(node.body)

    # ---- expressions ---------------------------------------------------------------
    def visit_def(self, var: Var) -> None:
        """A defining occurrence of ``var``; by default visits the Vars in its type."""
        self.visit_type(var.type)

    def visit_var(self, node: Var) -> None:
        """A use of a variable (IterArgs included)."""

    def visit_iter_arg(self, node: IterArg) -> None:
        self.visit_var(node)

    def visit_const_int(self, node: ConstInt) -> None:
        pass

    def visit_const_float(self, node: ConstFloat) -> None:
        pass

    def visit_const_bool(self, node: ConstBool) -> None:
        pass

    def visit_bin_op(self, node: BinOp) -> None:
        getattr(self, BINARY_HOOK[node.op])(node)  # visit_add, visit_lt, ... (PyPTO's)

    def visit_binary_expr(self, node: BinOp) -> None:
        self.visit(node.lhs)
        self.visit(node.rhs)

    def visit_unary_op(self, node: UnaryOp) -> None:
        getattr(self, UNARY_HOOK[node.op])(node)

    def visit_unary_expr(self, node: UnaryOp) -> None:
        self.visit(node.operand)

    def visit_list_expr(self, node: ListExpr) -> None:
        self.visit_make_tuple(node)

    def visit_make_tuple(self, node: ListExpr) -> None:
        self.visit_all(node.items)

    def visit_tuple_get_item(self, node: TupleGetItem) -> None:
        self.visit_tuple_get_item_expr(node)

    def visit_tuple_get_item_expr(self, node: TupleGetItem) -> None:
        self.visit(node.tuple)

    def visit_call(self, node: Call) -> None:
        self.visit_all(node.args)
        if node.kwargs:
            self.visit_all([v for _, v in node.kwargs])
        for v in node.attrs.values():  # a launch spec (core_num) may be an expression
            if isinstance(v, Expr):
                self.visit(v)

    def visit_submit(self, node) -> None:
        self.visit_call(node)
        for dep in node.deps:
            self.visit(dep)
        self.visit(node.predicate)

    def visit_type(self, ty: Any) -> None:
        """Visit the expressions inside a type: dynamic dims, valid extents, MemRef base and
        offset."""
        if isinstance(ty, (TensorType, TileType)):
            for d in ty.shape:
                if isinstance(d, Expr):
                    self.visit(d)
            if ty.view is not None:
                for d in ty.view.get("valid_shape") or ():
                    if isinstance(d, Expr):
                        self.visit(d)
            if ty.memref is not None:
                self.visit_type(ty.memref)
        elif isinstance(ty, MemRef):
            if isinstance(ty.base, Var):
                self.visit_var(ty.base)
            self.visit(ty.offset)
        elif isinstance(ty, TupleType):
            for t in ty.types:
                self.visit_type(t)


class IRMutator:
    """Rebuilding traversal with Var substitution; unchanged subtrees are returned as-is.

    ``var_map`` maps old Vars to replacement expressions (uses) or Vars (definitions).
    With ``fresh=True`` every definition gets a new Var (same hint and type), which is
    how loop bodies are replicated without breaking SSA.
    """

    def __init__(self, var_map: dict[Var, Expr] | None = None, *, fresh: bool = False):
        self.var_map: dict[Var, Expr] = dict(var_map or {})
        self.fresh = fresh

    #: node class -> the function ``mutate`` calls (per mutator class: ``__init_subclass__``)
    _mutate_table: dict[type, Any] = {}

    #: whether ``mutate`` is this class's own (``mutate_all`` then dispatches leaves inline)
    _plain_mutate = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._mutate_table = {}
        cls._shape_key = _shape_key(cls)
        cls._plain_mutate = cls.mutate is IRMutator.mutate

    def mutate(self, node: Any) -> Any:
        """A PyPTO-style subclass's overridden ``visit_*`` hook for ``node`` if any, else
        ``mutate_<kind>``."""
        if node is None:
            return None
        fn = self._mutate_table.get(type(node), _UNSET)
        if fn is _UNSET:
            fn = _table_entry(type(self), type(node), "mutate", type(self)._mutate_table)
        if fn is _SLOW:
            return self._dispatch(node, "mutate")
        return node if fn is None else fn(self, node)

    def _specific(self, node: Any) -> Any:
        """PyPTO's dispatch below ``visit_expr`` / ``visit_stmt``: the kind's hook if a
        subclass overrides it, else the default rebuild."""
        return self._dispatch(node, "specific")

    def _mutate_kind(self, node: Any) -> Any:
        return self._dispatch(node, "mutate_kind")

    def _dispatch(self, node: Any, entry: str) -> Any:
        name = _route(type(self), type(node), entry)
        if name is None:
            return node  # plain values
        if name is _SLOW:
            user = _user_hooks(type(self), IRMutator)
            for hook in hooks_for(node)[0 if entry == "mutate" else 1:]:
                if hook in user:
                    return getattr(self, hook)(node)
            name = _route(type(self), type(node), "mutate_kind")
        return getattr(self, name)(node)

    # ---- program structure ---------------------------------------------------------
    def mutate_program(self, node: Program) -> Program:
        fns = tuple(self.mutate(fn) for fn in node.functions)
        if _same(fns, node.functions):
            return node
        return replace(node, functions=fns)

    def mutate_function(self, node: Function) -> Function:
        params = tuple([self._param(p) for p in node.params])
        rets = tuple([self.mutate_type(t) for t in node.return_types])
        body = self.mutate_body(node.body)
        if _same(params, node.params) and _same(rets, node.return_types) and body is node.body:
            return node
        return replace(node, params=params, return_types=rets, body=body)

    def _param(self, p: Param) -> Param:
        var = self.mutate_def(p.var)
        return p if var is p.var else replace(p, var=var)

    # ---- statements ----------------------------------------------------------------
    def mutate_body(self, body: SeqStmts | None) -> SeqStmts | None:
        """Mutate a statement list; results that are SeqStmts are spliced, None removed."""
        if body is None:
            return None
        out = self.mutate(body)
        if out is None:
            return SeqStmts((), loc=body.loc)
        if not isinstance(out, SeqStmts):
            return SeqStmts((out,), loc=body.loc)
        return out

    def mutate_seq_stmts(self, node: SeqStmts) -> SeqStmts:
        out: list[Stmt] | None = None   # made at the first statement that changes
        stmts = node.stmts
        table = self._mutate_table if self._plain_mutate else None
        for i, s in enumerate(stmts):
            fn = table.get(type(s), _UNSET) if table is not None else _UNSET
            if fn is _UNSET or fn is _SLOW:
                new = self.mutate(s)
            else:   # what ``mutate`` would call
                new = s if fn is None else fn(self, s)
            if new is s:
                if out is not None:
                    out.append(s)
                continue
            if out is None:
                out = list(stmts[:i])
            if new is None:
                continue
            if isinstance(new, SeqStmts):
                out.extend(new.stmts)
            else:
                out.append(new)
        if out is None:
            return node
        return replace(node, stmts=tuple(out))

    def mutate_assign_stmt(self, node: AssignStmt) -> Stmt | None:
        if not self.var_map and not self.fresh and _statements_only(type(self)):
            return node   # nothing could change inside: see _statements_only
        value = self.mutate(node.value)
        var = self.mutate_def(node.var)
        if value is node.value and var is node.var:
            return node
        return replace(node, var=var, value=value)

    def mutate_eval_stmt(self, node: EvalStmt) -> Stmt | None:
        if not self.var_map and not self.fresh and _statements_only(type(self)):
            return node
        e = self.mutate(node.expr)
        return node if e is node.expr else replace(node, expr=e)

    def mutate_yield_stmt(self, node: YieldStmt) -> Stmt | None:
        vals = self.mutate_all(node.values)
        return node if vals is node.values else replace(node, values=vals)

    def mutate_return_stmt(self, node: ReturnStmt) -> Stmt | None:
        vals = self.mutate_all(node.values)
        return node if vals is node.values else replace(node, values=vals)

    def mutate_for_stmt(self, node: ForStmt) -> Stmt | None:
        mutate = self.mutate
        start, stop, step = mutate(node.start), mutate(node.stop), mutate(node.step)
        inits = [self.mutate(ia.init) for ia in node.iter_args]
        loop_var = self.mutate_def(node.loop_var)
        iter_args = tuple(self._iter_arg(ia, init) for ia, init in zip(node.iter_args, inits))
        body = self.mutate_body(node.body)
        rvs = tuple(self.mutate_def(rv) for rv in node.return_vars)
        if (start is node.start and stop is node.stop and step is node.step
                and loop_var is node.loop_var and _same(iter_args, node.iter_args)
                and body is node.body and _same(rvs, node.return_vars)):
            return node
        return replace(node, loop_var=loop_var, start=start, stop=stop, step=step,
                       iter_args=iter_args, body=body, return_vars=rvs)

    def _iter_arg(self, ia: IterArg, init: Expr | None) -> IterArg:
        """An iter arg definition; its ``init`` lives on the node, so a new init means a new Var."""
        mapped = self.var_map.get(ia)
        if isinstance(mapped, IterArg):
            if mapped.init is init:
                return mapped
            new = replace(mapped, init=init)
        else:
            ty = self.mutate_type(ia.type)
            if ty is ia.type and init is ia.init and not self.fresh:
                return ia
            new = replace(ia, type=ty, init=init)
        self.var_map[ia] = new
        return new

    def mutate_while_stmt(self, node: WhileStmt) -> Stmt | None:
        inits = [self.mutate(ia.init) for ia in node.iter_args]
        iter_args = tuple(self._iter_arg(ia, init) for ia, init in zip(node.iter_args, inits))
        cond = self.mutate(node.cond)  # after the iter args: it reads them
        body = self.mutate_body(node.body)
        rvs = tuple(self.mutate_def(rv) for rv in node.return_vars)
        if (cond is node.cond and _same(iter_args, node.iter_args) and body is node.body
                and _same(rvs, node.return_vars)):
            return node
        return replace(node, cond=cond, iter_args=iter_args, body=body, return_vars=rvs)

    def mutate_if_stmt(self, node: IfStmt) -> Stmt | None:
        cond = self.mutate(node.cond)
        then_body = self.mutate_body(node.then_body)
        else_body = self.mutate_body(node.else_body)
        rvs = tuple(self.mutate_def(rv) for rv in node.return_vars)
        if (cond is node.cond and then_body is node.then_body and else_body is node.else_body
                and _same(rvs, node.return_vars)):
            return node
        return replace(node, cond=cond, then_body=then_body, else_body=else_body, return_vars=rvs)

    def mutate_scope_stmt(self, node: ScopeStmt) -> Stmt | None:
        deps = tuple(self.mutate(d) for d in node.deps)
        no_dep = tuple(self.mutate(d) for d in node.no_dep_args)
        core_num = self.mutate(node.core_num)
        predicate = self.mutate(node.predicate)
        task_id = self.mutate_def(node.task_id) if node.task_id is not None else None
        body = self.mutate_body(node.body)
        if (_same(deps, node.deps) and _same(no_dep, node.no_dep_args)
                and core_num is node.core_num and predicate is node.predicate
                and task_id is node.task_id and body is node.body):
            return node
        return replace(node, deps=deps, no_dep_args=no_dep, core_num=core_num, task_id=task_id,
                       body=body, predicate=predicate)

    # ---- variables -----------------------------------------------------------------
    def mutate_def(self, var: Var) -> Var:
        """A definition: keep it, follow a Var mapping, or make a new Var (type change / fresh)."""
        mapped = self.var_map.get(var)
        if isinstance(mapped, Var):
            return mapped
        return self._def_with_type(var, self.mutate_type(var.type))

    def _def_with_type(self, var: Var, ty: Type) -> Var:
        """Definition ``var`` (not mapped yet) with type ``ty``: ``var`` itself when the type
        is its own and no fresh variables are made, else a new Var that its uses follow."""
        if ty is var.type and not self.fresh:
            return var
        new = replace(var, type=ty)
        self.var_map[var] = new
        return new

    def mutate_var(self, node: Var) -> Expr:
        """A use: the substitution for ``node`` if any, else ``node`` itself."""
        return self.var_map.get(node, node)

    def mutate_iter_arg(self, node: IterArg) -> Expr:
        return self.mutate_var(node)

    # ---- expressions ---------------------------------------------------------------
    def mutate_const_int(self, node: ConstInt) -> Expr:
        return node

    def mutate_const_float(self, node: ConstFloat) -> Expr:
        return node

    def mutate_const_bool(self, node: ConstBool) -> Expr:
        return node

    def mutate_bin_op(self, node: BinOp) -> Expr:
        lhs, rhs = self.mutate(node.lhs), self.mutate(node.rhs)
        if lhs is node.lhs and rhs is node.rhs:
            return node
        return fold_constants(replace(node, lhs=lhs, rhs=rhs))

    def mutate_unary_op(self, node: UnaryOp) -> Expr:
        x = self.mutate(node.operand)
        return node if x is node.operand else replace(node, operand=x)

    def mutate_list_expr(self, node: ListExpr) -> Expr:
        items = self.mutate_all(node.items)
        return node if items is node.items else replace(node, items=items)

    def mutate_tuple_get_item(self, node: TupleGetItem) -> Expr:
        x = self.mutate(node.tuple)
        return node if x is node.tuple else replace(node, tuple=x)

    def mutate_call(self, node: Call) -> Expr:
        return self.rebuild_call(node, self.mutate_type(node.type))

    def rebuild_call(self, node: Call, ty: Type) -> Call:
        """``node`` with its arguments, keyword values and attrs mutated and type ``ty``
        (the same node when nothing changed): ``mutate_call`` with the new type already
        decided, for a rewrite that gives the call its result variable's type."""
        args = self.mutate_all(node.args)
        kwargs = node.kwargs
        if kwargs:
            values = tuple([v for _, v in kwargs])
            new_values = self.mutate_all(values)
            if new_values is not values:
                kwargs = tuple([(k, v) for (k, _), v in zip(kwargs, new_values)])
        attrs = node.attrs
        if attrs:
            for v in attrs.values():
                if isinstance(v, Expr):   # a launch spec (core_num) may be an expression
                    mutate = self.mutate
                    new_attrs = {k: mutate(v) if isinstance(v, Expr) else v
                                 for k, v in attrs.items()}
                    if not all(new_attrs[k] is v for k, v in attrs.items()):
                        attrs = new_attrs
                    break
        if args is node.args and ty is node.type and kwargs is node.kwargs \
                and attrs is node.attrs:
            return node
        return replace(node, args=args, kwargs=kwargs, type=ty,
                       attrs=dict(attrs) if attrs is node.attrs else attrs)

    def mutate_all(self, items: tuple) -> tuple:
        """``tuple(self.mutate(x) for x in items)``, or ``items`` itself when every item
        comes back unchanged. A use of a Var and a constant are resolved here when the
        class routes them to IRMutator's own ``mutate_var`` / constant hooks (the same
        result as ``mutate``, without two calls per leaf)."""
        if not self._plain_mutate:
            out = tuple([self.mutate(x) for x in items])
            return items if _same(out, items) else out
        table = self._mutate_table
        var_map = self.var_map
        out = None
        for i, x in enumerate(items):
            fn = table.get(type(x), _UNSET)
            if fn is _MUTATE_VAR:
                y = var_map.get(x, x)
            elif fn is None or fn in _MUTATE_LEAF:
                y = x
            else:
                y = self.mutate(x)
            if out is not None:
                out.append(y)
            elif y is not x:
                out = list(items[:i])
                out.append(y)
        return items if out is None else tuple(out)

    def mutate_submit(self, node) -> Expr:
        call = self.mutate_call(node)
        deps = tuple(self.mutate(d) for d in node.deps)
        predicate = self.mutate(node.predicate)
        if _same(deps, node.deps) and predicate is node.predicate:
            return call
        return replace(call, deps=deps, predicate=predicate)

    # ---- types ---------------------------------------------------------------------
    def mutate_type(self, ty: Type) -> Type:
        """Substitute inside dynamic dims, MemRefs and views (a tensor's or tile's run-time
        valid extents); returns ``ty`` itself if nothing changed."""
        if isinstance(ty, (TensorType, TileType)):
            shape = ty.shape
            for d in shape:
                if type(d) is not int:
                    shape = self.mutate_all(shape)   # plain ints come back as they are
                    break
            memref = ty.memref
            if memref is not None:
                memref = self.mutate_memref(memref)
            view = self.mutate_view(ty.view) if ty.view else ty.view
            if shape is ty.shape and memref is ty.memref and view is ty.view:
                return ty
            return replace(ty, shape=shape, memref=memref, view=view)
        if isinstance(ty, TupleType):
            types = tuple(self.mutate_type(t) for t in ty.types)
            return ty if _same(types, ty.types) else replace(ty, types=types)
        return ty

    def mutate_view(self, view):
        """A tensor or tile view with its valid_shape substituted (the same view if
        unchanged)."""
        fields = view.fields
        for i, (k, v) in enumerate(fields):
            if isinstance(v, tuple):
                new = self.mutate_all(v)   # plain values come back as they are
                if new is not v:
                    if fields is view.fields:
                        fields = list(fields)
                    fields[i] = (k, new)
        return view if fields is view.fields else replace(view, fields=tuple(fields))

    def mutate_memref(self, m: MemRef) -> MemRef:
        base = m.base
        if isinstance(base, Var):
            new_base = self.var_map.get(base, base)
            base = new_base if isinstance(new_base, Var) else base
        offset = m.offset
        if type(offset) is not ConstInt or self._mutate_table.get(ConstInt) is not _CONST_INT \
                or not self._plain_mutate:
            offset = self.mutate(offset)
        if base is m.base and offset is m.offset:
            return m
        return replace(m, base=base, offset=offset)


    # ---- PyPTO's hook names (defaults: the rebuild above) ---------------------------------
    def visit_program(self, node: Program) -> Program:
        return self.mutate_program(node)

    def visit_function(self, node: Function) -> Function:
        return self.mutate_function(node)

    def visit_expr(self, node: Expr) -> Expr:
        return self._specific(node)

    def visit_stmt(self, node: Stmt) -> Stmt | None:
        return self._specific(node)

    def visit_binary_expr(self, node: BinOp) -> Expr:
        return self.mutate_bin_op(node)

    def visit_unary_expr(self, node: UnaryOp) -> Expr:
        return self.mutate_unary_op(node)

    def visit_make_tuple(self, node: ListExpr) -> Expr:
        return self.mutate_list_expr(node)

    def visit_tuple_get_item_expr(self, node: TupleGetItem) -> Expr:
        return self.mutate_tuple_get_item(node)


#: IRMutator methods a subclass may override and still rewrite statements only: with no
#: substitution (empty ``var_map``) and no fresh variables, the default rewrite of an
#: assignment or evaluation then returns it unchanged after walking all of it, so the walk
#: is skipped. An override of the assignment / evaluation hook itself does its own work
#: first; what it hands to the default rewrite (``super()``) is that same walk. Overriding
#: any other IRMutator method (an expression, definition or type hook, or PyPTO's
#: visit_stmt / visit_expr dispatchers) keeps the walk.
_STATEMENT_LEVEL = frozenset({
    "mutate_program", "mutate_function", "mutate_body", "mutate_seq_stmts",
    "mutate_for_stmt", "mutate_while_stmt", "mutate_if_stmt", "mutate_scope_stmt",
    "mutate_yield_stmt", "mutate_return_stmt", "mutate_assign_stmt", "mutate_eval_stmt",
    "visit_program", "visit_function", "visit_seq_stmts", "visit_for_stmt",
    "visit_while_stmt", "visit_if_stmt", "visit_scope_stmt", "visit_yield_stmt",
    "visit_return_stmt", "visit_assign_stmt", "visit_eval_stmt"})
_STATEMENTS_ONLY: dict[tuple, bool] = {}


def _statements_only(cls: type) -> bool:
    """Whether ``cls`` overrides only statement-level IRMutator methods (cached per shape)."""
    known = _STATEMENTS_ONLY.get(_shape(cls))
    if known is None:
        names: set[str] = set()
        for klass in cls.__mro__:
            if klass is IRMutator:
                break
            names.update(vars(klass))
        known = _STATEMENTS_ONLY[_shape(cls)] = not any(
            name in names and name not in _STATEMENT_LEVEL and not name.startswith("__")
            and name not in ("_mutate_table", "_shape_key", "_plain_mutate")
            for name in vars(IRMutator))
    return known


def _delegate(target: str):
    def hook(self, node):
        return getattr(self, target)(node)
    hook.__name__ = target
    return hook


# visit_<kind> -> mutate_<kind>; visit_add/visit_lt/... -> visit_binary_expr (PyPTO's defaults)
for _kind in ("seq_stmts", "assign_stmt", "eval_stmt", "yield_stmt", "return_stmt", "for_stmt",
              "while_stmt", "if_stmt", "scope_stmt", "var", "iter_arg", "const_int", "const_float",
              "const_bool", "call"):
    setattr(IRMutator, f"visit_{_kind}", _delegate(f"mutate_{_kind}"))
for _name in BINARY_HOOK.values():
    setattr(IRMutator, _name, _delegate("visit_binary_expr"))
    setattr(IRVisitor, _name, _delegate("visit_binary_expr"))
for _name in UNARY_HOOK.values():
    setattr(IRMutator, _name, _delegate("visit_unary_expr"))
    setattr(IRVisitor, _name, _delegate("visit_unary_expr"))
del _kind, _name


_FOLDERS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "//": lambda a, b: a // b if b else None, "%": lambda a, b: a % b if b else None,
            "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def fold_constants(node: BinOp) -> Expr:
    """``4 * 64`` -> ``256``: substitution must not leave arithmetic on two index constants,
    which the DSL parser would fold (so the printed IR would not parse back the same)."""
    lhs, rhs = node.lhs, node.rhs
    if not (isinstance(lhs, ConstInt) and isinstance(rhs, ConstInt)
            and lhs.dtype is rhs.dtype and node.op in _FOLDERS):
        return node
    value = _FOLDERS[node.op](lhs.value, rhs.value)
    if value is None:
        return node
    return ConstBool(value) if isinstance(value, bool) else ConstInt(value, lhs.dtype)


#: IRVisitor's hooks that do nothing: ``visit_all`` skips the leaves routed to them
_VISIT_NOOP = frozenset({IRVisitor.visit_var, IRVisitor.visit_const_int,
                         IRVisitor.visit_const_float, IRVisitor.visit_const_bool})

#: IRMutator's own leaf hooks: ``mutate_all`` resolves what they would return inline
_MUTATE_VAR = IRMutator.mutate_var
_CONST_INT = IRMutator.mutate_const_int
_MUTATE_LEAF = frozenset({IRMutator.mutate_const_int, IRMutator.mutate_const_float,
                          IRMutator.mutate_const_bool})


def _same(a, b) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


def map_if_bodies(stmt: IfStmt, rewrite) -> IfStmt:
    """``stmt`` with ``rewrite`` applied to its then and else bodies; the same node when
    neither body changed (passes rebuild only what they touched)."""
    then_body = rewrite(stmt.then_body)
    else_body = rewrite(stmt.else_body) if stmt.else_body is not None else None
    if then_body is stmt.then_body and else_body is stmt.else_body:
        return stmt
    return replace(stmt, then_body=then_body, else_body=else_body)


def substitute(node: Any, mapping: dict[Var, Expr]) -> Any:
    """``node`` with every use of each mapped Var replaced by its expression.

    Definitions whose types mention a replaced Var are re-made with the new type; all
    other nodes are shared with the input.
    """
    return IRMutator(mapping).mutate(node)


def clone_with_fresh_vars(node: Any, mapping: dict[Var, Expr] | None = None, *,
                          var_map_out: dict[Var, Expr] | None = None) -> Any:
    """A copy of ``node`` in which every variable it defines is a new Var (same hint, type).

    ``mapping`` substitutes free variables first (e.g. the loop var by ``ko + 32`` when
    replicating a pipeline body). If ``var_map_out`` is given it receives old -> new for
    every Var defined or substituted, so callers can find the clones of yielded values.
    """
    m = IRMutator(mapping, fresh=True)
    out = m.mutate(node)
    if var_map_out is not None:
        var_map_out.update(m.var_map)
    return out


class _Calls(IRVisitor):
    """The calls ``calls_in`` keeps (one class for every such search: a visitor class
    made inside a function costs a class and its dispatch table on every call)."""

    def __init__(self, keep):
        self.keep = keep
        self.found: list[Call] = []

    def visit_call(self, node: Call) -> None:
        if self.keep(node):
            self.found.append(node)
        super().visit_call(node)

    def visit_assign_stmt(self, node: AssignStmt) -> None:
        self.visit(node.value)   # the definition holds no call (visit_def below)

    def visit_def(self, var: Var) -> None:
        pass

    def visit_type(self, ty: Any) -> None:
        pass


def calls_in(node: Any, keep=lambda call: True) -> list[Call]:
    """Every call in the statements and expressions under ``node`` (program, function,
    statement or expression; Submits included) for which ``keep(call)`` holds, in program
    order. Types are not searched: dims, valid extents and MemRefs hold index arithmetic
    (a valid extent's tile.min included), not the tile transfers, matmuls, task launches or
    pipe set-ups callers look for."""
    finder = _Calls(keep)
    finder.visit(node)
    return finder.found


def defined_names(node) -> set[str]:
    """The names of every variable ``node`` defines (params, loop variables, carries, results)."""
    names: set[str] = set()

    class _Collect(IRVisitor):
        def visit_def(self, var):
            names.add(var.name)

    _Collect().visit(node)
    return names


__all__ = ["IRVisitor", "IRMutator", "map_if_bodies", "substitute", "clone_with_fresh_vars", "fold_constants",
           "defined_names", "calls_in"]
