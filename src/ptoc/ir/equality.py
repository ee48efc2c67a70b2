"""Structural equality of IR up to a consistent, bijective renaming of variables (PyPTO's rules).

Variables at a *definition* (function params, assigned variables, loop variables, iter
args, loop and branch results) are paired up on first sight, and every later use must
agree with that pairing. A *free* variable (used but not defined inside the compared
trees) must be the very same object on both sides, unless ``enable_auto_mapping=True``,
which pairs free variables on first sight too (so ``x + 1`` equals ``y + 1``).
``loc``, ``has_self``, Var name hints, the program name and a standalone function's name
never matter; a program's functions are compared by name, in any order. attrs dicts
compare order-insensitively, kwargs in order; nested SeqStmts are flattened. On a
difference the comparison stops and reports the path to it, so a failing pass test says
exactly where the IR went wrong.
"""

from __future__ import annotations

import enum
from typing import Any

from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, EvalStmt, Expr, ForStmt, Function,
    IfStmt, ListExpr, Param, Program, ReturnStmt, ScopeStmt, SeqStmts, Stmt, Submit, TupleGetItem,
    UnaryOp, Var, WhileStmt, YieldStmt,
)
from ptoc.ir.printer import flatten, format_node
from ptoc.ir.types import (
    ArrayType, MemRef, PtrType, ScalarType, TensorType, TileType, TileView, TupleType, Type,
    UnknownType,
)


class _Mismatch(Exception):
    """Internal: the first difference found, with its path."""

    def __init__(self, path: str, detail: str, context: tuple[Any, Any] | None):
        super().__init__(f"{path}: {detail}")
        self.path = path
        self.detail = detail
        self.context = context  # the innermost enclosing printable pair, printed on demand

    @property
    def snippets(self) -> tuple[str, str] | None:
        if self.context is None:
            return None
        try:
            return _snippet(self.context[0]), _snippet(self.context[1])
        except Exception:  # pragma: no cover - printing a broken node must not hide the diff
            return None


class StructuralEqualityError(AssertionError, ValueError):
    """Two IR trees differ. An AssertionError for pytest, a ValueError as PyPTO raises it."""


def structural_equal(a: Any, b: Any, enable_auto_mapping: bool = False) -> bool:
    """True when ``a`` and ``b`` (programs, functions, stmts, exprs, types) match up to renaming."""
    try:
        _Comparer(auto_mapping=enable_auto_mapping).compare(a, b)
    except _Mismatch:
        return False
    return True


def assert_structural_equal(a: Any, b: Any, enable_auto_mapping: bool = False) -> None:
    """Raise StructuralEqualityError naming the first difference (path, values, snippets)."""
    try:
        _Comparer(auto_mapping=enable_auto_mapping).root(a, b)
    except _Mismatch as m:
        text = f"Structural equality assertion failed at {m.path}: {m.detail}"
        if m.snippets is not None:
            left, right = m.snippets
            text += f"\n--- lhs ---\n{left}\n--- rhs ---\n{right}"
        raise StructuralEqualityError(text) from None


def first_difference(a: Any, b: Any, enable_auto_mapping: bool = False) -> str | None:
    """The first difference as ``path: detail`` text, or None when structurally equal."""
    try:
        _Comparer(auto_mapping=enable_auto_mapping).compare(a, b)
    except _Mismatch as m:
        return f"{m.path}: {m.detail}"
    return None


def equal_by_identity(a: Any, b: Any) -> bool:
    """Structural equality where every Var must be the very same object on both sides.

    For comparing pieces of one function (dims, offsets, types), where renaming would be
    wrong: ``[n, 16]`` and ``[m, 16]`` are different shapes.
    """
    try:
        _Comparer(identity=True).compare(a, b)
    except _Mismatch:
        return False
    return True


def types_equal(a: Type, b: Type) -> bool:
    """Type equality where Vars inside types (dims, MemRef bases) must be the same objects."""
    return equal_by_identity(a, b)


