"""PyPTO's ``IRBuilder`` methods, mixed into ptoc's builder (``ptoc.ir.builder.IRBuilder``).

PyPTO code builds IR as::

    ib = IRBuilder()
    with ib.program("P") as p:
        with ib.function("f", type=ir.FunctionType.Opaque) as f:
            x = f.param("x", ir.ScalarType(DataType.INT64))
            f.return_type(ir.ScalarType(DataType.INT64))
            i = ib.var("i", ir.ScalarType(DataType.INDEX))
            with ib.for_loop(i, 0, 8, 1) as loop:
                s = loop.iter_arg("s", x)
                loop.return_var("s_out")
                ib.emit(ir.YieldStmt([ir.Add(s, x, DataType.INT64, span)], span))
            ib.return_stmt(loop.output())
        p.add_function(f.get_result())
    program = p.get_result()

The statements go into ptoc's nodes; a mismatch PyPTO's builder rejects (iter args
without return vars, a statement outside a function) is a ``BuilderError`` (a
``RuntimeError``, as PyPTO's).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from ptoc.dtypes import ForKind
from ptoc.errors import PtocError, SourceLoc
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, Expr, ForStmt, Function, GlobalVar, IfStmt, IterArg, Program,
    ReturnStmt, SeqStmts, Var, WhileStmt,
)
from ptoc.ir.pypto_api import TensorType as PyptoTensorType
from ptoc.ir.pypto_api import TileType as PyptoTileType
from ptoc.ir.pypto_api import expr
from ptoc.ir.types import TensorType, TileType, TupleType, Type, UnknownType


class BuilderError(PtocError, RuntimeError):
    """The builder was used out of order (a statement outside a function, a stray else)."""


class _ReturnVars:
    """``output(i)`` / ``outputs()`` of a finished loop or branch (PyPTO's accessor)."""

    kind = "statement"
    result: Any = None

    def output(self, index: int = 0) -> Var:
        outs = self.outputs()
        if index >= len(outs):
            raise BuilderError(f"return variable index {index} out of range ({self.kind} has "
                               f"{len(outs)} return vars)")
        return outs[index]

    def outputs(self) -> list[Var]:
        if self.result is None:
            raise BuilderError(f"{self.kind.capitalize()} not yet complete")
        return list(self.result.return_vars)

    def get_result(self):
        return self.result


class ForLoopBuilder(_ReturnVars):
    """The open loop of ``IRBuilder.for_loop``: declare carried values and results."""

    kind = "for loop"

    def __init__(self) -> None:
        self.iter_args: list[IterArg] = []
        self.return_vars: list[Var] = []

    def iter_arg(self, name: str, init_value: Any, type: Type | None = None,
                 span: SourceLoc | None = None) -> IterArg:
        init = expr(init_value)
        ia = IterArg(name, type or init.type, span, init)
        self.iter_args.append(ia)
        return ia

    def return_var(self, name: str, type: Type | None = None,
                   span: SourceLoc | None = None) -> Var:
        index = len(self.return_vars)
        if type is None:
            if index >= len(self.iter_args):
                raise BuilderError(f"return var '{name}' has no iter arg to take its type from",
                                   hint="declare the iter arg first or pass type=")
            type = self.iter_args[index].type
        var = Var(name, type, span)
        self.return_vars.append(var)
        return var


class WhileLoopBuilder(ForLoopBuilder):
    """The open loop of ``IRBuilder.while_loop``: carried values, results and the condition
    (``set_condition`` replaces it, e.g. by one reading the iter args declared since)."""

    kind = "while loop"

    def __init__(self, condition: Expr) -> None:
        super().__init__()
        self.condition = condition

    def set_condition(self, condition: Any, span: SourceLoc | None = None) -> None:
        self.condition = expr(condition)


class IfStmtBuilder(_ReturnVars):
    """The open branch of ``IRBuilder.if_stmt``: ``else_()`` starts the else arm."""

    kind = "if statement"

    def __init__(self, builder: Any) -> None:
        self._builder = builder
        self.then_stmts: list | None = None
        self.return_vars: list[Var] = []

    def else_(self, span: SourceLoc | None = None) -> None:
        if self.then_stmts is not None:
            raise BuilderError("else_() called twice on one if statement")
        self.then_stmts = self._builder._bodies.pop()
        self._builder._bodies.append([])

    def return_var(self, name: str, type: Type, span: SourceLoc | None = None) -> Var:
        var = Var(name, type, span)
        self.return_vars.append(var)
        return var


class ProgramBuilder:
    """The open program of ``IRBuilder.program``: add built functions, call them by GlobalVar."""

    def __init__(self) -> None:
        self.functions: list[Function] = []
        self.declared: list[str] = []
        self.result: Program | None = None

    def declare_function(self, name: str) -> GlobalVar:
        self.declared.append(name)
        return GlobalVar(name)

    def get_global_var(self, name: str) -> GlobalVar:
        if name not in self.declared and all(f.name != name for f in self.functions):
            raise BuilderError(f"function '{name}' was not declared in this program",
                               hint=f"call declare_function({name!r}) first")
        return GlobalVar(name)

    def add_function(self, func: Function) -> None:
        self.functions.append(func)

    def return_types_of(self, name: str) -> tuple[Type, ...] | None:
        for fn in self.functions:
            if fn.name == name:
                return fn.return_types
        return None

    def get_result(self) -> Program:
        if self.result is None:
            raise BuilderError("Program not yet complete")
        return self.result


class PyptoBuilderMethods:
    """PyPTO's builder methods; the host class provides ``emit``, ``_bodies`` and ``_frame``."""

    _bodies: list
    _frame: Any
    _program: ProgramBuilder | None = None

    def var(self, name: str, type: Type, span: SourceLoc | None = None) -> Var:
        return Var(name, type, span)

    def assign(self, var: Var, value: Any, span: SourceLoc | None = None) -> AssignStmt:
        return self.emit(AssignStmt(var, expr(value), span))

    def return_stmt(self, values: Any = None, span: SourceLoc | None = None) -> ReturnStmt:
        values = [] if values is None else values if isinstance(values, (list, tuple)) else [values]
        return self.emit(ReturnStmt(tuple(expr(v) for v in values), span))

    def eval_stmt(self, value: Any, span: SourceLoc | None = None) -> EvalStmt:
        return self.emit(EvalStmt(expr(value), span))

    def in_function(self) -> bool:
        return self._frame is not None

    def typed_call(self, value: Expr) -> Expr:
        """A call of a program function whose type is not known yet gets its callee's."""
        if not (isinstance(value, Call) and isinstance(value.type, UnknownType)):
            return value
        rets = self._program.return_types_of(value.op) if self._program else None
        if rets is None:
            raise BuilderError(f"the result type of '{value.op}' is unknown",
                               hint="add the callee to the program before calling it, or "
                                    "give the Call a type")
        ty = rets[0] if len(rets) == 1 else TupleType(tuple(rets))
        return Call(value.op, value.args, value.kwargs, ty, value.attrs, True, value.loc)

    @contextmanager
    def _statements(self) -> Iterator[list]:
        """The list the statements emitted inside the ``with`` go to (a loop's body)."""
        self._bodies.append([])
        try:
            yield self._bodies[-1]
        finally:
            self._bodies.pop()

    @contextmanager
    def for_loop(self, loop_var: Var, start: Any, stop: Any, step: Any,
                 span: SourceLoc | None = None, kind: ForKind = ForKind.Sequential,
                 attrs: dict | None = None) -> Iterator[ForLoopBuilder]:
        loop = ForLoopBuilder()
        with self._statements() as body:
            yield loop
        _check_carries(loop)
        loop.result = ForStmt(loop_var, expr(start), expr(stop), expr(step),
                              tuple(loop.iter_args), SeqStmts(tuple(body)),
                              tuple(loop.return_vars), kind, dict(attrs or {}), span)
        self.emit(loop.result)

    @contextmanager
    def while_loop(self, condition: Any, span: SourceLoc | None = None
                   ) -> Iterator[WhileLoopBuilder]:
        loop = WhileLoopBuilder(expr(condition))
        with self._statements() as body:
            yield loop
        _check_carries(loop)
        loop.result = WhileStmt(loop.condition, tuple(loop.iter_args), SeqStmts(tuple(body)),
                                tuple(loop.return_vars), span)
        self.emit(loop.result)

    @contextmanager
    def if_stmt(self, condition: Any, span: SourceLoc | None = None) -> Iterator[IfStmtBuilder]:
        branch = IfStmtBuilder(self)
        self._bodies.append([])
        try:
            yield branch
        finally:
            last = self._bodies.pop()
        then_stmts, else_stmts = (last, None) if branch.then_stmts is None else \
            (branch.then_stmts, last)
        branch.result = IfStmt(expr(condition), SeqStmts(tuple(then_stmts)),
                               SeqStmts(tuple(else_stmts)) if else_stmts is not None else None,
                               tuple(branch.return_vars), span)
        self.emit(branch.result)

    @contextmanager
    def program(self, name: str, span: SourceLoc | None = None) -> Iterator[ProgramBuilder]:
        if self._program is not None:
            raise BuilderError(f"program '{name}' opened inside another program")
        prog = self._program = ProgramBuilder()
        try:
            yield prog
        finally:
            self._program = None
        prog.result = Program(name, tuple(sorted(prog.functions, key=lambda f: f.name)), span)

    def tile_type(self, shape, dtype, memref=None, tile_view=None, memory_space=None) -> TileType:
        return PyptoTileType(shape, dtype, memref, tile_view, memory_space)

    def tensor_type(self, shape, dtype, memref=None, tensor_view=None) -> TensorType:
        return PyptoTensorType(shape, dtype, memref, tensor_view)


def _check_carries(loop: ForLoopBuilder) -> None:
    if len(loop.iter_args) != len(loop.return_vars):
        raise BuilderError(f"the {loop.kind} has {len(loop.iter_args)} iter args but "
                           f"{len(loop.return_vars)} return vars",
                           hint="declare one loop.return_var(...) per loop.iter_arg(...)")
