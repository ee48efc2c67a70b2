"""A small builder for writing IR by hand in passes and tests without nesting constructors.

Statements are appended to the innermost open body; loops and branches are context
managers, so the Python nesting mirrors the IR nesting::

    b = IRBuilder()
    with b.function("kernel", FunctionType.InCore, return_types=[out_t]) as f:
        x = f.param("x", x_t)
        t = b.op("t", "tile.load", x, [0, 0], [16, 16], target_memory=MemorySpace.Vec)
        with b.for_range("i", 0, 4, 1, carry=[("acc", t)]) as loop:
            (acc,) = loop.iter_args
            b.yield_(b.op("acc2", "tile.add", acc, t))
        (res,) = loop.return_vars
        ...
    program = b.program("P")

Calls of registered ops get their type from ``ptoc.ops`` (imported lazily). The builder
also has PyPTO's methods (``ptoc.ir.pypto_builder``): ``function(name, span, type=...)`` with
``f.param`` / ``f.return_type`` / ``f.get_result()``, ``var``, ``assign``, ``let``,
``return_stmt``, ``for_loop``, ``if_stmt``, ``program`` (a context), so PyPTO code that
builds IR runs on it; ``to_program(name)`` returns the functions built so far as a Program.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from ptoc.dtypes import DataType, Direction, ForKind, FunctionType
from ptoc.errors import SourceLoc
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstBool, ConstFloat, ConstInt, EvalStmt, Expr, ForStmt, Function, IfStmt,
    IterArg, Param, Program, ReturnStmt, SeqStmts, Stmt, Var, YieldStmt,
)
from ptoc.ir.pypto_api import expr as const
from ptoc.ir.pypto_builder import BuilderError, PyptoBuilderMethods
from ptoc.ir.types import ScalarType, TupleType, Type


@dataclass
class FunctionFrame:
    """The function being built: its params are added with ``param``."""

    name: str
    func_type: FunctionType
    return_types: tuple[Type, ...]
    attrs: dict
    loc: SourceLoc | None
    params: list[Param] = field(default_factory=list)
    result: Function | None = None

    def param(self, name: str, type: Type, span_or_direction: Any = None,
              direction: Direction = Direction.In, *, span: SourceLoc | None = None) -> Var:
        """A parameter: ``param(name, type, direction)`` or PyPTO's
        ``param(name, type, span=None, direction=In)``."""
        if isinstance(span_or_direction, Direction):
            direction = span_or_direction
        elif isinstance(span_or_direction, SourceLoc):
            span = span_or_direction
        var = Var(name, type, span)
        self.params.append(Param(var, direction))
        return var

    def return_type(self, type: Type) -> None:
        self.return_types = self.return_types + (type,)

    def get_result(self) -> Function:
        if self.result is None:
            raise BuilderError(f"function '{self.name}' is not complete yet",
                               hint="call get_result() after its `with` block")
        return self.result


@dataclass
class LoopFrame:
    """An open loop: ``var`` and ``iter_args`` inside, ``return_vars`` after the block."""

    var: Var
    iter_args: tuple[IterArg, ...]
    return_vars: tuple[Var, ...] = ()


@dataclass
class IfFrame:
    """An open branch; ``return_vars`` exist after the then-block when it ends in a yield."""

    cond: Expr
    names: tuple[str, ...]
    return_vars: tuple[Var, ...] = ()
    stmt: IfStmt | None = None


class IRBuilder(PyptoBuilderMethods):
    """Appends statements to the innermost open body; see the module docstring."""

    def __init__(self) -> None:
        self.functions: list[Function] = []
        self._bodies: list[list[Stmt]] = []
        self._frame: FunctionFrame | None = None

    # ---- functions and programs ----------------------------------------------------
    @contextmanager
    def function(self, name: str, func_type: Any = None, *, return_types: Sequence[Type] = (),
                 attrs: dict | None = None, loc: SourceLoc | None = None,
                 span: SourceLoc | None = None, type: FunctionType | None = None,
                 level: Any = None, role: Any = None,
                 requires_runtime_binding: bool = False) -> Iterator[FunctionFrame]:
        """``function(name, func_type, return_types=...)`` or PyPTO's ``function(name,
        span=None, type=Opaque, level=None, role=None, attrs=None)``."""
        if isinstance(func_type, SourceLoc):  # PyPTO's positional span
            span, func_type = func_type, None
        func_type = func_type or type or FunctionType.Opaque
        loc = loc or span
        if self._frame is not None:
            raise BuilderError(f"Cannot begin function '{name}' inside function "
                               f"'{self._frame.name}'", hint="close the current function first")
        fn_attrs = dict(attrs or {})
        for key, value in (("level", level), ("role", role)):
            if value is not None:
                fn_attrs[key] = value.value
        frame = FunctionFrame(name, func_type, tuple(return_types), fn_attrs, loc)
        self._frame = frame
        self._bodies.append([])
        try:
            yield frame
        finally:
            stmts = self._bodies.pop()
            self._frame = None
        frame.result = Function(name, tuple(frame.params), frame.return_types,
                                SeqStmts(tuple(stmts)), func_type, frame.attrs, loc=loc)
        self.functions.append(frame.result)

    def to_program(self, name: str) -> Program:
        """The functions built so far as a program."""
        return Program(name, tuple(self.functions))

    # ---- plain statements ----------------------------------------------------------
    def emit(self, stmt: Stmt) -> Stmt:
        if not self._bodies:
            raise BuilderError("statement emitted outside a function",
                               hint="open `with builder.function(...)` first")
        self._bodies[-1].append(stmt)
        return stmt

    def let(self, name: str, value: Any, type: Type | None = None,
            span: SourceLoc | None = None) -> Var:
        """``name: type = value``; the type defaults to the value's type (a call of a program
        function takes its callee's return type)."""
        value = self.typed_call(const(value))
        var = Var(name, type if type is not None else value.type, span)
        self.emit(AssignStmt(var, value, span))
        return var

    def call(self, op: str, *args: Any, attrs: dict | None = None, **kwargs: Any) -> Call:
        """A call of a registered op, canonicalised and typed by the op registry."""
        from ptoc.ops import make_call

        return make_call(op, tuple(args), kwargs, attrs=attrs)

    def op(self, name: str, op: str, *args: Any, attrs: dict | None = None, **kwargs: Any) -> Var:
        """``name = pl.<op>(*args, **kwargs)`` in one step."""
        return self.let(name, self.call(op, *args, attrs=attrs, **kwargs))

    def call_function(self, fn: Function, *args: Expr) -> Call:
        """``self.<fn>(args)``, typed by the callee's return types."""
        rets = fn.return_types
        ty = rets[0] if len(rets) == 1 else TupleType(tuple(rets))
        return Call(fn.name, tuple(args), (), ty, is_function=True)

    def eval(self, expr: Expr) -> None:
        self.emit(EvalStmt(expr))

    def ret(self, *values: Expr) -> None:
        self.emit(ReturnStmt(tuple(values)))

    def yield_(self, *values: Expr) -> None:
        self.emit(YieldStmt(tuple(values)))

    # ---- loops ---------------------------------------------------------------------
    @contextmanager
    def for_range(self, name: str, start: Any, stop: Any, step: Any = 1, *,
                  carry: Sequence[tuple[str, Expr]] = (), kind: ForKind = ForKind.Sequential,
                  stages: int | None = None, attrs: dict | None = None,
                  return_names: Sequence[str] | None = None) -> Iterator[LoopFrame]:
        """A counted loop; ``carry`` is (name, init) pairs; ``stages`` makes it a Pipeline."""
        loop_attrs = dict(attrs or {})
        if stages is not None:
            kind = ForKind.Pipeline
            loop_attrs = {"pipeline_stages": stages, **loop_attrs}
        loop_var = Var(name, ScalarType(DataType.INDEX))
        iter_args = tuple(IterArg(n, init.type, init=init) for n, init in carry)
        frame = LoopFrame(loop_var, iter_args)
        self._bodies.append([])
        try:
            yield frame
        finally:
            body = self._bodies.pop()
        names = list(return_names) if return_names is not None else [ia.name for ia in iter_args]
        frame.return_vars = tuple(Var(n, ia.type) for n, ia in zip(names, iter_args))
        self.emit(ForStmt(loop_var, const(start), const(stop), const(step), iter_args,
                          SeqStmts(tuple(body)), frame.return_vars, kind, loop_attrs))

    # ---- branches ------------------------------------------------------------------
    @contextmanager
    def if_(self, cond: Expr, *, result_names: Sequence[str] = ()) -> Iterator[IfFrame]:
        """The then-arm; its final yield fixes the return vars' types (names from ``result_names``)."""
        frame = IfFrame(cond, tuple(result_names))
        self._bodies.append([])
        try:
            yield frame
        finally:
            body = self._bodies.pop()
        last = body[-1] if body else None
        if isinstance(last, YieldStmt) and last.values:
            names = list(frame.names) + [f"phi_{i}" for i in range(len(frame.names), len(last.values))]
            frame.return_vars = tuple(Var(n, v.type) for n, v in zip(names, last.values))
        frame.stmt = IfStmt(cond, SeqStmts(tuple(body)), None, frame.return_vars)
        self.emit(frame.stmt)

    @contextmanager
    def else_(self, frame: IfFrame) -> Iterator[IfFrame]:
        """The else-arm of the branch just closed by ``if_``."""
        body_list = self._bodies[-1] if self._bodies else []
        if frame.stmt is None or not body_list or body_list[-1] is not frame.stmt:
            raise BuilderError("else_ must directly follow its if_ block",
                               hint="open `with b.else_(br):` right after `with b.if_(...) as br:`")
        self._bodies.append([])
        try:
            yield frame
        finally:
            body = self._bodies.pop()
        frame.stmt = IfStmt(frame.cond, frame.stmt.then_body, SeqStmts(tuple(body)),
                            frame.return_vars)
        body_list[-1] = frame.stmt