class _Comparer:
    """Walks two IR trees in lockstep, keeping the Var bijection and the current path.

    ``auto`` is whether a not-yet-paired Var may be paired here: always inside a
    definition (``define``), elsewhere only with ``auto_mapping``.
    """

    def __init__(self, identity: bool = False, auto_mapping: bool = False):
        self.identity = identity
        self.auto = auto_mapping
        self.fwd: dict[Var, Var] = {}
        self.bwd: dict[Var, Var] = {}
        self.path: list[str] = []
        self.context: list[tuple[Any, Any]] = []  # enclosing printable node pairs

    # ---- reporting -----------------------------------------------------------------
    def fail(self, detail: str) -> None:
        raise _Mismatch(_render_path(self.path), detail, self.context[-1] if self.context else None)

    def at(self, step: str, a: Any, b: Any) -> None:
        self.path.append(step)
        try:
            self.compare(a, b)
        finally:
            self.path.pop()

    def define(self, step: str, a: Any, b: Any) -> None:
        """Compare a definition site: its Vars (and those in their types) pair up freely."""
        saved, self.auto = self.auto, True
        try:
            self.at(step, a, b)
        finally:
            self.auto = saved

    def root(self, a: Any, b: Any) -> None:
        """Compare two top-level nodes; statements and expressions are their own snippet."""
        if isinstance(a, (Stmt, Expr)) and isinstance(b, (Stmt, Expr)):
            self.context.append((a, b))
        self.compare(a, b)

    # ---- dispatch ------------------------------------------------------------------
    def compare(self, a: Any, b: Any) -> None:
        if isinstance(a, Var) or isinstance(b, Var):
            self.var(a, b)
            return
        if isinstance(a, Stmt) and isinstance(b, Stmt):
            self.stmt(a, b)
            return
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            self.seq("", a, b)
            return
        if type(a) is not type(b):
            self.fail(f"{_kind(a)} != {_kind(b)}")
        if isinstance(a, Program):
            self.program(a, b)
        elif isinstance(a, Function):
            self.function(a, b)
        elif isinstance(a, Param):
            if a.direction is not b.direction:
                self.fail(f"direction {a.direction.value} != {b.direction.value}")
            self.define(".var", a.var, b.var)
        elif isinstance(a, Expr):
            self.expr(a, b)
        elif isinstance(a, Type):
            self.type(a, b)
        elif isinstance(a, MemRef):
            self.memref(a, b)
        elif isinstance(a, TileView):
            self.at(".fields", dict(a.fields), dict(b.fields))
        else:
            self.value(a, b)

    # ---- programs and functions ----------------------------------------------------
    def program(self, a: Program, b: Program) -> None:
        """Functions pair up by name (a program is a name -> function map); order is free."""
        names_a = sorted(f.name for f in a.functions)
        names_b = sorted(f.name for f in b.functions)
        if names_a != names_b:
            self.fail(f"functions {names_a} != {names_b}")
        by_name = {f.name: f for f in b.functions}
        for fa in sorted(a.functions, key=lambda f: f.name):
            self.function(fa, by_name[fa.name])

    def function(self, a: Function, b: Function) -> None:
        self.path.append(f"\x00function {a.name!r}")
        self.context.append((a, b))
        try:
            self.function_fields(a, b)
        finally:
            self.path.pop()
            self.context.pop()

    def function_fields(self, a: Function, b: Function) -> None:
        if a.func_type is not b.func_type:
            self.fail(f"function type {a.func_type.value} != {b.func_type.value}")
        self.at(".attrs", a.attrs, b.attrs)
        if len(a.params) != len(b.params):
            self.fail(f"{len(a.params)} params != {len(b.params)}")
        for i, (pa, pb) in enumerate(zip(a.params, b.params)):
            self.at(f".params[{i}]", pa, pb)
        if len(a.return_types) != len(b.return_types):
            self.fail(f"{len(a.return_types)} return types != {len(b.return_types)}")
        for i, (ta, tb) in enumerate(zip(a.return_types, b.return_types)):
            self.at(f".return_types[{i}]", ta, tb)
        self.body("body", a.body, b.body)

    # ---- statements ----------------------------------------------------------------
    def body(self, step: str, a: Stmt | None, b: Stmt | None) -> None:
        sa = flatten(a) if a is not None else []
        sb = flatten(b) if b is not None else []
        for i, (x, y) in enumerate(zip(sa, sb)):
            self.path.append(f"\x00{step.lstrip('.')}[{i}] ({type(x).__name__})")
            self.context.append((x, y))
            try:
                self.stmt(x, y)
            finally:
                self.path.pop()
                self.context.pop()
        if len(sa) != len(sb):
            self.path.append("\x00" + (step.lstrip(".") or "body"))
            try:
                extra = sa[len(sb)] if len(sa) > len(sb) else sb[len(sa)]
                side = "lhs" if len(sa) > len(sb) else "rhs"
                self.fail(f"{len(sa)} statements != {len(sb)}; first extra {side} statement: "
                          f"{_one_line(extra)}")
            finally:
                self.path.pop()

    def stmt(self, a: Stmt, b: Stmt) -> None:
        if isinstance(a, SeqStmts) or isinstance(b, SeqStmts):
            self.body("", a, b)
            return
        if type(a) is not type(b):
            self.fail(f"{type(a).__name__} != {type(b).__name__}")
        if isinstance(a, AssignStmt):
            self.at(".value", a.value, b.value)
            self.define(".var", a.var, b.var)
        elif isinstance(a, EvalStmt):
            self.at(".expr", a.expr, b.expr)
        elif isinstance(a, (YieldStmt, ReturnStmt)):
            self.seq(".values", a.values, b.values)
        elif isinstance(a, ForStmt):
            self.for_stmt(a, b)
        elif isinstance(a, WhileStmt):
            self.carries(a, b)
            self.at(".cond", a.cond, b.cond)
            self.body(".body", a.body, b.body)
            self.define(".return_vars", a.return_vars, b.return_vars)
        elif isinstance(a, IfStmt):
            self.at(".cond", a.cond, b.cond)
            self.body(".then_body", a.then_body, b.then_body)
            self.body(".else_body", a.else_body, b.else_body)
            self.define(".return_vars", a.return_vars, b.return_vars)
        elif isinstance(a, ScopeStmt):
            self.scope_stmt(a, b)
        else:  # pragma: no cover - new statement kinds must be added here
            self.fail(f"unknown statement kind {type(a).__name__}")

    def scope_stmt(self, a: ScopeStmt, b: ScopeStmt) -> None:
        if a.kind is not b.kind:
            self.fail(f"scope kind {a.kind.value} != {b.kind.value}")
        self.at(".attrs", a.attrs, b.attrs)
        self.seq(".deps", a.deps, b.deps)
        self.seq(".no_dep_args", a.no_dep_args, b.no_dep_args)
        if (a.core_num is None) != (b.core_num is None):
            self.fail(f"core_num {a.core_num!r} != {b.core_num!r}")
        if a.core_num is not None:
            self.at(".core_num", a.core_num, b.core_num)
        self.at(".predicate", a.predicate, b.predicate)
        if (a.task_id is None) != (b.task_id is None):
            self.fail("one scope binds a task id ('as tid'), the other does not")
        if a.task_id is not None:
            self.define(".task_id", a.task_id, b.task_id)
        self.body(".body", a.body, b.body)

    def for_stmt(self, a: ForStmt, b: ForStmt) -> None:
        if a.kind is not b.kind:
            self.fail(f"loop kind {a.kind.value} != {b.kind.value}")
        self.at(".attrs", a.attrs, b.attrs)
        self.at(".start", a.start, b.start)
        self.at(".stop", a.stop, b.stop)
        self.at(".step", a.step, b.step)
        self.define(".loop_var", a.loop_var, b.loop_var)
        self.carries(a, b)
        self.body(".body", a.body, b.body)
        self.define(".return_vars", a.return_vars, b.return_vars)

    def carries(self, a: ForStmt | WhileStmt, b: ForStmt | WhileStmt) -> None:
        """A loop's iter args: their inits (uses, outside the loop), then the args (defs)."""
        if len(a.iter_args) != len(b.iter_args):
            self.fail(f"{len(a.iter_args)} iter_args != {len(b.iter_args)}")
        for i, (x, y) in enumerate(zip(a.iter_args, b.iter_args)):
            if (x.init is None) != (y.init is None):
                self.fail(f"iter_args[{i}].init {x.init!r} != {y.init!r}")
            if x.init is not None:
                self.at(f".iter_args[{i}].init", x.init, y.init)
        self.define(".iter_args", a.iter_args, b.iter_args)

    def seq(self, step: str, a, b) -> None:
        if len(a) != len(b):
            self.path.append(step)
            try:
                self.fail(f"{len(a)} items != {len(b)}")
            finally:
                self.path.pop()
        for i, (x, y) in enumerate(zip(a, b)):
            self.at(f"{step}[{i}]", x, y)

    # ---- expressions ---------------------------------------------------------------
    def var(self, a: Any, b: Any) -> None:
        if not (isinstance(a, Var) and isinstance(b, Var)):
            self.fail(f"{_kind(a)} != {_kind(b)}")
        if type(a) is not type(b):
            self.fail(f"{type(a).__name__} {a.name!r} != {type(b).__name__} {b.name!r}")
        if self.identity:
            if a is not b:
                self.fail(f"variable {a.name!r} is not the same variable as {b.name!r}")
            return
        mapped = self.fwd.get(a)
        if mapped is not None:
            if mapped is not b:
                self.fail(f"variable {a.name!r} corresponds to {mapped.name!r} earlier, "
                          f"but to {b.name!r} here")
            return
        back = self.bwd.get(b)
        if back is not None:
            self.fail(f"variable {b.name!r} corresponds to {back.name!r} earlier, "
                      f"but to {a.name!r} here")
        if not self.auto:
            if a is not b:
                self.fail(f"free variable {a.name!r} is not the same variable as {b.name!r} "
                          "(pass enable_auto_mapping=True to pair free variables by position)")
            return
        self.fwd[a] = b
        self.bwd[b] = a
        self.at(".type", a.type, b.type)

    def expr(self, a: Expr, b: Expr) -> None:
        if isinstance(a, (ConstInt, ConstFloat)):
            if a.dtype is not b.dtype:
                self.fail(f"constant dtype {a.dtype.value} != {b.dtype.value}")
            if a.value != b.value:
                self.fail(f"{a.value!r} != {b.value!r}")
        elif isinstance(a, ConstBool):
            if bool(a.value) != bool(b.value):
                self.fail(f"{a.value!r} != {b.value!r}")
        elif isinstance(a, BinOp):
            if a.op != b.op:
                self.fail(f"operator {a.op!r} != {b.op!r}")
            self.at(".lhs", a.lhs, b.lhs)
            self.at(".rhs", a.rhs, b.rhs)
        elif isinstance(a, UnaryOp):
            if a.op != b.op:
                self.fail(f"operator {a.op!r} != {b.op!r}")
            self.at(".operand", a.operand, b.operand)
        elif isinstance(a, ListExpr):
            self.seq(".items", a.items, b.items)
        elif isinstance(a, TupleGetItem):
            if a.index != b.index:
                self.fail(f"tuple index {a.index} != {b.index}")
            self.at(".tuple", a.tuple, b.tuple)
        elif isinstance(a, Call):
            self.call(a, b)
        else:  # pragma: no cover - new expression kinds must be added here
            self.fail(f"unknown expression kind {type(a).__name__}")

    def call(self, a: Call, b: Call) -> None:
        if a.op != b.op or a.is_function != b.is_function:
            self.fail(f"call of {_callee(a)} != {_callee(b)}")
        self.seq(".args", a.args, b.args)
        ka = [k for k, _ in a.kwargs]
        kb = [k for k, _ in b.kwargs]
        if ka != kb:
            self.fail(f"kwargs {ka} != {kb}")
        for (k, va), (_, vb) in zip(a.kwargs, b.kwargs):
            self.at(f".kwargs[{k}]", va, vb)
        self.at(".attrs", a.attrs, b.attrs)
        self.at(".type", a.type, b.type)
        if isinstance(a, Submit):
            self.seq(".deps", a.deps, b.deps)
            self.at(".predicate", a.predicate, b.predicate)

    # ---- types ---------------------------------------------------------------------
    def type(self, a: Type, b: Type) -> None:
        if isinstance(a, ScalarType):
            if a.dtype is not b.dtype:
                self.fail(f"dtype {a.dtype.value} != {b.dtype.value}")
        elif isinstance(a, (TensorType, TileType)):
            if len(a.shape) != len(b.shape):
                self.fail(f"rank {len(a.shape)} != {len(b.shape)} "
                          f"(shape {_dims(a.shape)} vs {_dims(b.shape)})")
            for i, (x, y) in enumerate(zip(a.shape, b.shape)):
                self.at(f".shape[{i}]", x, y)
            if a.dtype is not b.dtype:
                self.fail(f"dtype {a.dtype.value} != {b.dtype.value}")
            if isinstance(a, TileType) and a.memory_space is not b.memory_space:
                self.fail(f"memory space {_enum(a.memory_space)} != {_enum(b.memory_space)}")
            if (a.memref is None) != (b.memref is None):
                self.fail(f"memref {_opt(a.memref)} != {_opt(b.memref)}")
            if a.memref is not None:
                self.at(".memref", a.memref, b.memref)
            if (a.view is None) != (b.view is None):   # a TileView, or a tensor's TensorView
                self.fail(f"view {_opt(a.view)} != {_opt(b.view)}")
            if a.view is not None:
                self.at(".view", a.view, b.view)
        elif isinstance(a, TupleType):
            self.seq(".types", a.types, b.types)
        elif isinstance(a, (PtrType, UnknownType)):
            pass
        elif isinstance(a, ArrayType):
            if a.dtype is not b.dtype:
                self.fail(f"array dtype {a.dtype.value} != {b.dtype.value}")
            self.at(".size", a.size, b.size)
        else:  # pragma: no cover
            self.fail(f"unknown type kind {type(a).__name__}")

    def memref(self, a: MemRef, b: MemRef) -> None:
        if isinstance(a.base, Var) or isinstance(b.base, Var):
            self.at(".base", a.base, b.base)
        elif a.base != b.base:
            self.fail(f"base {a.base!r} != {b.base!r}")
        self.at(".offset", a.offset, b.offset)
        if a.size != b.size:
            self.fail(f"size {a.size} != {b.size}")

    # ---- plain values (kwargs, attrs, dims) ----------------------------------------
    def value(self, a: Any, b: Any) -> None:
        if isinstance(a, dict):
            if set(a) != set(b):
                self.fail(f"keys {sorted(map(str, a))} != {sorted(map(str, b))}")
            for k in a:
                self.at(f"[{k!r}]", a[k], b[k])
        elif isinstance(a, (tuple, list)):
            self.seq("", a, b)
        elif isinstance(a, enum.Enum):
            if a is not b:
                self.fail(f"{_enum(a)} != {_enum(b)}")
        elif a != b:
            self.fail(f"{a!r} != {b!r}")


