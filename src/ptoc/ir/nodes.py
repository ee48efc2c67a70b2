"""Immutable IR nodes mirroring PyPTO's: expressions, statements, functions, programs.

Nodes are frozen dataclasses compared by identity; ``ptoc.ir.structural_equal`` compares
programs up to a consistent renaming of variables. ``loc`` fields never take part in
structural comparison. Call and loop ``attrs`` are plain dicts that are never mutated
after construction (passes build new nodes).

The nodes also answer to PyPTO's attribute names (``span``, ``name_hint``, ``condition``,
``value``, ``initValue``, ``left``/``right``, ``param_directions``, ``call.op.name``), so
code written against PyPTO's Python IR reads ptoc's nodes; ``ptoc.ir`` builds them with
PyPTO's constructor arguments (``ptoc.ir.pypto_api``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ptoc.errors import SourceLoc
from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, ScopeKind
from ptoc.ir.mappings import FunctionMap, KwargPairs
from ptoc.ir.types import ScalarType, Type


class Node:
    """Base of all IR nodes."""

    @property
    def span(self) -> SourceLoc:
        """PyPTO's name for the source location (``Span.unknown()`` when there is none)."""
        loc = getattr(self, "loc", None)
        return loc if loc is not None else SourceLoc.unknown()

    def same_as(self, other: Any) -> bool:
        """Whether ``other`` is this very node (PyPTO's reference equality)."""
        return self is other

    def as_python(self, prefix: str = "pl", concise: bool = False, format: bool = True) -> str:
        """The node as DSL text (PyPTO's signature; only the ``pl`` prefix is supported)."""
        from ptoc.ir.printer import format_node

        _check_prefix(prefix)
        return format_node(self)


def _check_prefix(prefix: str) -> None:
    if prefix != "pl":
        from ptoc.errors import PtocError

        raise PtocError(f"as_python(prefix={prefix!r}): ptoc prints the DSL as 'pl' only",
                        hint="import the language as pl")


def replace(node, /, **changes):
    """``dataclasses.replace`` for IR nodes and types, a third of its cost: the fields are
    copied, the changes applied and ``__post_init__`` run, without the generated frozen
    ``__init__``'s per-field ``object.__setattr__`` (passes rebuild thousands of nodes per
    compile). Another class, or a name that is not an init field, goes to dataclasses.replace
    (same result, same errors)."""
    cls = type(node)
    spec = _REPLACE_SPECS.get(cls)
    if spec is None:
        spec = _REPLACE_SPECS[cls] = _replace_spec(cls)
    if not spec or not spec[0].issuperset(changes):
        return dataclasses.replace(node, **changes)
    new = object.__new__(cls)
    state = new.__dict__
    state.update(node.__dict__)
    state.update(changes)
    if spec[1] is not None:
        spec[1](new)
    return new


def _replace_spec(cls) -> tuple | None:
    """(init field names, __post_init__) when ``cls`` is an IR dataclass whose instances keep
    their fields in ``__dict__`` and whose ``__init__`` is the generated one; else None."""
    if not issubclass(cls, (Node, Type)) or not dataclasses.is_dataclass(cls):
        return None
    fields = dataclasses.fields(cls)
    owner = next(c for c in cls.__mro__ if "__init__" in c.__dict__)
    params = owner.__dict__.get("__dataclass_params__")
    if (params is None or not params.init or not all(f.init for f in fields)
            or any("__slots__" in c.__dict__ for c in cls.__mro__[:-1])):
        return None
    return frozenset(f.name for f in fields), getattr(cls, "__post_init__", None)


_REPLACE_SPECS: dict[type, tuple | None] = {}


