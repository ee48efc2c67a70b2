"""Expressions of a kernel body: names, constants, scalar arithmetic, op calls, sugar.

An expression evaluates either to an IR ``Expr`` (a runtime value) or to a plain Python
value known at parse time (a folded closure constant, an enum, a list of those). Scalar
arithmetic on two static values folds; anything touching a runtime value builds IR.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import enum
import operator
from typing import Any

from ptoc.dtypes import (
    ArgDirection, AtomicType, DataType, ForKind, FunctionType, Level, MemorySpace, PadValue,
    Role, ScopeMode, SplitMode,
)
from ptoc.errors import PtocError, TypeCheckError, count, were_given
from ptoc.ir.nodes import (
    ARG_DIRECTION_OVERRIDES, AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, Expr,
    ListExpr, TupleGetItem, UnaryOp, Var,
)
from ptoc.ir.types import (
    ArrayType, ScalarType, TensorLayout, TensorType, TileLayout, TileType, TupleType,
)
from ptoc.ir.verifier import at_param_rank, type_mismatch
from ptoc.ir.linear import constant_difference
from ptoc.language.context import DslPath, SelfRef
from ptoc.language.tasks import SUBMIT_FUNCS, NoDepArg
from ptoc.language.dynamic import DynVar
from ptoc.language.row_broadcast import row_broadcast
from ptoc.ops.checks import describe_type
from ptoc.ops import get_op, has_op, make_call, ops_for_dsl_name, to_expr
from ptoc.ops.catalog import not_run_reason
from ptoc.ops.registry import all_ops
from ptoc.language.scopes import SCOPE_OPTIMIZATIONS

DSL_ENUMS: dict[str, type[enum.Enum]] = {
    "Mem": MemorySpace, "MemorySpace": MemorySpace, "FunctionType": FunctionType,
    "Level": Level, "Role": Role, "TileLayout": TileLayout, "AtomicType": AtomicType,
    "TensorLayout": TensorLayout,
    "ForKind": ForKind, "adir": ArgDirection, "PadValue": PadValue, "ScopeMode": ScopeMode,
    "SplitMode": SplitMode,
}
LOOP_FUNCS = {"range": ForKind.Sequential, "pipeline": ForKind.Pipeline,
              "unroll": ForKind.Unroll, "parallel": ForKind.Parallel}
STATEMENT_ONLY = ("yield_", "static_assert", "static_print", "func_attr")
TYPE_ONLY = ("Tensor", "Tile", "Scalar", "Out", "InOut", "Ptr", "MemRef", "TileView",
             "TensorView")

_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
          ast.Div: "/"}
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_FOLD = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
         "%": operator.mod, "/": operator.truediv, "==": operator.eq, "!=": operator.ne,
         "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_TILE_SUGAR = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
#: pl.add(a, b) etc. on two scalars is scalar arithmetic, as in PyPTO's dispatchers
_SCALAR_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


class FunctionRef:
    """``self.<name>``: a reference to another function of the program."""

    def __init__(self, name: str):
        self.name = name


class KernelRef:
    """A ``@pl.jit.incore`` function named in a ``@pl.jit`` body; calling it outlines a kernel."""

    def __init__(self, name: str, obj):
        self.name = name
        self.obj = obj


class ExternalRef:
    """A module-level ``@pl.function`` named in a program method; calling it adds it once."""

    def __init__(self, name: str, function):
        self.name = name
        self.function = function


def dsl_constant(path: DslPath) -> Any:
    """The constant a DSL path names (``pl.FP32``, ``pl.Mem.Mat``), or None if it names a function."""
    parts = path.parts
    if len(parts) == 1 and parts[0] in DataType.__members__:
        return DataType[parts[0]]
    if len(parts) == 2 and parts[0] in DSL_ENUMS:
        cls = DSL_ENUMS[parts[0]]
        if parts[1] in cls.__members__:
            return cls[parts[1]]
        if parts[1] in cls._value2member_map_:  # pl.adir.input: members spelled by value
            return cls(parts[1])
        valid = ", ".join(m.value if cls is ArgDirection else m.name for m in cls)
        raise PtocError(f"pl.{parts[0]} has no member '{parts[1]}' (valid: {valid})")
    return None


def is_static(value: Any) -> bool:
    return not isinstance(value, (Expr, DslPath, SelfRef, FunctionRef, KernelRef, ExternalRef))


class ExprParser:
    """Mixin: turns expression AST nodes into IR expressions or static values."""

    # Provided by the function parser: self.ctx, self.scope, self.functions (signatures) and
    # self.pending (statements hoisted out of the expression being parsed).

    def expr(self, node: ast.AST) -> Any:
        method = getattr(self, f"_expr_{type(node).__name__}", None)
        if method is None:
            raise self.ctx.error(node, f"'{ast.unparse(node)}' is not supported in a kernel",
                                 hint="kernels support pl.* calls, scalar arithmetic and "
                                      "comparisons, lists and constants")
        try:
            return method(node)
        except PtocError as err:
            if err.loc is None:
                raise type(err)(err.message, self.ctx.loc(node), hint=err.hint) from None
            raise

    def runtime(self, node: ast.AST, what: str) -> Expr:
        """An expression that must be a runtime (or constant-convertible) value."""
        value = self.expr(node)
        if isinstance(value, (DslPath, SelfRef, FunctionRef)) or isinstance(value, enum.Enum):
            raise self.ctx.error(node, f"{what} must be a value, got '{ast.unparse(node)}'")
        if isinstance(value, (list, tuple)):
            return ListExpr(tuple(to_expr(v, what, self.ctx.loc(node)) for v in value))
        return to_expr(value, what, self.ctx.loc(node))

    # --- leaves -------------------------------------------------------------------------

    def _expr_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def _expr_Name(self, node: ast.Name) -> Any:
        name = node.id
        var = self.scope.lookup(name)
        if var is not None:
            return var
        if name in self.shape_names:
            return self.shape_names[name]
        if name == "self":
            return SelfRef()
        if name in self.ctx.dsl_aliases:
            return DslPath()
        if name in self.ctx.specialization:
            return self.ctx.specialization[name]
        if name in self.ctx.kernels:
            return KernelRef(name, self.ctx.kernels[name])
        if name in self.ctx.externals:
            return ExternalRef(name, self.ctx.externals[name])
        if name in self.ctx.env:
            return self.ctx.env[name]
        if name in ("range", "len", "print"):
            hint = {"range": "use pl.range(...) (or pl.pipeline / pl.unroll / pl.parallel)",
                    "print": "use pl.static_print(...) at parse time",
                    "len": "use the static shape from the type annotation"}[name]
            raise self.ctx.error(node, f"Python built-in '{name}' cannot be used in a kernel",
                                 hint=hint)
        retired = self.scope.retired_reason(name)
        if retired is not None:
            raise self.ctx.error(node, f"name '{name}' has no value here: {retired}",
                                 hint=f"give the loop's value its own name, or carry '{name}' "
                                 "explicitly with init_values=(...) and pl.yield_")
        known = self.scope.names() + list(self.ctx.env)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean '{close[0]}'?" if close else \
            "define it before this line, or capture a Python constant from the enclosing scope"
        raise self.ctx.error(node, f"name '{name}' is not defined", hint=hint)

    def _expr_Attribute(self, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        if isinstance(base, DslPath):
            path = base.child(node.attr)
            constant = dsl_constant(path)
            return path if constant is None else constant
        if isinstance(base, SelfRef):
            if node.attr not in self.functions:
                close = difflib.get_close_matches(node.attr, list(self.functions), n=1)
                hint = f"did you mean self.{close[0]}?" if close else "define it in the program"
                raise self.ctx.error(node, f"the program has no function '{node.attr}'", hint=hint)
            return FunctionRef(node.attr)
        if _is_shaped(base) and node.attr == "shape":
            return tuple(base.type.shape)  # static dims are ints: x.shape[1] folds at parse time
        raise self.ctx.error(node, f"attribute access '{ast.unparse(node)}' is not supported",
                             hint="only pl.* names, self.<function> and x.shape are attributes "
                                  "in kernels")

    def _expr_List(self, node: ast.List) -> list:
        return [self.expr(e) for e in node.elts]

    def _expr_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.expr(e) for e in node.elts)

    def _expr_Dict(self, node: ast.Dict) -> dict:
        result = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                raise self.ctx.error(node, "'**' in a dict is not supported")
            k, v = self.expr(key), self.expr(value)
            if isinstance(v, list) and v and all(isinstance(x, Var) for x in v):
                v = ListExpr(tuple(v))       # values named in attrs (compiler task edges)
            if not isinstance(k, str) or not (is_static(v) or isinstance(v, Expr)):
                raise self.ctx.error(key, "attrs dicts need string keys and constant or "
                                     "expression values")
            result[k] = v
        return result

    # --- arithmetic ---------------------------------------------------------------------

    def _expr_BinOp(self, node: ast.BinOp) -> Any:
        op = _ARITH.get(type(node.op))
        if op is None:
            raise self.ctx.error(node, f"operator in '{ast.unparse(node)}' is not supported",
                                 hint="use + - * // % on scalars")
        lhs, rhs = self.expr(node.left), self.expr(node.right)
        return self.binary(node, op, lhs, rhs)

    def binary(self, node: ast.AST, op: str, lhs: Any, rhs: Any) -> Any:
        if _is_number(lhs) and _is_number(rhs):
            try:
                return _FOLD[op](lhs, rhs)
            except ZeroDivisionError:
                raise self.ctx.error(node, f"division by zero in '{ast.unparse(node)}'") from None
        if _is_shaped(lhs) or _is_shaped(rhs):
            return self.shaped_binary(node, op, lhs, rhs)
        lhs_e = self.runtime_value(node, lhs)
        rhs_e = self.runtime_value(node, rhs)
        if op == "/" and not _is_float(lhs_e) and not _is_float(rhs_e):
            raise self.ctx.error(node, f"'/' on integer scalars in '{ast.unparse(node)}'",
                                 hint="use // for integer (index) division")
        return BinOp(op, lhs_e, rhs_e)

    def runtime_value(self, node: ast.AST, value: Any) -> Expr:
        if isinstance(value, Expr):
            if not isinstance(value.type, ScalarType):
                raise self.ctx.error(node, f"'{ast.unparse(node)}' mixes a "
                                     f"{type(value.type).__name__} into scalar arithmetic")
            return self.hoist(node, value)  # an op call in arithmetic: its own statement
        if _is_number(value):
            return to_expr(value, "operand", self.ctx.loc(node))
        raise self.ctx.error(node, f"'{ast.unparse(node)}' uses {value!r} in arithmetic")

    def shaped_binary(self, node: ast.AST, op: str, lhs: Any, rhs: Any) -> Call:
        """``a + b`` on tiles/tensors is pl.add(a, b); a Python number selects adds/muls."""
        name = _TILE_SUGAR.get(op)
        if name is None:
            raise self.ctx.error(node, f"operator '{op}' is not defined on tiles or tensors")
        if not _is_shaped(lhs) and name in ("add", "mul"):
            lhs, rhs = rhs, lhs
        return self.dispatch_call(node, name, [lhs, rhs], {}, None)

    def _expr_Compare(self, node: ast.Compare) -> Any:
        if len(node.ops) != 1:
            raise self.ctx.error(node, "chained comparisons are not supported",
                                 hint="split 'a < b < c' into '(a < b) and (b < c)'")
        op = _CMP.get(type(node.ops[0]))
        if op is None:
            raise self.ctx.error(node, f"comparison '{ast.unparse(node)}' is not supported")
        lhs, rhs = self.expr(node.left), self.expr(node.comparators[0])
        if is_static(lhs) and is_static(rhs):
            try:
                return _FOLD[op](lhs, rhs)
            except TypeError:
                raise self.ctx.error(node, f"cannot compare {lhs!r} {op} {rhs!r}",
                                     hint="compare numbers or scalar values") from None
        return BinOp(op, self.runtime_value(node, lhs), self.runtime_value(node, rhs))

    def _expr_BoolOp(self, node: ast.BoolOp) -> Any:
        op = "and" if isinstance(node.op, ast.And) else "or"
        values = [self.expr(v) for v in node.values]
        if all(is_static(v) for v in values):
            result = values[0]
            for v in values[1:]:
                result = (result and v) if op == "and" else (result or v)
            return result
        exprs = [self.runtime_value(node, v) for v in values]
        result = exprs[0]
        for e in exprs[1:]:
            result = BinOp(op, result, e)
        return result

    def _expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.expr(node.operand)
        if isinstance(node.op, ast.UAdd):
            return value
        if isinstance(node.op, ast.Not):
            return (not value) if is_static(value) else UnaryOp("not", self.runtime_value(node, value))
        if isinstance(node.op, ast.USub):
            if _is_number(value):
                return -value
            if _is_shaped(value):
                return self.dispatch_call(node, "neg", [value], {}, None)
            return UnaryOp("-", self.runtime_value(node, value))
        raise self.ctx.error(node, f"operator in '{ast.unparse(node)}' is not supported")

    # --- calls --------------------------------------------------------------------------

    def _expr_Call(self, node: ast.Call) -> Any:
        func = self.expr(node.func)
        if isinstance(func, FunctionRef):
            return self.function_call(node, func.name)
        if isinstance(func, KernelRef):
            return self.kernel_call(node, func)
        if isinstance(func, ExternalRef):
            return self.external_call(node, func)
        if not isinstance(func, DslPath):
            raise self.ctx.error(node, f"'{ast.unparse(node.func)}' cannot be called in a kernel",
                                 hint="call pl.* ops or self.<function>(...)")
        name = func.dotted
        if name == "const":
            return self.const_call(node)
        if name == "dynamic":
            return self.dynamic_call(node)
        if name in SCOPE_OPTIMIZATIONS:
            return self.scope_optimization(node, name)
        if name in SUBMIT_FUNCS:
            return self.submit_call(node, name)
        if name == "no_dep":
            return self.no_dep_arg(node)
        if name in STATEMENT_ONLY:
            raise self.ctx.error(node, f"pl.{name}(...) must be a statement of its own",
                                 hint="pl.yield_ ends a loop or if body; write it on its own line")
        if name in LOOP_FUNCS:
            raise self.ctx.error(node, f"pl.{name}(...) can only drive a for loop",
                                 hint=f"write 'for i in pl.{name}(...):'")
        if name in TYPE_ONLY:
            raise self.ctx.error(node, f"pl.{name} is a type; it belongs in an annotation")
        args, kwargs = self.call_arguments(node)
        attrs = kwargs.pop("attrs", None)
        if attrs is not None and not isinstance(attrs, dict):
            raise self.ctx.error(node, "attrs= must be a dict literal such as {\"key\": value}")
        return self.dispatch_call(node, name, args, kwargs, attrs)

    def call_arguments(self, node: ast.Call) -> tuple[list, dict]:
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.ctx.error(arg, "'*args' is not supported in kernel calls")
            args.append(self.expr(arg))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.ctx.error(kw, "'**kwargs' is not supported in kernel calls")
            kwargs[kw.arg] = self.expr(kw.value)
        return args, kwargs

    def dispatch_call(self, node: ast.AST, name: str, args: list, kwargs: dict,
                      attrs: dict | None) -> Expr:
        if name in _SCALAR_ARITH and len(args) == 2 and not kwargs \
                and not any(_is_shaped(a) for a in args):
            return self.binary(node, _SCALAR_ARITH[name], args[0], args[1])
        written = name
        name, args = row_broadcast(name, args, kwargs, self.ctx.loc(node))
        op_name = self.resolve_op(node, name, args)
        for i, value in enumerate(args):
            if isinstance(value, NoDepArg):
                raise self.ctx.error(node, f"pl.no_dep(...) marks an argument of a kernel call, "
                                     f"not of pl.{name}", hint="write self.kernel(pl.no_dep(x), ...)")
            if isinstance(value, (DslPath, SelfRef, FunctionRef)):
                raise self.ctx.error(node, f"argument {i + 1} of pl.{name} is not a value")
        args = [self.hoist(node, a) for a in args]
        try:
            return make_call(op_name, tuple(args), kwargs, loc=self.ctx.loc(node), attrs=attrs)
        except TypeCheckError as exc:
            if name == written:
                raise
            raise TypeCheckError(f"pl.{written.removeprefix('tensor.')} with an [M, 1] operand "
                                 f"(broadcast across the rows as pl.{name}): {exc.message}",
                                 exc.loc, hint=exc.hint) from None

    def hoist(self, node: ast.AST, value: Any) -> Any:
        """A nested op call becomes its own statement, so every call's operands are variables;
        a scalar ``min``/``max`` stays in the expression it is part of (pure index arithmetic,
        as valid extents hold it: ``clamp(valid - offset, 0, window)`` nested in a type parses
        back as printed)."""
        if not isinstance(value, Call) or _is_index_clamp(value):
            return value
        var = Var(f"t_{value.op.rsplit('.', 1)[-1]}", value.type, self.ctx.loc(node))
        self.pending.append(AssignStmt(var, value, self.ctx.loc(node)))
        return var

    def resolve_op(self, node: ast.AST, name: str, args: list) -> str:
        """The registered op a DSL spelling reaches, dispatching on Tile vs Tensor operands."""
        if "." in name:
            if not has_op(name):
                get_op(name, self.ctx.loc(node))  # raises with a did-you-mean
            return name
        candidates = ops_for_dsl_name(name)
        if not candidates and not_run_reason(name) is not None:
            get_op(name, self.ctx.loc(node))  # raises: the catalog says why ptoc lacks it
        if not candidates:
            spellings = sorted({n for op in all_ops() for n in op.dsl_names})
            close = difflib.get_close_matches(name, spellings, n=2)
            hint = f"did you mean {', '.join('pl.' + c for c in close)}?" if close else \
                "see the operator page docs/en/ops.md"
            raise self.ctx.error(node, f"unknown op 'pl.{name}'", hint=hint)
        first = args[0].type if args and isinstance(args[0], Expr) else None
        level = "tile" if isinstance(first, TileType) else "tensor" if isinstance(
            first, TensorType) else None
        at_level = [op for op in candidates if op.level == level] or \
            [op for op in candidates if op.level not in ("tile", "tensor")]
        if not at_level and len(candidates) == 1:
            at_level = list(candidates)
        if not at_level:
            levels = " or ".join(sorted({op.level for op in candidates}))
            got = describe_type(first) if first is not None else "no Tile or Tensor"
            raise self.ctx.error(node, f"pl.{name} takes a {levels} as its first argument, got "
                                 f"{got}", hint=f"use pl.{candidates[0].name} explicitly, or "
                                 "pass a value of the right kind")
        op = at_level[0]
        scalar = len(args) > 1 and (_is_number(args[1]) or (
            isinstance(args[1], Expr) and isinstance(args[1].type, ScalarType)))
        if scalar and op.scalar_variant:
            return op.scalar_variant
        return op.name

    def kernel_call(self, node: ast.Call, ref: KernelRef) -> Call:
        """``cube(a, b, tmp)``: specialise the jit sub-function on the argument types."""
        args, kwargs = self.call_arguments(node)
        if "device" in kwargs:
            raise self.ctx.error(node, f"{ref.name}(..., device=...) dispatches to one rank of "
                                 "a multi-chip run; ptoc simulates a single chip",
                                 hint="drop device= to run it on the simulated chip, or run "
                                      "the distributed program with PyPTO")
        if kwargs:
            raise self.ctx.error(node, f"{ref.name}(...) takes positional arguments only")
        for index, value in enumerate(args):
            if not isinstance(value, Expr) and not _is_number(value):
                raise self.ctx.error(node, f"argument {index + 1} of {ref.name} must be a tensor "
                                     f"or a scalar value, got '{ast.unparse(node.args[index])}'")
        types = [to_expr(a, f"argument of {ref.name}", self.ctx.loc(node)).type for a in args]
        name = self.ctx.resolve_kernel(ref.obj, types, node, self.functions)
        return self.function_call_with(node, name, args)

    def external_call(self, node: ast.Call, ref: ExternalRef) -> Call:
        """``kernel(a, b)`` of a module-level ``@pl.function``: it joins the program under
        its own name (once), and the call is a call of that program function."""
        function = ref.function
        name = function.name
        joined = self.ctx.joined.get(name)
        if joined is None:
            if name in self.functions:
                raise self.ctx.error(node, f"'{ref.name}' is the module-level @pl.function "
                                     f"'{name}', but the program already has a function of "
                                     "that name", hint="rename one of them")
            self.ctx.joined[name] = function
            self.functions[name] = ([(p.var.name, p.var.type) for p in function.params],
                                    function.return_types)
            self.outlined.append(dataclasses.replace(function, has_self=True))
        elif joined is not function:
            raise self.ctx.error(node, f"two different module-level @pl.functions are named "
                                 f"'{name}'", hint="give each a distinct name")
        args, kwargs = self.call_arguments(node)
        if kwargs:
            raise self.ctx.error(node, f"{ref.name}(...) takes positional arguments only")
        return self.function_call_with(node, name, args)

    def const_call(self, node: ast.Call) -> Expr:
        args, kwargs = self.call_arguments(node)
        if len(args) != 2 or kwargs or not _is_number(args[0]) or not isinstance(args[1], DataType):
            raise self.ctx.error(node, "pl.const takes a number and a dtype",
                                 hint="write pl.const(0, pl.INT64)")
        value, dtype = args
        if dtype.is_float:
            return ConstFloat(float(value), dtype)
        if isinstance(value, float):
            raise self.ctx.error(node, f"pl.const({value}, {dtype!r}) gives a float to an integer "
                                 "dtype")
        return ConstInt(int(value), dtype)

    def dynamic_call(self, node: ast.Call) -> Expr:
        """``N = pl.dynamic("N")`` in parsed text (printed IR declares its dimensions so)."""
        if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Constant):
            raise self.ctx.error(node, "pl.dynamic takes one name string",
                                 hint='write N = pl.dynamic("N")')
        return DynVar(node.args[0].value).var

    def function_call(self, node: ast.Call, name: str) -> Call:
        args, kwargs = self.call_arguments(node)
        attrs = kwargs.pop("attrs", None)
        if kwargs or not isinstance(attrs, (dict, type(None))):
            raise self.ctx.error(node, f"self.{name}(...) takes positional arguments only "
                                 "(and the printed IR's attrs={...})")
        return self.function_call_with(node, name, args, attrs)

    def function_call_with(self, node: ast.Call, name: str, args: list,
                           attrs: dict | None = None) -> Call:
        params, returns = self.functions[name]
        if len(args) != len(params):
            raise self.ctx.error(
                node, f"self.{name} takes {count(len(params), 'argument')} "
                f"({', '.join(p[0] for p in params)}) but {were_given(len(args))}")
        exprs, no_dep = [], []
        for slot, ((pname, ptype), value) in enumerate(zip(params, args)):
            if isinstance(value, NoDepArg):
                value = value.tensor
                no_dep.append(slot)
            if not isinstance(value, Expr) and not _is_number(value):
                raise self.ctx.error(node, f"argument '{pname}' of {name} must be a tensor or a "
                                     f"scalar value, got {value!r}",
                                     hint=f"pass a variable of type {describe_type(ptype)}")
            if _is_number(value) and isinstance(ptype, ScalarType):
                arg = self._typed_constant(node, pname, value, ptype)
            else:
                arg = to_expr(value, f"argument '{pname}'", self.ctx.loc(node))
            # a dynamic dimension on either side is checked when the call runs
            if isinstance(ptype, TensorType) and type_mismatch(
                    ptype, at_param_rank(ptype, arg.type), static_dims_only=True):
                raise self.ctx.error(
                    node, f"argument '{pname}' of self.{name} must be "
                    f"{describe_type(ptype)}, got {describe_type(arg.type)}")
            exprs.append(self.hoist(node, arg))
        rtype = returns[0] if len(returns) == 1 else TupleType(tuple(returns))
        attrs = dict(attrs or {})
        if no_dep:
            attrs[ARG_DIRECTION_OVERRIDES] = no_dep
        return Call(name, tuple(exprs), (), rtype, attrs, is_function=True,
                    loc=self.ctx.loc(node))

    def _typed_constant(self, node: ast.Call, pname: str, value, ptype: ScalarType) -> Expr:
        """A literal passed for a scalar parameter takes its dtype (``1.0`` -> FP32)."""
        if isinstance(value, bool):
            return ConstBool(value)
        if ptype.dtype.is_float:
            return ConstFloat(float(value), ptype.dtype)
        if isinstance(value, float) and not value.is_integer():
            raise self.ctx.error(node, f"argument '{pname}' is {ptype.dtype.value} but "
                                 f"{value!r} is not a whole number",
                                 hint=f"pass an integer, or declare '{pname}' as a float Scalar")
        return ConstInt(int(value), ptype.dtype)

    # --- subscripts (slice sugar) -------------------------------------------------------

    def _expr_Subscript(self, node: ast.Subscript) -> Expr:
        base = self.expr(node.value)
        if isinstance(base, Expr) and isinstance(base.type, TupleType):
            return self.tuple_item(node, base)
        if isinstance(base, Expr) and isinstance(base.type, ArrayType):
            return self.array_element(node, base)
        if isinstance(base, tuple):
            return self.static_item(node, base)
        if not _is_shaped(base):
            raise self.ctx.error(node, f"'{ast.unparse(node)}' subscripts a non-tile value")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) == len(base.type.shape) and not any(isinstance(i, ast.Slice) for i in items):
            return self.element_read(node, base, items)
        shape, offsets = self.slice_window(node, base.type.shape)
        name = "tile.slice" if isinstance(base.type, TileType) else "tensor.slice"
        return make_call(name, (self.hoist(node, base), shape, offsets), {}, loc=self.ctx.loc(node))

    def element_read(self, node: ast.Subscript, base: Expr, items: list) -> Call:
        """``A[i, j]`` with an index per dimension: one element, ``pl.read(A, [i, j])``."""
        indices = []
        for item in items:
            index = self.expr(item)
            if not (_is_number(index) and not isinstance(index, float)) and not (
                    isinstance(index, Expr) and isinstance(index.type, ScalarType)):
                raise self.ctx.error(node, f"'{ast.unparse(item)}' in '{ast.unparse(node)}' is "
                                     "not an index", hint="index with integers or scalars")
            indices.append(self.hoist(node, index))
        level = "tile" if isinstance(base.type, TileType) else "tensor"
        return make_call(f"{level}.read", (self.hoist(node, base), indices), {},
                         loc=self.ctx.loc(node))

    def static_item(self, node: ast.Subscript, base: tuple) -> Any:
        """``x.shape[1]``: one entry of a parse-time tuple (negative indices count from the end)."""
        index = self.expr(node.slice)
        if isinstance(index, bool) or not isinstance(index, int) or \
                not -len(base) <= index < len(base):
            raise self.ctx.error(node, f"'{ast.unparse(node)}' needs a constant index in "
                                 f"[{-len(base)}, {len(base)}) into {len(base)} values")
        return base[index]

    def tuple_item(self, node: ast.Subscript, base: Expr) -> TupleGetItem:
        """``ret[i]``: one element of a tuple result (PyPTO prints unpacking this way)."""
        index = self.expr(node.slice)
        arity = len(base.type.types)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < arity:
            raise self.ctx.error(node, f"'{ast.unparse(node)}' needs a constant index in "
                                 f"[0, {arity}) into a {arity}-tuple",
                                 hint="write ret[0], ret[1], ...")
        return TupleGetItem(base, index)

    def slice_window(self, node: ast.Subscript, full: tuple) -> tuple[list, list]:
        """``x[a:b, c:d]`` -> (shape, offsets); every extent must fold to a constant, except
        ``:`` over a ``pl.dynamic`` dimension (the whole dimension)."""
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) == 1 and _is_full_slice(items[0]):
            items = items * len(full)
        index = next((i for i in items if not isinstance(i, ast.Slice)), None)
        if len(items) > len(full) or len(items) < len(full) and index is None:
            raise self.ctx.error(node, f"'{ast.unparse(node)}' indexes "
                                 f"{count(len(items), 'dimension')} of a rank-{len(full)} value",
                                 hint=f"give one index or 'start:stop' window per dimension "
                                      f"({len(full)})")
        if index is not None:
            one = ast.unparse(index)
            raise self.ctx.error(
                node, f"'{ast.unparse(node)}' indexes fewer dimensions than the value has or mixes "
                "an index with windows: a view that drops a dimension (PyPTO's rank-reducing "
                "subscript) is not supported",
                hint=f"keep the dimension with a one-wide window '{one}:{one} + 1', or give an "
                     "index for every dimension to read one element")
        shape, offsets = [], []
        for item, dim in zip(items, full):
            if item.step is not None:
                raise self.ctx.error(node, "only 'start:stop' windows are supported in subscripts",
                                     hint="a step is not supported; load a tile instead")
            start = self.expr(item.lower) if item.lower is not None else 0
            stop = self.expr(item.upper) if item.upper is not None else dim
            if any(isinstance(b, (float, bool)) for b in (start, stop)):
                raise self.ctx.error(node, f"the window '{ast.unparse(item)}' in "
                                     f"'{ast.unparse(node)}' has a bound that is not an integer",
                                     hint="window bounds are integers or integer scalars")
            extent = _extent(start, stop, self.index_definitions)
            if extent is None and _is_full_slice(item) and isinstance(dim, Expr):
                shape.append(dim)          # the whole of a pl.dynamic dimension
                offsets.append(0)
                continue
            if extent is None:
                raise self.ctx.error(
                    node, f"the window '{ast.unparse(item)}' has no constant size: "
                    f"stop - start does not fold to a number",
                    hint="write it as 'i:i + 64' or 'i * 64:(i + 1) * 64' with a constant size")
            if extent <= 0:
                raise self.ctx.error(node, f"the window '{ast.unparse(item)}' has size {extent}",
                                     hint="a window needs stop > start")
            if isinstance(start, int) and isinstance(dim, int) and not 0 <= start <= dim - extent:
                raise self.ctx.error(node, f"the window '{ast.unparse(item)}' in "
                                     f"'{ast.unparse(node)}' covers [{start}, {start + extent}) "
                                     f"but the dimension has {dim} elements",
                                     hint=f"keep the window within 0..{dim}")
            shape.append(extent)
            offsets.append(start)
        return shape, offsets


def _is_full_slice(item: ast.AST) -> bool:
    return isinstance(item, ast.Slice) and item.lower is None and item.upper is None and \
        item.step is None


def _extent(start: Any, stop: Any, definitions: dict[Var, Expr]) -> int | None:
    if _is_number(start) and _is_number(stop):
        return stop - start
    return constant_difference(stop, start, definitions)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or isinstance(
        value, bool)


def _is_float(value: Expr) -> bool:
    return isinstance(value.type, ScalarType) and value.type.dtype.is_float


def _is_shaped(value: Any) -> bool:
    return isinstance(value, Expr) and isinstance(value.type, (TileType, TensorType))


def _is_index_clamp(value: Call) -> bool:
    """A scalar ``pl.min``/``pl.max`` (``tile.min``/``tile.max`` on scalars)."""
    return value.op in ("tile.min", "tile.max") and isinstance(value.type, ScalarType)