# ---- helpers for messages ----------------------------------------------------------

def _render_path(parts: list[str]) -> str:
    """Join path steps: statement-level steps (marked with NUL) are separated by ' > '."""
    out = ""
    after_level = False
    for p in parts:
        if p.startswith("\x00"):
            out += (" > " if out else "") + p[1:]
            after_level = True
        elif after_level and p.startswith("."):
            out += " > " + p[1:]
            after_level = False
        else:
            out += p
            after_level = False
    return out.lstrip(".") or "<root>"


def _kind(x: Any) -> str:
    if isinstance(x, Var):
        return f"{type(x).__name__} {x.name!r}"
    if isinstance(x, (Expr, Type, Stmt)):
        try:
            return f"{type(x).__name__} `{_one_line(x)}`"
        except Exception:  # pragma: no cover
            return type(x).__name__
    return f"{type(x).__name__} {x!r}"


def _callee(c: Call) -> str:
    return f"self.{c.op}" if c.is_function else c.op


def _enum(e: Any) -> str:
    return "None" if e is None else f"{type(e).__name__}.{e.name}"


def _opt(x: Any) -> str:
    return "None" if x is None else format_node(x)


def _dims(shape) -> str:
    return "[" + ", ".join(format_node(d) for d in shape) + "]"


def _one_line(node: Any) -> str:
    text = format_node(node).strip().splitlines()
    return text[0] + (" ..." if len(text) > 1 else "")


def _snippet(node: Any) -> str:
    text = format_node(node).rstrip("\n").splitlines()
    if isinstance(node, Function):
        text = text[:2]  # decorator and signature; the body can be long
    elif isinstance(node, (ForStmt, WhileStmt, IfStmt)):
        text = text[:1]  # the header; the differing inner statement has its own path
    elif len(text) > 6:
        text = text[:6] + ["..."]
    return "\n".join(text)