class Op(str):
    """The operation a Call invokes: a registered op name (``tile.add``), a ``str`` that also
    answers PyPTO's ``op.name``."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class GlobalVar(Op):
    """The callee of a call of a program function (PyPTO's ``GlobalVar``)."""

    __slots__ = ()


class Expr(Node):
    """Base of expressions; every expression has a ``type``."""

    type: Type


@dataclass(frozen=True, eq=False)
class Var(Expr):
    """An SSA variable. Identity is the variable; ``name`` is only a hint for printing."""

    name: str
    type: Type
    loc: SourceLoc | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"Var({self.name})"

    @property
    def name_hint(self) -> str:
        return self.name

    @property
    def unique_id(self) -> int:
        return id(self)


@dataclass(frozen=True, eq=False)
class DimVar(Var):
    """A ``pl.dynamic`` dimension: a program-wide symbol (an ``INDEX`` scalar) that types
    name and no statement defines. A kernel whose tensor parameters name one receives its
    value at launch (``ptoc.ir.dynamic``); orchestration reads it off its arguments."""

    def __repr__(self) -> str:
        return f"DimVar({self.name})"


@dataclass(frozen=True, eq=False)
class IterArg(Var):
    """A loop-carried variable: bound to ``init`` on entry, to the yielded value after each trip."""

    init: Expr | None = None

    def __repr__(self) -> str:
        return f"IterArg({self.name})"

    @property
    def initValue(self) -> Expr | None:  # noqa: N802 - PyPTO's spelling
        return self.init


@dataclass(frozen=True, eq=False)
class ConstInt(Expr):
    value: int
    dtype: DataType = DataType.INDEX
    loc: SourceLoc | None = field(default=None, repr=False)

    @property
    def type(self) -> Type:
        return ScalarType(self.dtype)


@dataclass(frozen=True, eq=False)
class ConstFloat(Expr):
    value: float
    dtype: DataType = DataType.FP32
    loc: SourceLoc | None = field(default=None, repr=False)

    @property
    def type(self) -> Type:
        return ScalarType(self.dtype)


@dataclass(frozen=True, eq=False)
class ConstBool(Expr):
    value: bool
    loc: SourceLoc | None = field(default=None, repr=False)

    @property
    def type(self) -> Type:
        return ScalarType(DataType.BOOL)


#: PyPTO's binary and unary expression classes and the ptoc operator each one is
PYPTO_BINARY = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%",
                "FloatDiv": "/", "Eq": "==", "Ne": "!=", "Lt": "<", "Le": "<=", "Gt": ">",
                "Ge": ">=", "And": "and", "Or": "or"}
PYPTO_UNARY = {"Neg": "-", "Not": "not"}

ARITH_OPS = ("+", "-", "*", "//", "%", "/")
COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")
LOGIC_OPS = ("and", "or")


def promoted_type(lhs: Expr, rhs: Expr) -> Type:
    """The type of ``lhs <op> rhs`` as PyPTO types scalar arithmetic: two integers (or two
    floats) give the wider of the two (``INT32 + INT64`` is ``INT64``, not a truncation);
    a literal takes the other operand's type; at equal width the left operand's."""
    lt, rt = lhs.type, rhs.type
    if isinstance(rhs, (ConstInt, ConstFloat)) or not (
            isinstance(lt, ScalarType) and isinstance(rt, ScalarType)):
        return lt
    if isinstance(lhs, (ConstInt, ConstFloat)):
        return rt
    a, b = lt.dtype, rt.dtype
    if a.is_float == b.is_float and DataType.BOOL not in (a, b) and b.bits > a.bits:
        return rt
    return lt


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    """Scalar binary arithmetic, comparison or logic."""

    op: str
    lhs: Expr
    rhs: Expr

    @property
    def type(self) -> Type:
        if self.op in COMPARE_OPS or self.op in LOGIC_OPS:
            return ScalarType(DataType.BOOL)
        return promoted_type(self.lhs, self.rhs)

    @property
    def left(self) -> Expr:
        return self.lhs

    @property
    def right(self) -> Expr:
        return self.rhs

    @property
    def dtype(self) -> DataType:
        return self.type.dtype


@dataclass(frozen=True, eq=False)
class UnaryOp(Expr):
    """Scalar negation (``-``) or logical ``not``."""

    op: str
    operand: Expr

    @property
    def type(self) -> Type:
        if self.op == "not":
            return ScalarType(DataType.BOOL)
        return self.operand.type

    @property
    def dtype(self) -> DataType:
        return self.type.dtype


@dataclass(frozen=True, eq=False)
class ListExpr(Expr):
    """A literal list of expressions (offsets, shapes)."""

    items: tuple[Expr, ...]

    @property
    def type(self) -> Type:
        from ptoc.ir.types import TupleType

        return TupleType(tuple(i.type for i in self.items))


@dataclass(frozen=True, eq=False)
class TupleGetItem(Expr):
    """Element ``index`` of a tuple value, e.g. one result of a function returning several."""

    tuple: Expr
    index: int

    @property
    def type(self) -> Type:
        return self.tuple.type.types[self.index]


