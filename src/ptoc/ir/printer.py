"""Print IR as DSL source in PyPTO's dump format, so that printed IR parses back.

The output of ``print_program`` is what ``ptoc.language.parse_program`` reads, and the
format is what PyPTO itself prints after each pass (``# pypto.program: X`` header, one
annotated assignment per SSA value, ``pl.yield_`` bindings that name the loop's or
branch's result variables, ``pl.range(stop)`` when a loop starts at 0 with step 1), so
parsing PyPTO's printed IR and printing it again gives the same text (with
``module="pypto"`` for the two header lines). Var names are hints: every distinct Var gets
a distinct printed name per function, except that a variable may take the name of a dead
one defined earlier in the same block (``out = pl.store(t, [0, 0], out)``), as PyPTO
prints it; the text still parses back to the same SSA graph.
"""

from __future__ import annotations

import enum
import json
import keyword
import math
from typing import Any

from ptoc.dtypes import DataType, Direction, ForKind, Level, MemorySpace, ScopeKind
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, DimVar, EvalStmt, Expr, ForStmt,
    Function, IfStmt, ListExpr, Program, ReturnStmt, ScopeStmt, SeqStmts, Stmt, Submit, WhileStmt,
    TupleGetItem, UnaryOp, Var, YieldStmt,
)
from ptoc.ir.types import (
    ArrayType, MemRef, PtrType, ScalarType, TensorLayout, TensorType, TensorView, TileLayout,
    TileType, TileView, TupleType, Type, UnknownType,
)

INDENT = "    "

