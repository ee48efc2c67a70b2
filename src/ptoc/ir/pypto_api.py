"""PyPTO's Python IR constructors, building ptoc's own nodes (one IR, not two).

PyPTO code writes ``ir.Var("x", ir.ScalarType(DataType.INDEX), ir.Span.unknown())``,
``ir.Add(x, y, DataType.INDEX, span)``, ``ir.Function(name, params, return_types, body,
span, type=...)``, ``ir.Program(functions, name, span)``. Each such name here is a
*facade*: calling it returns the ptoc node (``ptoc.ir.nodes`` / ``ptoc.ir.types``) that
means the same, and ``isinstance(node, ir.Add)`` asks the ptoc class (and, for operator
kinds, the operator). Arguments follow PyPTO's order and names; Python lists become
tuples, ints become constants, a single statement becomes a one-statement body.

PyPTO node kinds ptoc's IR does not have (``Min``, ``Pow``, bit operations, ``Cast``,
``WhileStmt``, scopes, ...) are not offered here; using one is an ``AttributeError`` on
``ptoc.ir`` that names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, MemorySpace
from ptoc.errors import PtocError, SourceLoc
from ptoc.ir import nodes as n
from ptoc.ir import types as t
from ptoc.ir.printer import format_node


class PyptoApiError(PtocError, TypeError):
    """PyPTO IR API arguments ptoc cannot turn into a node."""


# ---- the facade machinery --------------------------------------------------------------------

class _Facade(type):
    """Metaclass: calling a facade builds a node; isinstance asks the node's class."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.build(*args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        return cls.matches(obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        return isinstance(sub, type) and issubclass(sub, cls.node)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls.node, name)

    def __repr__(cls) -> str:
        return f"<ptoc.ir facade {cls.__name__} -> {cls.node.__module__}.{cls.node.__qualname__}>"