@dataclass(frozen=True, eq=False)
class Call(Expr):
    """A call of a registered op (``tile.load``) or, with ``is_function``, of a program function.

    ``args`` are expressions; ``kwargs`` are (name, value) pairs whose values are
    expressions or plain constants (enums, dtypes, strings, numbers); ``attrs`` are
    compiler annotations printed as ``attrs={...}``.
    """

    op: str
    args: tuple[Expr, ...]
    kwargs: tuple[tuple[str, Any], ...]
    type: Type
    attrs: dict = field(default_factory=dict)
    is_function: bool = False
    loc: SourceLoc | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # the op answers ``.name`` and the kwargs read as a mapping, as PyPTO's do
        if not isinstance(self.op, Op):
            object.__setattr__(self, "op", (GlobalVar if self.is_function else Op)(self.op))
        if type(self.kwargs) is not KwargPairs:
            object.__setattr__(self, "kwargs", KwargPairs(self.kwargs))

    def kwarg(self, name: str, default=None):
        for key, value in self.kwargs:
            if key == name:
                return value
        return default


#: Call attr: argument slots written ``pl.no_dep(x)`` / named in ``no_dep_args=[x]``;
#: DeriveCallDirections makes them ``pl.adir.no_dep`` (the runtime does not track them).
ARG_DIRECTION_OVERRIDES = "arg_direction_overrides"


@dataclass(frozen=True, eq=False)
class Submit(Call):
    """A task launch that names its task: ``out, tid = pl.submit(self.k, x, out, deps=[t])``.

    A call of program function ``op`` (``is_function``) whose value is the callee's results
    followed by the launched task's id (``pl.Scalar[pl.TASK_ID]``); ``deps`` are task ids
    (or TASK_ID arrays) the task waits for, besides what the runtime infers. An SPMD launch
    spec rides in ``attrs`` (``core_num``, ``sync_start``) as on a plain call. ``predicate``
    is the dispatch predicate of ``predicate=(t[i] > 0)``: one comparison of a
    ``tensor.read`` with an integer constant (``BinOp``), a spec the scheduler evaluates
    when the task's dependencies are met — never evaluated in the orchestration.
    """

    deps: tuple[Expr, ...] = ()
    predicate: Expr | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "is_function", True)


class Stmt(Node):
    """Base of statements; every statement has a ``loc``."""


@dataclass(frozen=True, eq=False)
class AssignStmt(Stmt):
    var: Var
    value: Expr
    loc: SourceLoc | None = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class EvalStmt(Stmt):
    expr: Expr
    loc: SourceLoc | None = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class SeqStmts(Stmt):
    stmts: tuple[Stmt, ...]
    loc: SourceLoc | None = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class YieldStmt(Stmt):
    values: tuple[Expr, ...]
    loc: SourceLoc | None = field(default=None, repr=False)

    @property
    def value(self) -> tuple[Expr, ...]:
        return self.values


@dataclass(frozen=True, eq=False)
class ReturnStmt(Stmt):
    values: tuple[Expr, ...]
    loc: SourceLoc | None = field(default=None, repr=False)

    @property
    def value(self) -> tuple[Expr, ...]:
        return self.values


@dataclass(frozen=True, eq=False)
class ForStmt(Stmt):
    """A counted loop. ``kind == Pipeline`` exactly when ``attrs`` has ``pipeline_stages``."""

    loop_var: Var
    start: Expr
    stop: Expr
    step: Expr
    iter_args: tuple[IterArg, ...]
    body: SeqStmts
    return_vars: tuple[Var, ...]
    kind: ForKind = ForKind.Sequential
    attrs: dict = field(default_factory=dict)
    loc: SourceLoc | None = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class WhileStmt(Stmt):
    """A loop that runs while ``cond`` holds (``for (x,) in pl.while_(init_values=(x0,)):``
    with ``pl.cond(x < n)`` first). ``cond`` is evaluated before every trip, on the iter
    args' current values, so the trip count is known only at run time (possibly zero); the
    body ends with the ``pl.yield_`` of the next values, and ``return_vars`` bind the values
    for which ``cond`` was false."""

    cond: Expr
    iter_args: tuple[IterArg, ...]
    body: SeqStmts
    return_vars: tuple[Var, ...]
    loc: SourceLoc | None = field(default=None, repr=False)

    @property
    def condition(self) -> Expr:
        return self.cond


@dataclass(frozen=True, eq=False)
class IfStmt(Stmt):
    """A branch; ``return_vars`` are the phi results bound by both arms' yields."""

    cond: Expr
    then_body: SeqStmts
    else_body: SeqStmts | None
    return_vars: tuple[Var, ...] = ()
    loc: SourceLoc | None = field(default=None, repr=False)

    @property
    def condition(self) -> Expr:
        return self.cond