# Python operator precedence (higher binds tighter); constants and names are atoms.
_PREC = {"or": 1, "and": 2, "not": 3,
         "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
         "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6}
_PREC_UNARY_MINUS = 7
_PREC_ATOM = 10
_COMPARE = {"==", "!=", "<", "<=", ">", ">="}
_RESERVED = {"pl", "self", "tuple"}

_LOOP_FUNC = {
    ForKind.Sequential: "pl.range",
    ForKind.Pipeline: "pl.pipeline",
    ForKind.Unroll: "pl.unroll",
    ForKind.Parallel: "pl.parallel",
}


def print_program(program: Program, *, module: str = "ptoc") -> str:
    """The whole program as DSL source (header, import, ``@pl.program`` class).

    ``module`` names the package in the two header lines (``"pypto"`` prints them as PyPTO).
    """
    dims = _dim_names(program)
    lines = [f"# {module}.program: {program.name}", f"import {module}.language as pl", "",
             *_dim_declarations(dims), "@pl.program", f"class {program.name}:"]
    for fn in program.functions:
        lines.extend(_FunctionPrinter(fn, dims).lines(INDENT, in_program=True))
    if not program.functions:
        lines.append(INDENT + "pass")
    return "\n".join(lines) + "\n"


def print_function(fn: Function) -> str:
    """One function (decorator, signature, body) at column 0, outside a program (no ``self``),
    after the ``pl.dynamic`` declarations of the dimensions it names."""
    dims = _dim_names(fn)
    return "\n".join([*_dim_declarations(dims),
                      *_FunctionPrinter(fn, dims).lines("", in_program=False)]) + "\n"


def _dim_names(node: Program | Function) -> dict[DimVar, str]:
    """A distinct printed name per ``pl.dynamic`` dimension (``N``, ``N_1`` for a second
    symbol named ``N``), reserved in every function so no variable takes it."""
    from ptoc.ir.dynamic import program_dim_vars

    names: dict[DimVar, str] = {}
    used: set[str] = set()
    for var in program_dim_vars(node):
        base = name = _sanitize(var.name)
        n = 1
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        names[var] = name
    return names


def _dim_declarations(dims: dict[DimVar, str]) -> list[str]:
    if not dims:
        return []
    return [f'{name} = pl.dynamic("{name}")' for name in sorted(dims.values())] + [""]


def format_node(node: Any) -> str:
    """Any IR node, type or kwarg value as text; names come from hints (for messages)."""
    if isinstance(node, Program):
        return print_program(node)
    if isinstance(node, Function):
        return print_function(node)
    p = _FunctionPrinter(None)
    if isinstance(node, Stmt):
        return "\n".join(p.stmt_lines(node, "", ()))
    if isinstance(node, Type):
        return p.type(node)
    if isinstance(node, Expr):
        return p.expr(node)
    if isinstance(node, MemRef):
        return p.memref(node)
    if isinstance(node, TileView):
        return p.tile_view(node)
    return p.value(node)


class Namer:
    """Gives every distinct Var a distinct, valid printed name within one function.

    The first Var carrying a hint keeps it; later Vars with the same hint get ``_1``,
    ``_2``, ... skipping any suffix that is itself some Var's hint, so no rename can
    capture another variable.
    """

    def __init__(self, reserved_hints: set[str] | None = None,
                 shadows: dict[Var, Var] | None = None):
        self._names: dict[Var, str] = {}  # Vars hash by identity
        self._used: set[str] = set()
        self._reserved = set(reserved_hints or ())
        self._next_suffix: dict[str, int] = {}  # per hint, so many same-hint Vars stay linear
        self._shadows = shadows or {}  # var -> dead same-block var whose name it may take

    def preset(self, var: Var, name: str) -> None:
        """Give ``var`` the name ``name`` (a program-wide symbol); no other Var takes it."""
        self._names[var] = name
        self._used.add(name)

    def name(self, var: Var) -> str:
        found = self._names.get(var)
        if found is not None:
            return found
        dead = self._shadows.get(var)
        if dead is not None and dead in self._names:
            self._names[var] = self._names[dead]
            return self._names[var]
        base = _sanitize(var.name)
        candidate = base
        if candidate in self._used:
            n = self._next_suffix.get(base, 1)
            while f"{base}_{n}" in self._used or f"{base}_{n}" in self._reserved:
                n += 1
            candidate = f"{base}_{n}"
            self._next_suffix[base] = n + 1
        self._used.add(candidate)
        self._names[var] = candidate
        return candidate


def _sanitize(hint: str) -> str:
    name = "".join(ch if (ch.isalnum() or ch == "_") else "_" for ch in (hint or ""))
    if not name:
        name = "v"
    if name[0].isdigit():
        name = "v_" + name
    if keyword.iskeyword(name) or name in _RESERVED:
        name = name + "_"
    return name


def _collect_hints(fn: Function) -> set[str]:
    """All sanitized hints of variables defined in ``fn`` (reserved against suffix capture)."""
    hints: set[str] = set()

    def add(v: Var) -> None:
        hints.add(_sanitize(v.name))

    for p in fn.params:
        add(p.var)

    def walk(s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            for c in s.stmts:
                walk(c)
        elif isinstance(s, AssignStmt):
            add(s.var)
        elif isinstance(s, (ForStmt, WhileStmt)):
            if isinstance(s, ForStmt):
                add(s.loop_var)
            for ia in s.iter_args:
                add(ia)
            for rv in s.return_vars:
                add(rv)
            walk(s.body)
        elif isinstance(s, IfStmt):
            for rv in s.return_vars:
                add(rv)
            walk(s.then_body)
            if s.else_body is not None:
                walk(s.else_body)
        elif isinstance(s, ScopeStmt):
            if s.task_id is not None:
                add(s.task_id)
            walk(s.body)

    walk(fn.body)
    return hints


def _shadowing_plan(fn: Function) -> dict[Var, Var]:
    """Variables that may print under the name of a dead variable with the same hint.

    ``v`` may take ``u``'s name when both are defined in the same block (the function's
    top level counts its parameters), ``u`` is the latest such definition before ``v``, and
    no statement after ``v``'s definition uses ``u``. Re-parsing then rebinds the name at
    ``v`` and every later use means ``v``; no loop or branch boundary lies in between, so no
    implicit loop carry or branch phi can appear. Only assigned variables and loop/branch
    results take names; loop variables and iter args keep their own.
    """
    order: dict[int, int] = {}        # id(stmt) -> pre-order number
    last_use: dict[Var, int] = {}
    end: dict[int, int] = {}          # id(stmt) -> number of the last statement inside it
    counter = [0]

    def use(e: Any, at: int) -> None:
        for v in _vars_in(e):
            if last_use.get(v, -1) < at:
                last_use[v] = at

    def walk(s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            for c in s.stmts:
                walk(c)
            return
        n = counter[0]
        counter[0] += 1
        order[id(s)] = n
        if isinstance(s, AssignStmt):
            use(s.value, n)
            use(s.var.type, n)
        elif isinstance(s, EvalStmt):
            use(s.expr, n)
        elif isinstance(s, (YieldStmt, ReturnStmt)):
            for v in s.values:
                use(v, n)
        elif isinstance(s, ForStmt):
            for e in (s.start, s.stop, s.step):
                use(e, n)
            for ia in s.iter_args:
                use(ia.init, n)
                use(ia.type, n)
            walk(s.body)
        elif isinstance(s, WhileStmt):
            for ia in s.iter_args:
                use(ia.init, n)
                use(ia.type, n)
            use(s.cond, n)
            walk(s.body)
        elif isinstance(s, IfStmt):
            use(s.cond, n)
            walk(s.then_body)
            if s.else_body is not None:
                walk(s.else_body)
        elif isinstance(s, ScopeStmt):
            for e in (*s.deps, *s.no_dep_args, s.core_num, s.predicate):
                use(e, n)
            walk(s.body)
        for rv in getattr(s, "return_vars", ()):
            use(rv.type, counter[0] - 1)
        end[id(s)] = counter[0] - 1

    for p in fn.params:
        use(p.var.type, -1)
    walk(fn.body)

    plan: dict[Var, Var] = {}

    def block(stmts: list[Stmt], latest: dict[str, Var]) -> None:
        for s in stmts:
            if isinstance(s, (ForStmt, WhileStmt)):
                block(flatten(s.body), {})
            elif isinstance(s, IfStmt):
                block(flatten(s.then_body), {})
                if s.else_body is not None:
                    block(flatten(s.else_body), {})
            elif isinstance(s, ScopeStmt):  # a with-body binds names of the enclosing block
                block(flatten(s.body), latest)
            defined = [s.var] if isinstance(s, AssignStmt) else list(getattr(s, "return_vars", ()))
            for v in defined:
                hint = _sanitize(v.name)
                u = latest.get(hint)
                if u is not None and last_use.get(u, -1) <= end[id(s)]:
                    plan[v] = u
                latest[hint] = v

    block(flatten(fn.body), {_sanitize(p.var.name): p.var for p in fn.params})
    return plan


def _vars_in(e: Any) -> list[Var]:
    """Every Var an expression or type mentions (dims, MemRef bases and offsets included)."""
    out: list[Var] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Var):
            out.append(x)
            stack.append(x.type)
        elif isinstance(x, BinOp):
            stack += [x.lhs, x.rhs]
        elif isinstance(x, UnaryOp):
            stack.append(x.operand)
        elif isinstance(x, ListExpr):
            stack += list(x.items)
        elif isinstance(x, Call):
            stack += list(x.args) + [v for _, v in x.kwargs]
            stack += [v for v in x.attrs.values() if isinstance(v, Expr)]
            stack += list(getattr(x, "deps", ()))
            if getattr(x, "predicate", None) is not None:
                stack.append(x.predicate)
        elif isinstance(x, (TensorType, TileType)):
            stack += [d for d in x.shape if isinstance(d, Expr)]
            if x.memref is not None:
                stack.append(x.memref)
        elif isinstance(x, MemRef):
            stack += [x.base, x.offset]
        elif isinstance(x, TupleType):
            stack += list(x.types)
    return out


def flatten(stmt: Stmt) -> list[Stmt]:
    """The statements of a (possibly nested) SeqStmts in order; nesting has no meaning."""
    if not isinstance(stmt, SeqStmts):
        return [stmt]
    out: list[Stmt] = []
    _flatten_into(stmt, out)
    return out


def _flatten_into(seq: SeqStmts, out: list[Stmt]) -> None:
    # no list per statement: the verifier and the printer flatten every body they see
    for s in seq.stmts:
        if isinstance(s, SeqStmts):
            _flatten_into(s, out)
        else:
            out.append(s)


class _FunctionPrinter:
    """Prints one function; owns the function's Namer so names are consistent."""

    def __init__(self, fn: Function | None, dims: dict[DimVar, str] | None = None):
        self.fn = fn
        self.namer = Namer(_collect_hints(fn), _shadowing_plan(fn)) if fn is not None else Namer()
        # result var -> the type the parser gives it when a multi-value yield prints no types
        self.implied: dict[Var, Type] = {}
        for var, name in (dims or {}).items():
            self.namer.preset(var, name)

    # ---- function -------------------------------------------------------------------
    def lines(self, indent: str, *, in_program: bool) -> list[str]:
        fn = self.fn
        assert fn is not None
        deco = [f"type=pl.FunctionType.{fn.func_type.value}"]
        rest = {k: v for k, v in fn.attrs.items() if k not in ("level", "role", "auto_scope")}
        if fn.attrs.get("auto_scope") is False:
            deco.append("auto_scope=False")
        if "level" in fn.attrs:
            deco.append(f"level=pl.Level.{_member(fn.attrs['level'])}")
        if "role" in fn.attrs:
            deco.append(f"role=pl.Role.{_member(fn.attrs['role'])}")
        if rest:
            deco.append(f"attrs={self.dict_value(rest)}")
        # PyPTO's rule: a method of a program takes self, unless it is a (self-contained)
        # SubWorker; a function printed on its own has no self
        params = ["self"] if in_program and fn.attrs.get("role") != "SubWorker" else []
        for p in fn.params:
            ty = self.type(p.var.type)
            if p.direction is Direction.Out:
                ty = f"pl.Out[{ty}]"
            elif p.direction is Direction.InOut:
                ty = f"pl.InOut[{ty}]"
            params.append(f"{self.namer.name(p.var)}: {ty}")
        sig = f"def {fn.name}({', '.join(params)})"
        if len(fn.return_types) == 1:
            sig += f" -> {self.type(fn.return_types[0])}"
        elif len(fn.return_types) > 1:
            sig += f" -> tuple[{', '.join(self.type(t) for t in fn.return_types)}]"
        out = [f"{indent}@pl.function({', '.join(deco)})", f"{indent}{sig}:"]
        out.extend(self.body_lines(fn.body, indent + INDENT, ()))
        return out

    # ---- statements -----------------------------------------------------------------
    def body_lines(self, body: Stmt | None, indent: str, return_vars: tuple[Var, ...]) -> list[str]:
        stmts = flatten(body) if body is not None else []
        out: list[str] = []
        for s in stmts:
            out.extend(self.stmt_lines(s, indent, return_vars))
        if not out:
            out.append(f"{indent}pass")
        return out

    def stmt_lines(self, s: Stmt, indent: str, return_vars: tuple[Var, ...]) -> list[str]:
        if isinstance(s, SeqStmts):
            out: list[str] = []
            for c in flatten(s):
                out.extend(self.stmt_lines(c, indent, return_vars))
            return out
        if isinstance(s, AssignStmt):
            return [f"{indent}{self.namer.name(s.var)}: {self.type(s.var.type)} = {self.expr(s.value)}"]
        if isinstance(s, EvalStmt):
            return [f"{indent}{self.expr(s.expr)}"]
        if isinstance(s, ReturnStmt):
            if not s.values:
                return [f"{indent}return"]
            return [f"{indent}return {', '.join(self.expr(v) for v in s.values)}"]
        if isinstance(s, YieldStmt):
            return self.yield_lines(s, indent, return_vars)
        if isinstance(s, ForStmt):
            return self.for_lines(s, indent)
        if isinstance(s, WhileStmt):
            return self.while_lines(s, indent)
        if isinstance(s, IfStmt):
            then_yield = _final_yield(s.then_body) if s.return_vars else None
            if then_yield is not None:
                self.implied.update((rv, v.type) for rv, v in zip(s.return_vars,
                                                                   then_yield.values))
            out = [f"{indent}if {self.expr(s.cond)}:"]
            out.extend(self.body_lines(s.then_body, indent + INDENT, s.return_vars))
            if s.else_body is not None and flatten(s.else_body):
                out.append(f"{indent}else:")
                out.extend(self.body_lines(s.else_body, indent + INDENT, s.return_vars))
            return out
        if isinstance(s, ScopeStmt):
            return self.scope_lines(s, indent, return_vars)
        raise TypeError(f"cannot print statement {type(s).__name__}")

    def scope_lines(self, s: ScopeStmt, indent: str, return_vars: tuple[Var, ...]) -> list[str]:
        """``with pl.at(...) [as tid]:`` and its siblings, as PyPTO prints each kind."""
        attrs = s.attrs
        loop_var = _spmd_loop_var(s)
        if loop_var is not None:  # the 'for i in pl.spmd(n)' form (Spmd of InCore, i bound first)
            args = [self.expr(s.core_num)] + (["sync_start=True"] if attrs.get("sync_start") else [])
            if "name_hint" in attrs:
                args.append(f"name_hint={_quote(attrs['name_hint'])}")
            args += self.predicate_kwarg(s.predicate)
            inner = flatten(s.body)[0]
            head = f"{indent}for {self.namer.name(loop_var)} in pl.spmd({', '.join(args)}):"
            rest = SeqStmts(tuple(flatten(inner.body)[1:]))
            return [head] + self.body_lines(rest, indent + INDENT, return_vars)
        if s.kind is ScopeKind.Runtime:
            head = "pl.scope(mode=pl.ScopeMode.MANUAL)" if attrs.get("manual") else "pl.scope()"
        else:
            args: list[str] = []
            if s.kind is ScopeKind.Spmd:
                args.append(self.expr(s.core_num))
                if attrs.get("sync_start"):
                    args.append("sync_start=True")
            elif s.kind in (ScopeKind.InCore, ScopeKind.Hierarchy):
                level = Level.CORE_GROUP if s.kind is ScopeKind.InCore else attrs["level"]
                args.append(f"level={self.value(level)}")
                if "role" in attrs:
                    args.append(f"role={self.value(attrs['role'])}")
                opts = ([f"pl.split({self.value(attrs['split'])})"] if "split" in attrs else []) \
                    + ([f"pl.cross_core_slot(slot_num={attrs['slot_num']})"]
                       if "slot_num" in attrs else [])
                if opts:
                    args.append(f"optimizations=[{', '.join(opts)}]")
            if "name_hint" in attrs:
                args.append(f"name_hint={_quote(attrs['name_hint'])}")
            if s.deps:
                args.append(f"deps=[{', '.join(self.expr(d) for d in s.deps)}]")
            if s.no_dep_args:
                args.append(f"no_dep_args=[{', '.join(self.expr(d) for d in s.no_dep_args)}]")
            args += self.predicate_kwarg(s.predicate)
            func = {ScopeKind.Spmd: "spmd", ScopeKind.Cluster: "cluster"}.get(s.kind, "at")
            head = f"pl.{func}({', '.join(args)})"
        if s.task_id is not None:
            head += f" as {self.namer.name(s.task_id)}"
        return [f"{indent}with {head}:"] + self.body_lines(s.body, indent + INDENT, return_vars)

    def yield_lines(self, s: YieldStmt, indent: str, return_vars: tuple[Var, ...]) -> list[str]:
        """``x: T = pl.yield_(...)``; several results print untyped (as PyPTO's), each result
        whose type the parser would not re-derive (a MemRef InitMemRef gave a loop result) is
        declared first by a bare annotation ``x: T``, so the round trip keeps it."""
        call = f"pl.yield_({', '.join(self.expr(v) for v in s.values)})"
        if not return_vars:
            return [indent + call]
        if len(return_vars) == 1:
            rv = return_vars[0]
            return [f"{indent}{self.namer.name(rv)}: {self.type(rv.type)} = {call}"]
        declared = [f"{indent}{self.namer.name(rv)}: {self.type(rv.type)}" for rv in return_vars
                    if rv in self.implied and self.type(rv.type) != self.type(self.implied[rv])]
        return declared + [f"{indent}{', '.join(self.namer.name(rv) for rv in return_vars)} = {call}"]

    def for_lines(self, s: ForStmt, indent: str) -> list[str]:
        # Python's short forms: range(stop) from 0 by 1, range(start, stop) by 1 -- only for
        # INDEX constants, which is what a bare literal parses back as
        args = [self.expr(s.start), self.expr(s.stop), self.expr(s.step)]
        if _is_index(s.step, 1):
            args.pop()
            if _is_index(s.start, 0):
                args.pop(0)
        attrs = dict(s.attrs)
        if s.kind is ForKind.Pipeline and "pipeline_stages" in attrs:
            args.append(f"stage={self.value(attrs.pop('pipeline_stages'))}")
        target = self.namer.name(s.loop_var)
        if s.iter_args:
            inits = "".join(f"{self.expr(ia.init) if ia.init is not None else 'None'}, "
                            for ia in s.iter_args)
            args.append(f"init_values=({inits.rstrip()})")
            names = "".join(f"{self.namer.name(ia)}, " for ia in s.iter_args)
            target = f"{target}, ({names.rstrip()})"
        if attrs:
            args.append(f"attrs={self.dict_value(attrs)}")
        self.implied.update((rv, ia.init.type if ia.init is not None else ia.type)
                            for rv, ia in zip(s.return_vars, s.iter_args))
        head = f"{indent}for {target} in {_LOOP_FUNC[s.kind]}({', '.join(args)}):"
        return [head] + self.body_lines(s.body, indent + INDENT, s.return_vars)

    # ---- types ----------------------------------------------------------------------
    def while_lines(self, s: WhileStmt, indent: str) -> list[str]:
        """``for (x, y) in pl.while_(init_values=(x0, y0)):`` with ``pl.cond(...)`` as the
        first body line; a while that carries nothing is Python's ``while cond:``."""
        if not s.iter_args:
            return [f"{indent}while {self.expr(s.cond)}:"] + self.body_lines(s.body,
                                                                             indent + INDENT, ())
        inits = _tuple_text(self.expr(ia.init) for ia in s.iter_args)
        names = _tuple_text(self.namer.name(ia) for ia in s.iter_args)
        self.implied.update((rv, ia.init.type) for rv, ia in zip(s.return_vars, s.iter_args))
        head = f"{indent}for {names} in pl.while_(init_values={inits}):"
        cond = f"{indent}{INDENT}pl.cond({self.expr(s.cond)})"
        return [head, cond] + self.body_lines(s.body, indent + INDENT, s.return_vars)

    def type(self, ty: Type) -> str:
        if isinstance(ty, ScalarType):
            return f"pl.Scalar[{_dtype(ty.dtype)}]"
        if isinstance(ty, TensorType):
            parts = [self.shape(ty.shape), _dtype(ty.dtype)]
            if ty.view is not None:
                parts.append(self.tile_view(ty.view))
            if ty.memref is not None:
                parts.append(self.memref(ty.memref))
            return f"pl.Tensor[{', '.join(parts)}]"
        if isinstance(ty, TileType):
            parts = [self.shape(ty.shape), _dtype(ty.dtype)]
            if ty.memref is not None:
                parts.append(self.memref(ty.memref))
            if ty.memory_space is not None:
                parts.append(_mem(ty.memory_space))
            if ty.view is not None:
                parts.append(self.tile_view(ty.view))
            return f"pl.Tile[{', '.join(parts)}]"
        if isinstance(ty, UnknownType):
            return "pl.UnknownType"
        if isinstance(ty, PtrType):
            return "pl.Ptr"
        if isinstance(ty, TupleType):
            return f"pl.Tuple[{', '.join(self.type(t) for t in ty.types)}]"
        if isinstance(ty, ArrayType):
            return f"pl.Array[{self.dim(ty.size)}, {_dtype(ty.dtype)}]"
        raise TypeError(f"cannot print type {type(ty).__name__}")

    def shape(self, shape) -> str:
        return "[" + ", ".join(self.dim(d) for d in shape) + "]"

    def dim(self, d) -> str:
        if isinstance(d, Expr):
            return self.expr(d)
        return self.value(d)

    def memref(self, m: MemRef) -> str:
        base = self.namer.name(m.base) if isinstance(m.base, Var) else _quote(str(m.base))
        return f"pl.MemRef({base}, {self.expr(m.offset)}, {self.value(m.size)})"

    def tile_view(self, v: TileView) -> str:
        """``pl.TileView(...)``, or ``pl.TensorView(...)`` for a tensor's view."""
        head = "pl.TensorView" if isinstance(v, TensorView) else "pl.TileView"
        return f"{head}({', '.join(f'{k}={self.value(x)}' for k, x in v.fields)})"

    # ---- expressions ----------------------------------------------------------------
    def expr(self, e: Expr) -> str:
        return self._expr(e)[0]

    def _expr(self, e: Expr) -> tuple[str, int]:
        """Text and precedence of ``e``; callers parenthesise by precedence."""
        if isinstance(e, Var):
            return self.namer.name(e), _PREC_ATOM
        if isinstance(e, ConstBool):
            return ("True" if e.value else "False"), _PREC_ATOM
        if isinstance(e, ConstInt):
            if e.dtype is DataType.INDEX:
                text = str(int(e.value))
                return text, (_PREC_UNARY_MINUS if e.value < 0 else _PREC_ATOM)
            return f"pl.const({int(e.value)}, {_dtype(e.dtype)})", _PREC_ATOM
        if isinstance(e, ConstFloat):
            if e.dtype is DataType.FP32 and math.isfinite(e.value):
                text = repr(float(e.value))
                return text, (_PREC_UNARY_MINUS if text.startswith("-") else _PREC_ATOM)
            return f"pl.const({_float(e.value)}, {_dtype(e.dtype)})", _PREC_ATOM
        if isinstance(e, BinOp):
            prec = _PREC[e.op]
            lhs, lp = self._expr(e.lhs)
            rhs, rp = self._expr(e.rhs)
            # left-associative: the right operand needs parens at equal precedence;
            # comparisons chain in Python, so both sides need them there.
            if lp < prec or (e.op in _COMPARE and lp == prec):
                lhs = f"({lhs})"
            if rp <= prec:
                rhs = f"({rhs})"
            return f"{lhs} {e.op} {rhs}", prec
        if isinstance(e, UnaryOp):
            text, p = self._expr(e.operand)
            if e.op == "not":
                if p < _PREC["not"]:
                    text = f"({text})"
                return f"not {text}", _PREC["not"]
            if p < _PREC_UNARY_MINUS:
                text = f"({text})"
            return f"{e.op}{text}", _PREC_UNARY_MINUS
        if isinstance(e, ListExpr):
            return "[" + ", ".join(self.expr(i) for i in e.items) + "]", _PREC_ATOM
        if isinstance(e, TupleGetItem):
            return f"{self._expr(e.tuple)[0]}[{e.index}]", _PREC_ATOM
        if isinstance(e, Call):
            return self.call(e), _PREC_ATOM
        raise TypeError(f"cannot print expression {type(e).__name__}")

    def call(self, c: Call) -> str:
        if isinstance(c, Submit):
            return self.submit(c)
        parts = [self.value(a) for a in c.args]
        parts.extend(f"{k}={self.value(v)}" for k, v in c.kwargs)
        if c.attrs:
            parts.append(f"attrs={self.dict_value(c.attrs)}")
        callee = f"self.{c.op}" if c.is_function else _op_spelling(c.op)
        return f"{callee}({', '.join(parts)})"

    def submit(self, c: Submit) -> str:
        """``pl.submit(self.k, args, deps=[...])``; with a launch spec ``pl.spmd_submit``."""
        parts = [f"self.{c.op}"] + [self.value(a) for a in c.args]
        if c.deps:
            parts.append(f"deps=[{', '.join(self.expr(d) for d in c.deps)}]")
        attrs = dict(c.attrs)
        spmd = "core_num" in attrs
        if spmd:
            parts.append(f"core_num={self.value(attrs.pop('core_num'))}")
            if attrs.pop("sync_start", False):
                parts.append("sync_start=True")
        parts += self.predicate_kwarg(c.predicate)
        if attrs:
            parts.append(f"attrs={self.dict_value(attrs)}")
        return f"pl.{'spmd_submit' if spmd else 'submit'}({', '.join(parts)})"

    def predicate_kwarg(self, predicate) -> list[str]:
        """``predicate=(<comparison>)`` as PyPTO prints a dispatch predicate (or nothing)."""
        return [] if predicate is None else [f"predicate=({self.expr(predicate)})"]

    # ---- plain values (kwargs, attrs) -----------------------------------------------
    def value(self, v: Any) -> str:
        if isinstance(v, Expr):
            return self.expr(v)
        if v is None or isinstance(v, bool):
            return repr(v)
        if isinstance(v, DataType):
            return _dtype(v)
        if isinstance(v, MemorySpace):
            return _mem(v)
        if isinstance(v, (TileLayout, TensorLayout)):
            return repr(v)
        if isinstance(v, enum.Enum):
            text = repr(v)
            return text if text.startswith("pl.") else f"pl.{type(v).__name__}.{v.name}"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return _float(v)
        if isinstance(v, str):
            return _quote(v)
        if isinstance(v, (tuple, list)):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, dict):
            return self.dict_value(v)
        if isinstance(v, Type):
            return self.type(v)
        if isinstance(v, MemRef):
            return self.memref(v)
        if isinstance(v, TileView):
            return self.tile_view(v)
        return repr(v)

    def dict_value(self, d: dict) -> str:
        return "{" + ", ".join(f"{self.value(k)}: {self.value(v)}" for k, v in d.items()) + "}"


def _tuple_text(items) -> str:
    """A Python tuple as PyPTO prints a while loop's: ``(a,)``, ``(a, b)``."""
    items = list(items)
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _final_yield(body):
    """The yield that ends an arm, also under the runtime scopes MaterializeRuntimeScopes
    wraps around it (the parser re-types the arm's results from it)."""
    last = flatten(body)[-1:]
    while last and isinstance(last[0], ScopeStmt):
        last = flatten(last[0].body)[-1:]
    return last[0] if last and isinstance(last[0], YieldStmt) else None


def _spmd_loop_var(s: ScopeStmt) -> Var | None:
    """The block-index variable when ``s`` is the desugared ``for i in pl.spmd(n)`` loop."""
    if s.kind is not ScopeKind.Spmd or s.task_id is not None or s.deps or s.no_dep_args:
        return None
    body = flatten(s.body)
    if len(body) != 1 or not isinstance(body[0], ScopeStmt) or body[0].kind is not ScopeKind.InCore \
            or body[0].attrs or body[0].deps or body[0].no_dep_args or body[0].task_id is not None:
        return None
    inner = flatten(body[0].body)
    first = inner[0] if inner else None
    if isinstance(first, AssignStmt) and isinstance(first.value, Call) \
            and first.value.op == "tile.get_block_idx":
        return first.var
    return None


def _is_index(e: Expr, value: int) -> bool:
    return isinstance(e, ConstInt) and e.dtype is DataType.INDEX and e.value == value


def _op_spelling(op: str) -> str:
    """The DSL spelling of a registered op: ``tile.load`` -> ``pl.tile.load``."""
    return f"pl.{op}"


def _member(v: Any) -> str:
    return v.name if isinstance(v, enum.Enum) else str(v)


def _dtype(d: DataType) -> str:
    return f"pl.{d.value}"


def _mem(m: MemorySpace) -> str:
    return f"pl.Mem.{m.value}"


def _quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _float(x: float) -> str:
    if math.isnan(x):
        return 'float("nan")'
    if math.isinf(x):
        return 'float("inf")' if x > 0 else '-float("inf")'
    return repr(float(x))