class _Node(metaclass=_Facade):
    node: type = object

    @classmethod
    def matches(cls, obj: Any) -> bool:
        return isinstance(obj, cls.node)

    @classmethod
    def build(cls, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - every facade builds
        raise NotImplementedError


def _bind(what: str, names: tuple[str, ...], args: tuple, kwargs: dict,
          defaults: dict | None = None) -> dict:
    """PyPTO's positional/keyword arguments by parameter name (``span`` may be left out)."""
    if len(args) > len(names):
        raise PyptoApiError(f"ir.{what} takes at most {len(names)} arguments "
                            f"({', '.join(names)}), got {len(args)}")
    bound = dict(defaults or {})
    bound.update(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise PyptoApiError(f"ir.{what} has no argument '{key}'",
                                hint=f"its arguments are {', '.join(names)}")
        bound[key] = value
    missing = [k for k in names if k not in bound and k != "span"]
    if missing:
        raise PyptoApiError(f"ir.{what} is missing {', '.join(missing)}",
                            hint=f"its arguments are {', '.join(names)}")
    return bound


def _loc(span: Any) -> SourceLoc | None:
    if span is None or isinstance(span, SourceLoc):
        return span
    raise PyptoApiError(f"a span must be an ir.Span, got {type(span).__name__}")


def expr(value: Any, dtype: DataType | None = None) -> n.Expr:
    """A Python number as a constant (INDEX / FP32 by default, as PyPTO); Exprs unchanged."""
    if isinstance(value, n.Expr):
        return value
    if isinstance(value, bool):
        return n.ConstBool(value)
    if isinstance(value, int):
        return n.ConstInt(value, dtype or DataType.INDEX)
    if isinstance(value, float):
        return n.ConstFloat(value, dtype or DataType.FP32)
    raise PyptoApiError(f"cannot turn {value!r} into an IR expression",
                        hint="pass an int, float, bool or ir.Expr")


def _body(stmt: Any) -> n.SeqStmts | None:
    if stmt is None or isinstance(stmt, n.SeqStmts):
        return stmt
    if isinstance(stmt, n.Stmt):
        return n.SeqStmts((stmt,))
    if isinstance(stmt, (list, tuple)):
        return n.SeqStmts(tuple(stmt))
    raise PyptoApiError(f"a body must be a statement, got {type(stmt).__name__}")


def _dim(d: Any) -> Any:
    """A shape dimension as ptoc keeps it: a static int, or an expression."""
    if isinstance(d, n.ConstInt):
        return d.value
    if isinstance(d, (int, n.Expr)) and not isinstance(d, bool):
        return d
    raise PyptoApiError(f"a shape dimension must be an int or ir.Expr, got {d!r}")


# ---- expressions ------------------------------------------------------------------------------

def _facade(what: str, node: type, names: tuple[str, ...], make, defaults: dict | None = None,
            doc: str = "") -> type:
    """A facade named ``what`` whose call binds PyPTO's ``names`` and returns ``make(args)``."""
    def build(cls, *args, **kwargs):
        return make(_bind(what, names, args, kwargs, defaults))

    return _Facade(what, (_Node,), {"node": node, "build": classmethod(build),
                                    "__doc__": doc or f"``{what}({', '.join(names)})``",
                                    "__module__": __name__})


def _span(a: dict) -> SourceLoc | None:
    return _loc(a.get("span"))


Var = _facade("Var", n.Var, ("name_hint", "type", "span"),
              lambda a: n.Var(a["name_hint"], a["type"], _span(a)))
IterArg = _facade("IterArg", n.IterArg, ("name_hint", "type", "initValue", "span"),
                  lambda a: n.IterArg(a["name_hint"], a["type"], _span(a), expr(a["initValue"])))
ConstInt = _facade("ConstInt", n.ConstInt, ("value", "dtype", "span"),
                   lambda a: n.ConstInt(int(a["value"]), a["dtype"], _span(a)),
                   {"dtype": DataType.INDEX})
ConstFloat = _facade("ConstFloat", n.ConstFloat, ("value", "dtype", "span"),
                     lambda a: n.ConstFloat(float(a["value"]), a["dtype"], _span(a)),
                     {"dtype": DataType.FP32})
ConstBool = _facade("ConstBool", n.ConstBool, ("value", "span"),
                    lambda a: n.ConstBool(bool(a["value"]), _span(a)))
MakeTuple = _facade("MakeTuple", n.ListExpr, ("elements", "span"),
                    lambda a: n.ListExpr(tuple(expr(e) for e in a["elements"])))
TupleGetItemExpr = _facade("TupleGetItemExpr", n.TupleGetItem, ("tuple", "index", "span"),
                           lambda a: n.TupleGetItem(a["tuple"], int(a["index"])))


class _Operator(_Node):
    """Base of the operator facades (``ir.Add``, ``ir.Neg``, ...): ``isinstance`` also checks
    the operator; PyPTO's ``dtype`` argument is accepted (ptoc types an operator by its
    operands)."""

    symbol: str | None = None
    operands: tuple[str, ...] = ()

    @classmethod
    def matches(cls, obj):
        return isinstance(obj, cls.node) and (cls.symbol is None or obj.op == cls.symbol)

    @classmethod
    def build(cls, *args, **kwargs):
        if cls.symbol is None:
            raise PyptoApiError(f"ir.{cls.__name__} is abstract",
                                hint="build an operator such as ir.Add, ir.Lt or ir.Neg")
        a = _bind(cls.__name__, cls.operands + ("dtype", "span"), args, kwargs, {"dtype": None})
        return cls.node(cls.symbol, *(expr(a[k]) for k in cls.operands))


BinaryExpr = _Facade("BinaryExpr", (_Operator,), {"node": n.BinOp, "operands": ("left", "right"),
                                                  "__module__": __name__})
UnaryExpr = _Facade("UnaryExpr", (_Operator,), {"node": n.UnaryOp, "operands": ("operand",),
                                                "__module__": __name__})


BINARY, UNARY = n.PYPTO_BINARY, n.PYPTO_UNARY

_BINARY_FACADES = {name: _Facade(name, (BinaryExpr,), {"symbol": sym, "__module__": __name__})
                   for name, sym in BINARY.items()}
_UNARY_FACADES = {name: _Facade(name, (UnaryExpr,), {"symbol": sym, "__module__": __name__})
                  for name, sym in UNARY.items()}
globals().update(_BINARY_FACADES)
globals().update(_UNARY_FACADES)


class Op(_Node):
    node = n.Op

    @classmethod
    def build(cls, name: str):
        return n.Op(name)


class GlobalVar(_Node):
    node = n.GlobalVar

    @classmethod
    def build(cls, name: str):
        return n.GlobalVar(name)


class Call(_Node):
    """``Call(op, args, [kwargs], [attrs], [type], span)``: a registered op gets its type
    from the op registry when none is given; a function call (GlobalVar) needs one."""

    node = n.Call

    @classmethod
    def build(cls, op, args, *rest, span=None, type=None, kwargs=None, attrs=None):
        for value in rest:
            if isinstance(value, SourceLoc):
                span = value
            elif isinstance(value, t.Type):
                type = value
            elif isinstance(value, Mapping) or isinstance(value, (list, tuple)):
                if kwargs is None:
                    kwargs = value
                else:
                    attrs = value
            elif value is not None:
                raise PyptoApiError(f"ir.Call got an unexpected argument {value!r}")
        kw = dict(kwargs or {})
        loc = _loc(span)
        args = tuple(expr(a) for a in args)
        if isinstance(op, n.GlobalVar):  # without a type: IRBuilder.let looks it up
            return n.Call(op, args, tuple(kw.items()), type or t.UnknownType(),
                          dict(attrs or {}), True, loc)
        from ptoc.ops import make_call

        call = make_call(str(op), args, kw, loc=loc, attrs=dict(attrs or {}), result_type=type)
        return call


# ---- types ------------------------------------------------------------------------------------

class ScalarType(_Node):
    node = t.ScalarType

    @classmethod
    def build(cls, dtype):
        return t.ScalarType(dtype)


class PtrType(_Node):
    node = t.PtrType

    @classmethod
    def build(cls):
        return t.PtrType()


class UnknownType(_Node):
    node = t.UnknownType

    @classmethod
    def build(cls):
        return t.UnknownType()


class TupleType(_Node):
    node = t.TupleType

    @classmethod
    def build(cls, types):
        return t.TupleType(tuple(types))


def _memref(a: dict) -> t.MemRef:
    offset = a["byte_offset"]
    return t.MemRef(a["base"], expr(offset, DataType.INT64), int(a["size"]))


MemRef = _facade("MemRef", t.MemRef, ("base", "byte_offset", "size", "span"), _memref)


_VIEW_DEFAULTS = {"blayout": t.TileLayout.row_major, "slayout": t.TileLayout.none_box,
                  "fractal": 512}


class TileView(_Node):
    """``TileView(valid_shape=None, stride=None, start_offset=None, blayout=row_major,
    slayout=none_box, fractal=512)``; only the fields that differ from the defaults are kept,
    which is how PyPTO prints a view."""

    node = t.TileView

    @classmethod
    def build(cls, valid_shape=None, stride=None, start_offset=None, blayout=None,
              slayout=None, fractal=None, pad=None, compact=None):
        if pad is not None or compact is not None:
            raise PyptoApiError("ir.TileView(pad=, compact=) is not supported by ptoc")
        fields = []
        if valid_shape:
            fields.append(("valid_shape", tuple(_dim(d) for d in valid_shape)))
        if stride:
            fields.append(("stride", tuple(_dim(d) for d in stride)))
        if start_offset is not None:
            fields.append(("start_offset", _dim(start_offset)))
        for key, value in (("blayout", blayout), ("slayout", slayout), ("fractal", fractal)):
            if value is not None and value != _VIEW_DEFAULTS[key]:
                fields.append((key, value))
        return t.TileView(tuple(fields))


class TensorType(_Node):
    node = t.TensorType

    @classmethod
    def build(cls, shape, dtype, memref=None, tensor_view=None):
        if tensor_view is not None:
            raise PyptoApiError("ir.TensorType(tensor_view=...) is not supported by ptoc")
        return t.TensorType(tuple(_dim(d) for d in shape), dtype, memref)


class TileType(_Node):
    """``TileType(shape, dtype, memref=None, tile_view=None, memory_space=None)``."""

    node = t.TileType

    @classmethod
    def build(cls, shape, dtype, memref=None, tile_view=None, memory_space=None):
        return t.TileType(tuple(_dim(d) for d in shape), dtype, memory_space, memref, tile_view)


# ---- statements -------------------------------------------------------------------------------

AssignStmt = _facade("AssignStmt", n.AssignStmt, ("var", "value", "span"),
                     lambda a: n.AssignStmt(a["var"], expr(a["value"]), _span(a)))
EvalStmt = _facade("EvalStmt", n.EvalStmt, ("expr", "span"),
                   lambda a: n.EvalStmt(expr(a["expr"]), _span(a)))
SeqStmts = _facade("SeqStmts", n.SeqStmts, ("stmts", "span"),
                   lambda a: n.SeqStmts(tuple(a["stmts"]), _span(a)))


def _values_stmt(node: type, what: str) -> type:
    """``X(value_list, span)`` or ``X(span)`` (ReturnStmt, YieldStmt)."""
    def make(a: dict):
        values = a["value"]
        if isinstance(values, SourceLoc):  # X(span)
            values, a["span"] = (), values
        values = values if isinstance(values, (list, tuple)) else (values,)
        return node(tuple(expr(v) for v in values), _span(a))

    return _facade(what, node, ("value", "span"), make, {"value": ()})


ReturnStmt = _values_stmt(n.ReturnStmt, "ReturnStmt")
YieldStmt = _values_stmt(n.YieldStmt, "YieldStmt")


class IfStmt(_Node):
    node = n.IfStmt

    @classmethod
    def build(cls, *args, **kwargs):
        a = _bind("IfStmt", ("condition", "then_body", "else_body", "return_vars", "span"),
                  args, kwargs, {"else_body": None, "return_vars": ()})
        return n.IfStmt(expr(a["condition"]), _body(a["then_body"]), _body(a["else_body"]),
                        tuple(a["return_vars"]), _loc(a.get("span")))


class ForStmt(_Node):
    """``ForStmt(loop_var, start, stop, step, iter_args, body, return_vars, span,
    kind=Sequential, attrs=None)``."""

    node = n.ForStmt

    @classmethod
    def build(cls, *args, **kwargs):
        a = _bind("ForStmt", ("loop_var", "start", "stop", "step", "iter_args", "body",
                              "return_vars", "span", "kind", "attrs"), args, kwargs,
                  {"iter_args": (), "return_vars": (), "kind": ForKind.Sequential,
                   "attrs": None})
        attrs = dict(a["attrs"] or {})
        if (a["kind"] is ForKind.Pipeline) != ("pipeline_stages" in attrs):
            raise PyptoApiError("a Pipeline ForStmt has a 'pipeline_stages' attr, and only it "
                                "does", hint="pass kind=ir.ForKind.Pipeline together with "
                                             "attrs={'pipeline_stages': F}")
        return n.ForStmt(a["loop_var"], expr(a["start"]), expr(a["stop"]), expr(a["step"]),
                         tuple(a["iter_args"]), _body(a["body"]), tuple(a["return_vars"]),
                         a["kind"], attrs, _loc(a.get("span")))


class WhileStmt(_Node):
    """``WhileStmt(condition, iter_args, body, return_vars, span)``."""

    node = n.WhileStmt

    @classmethod
    def build(cls, *args, **kwargs):
        a = _bind("WhileStmt", ("condition", "iter_args", "body", "return_vars", "span"),
                  args, kwargs, {"iter_args": (), "return_vars": ()})
        return n.WhileStmt(expr(a["condition"]), tuple(a["iter_args"]), _body(a["body"]),
                           tuple(a["return_vars"]), _loc(a.get("span")))


# ---- functions and programs -------------------------------------------------------------------

class Function(_Node):
    """``Function(name, params, return_types, body, span, type=Opaque, level=None,
    role=None, attrs=None)``; a param is a Var (In) or a (Var, ParamDirection) pair."""

    node = n.Function

    @classmethod
    def build(cls, *args, **kwargs):
        a = _bind("Function", ("name", "params", "return_types", "body", "span", "type",
                               "level", "role", "attrs", "requires_runtime_binding"), args,
                  kwargs, {"type": FunctionType.Opaque, "level": None, "role": None,
                           "attrs": None, "requires_runtime_binding": False})
        params = []
        for p in a["params"]:
            if isinstance(p, n.Param):
                params.append(p)
            elif isinstance(p, (tuple, list)):
                params.append(n.Param(p[0], p[1]))
            else:
                params.append(n.Param(p, Direction.In))
        attrs = dict(a["attrs"] or {})
        for key in ("level", "role"):
            if a[key] is not None:
                attrs[key] = a[key].value
        return n.Function(a["name"], tuple(params), tuple(a["return_types"]),
                          _body(a["body"]) or n.SeqStmts(()), a["type"], attrs, True,
                          _loc(a.get("span")))


class Program(_Node):
    """``Program(functions, name, span)``: functions are kept sorted by name, as PyPTO's."""

    node = n.Program

    @classmethod
    def build(cls, *args, **kwargs):
        a = _bind("Program", ("functions", "name", "span"), args, kwargs, {"name": ""})
        fns = a["functions"]
        fns = list(fns.values()) if isinstance(fns, Mapping) else list(fns)
        names = [f.name for f in fns]
        dup = sorted({x for x in names if names.count(x) > 1})
        if dup:
            raise PyptoApiError(f"ir.Program has two functions named {', '.join(dup)}",
                                hint="function names are the program's keys; rename one")
        return n.Program(a["name"] or "Program", tuple(sorted(fns, key=lambda f: f.name)),
                         _loc(a.get("span")))


# ---- functions on ops and nodes ---------------------------------------------------------------

def is_op_registered(op_name: str) -> bool:
    from ptoc.ops import has_op

    return has_op(op_name)


def get_op(op_name: str) -> n.Op:
    """The op named ``op_name``; an unknown name is an error with a did-you-mean."""
    from ptoc.ops import get_op as registry_op

    registry_op(op_name)
    return n.Op(op_name)


def create_op_call(op_name: str, args, kwargs=None, span=None) -> n.Call:
    """A call of a registered op, typed by the registry (``create_op_call(name, args, span)``
    or ``create_op_call(name, args, kwargs, span)``)."""
    if isinstance(kwargs, SourceLoc):
        kwargs, span = None, kwargs
    return Call(n.Op(op_name), list(args), dict(kwargs or {}), span=span)


def python_print(node: Any, prefix: str = "pl", concise: bool = False, format: bool = True,
                 explicit_layout: bool = False) -> str:
    """A node as DSL text (PyPTO's ``ir.python_print``; only the ``pl`` prefix)."""
    if prefix != "pl":
        raise PyptoApiError(f"python_print(prefix={prefix!r}): ptoc prints the DSL as 'pl' only")
    return format_node(node)


def python_print_type(type: t.Type, prefix: str = "pl", format: bool = True,
                      explicit_layout: bool = False) -> str:
    return python_print(type, prefix)


def is_incore_type(func_type: FunctionType) -> bool:
    return func_type.is_kernel


class _OpNamespace:
    """``ir.op.tile.add(a, b)`` / ``ir.op.tensor.matmul(...)``: calls of registered ops."""

    def __init__(self, prefix: str):
        self._prefix = prefix

    def __getattr__(self, name: str):
        op_name = f"{self._prefix}.{name.rstrip('_')}"
        if not is_op_registered(op_name):
            raise AttributeError(f"ir.op.{op_name} is not an op ptoc has")

        def call(*args, span=None, **kwargs):
            from ptoc.ops import make_call

            return make_call(op_name, args, kwargs, loc=_loc(span))

        call.__name__ = name
        return call


class _Ops:
    tile = _OpNamespace("tile")
    tensor = _OpNamespace("tensor")


op = _Ops()

__all__ = [
    "AssignStmt", "BinaryExpr", "Call", "ConstBool", "ConstFloat", "ConstInt", "EvalStmt",
    "ForStmt", "Function", "GlobalVar", "IfStmt", "IterArg", "MakeTuple", "MemRef", "Op",
    "Program", "PtrType", "PyptoApiError", "ReturnStmt", "ScalarType", "SeqStmts",
    "TensorType", "TileType", "TileView", "TupleGetItemExpr", "TupleType", "UnaryExpr",
    "UnknownType", "Var", "WhileStmt",
    "YieldStmt", "create_op_call", "get_op", "is_incore_type", "is_op_registered", "op",
    "python_print", "python_print_type", *BINARY, *UNARY,
]