@dataclass(frozen=True, eq=False)
class ScopeStmt(Stmt):
    """A ``with`` region of a function body (see ``ScopeKind``); outlining passes turn the
    kernel-making kinds into functions. Names bound inside stay visible after it.

    ``attrs`` holds plain options (``name_hint``, ``level``, ``role``, ``manual``,
    ``sync_start``, ``split``, ``slot_num``); ``deps`` are task ids the region waits for,
    ``task_id`` the Var ``as tid`` binds, ``core_num`` an SPMD region's block count,
    ``no_dep_args`` tensors the region's task does not track (``no_dep_args=[t]``),
    ``predicate`` an SPMD region's dispatch predicate (as ``Submit.predicate``; the outliner
    moves it onto the region's launch).
    """

    kind: ScopeKind
    body: SeqStmts
    attrs: dict = field(default_factory=dict)
    deps: tuple[Expr, ...] = ()
    task_id: Var | None = None
    core_num: Expr | None = None
    loc: SourceLoc | None = field(default=None, repr=False)
    no_dep_args: tuple[Expr, ...] = ()
    predicate: Expr | None = None


@dataclass(frozen=True, eq=False)
class Param:
    """A function parameter: its variable and direction (In, Out, InOut)."""

    var: Var
    direction: Direction = Direction.In

    # PyPTO lists parameters as their Vars: read through to the Var
    @property
    def name_hint(self) -> str:
        return self.var.name

    @property
    def name(self) -> str:
        return self.var.name

    @property
    def type(self) -> Type:
        return self.var.type

    @property
    def span(self) -> SourceLoc:
        return self.var.span


@dataclass(frozen=True, eq=False)
class Function(Node):
    name: str
    params: tuple[Param, ...]
    return_types: tuple[Type, ...]
    body: SeqStmts
    func_type: FunctionType = FunctionType.Opaque
    attrs: dict = field(default_factory=dict)
    has_self: bool = True
    loc: SourceLoc | None = field(default=None, repr=False)

    def as_python(self, prefix: str = "pl", concise: bool = False, format: bool = True) -> str:
        from ptoc.ir.printer import print_function

        _check_prefix(prefix)
        return print_function(self)

    @property
    def param_directions(self) -> tuple[Direction, ...]:
        return tuple(p.direction for p in self.params)

    @property
    def level(self):
        from ptoc.dtypes import Level

        return Level(self.attrs["level"]) if "level" in self.attrs else None

    @property
    def role(self):
        from ptoc.dtypes import Role

        return Role(self.attrs["role"]) if "role" in self.attrs else None


@dataclass(frozen=True, eq=False)
class Program(Node):
    name: str
    functions: tuple[Function, ...]
    loc: SourceLoc | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # iterated as Functions; also a name -> Function mapping, as PyPTO's is
        if type(self.functions) is not FunctionMap:
            object.__setattr__(self, "functions", FunctionMap(self.functions))

    def get_function(self, name: str) -> Function | None:
        for fn in self.functions:
            if fn.name == name:
                return fn
        return None

    def get_global_var(self, name: str) -> GlobalVar | None:
        return GlobalVar(name) if self.get_function(name) is not None else None

    def __getitem__(self, name: str) -> Function | None:
        return self.get_function(str(name))

    def as_python(self, prefix: str = "pl", concise: bool = False, format: bool = True,
                  *, module: str = "ptoc") -> str:
        from ptoc.ir.printer import print_program

        _check_prefix(prefix)
        return print_program(self, module=module)


def body_scope(stmts) -> ScopeStmt | None:
    """The runtime scope (``with pl.scope()``) that is the whole of a loop or if body
    (``stmts``: the body's statements), if it is one: the body's trailing ``pl.yield_`` then
    sits inside it, as MaterializeRuntimeScopes places it."""
    if len(stmts) == 1 and isinstance(stmts[0], ScopeStmt) \
            and stmts[0].kind is ScopeKind.Runtime:
        return stmts[0]
    return None


def append_yield(stmts: list, y: "YieldStmt") -> None:
    """End a loop or if body with ``y``: inside its whole-body runtime scope if it has one."""
    scope = body_scope(stmts)
    if scope is None:
        stmts.append(y)
    else:
        stmts[0] = replace(scope, body=SeqStmts((*scope.body.stmts, y), scope.body.loc))


def first_while_loop(stmt: Stmt | None) -> "WhileStmt | None":
    """The first ``WhileStmt`` in ``stmt`` (statements only, in program order), if any."""
    stack = [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, WhileStmt):
            return s
        if isinstance(s, SeqStmts):
            stack.extend(reversed(s.stmts))
        elif isinstance(s, IfStmt):
            stack += [s.else_body, s.then_body]
        elif isinstance(s, (ForStmt, ScopeStmt)):
            stack.append(s.body)
    return None
