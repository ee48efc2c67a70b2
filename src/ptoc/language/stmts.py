"""Statements of a kernel body and the function that holds them.

SSA construction happens here: every assignment makes a new variable; names an ``if``
arm or loop body rebinds become phi results or loop-carried values (implicit carries),
and ``pl.yield_`` spells them out explicitly.
"""

from __future__ import annotations

import ast
import dataclasses
import sys
from dataclasses import dataclass
from typing import Any

from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, ScopeKind
from ptoc.errors import PtocError
from ptoc.ir.nodes import (
    AssignStmt, BinOp, ConstBool, Call, ConstFloat, ConstInt, DimVar, EvalStmt, Expr, ForStmt,
    Function, IfStmt, IterArg, Param, ReturnStmt, SeqStmts, Stmt, Submit, TupleGetItem, UnaryOp,
    Var, WhileStmt, YieldStmt, append_yield,
)
from ptoc.ir.aliases import tensor_aliases
from ptoc.ir.verifier import scalar_subexprs
from ptoc.ir.visitor import IRVisitor
from ptoc.ir.dynamic import shape_dim_vars
from ptoc.ir.types import ArrayType, PtrType, ScalarType, TensorType, TileType, TupleType, Type
from ptoc.language.annotations import AnnotationParser
from ptoc.language.context import DslPath, ParseContext
from ptoc.language.exprs import LOOP_FUNCS, ExprParser, is_static
from ptoc.language.jumps import find_jump, lower_range, lower_while
from ptoc.language.predicate import PredicateParser
from ptoc.language.scopes import ScopeParser
from ptoc.language.tasks import TaskParser, is_array
from ptoc.language.scope import Scope
from ptoc.ops import make_call, to_expr
from ptoc.ops.checks import describe_type, shapes_equal, valid_of

Signature = tuple[list[tuple[str, Type]], tuple[Type, ...]]


@dataclass
class YieldInfo:
    """A ``pl.yield_`` ending a body: the yielded values and the names (and types) it binds."""

    node: ast.stmt
    values: list[Expr]
    targets: list[tuple[str, Type | None]]


def compatible(declared: Type, actual: Type) -> bool:
    """Whether ``declared`` (an annotation) describes ``actual``; MemRefs and views refine."""
    if isinstance(declared, TileType) and isinstance(actual, TileType):
        return (shapes_equal(tuple(declared.shape), tuple(actual.shape))
                and declared.dtype is actual.dtype
                and (actual.memory_space is None or declared.memory_space is None
                     or declared.memory_space is actual.memory_space))
    if isinstance(declared, TensorType) and isinstance(actual, TensorType):
        return shapes_equal(tuple(declared.shape), tuple(actual.shape)) and \
            declared.dtype is actual.dtype
    if isinstance(declared, ScalarType) and isinstance(actual, ScalarType):
        return declared.dtype is actual.dtype or (
            not declared.dtype.is_float and not actual.dtype.is_float)
    if isinstance(declared, TupleType) and isinstance(actual, TupleType):
        return len(declared.types) == len(actual.types) and all(
            compatible(d, a) for d, a in zip(declared.types, actual.types))
    if isinstance(declared, ArrayType) and isinstance(actual, ArrayType):
        return declared.dtype is actual.dtype and declared.size == actual.size
    return type(declared) is type(actual) and isinstance(declared, PtrType)


def bind_dynamic_args(call: ast.Call, ctx) -> tuple[int, DimVar]:
    """``(axis, symbol)`` of ``x.bind_dynamic(axis, M)`` (M: a pl.dynamic object, made at
    module level or by the jit body itself)."""
    args = call.args
    symbol = ctx.env.get(args[1].id) if len(args) == 2 and isinstance(args[1], ast.Name) else None
    if not (len(args) == 2 and isinstance(args[0], ast.Constant) and isinstance(
            args[0].value, int) and isinstance(symbol, DimVar)):
        raise ctx.error(call, f"'{ast.unparse(call)}': bind_dynamic takes an axis and a "
                        "pl.dynamic object", hint='M = pl.dynamic("M") (at module level or at '
                        "the top of the body), then a.bind_dynamic(0, M)")
    return args[0].value, symbol


def _keeps_dynamic_dims(declared: Type, actual: Type) -> bool:
    """A ``@pl.jit`` tensor annotated with ``pl.dynamic`` dims (``[M, 128]``) keeps them:
    its static dims and dtype must match the argument (else the usual mismatch error),
    and one compiled program serves every size of the dynamic ones (PyPTO keys them None)."""
    if not (isinstance(declared, TensorType) and isinstance(actual, TensorType)):
        return False
    if not shape_dim_vars(declared.shape) or len(declared.shape) != len(actual.shape):
        return False
    return declared.dtype is actual.dtype and all(
        not isinstance(d, int) or d == a for d, a in zip(declared.shape, actual.shape))


def fill_from_value(declared: Type, actual: Type) -> Type:
    """An annotation completed by the value's type, as PyPTO merges them: what the annotation
    spells wins, and the memory space and view it leaves out come from the value
    (``t: pl.Tile[[64, 64], pl.FP32] = pl.load(...)`` is a Vec tile)."""
    if not (isinstance(declared, TileType) and isinstance(actual, TileType)):
        return declared
    space = declared.memory_space or actual.memory_space
    view = declared.view if declared.view is not None else actual.view
    if space is declared.memory_space and view is declared.view:
        return declared
    return dataclasses.replace(declared, memory_space=space, view=view)


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names a block (re)binds, in first-binding order, looking into nested loops and ifs."""
    names: list[str] = []

    def add(target: ast.AST) -> None:
        if isinstance(target, ast.Name) and target.id not in names:
            names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add(elt)
        elif isinstance(target, ast.Subscript):
            add(target.value)

    def visit(block: list[ast.stmt]) -> None:
        for stmt in block:
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    add(target)
            elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
                add(stmt.target)
            elif isinstance(stmt, (ast.For, ast.While, ast.If)):
                visit(stmt.body)
                visit(stmt.orelse)
            elif isinstance(stmt, ast.With):  # a with-body binds names of its block
                visit(stmt.body)
    visit(stmts)
    return names


def written_before_read(name: str, body: list[ast.stmt]) -> bool:
    """``name`` is bound by a plain assignment at the top of ``body`` before any statement
    reads it, so the value it has on entering the body is never used there."""
    def reads(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                   for n in ast.walk(node))

    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            if reads(stmt.value):
                return False
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(reads(t) for t in targets):     # x[...] = ... reads x
                return False
            if name in assigned_names([stmt]):
                return True
            continue
        if reads(stmt) or name in assigned_names([stmt]):
            return False
    return False


class FunctionParser(ExprParser, AnnotationParser, ScopeParser, TaskParser, PredicateParser):
    """Parses one ``@pl.function`` method (or evaluates module-level constants).

    ``outlined`` collects the functions this one adds to the program (module-level
    ``@pl.function`` kernels it calls); ``pl.at`` scopes stay in the body as ``ScopeStmt``
    and are outlined by the OutlineIncoreScopes pass.
    """

    def __init__(self, ctx: ParseContext, functions: dict[str, Signature],
                 outlined: list | None = None):
        self.ctx = ctx
        self.functions = functions
        self.outlined = outlined if outlined is not None else []
        self.function_name = "main"
        self.runtime_scopes: list[bool] = []
        self.open_scopes: list[ScopeKind] = []    # the with-scopes being parsed, innermost last
        # tensor Var -> the task id Var of the launch that produced it (pl.submit results,
        # names a 'with pl.spmd(...) as tid' region binds): the predicate's deps= check
        self.task_producers: dict[Var, Var] = {}
        self.orchestration_body = True
        self.auto_scope = True
        self.scope = Scope()
        self.pending: list[Stmt] = []
        # integer scalars bound to index arithmetic (``r0 = i * 64``): slice windows fold
        # their sizes through them
        self.index_definitions: dict[Var, Expr] = {}
        self.narrowed: dict[Var, tuple] = {}  # pl.set_validshape results: their valid extents
        # names bound to static dims (``M, N = x.shape``, ``K = x.shape[1]``): parse-time
        # constants, as PyPTO's jit specializer inlines them
        self.shape_names: dict[str, int] = {}

    def flush(self) -> list[Stmt]:
        """Statements hoisted while parsing the current statement, in evaluation order."""
        hoisted, self.pending = self.pending, []
        return hoisted

    # --- functions ----------------------------------------------------------------------

    def decorator_options(self, node: ast.FunctionDef) -> dict[str, Any]:
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            path = self.expr(target)
            if isinstance(path, DslPath) and path.parts == ("inline",):
                return {"type": FunctionType.Inline}
            if isinstance(path, DslPath) and path.parts == ("function",):
                if not isinstance(deco, ast.Call):
                    return {}
                _, kwargs = self.call_arguments(deco)
                return kwargs
        raise self.ctx.error(node, f"method '{node.name}' of a @pl.program class needs a "
                             "@pl.function(type=...) decorator",
                             hint="add @pl.function(type=pl.FunctionType.InCore) above it")

    def signature(self, node: ast.FunctionDef, specialized: dict[str, Type] | None = None
                  ) -> tuple[list[Param], tuple[Type, ...], bool]:
        """Parameters, return types and whether the first parameter is ``self``.

        ``specialized`` gives the types of parameters whose annotation may be bare
        (``pl.Tensor`` in ``@pl.jit`` functions): the type comes from the call's argument
        and a fully written annotation must agree with it.
        """
        specialized = specialized or {}
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.ctx.error(node, f"function '{node.name}' may only have plain parameters")
        params: list[Param] = []
        has_self = bool(args.args) and args.args[0].arg == "self"
        for arg in args.args[1:] if has_self else args.args:
            if arg.arg in self.ctx.specialization:
                continue  # a specialisation constant (a @pl.jit scalar argument)
            if arg.arg in specialized:
                ty, direction = self.specialized_param(arg, specialized[arg.arg])
            elif arg.annotation is None:
                raise self.ctx.error(arg, f"Parameter '{arg.arg}' missing type annotation",
                                     hint=f"annotate it inline, e.g. {arg.arg}: "
                                          "pl.Tensor[[64, 64], pl.FP32]")
            else:
                ty, direction = self.annotation(arg.annotation, allow_direction=True)
            if direction is not Direction.In and not isinstance(ty, TensorType):
                raise self.ctx.error(arg, f"parameter '{arg.arg}': only tensors can be pl.Out or "
                                     "pl.InOut")
            var = self.ctx.env.get(arg.arg)   # a pl.dynamic symbol passed as a parameter
            if not (isinstance(var, DimVar) and isinstance(ty, ScalarType)):
                var = Var(arg.arg, ty, self.ctx.loc(arg))
            self.scope.bind(arg.arg, var)
            params.append(Param(var, direction))
        returns = self.return_annotation(node.returns) if node.returns is not None else ()
        return params, returns, has_self

    def specialized_param(self, arg: ast.arg, actual: Type) -> tuple[Type, Direction]:
        """The argument's own type; its annotation gives the direction and, if complete, a check."""
        node, direction = arg.annotation, Direction.In
        head = _subscript_head(node)
        if head in ("Out", "InOut"):
            direction = Direction.Out if head == "Out" else Direction.InOut
            node = node.slice
        if isinstance(node, ast.Subscript):
            declared, _ = self.annotation(node)
            if _keeps_dynamic_dims(declared, actual):
                return declared, direction   # the specialisation (and its key) holds no size
            if not compatible(declared, actual):
                raise self.ctx.error(arg, f"argument '{arg.arg}' is {describe_type(actual)} but its "
                                     f"annotation says {describe_type(declared)}",
                                     hint="pass a tensor of the annotated shape and dtype")
        return actual, direction

    def function(self, node: ast.FunctionDef) -> Function:
        self.function_name = node.name
        options = self.decorator_options(node)
        func_type = options.pop("type", FunctionType.Opaque)
        if not isinstance(func_type, FunctionType):
            raise self.ctx.error(node, f"@pl.function type= must be a pl.FunctionType, got "
                                 f"{func_type!r}")
        attrs: dict[str, Any] = {}
        for key in ("level", "role"):
            if key in options:
                attrs[key] = getattr(options.pop(key), "value", None)
        attrs.update(options.pop("attrs", None) or {})
        options.pop("strict_ssa", None)
        auto_scope = options.pop("auto_scope", True)
        if auto_scope is False:
            attrs["auto_scope"] = False
        if options:
            raise self.ctx.error(node, f"@pl.function got unknown options: {', '.join(options)}")
        return self.function_from_def(node, func_type, attrs)

    def function_from_def(self, node: ast.FunctionDef, func_type: FunctionType, attrs: dict,
                          specialized: dict[str, Type] | None = None) -> Function:
        """Parse a function definition's signature and body into a ``Function``."""
        self.function_name = node.name
        self.orchestration_body = not func_type.is_kernel
        self.auto_scope = attrs.get("auto_scope", True)
        params, returns, has_self = self.signature(node, specialized)
        body_nodes = list(node.body)
        if body_nodes and isinstance(body_nodes[0], ast.Expr) and isinstance(
                body_nodes[0].value, ast.Constant) and isinstance(body_nodes[0].value.value, str):
            body_nodes = body_nodes[1:]
        stmts, _ = self.block(body_nodes, allow_yield=False)
        if not returns:
            returns = _returned_types(stmts)
        return Function(node.name, tuple(params), returns, SeqStmts(tuple(stmts)), func_type,
                        attrs, has_self, self.ctx.loc(node))

    # --- blocks -------------------------------------------------------------------------

    def block(self, nodes: list[ast.stmt], *, allow_yield: bool) -> tuple[list[Stmt], YieldInfo | None]:
        out: list[Stmt] = []
        declared: dict[str, ast.AnnAssign] = {}
        if allow_yield and len(nodes) == 1 and self.is_runtime_scope(nodes[0]):
            return self.with_stmt(nodes[0], allow_yield=True)   # the yield sits inside
        for index, node in enumerate(nodes):
            if isinstance(node, ast.AnnAssign) and node.value is None and allow_yield \
                    and isinstance(node.target, ast.Name):
                declared[node.target.id] = node    # types a result of the pl.yield_ below
                continue
            yld = self.yield_of(node, declared)
            if declared and yld is None:
                raise self.ctx.error(next(iter(declared.values())), "a bare annotation "
                                     "declares the type of a result of the pl.yield_ right "
                                     "after it", hint="write 'x: T = value', or move the "
                                     "annotation just before 'x, y = pl.yield_(...)'")
            declared = {}
            out.extend(self.flush())
            if yld is not None:
                if not allow_yield:
                    raise self.ctx.error(node, "pl.yield_ outside a loop or if body",
                                         hint="pl.yield_ ends the body of a for loop with "
                                              "init_values, or both arms of an if")
                if index != len(nodes) - 1:
                    raise self.ctx.error(node, "pl.yield_ must be the last statement of its body")
                return out, yld
            parsed = self.stmt(node)
            out.extend(self.flush())
            out.extend(parsed)
        return out, None

    def yield_of(self, node: ast.stmt, declared: dict[str, ast.AnnAssign] | None = None
                 ) -> YieldInfo | None:
        """The ``pl.yield_`` of ``node``, if it is one; ``declared`` holds the bare
        annotations (``x: T``) just before it that type its results."""
        declared = declared or {}
        call, targets, annotation = None, [], None
        if isinstance(node, ast.Expr):
            call = node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            call, targets = node.value, node.targets[0]
        elif isinstance(node, ast.AnnAssign):
            call, targets, annotation = node.value, node.target, node.annotation
        if not (isinstance(call, ast.Call) and self._is_dsl(call.func, "yield_")):
            return None
        if call.keywords:
            raise self.ctx.error(node, "pl.yield_ takes positional values only")
        values = [self.hoist(node, self.runtime(arg, "a yielded value")) for arg in call.args]
        names = targets.elts if isinstance(targets, (ast.Tuple, ast.List)) else (
            [targets] if targets else [])
        bound: list[tuple[str, Type | None]] = []
        for target in names:
            if not isinstance(target, ast.Name):
                raise self.ctx.error(node, "pl.yield_ results must be bound to plain names")
            typed = annotation if annotation is not None else getattr(
                declared.get(target.id), "annotation", None)
            bound.append((target.id, self.annotation(typed)[0] if typed is not None else None))
        unused = set(declared) - {t.id for t in names if isinstance(t, ast.Name)}
        if unused:
            raise self.ctx.error(declared[min(unused)], f"'{min(unused)}' is annotated before "
                                 "a pl.yield_ that does not bind it",
                                 hint="declare only the names the pl.yield_ binds")
        if bound and len(bound) != len(values):
            raise self.ctx.error(node, f"pl.yield_ gives {len(values)} values but binds "
                                 f"{len(bound)} names")
        return YieldInfo(node, values, bound)

    def _is_dsl(self, func: ast.AST, name: str) -> bool:
        return (isinstance(func, ast.Attribute) and func.attr == name
                and isinstance(func.value, ast.Name) and func.value.id in self.ctx.dsl_aliases)

    # --- statements ---------------------------------------------------------------------

    def stmt(self, node: ast.stmt) -> list[Stmt]:
        method = getattr(self, f"_stmt_{type(node).__name__}", None)
        if method is None:
            kind = type(node).__name__.lower()
            hint = {"break": _JUMPS_WHERE, "continue": _JUMPS_WHERE,
                    "with": "pl.at scopes are supported in @pl.jit functions",
                    "functiondef": "define helpers as @pl.function methods of the program"}.get(
                kind, "see the DSL guide for the supported statements")
            raise self.ctx.error(node, f"'{kind}' statements are not supported in kernels",
                                 hint=hint)
        return method(node)

    def _stmt_Pass(self, node: ast.Pass) -> list[Stmt]:
        return []

    def _bind_dynamic(self, call: ast.Call) -> list[Stmt]:
        """``a.bind_dynamic(axis, M)`` (PyPTO's, in a ``@pl.jit`` body): the specialisation
        already made that dimension of ``a`` the symbol (``bind_dynamic_dims``); here it is
        checked and produces no statement."""
        axis, var = bind_dynamic_args(call, self.ctx)
        tensor = self.expr(call.func.value)
        shape = getattr(getattr(tensor, "type", None), "shape", None)
        if shape is None or not 0 <= axis < len(shape) or shape[axis] is not var:
            raise self.ctx.error(call, f"'{ast.unparse(call)}' names a dimension that is not "
                                 "the pl.dynamic symbol", hint="call bind_dynamic on a bare "
                                 "pl.Tensor parameter of a @pl.jit function, with a "
                                 "pl.dynamic object")
        return []

    def _stmt_Expr(self, node: ast.Expr) -> list[Stmt]:
        call = node.value
        if isinstance(call, ast.Constant) and isinstance(call.value, str):
            return []
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and call.func.attr == "bind_dynamic":
            return self._bind_dynamic(call)
        if isinstance(call, ast.Call):
            if self._is_dsl(call.func, "cond"):
                raise self.ctx.error(call, "pl.cond(...) sets the condition of a pl.while_ "
                                     "loop and may only be the first statement of its body",
                                     hint="write 'for (x,) in pl.while_(init_values=(x0,)):' "
                                          "with pl.cond(...) as the body's first line")
            for name, handler in (("static_assert", self._static_assert),
                                  ("static_print", self._static_print),
                                  ("func_attr", lambda _n: [])):
                if self._is_dsl(call.func, name):
                    return handler(call)
        value = self.expr(call)
        if not isinstance(value, Expr):
            return []
        return [EvalStmt(value, self.ctx.loc(node))]

    def _static_assert(self, call: ast.Call) -> list[Stmt]:
        if not call.args or len(call.args) > 2:
            raise self.ctx.error(call, "pl.static_assert takes (condition, \"message\")")
        cond = self.expr(call.args[0])
        if not is_static(cond):
            raise self.ctx.error(call, "pl.static_assert condition must be known at parse time",
                                 hint="assert on shapes and closure constants, not runtime values")
        message = "static assertion failed"
        if len(call.args) == 2:
            if not (isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)):
                raise self.ctx.error(call, "pl.static_assert messages must be string literals")
            message = call.args[1].value
        if not cond:
            raise self.ctx.error(call, f"pl.static_assert failed: {message}")
        return []

    def _static_print(self, call: ast.Call) -> list[Stmt]:
        parts = []
        for arg in call.args:
            value = self.expr(arg)
            parts.append(f"{arg.id}: {describe_type(value.type)}"
                         if isinstance(value, Expr) and isinstance(arg, ast.Name) else
                         describe_type(value.type) if isinstance(value, Expr) else str(value))
        print(f"{self.ctx.loc(call)}: static_print: {' '.join(parts)}", file=sys.stderr)
        return []

    def _stmt_Assign(self, node: ast.Assign) -> list[Stmt]:
        if len(node.targets) != 1:
            raise self.ctx.error(node, "chained assignment 'a = b = ...' is not supported")
        target = node.targets[0]
        if isinstance(target, ast.Name) and isinstance(self.ctx.env.get(target.id), DimVar) \
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                and node.value.func.attr == "dynamic":
            return []   # M = pl.dynamic("M") in a @pl.jit body: the symbol is already in env
        if isinstance(target, ast.Name):
            return self.assign(node, target.id, node.value, None)
        if isinstance(target, ast.Subscript) and is_array(self.scope.lookup(
                getattr(target.value, "id", ""))):
            return [self.array_update(node, target, node.value)]
        if isinstance(target, ast.Subscript):
            return [self.subscript_assign(node, target, node.value)]
        if isinstance(target, (ast.Tuple, ast.List)):
            return self.unpack_assign(node, target)
        raise self.ctx.error(node, f"cannot assign to '{ast.unparse(target)}'",
                             hint="assign each value to its own name")

    def unpack_assign(self, node: ast.Assign, target: ast.Tuple | ast.List) -> list[Stmt]:
        """``a, b = self.kernel(...)``: the tuple goes to ``_tuple_tmp``, each name to an item
        (``(a, b), tid = pl.submit(...)`` binds the submit's flat items the same way)."""
        value = self.expr(node.value)
        names = self.submit_targets(node, target, node.value, value) or target.elts
        if isinstance(value, tuple) and _reads_shape(node.value) and \
                all(isinstance(n, ast.Name) for n in names):
            return self.unpack_shape(node, names, value)
        if not (isinstance(value, Expr) and isinstance(value.type, TupleType)):
            raise self.ctx.error(node, f"cannot unpack '{ast.unparse(node.value)}': unpacking is "
                                 "only supported for pl.yield_ results and calls of functions "
                                 "returning several values", hint="assign each value to its "
                                 "own name")
        if len(names) != len(value.type.types):
            raise self.ctx.error(node, f"'{ast.unparse(node.value)}' gives "
                                 f"{len(value.type.types)} values but {len(names)} names are "
                                 "bound", hint="bind one name per returned value")
        for name in names:
            if not isinstance(name, ast.Name):
                raise self.ctx.error(node, f"unpacking target '{ast.unparse(name)}' must be a "
                                     "plain name", hint="write 'a, b = self.kernel(...)'")
        loc = self.ctx.loc(node)
        whole = Var("_tuple_tmp", value.type, loc)
        stmts: list[Stmt] = [AssignStmt(whole, value, loc)]
        items = []
        for index, name in enumerate(names):
            item = Var(name.id, value.type.types[index], loc)
            self.scope.bind(name.id, item)
            items.append(item)
            stmts.append(AssignStmt(item, TupleGetItem(whole, index), loc))
        if isinstance(value, Submit):
            self.record_producers(items[:-1], items[-1])
        return stmts

    def unpack_shape(self, node: ast.Assign, names: list[ast.Name], value: tuple) -> list[Stmt]:
        """``M, N = x.shape``: a static dimension binds its name to the constant, a dynamic one
        to a scalar variable holding it."""
        if len(names) != len(value):
            raise self.ctx.error(node, f"'{ast.unparse(node.value)}' gives {len(value)} values "
                                 f"but {len(names)} names are bound",
                                 hint="bind one name per dimension")
        stmts: list[Stmt] = []
        for name, item in zip(names, value):
            stmts += self.bind_shape_name(node, name.id, item) if isinstance(item, int) else \
                [self.bind_value(node, name.id, item, None)]
        return stmts

    def _stmt_AnnAssign(self, node: ast.AnnAssign) -> list[Stmt]:
        if not isinstance(node.target, ast.Name) or node.value is None:
            raise self.ctx.error(node, "an annotated statement needs a name and a value, e.g. "
                                 "x: pl.Tile[[64, 64], pl.FP32] = pl.load(...)")
        return self.assign(node, node.target.id, node.value, node.annotation)

    def _stmt_AugAssign(self, node: ast.AugAssign) -> list[Stmt]:
        if not isinstance(node.target, ast.Name):
            raise self.ctx.error(node, "augmented assignment needs a plain name")
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
              ast.Div: "/"}.get(type(node.op))
        if op is None:
            raise self.ctx.error(node, "this augmented operator is not supported")
        value = self.binary(node, op, self.expr(node.target), self.expr(node.value))
        return [self.bind_value(node, node.target.id, value, None)]

    def assign(self, node: ast.stmt, name: str, value_node: ast.AST,
               annotation: ast.AST | None) -> list[Stmt]:
        value_node = _typed_pop(value_node, annotation)
        value = self.expr(value_node)
        if annotation is None and _reads_shape(value_node) and isinstance(value, int):
            return self.bind_shape_name(node, name, value)
        declared = self.annotation(annotation)[0] if annotation is not None else None
        return [self.bind_value(node, name, value, declared)]

    def bind_shape_name(self, node: ast.stmt, name: str, value: int) -> list[Stmt]:
        """``K = x.shape[1]``: ``K`` is the constant itself, so a tile shaped ``[M, K]`` is static."""
        if self.scope.lookup(name) is not None:
            raise self.ctx.error(node, f"'{name}' is already a variable; binding it to a static "
                                 "dimension here would leave earlier uses inconsistent",
                                 hint=f"use a new name for the dimension, e.g. '{name}_dim'")
        self.shape_names[name] = value
        return []

    def bind_value(self, node: ast.stmt, name: str, value: Any, declared: Type | None) -> Stmt:
        if isinstance(value, (list, tuple, dict)) or not (isinstance(value, Expr) or is_static(value)):
            raise self.ctx.error(node, f"'{name}' must be bound to a value, not "
                                 f"'{ast.unparse(node.value)}'",
                                 hint="lists and pl.* names cannot be stored in variables; "
                                      "write them inline where they are used")
        if isinstance(value, DataType) or (is_static(value) and not isinstance(value, (int, float))):
            raise self.ctx.error(node, f"'{name}' must be bound to a value, got {value!r}",
                                 hint="capture constants in the enclosing Python scope instead")
        expr = to_expr(value, f"value of '{name}'", self.ctx.loc(node))
        ty = expr.type
        if declared is not None:
            if not compatible(declared, ty):
                raise self.ctx.error(
                    node, f"annotation of '{name}' says {describe_type(declared)} but the value is "
                    f"{describe_type(ty)}", hint="fix the annotation or the value's shape/dtype")
            ty = declared = fill_from_value(declared, ty)
            if isinstance(expr, Call):
                expr = dataclasses.replace(expr, type=declared)
            elif isinstance(expr, (ConstInt, ConstFloat)) and isinstance(declared, ScalarType):
                expr = dataclasses.replace(expr, dtype=declared.dtype)  # x: Scalar[INT64] = 0
        var = Var(name, ty, self.ctx.loc(node))
        self.scope.bind(name, var)
        if isinstance(expr, (BinOp, UnaryOp, Var, ConstInt)) and isinstance(ty, ScalarType):
            self.index_definitions[var] = expr
        if (extents := _narrowing(expr)) is not None:
            self.narrowed[var] = extents
        return AssignStmt(var, expr, self.ctx.loc(node))

    def subscript_assign(self, node: ast.Assign, target: ast.Subscript, value_node: ast.AST) -> Stmt:
        """``out[a:b, c:d] = expr`` is ``out = pl.assemble(out, expr, [a, c])``."""
        if not isinstance(target.value, ast.Name):
            raise self.ctx.error(node, "only 'name[...] = value' is supported")
        base = self.expr(target.value)
        if not (isinstance(base, Expr) and isinstance(base.type, TensorType)):
            raise self.ctx.error(node, f"'{ast.unparse(target)} = ...' needs a Tensor on the left",
                                 hint="tiles are written with pl.tile.assemble")
        window, offsets = self.slice_window(target, base.type.shape)
        value = self.expr(value_node)
        narrowed = _narrowing(value) or (self.narrowed.get(value) if isinstance(value, Var)
                                          else None)
        value = self.hoist(node, value)
        self.fills_window(node, target, window, value, narrowed)
        call = make_call("tensor.assemble", (base, value, offsets), {}, loc=self.ctx.loc(node))
        return self.bind_value(node, target.value.id, call, None)

    def fills_window(self, node: ast.AST, target: ast.Subscript, window: list, value,
                     narrowed: tuple | None) -> None:
        """``out[a:b, c:d] = v``: ``v`` has the window's rank and, on each axis where both
        sizes are constants, the window's size (or ``v``'s valid extent there), as PyPTO
        checks at parse time; a smaller value would leave part of the window unwritten, a
        larger one would write past it."""
        ty = getattr(value, "type", None)
        if not isinstance(ty, (TensorType, TileType)):
            return
        where = f"'{ast.unparse(target)} = ...'"
        if len(ty.shape) != len(window):
            raise self.ctx.error(node, f"{where} writes a {len(window)}-D window but the value is "
                                 f"{describe_type(ty)}: it must be {len(window)}-D",
                                 hint="reshape the value with pl.reshape to the window's rank")
        valid = narrowed or (ty.valid_shape if isinstance(ty, TensorType) else
                             (valid_of(ty) or ty.shape))
        for axis, (size, dim, extent) in enumerate(zip(window, ty.shape, valid)):
            # a run-time extent (not an int) is trusted
            if isinstance(size, int) and isinstance(dim, int) and size != dim \
                    and isinstance(extent, int) and extent != size:
                raise self.ctx.error(
                    node, f"{where}: shape mismatch on axis {axis}: the window is {size} wide but "
                    f"the value is {describe_type(ty)}",
                    hint=f"make the window's stop - start {dim} on axis {axis}, or slice the value")

    def _stmt_Return(self, node: ast.Return) -> list[Stmt]:
        if node.value is None:
            values: list[Expr] = []
        elif isinstance(node.value, ast.Tuple):
            values = [self.hoist(node, self.runtime(v, "a returned value")) for v in node.value.elts]
        else:
            values = [self.hoist(node, self.runtime(node.value, "the returned value"))]
        return [ReturnStmt(tuple(values), self.ctx.loc(node))]

    # --- loops --------------------------------------------------------------------------

    def _stmt_For(self, node: ast.For) -> list[Stmt]:
        if find_jump(node.body) is not None:
            return self.loop_with_jumps(node)
        if isinstance(node.iter, ast.Call) and self._is_dsl(node.iter.func, "spmd"):
            return self.spmd_loop(node)
        if isinstance(node.iter, ast.Call) and self._is_dsl(node.iter.func, "while_"):
            return self.while_loop(node)
        kind, bounds, init_values, attrs = self.loop_header(node)
        if node.orelse:
            raise self.ctx.error(node, "for-else is not supported in kernels")
        iv_name, ia_names = self.loop_targets(node, init_values is not None)
        loop_var = Var(iv_name, ScalarType(DataType.INDEX), self.ctx.loc(node.target))
        header, iter_args, stmts, return_vars, _ = self.carried_loop(
            node, node.body, init_values, ia_names, loop_var)
        start, stop, step = bounds
        if isinstance(step, ConstInt) and step.value < 0:
            loop_var, (start, stop, step), first = counted_down(loop_var, start, stop, step)
            stmts = [first, *stmts]
        return header + [ForStmt(loop_var, start, stop, step, iter_args, SeqStmts(tuple(stmts)),
                        tuple(return_vars), kind, attrs, self.ctx.loc(node))]

    def carried_loop(self, node: ast.stmt, body: list[ast.stmt], init_values, ia_names,
                     loop_var: Var | None = None, condition=None):
        """The parts of a loop that carries values: the statements computing the inits, the
        iter args, the body (ending in its yield) and the result Vars, which are bound in
        the enclosing scope. ``init_values`` None: the carries are the outer names the body
        rebinds. ``condition(scope)`` (a while loop's) is parsed where the iter args are
        bound, before the body; its value is returned last."""
        outer = self.scope
        if init_values is not None:
            if len(init_values) != len(ia_names):
                raise self.ctx.error(node, f"the loop names {len(ia_names)} carried values but "
                                     f"init_values has {len(init_values)}")
            inits = [self.runtime_init(node, v) for v in init_values]
            carried_names = ia_names
        else:
            carried_names = [n for n in assigned_names(body)
                             if (loop_var is None or n != loop_var.name)
                             and outer.lookup(n) is not None]
            inits = [outer.lookup(n) for n in carried_names]
        inits = [self.hoist(node, i) for i in inits]
        header = self.flush()
        iter_args = tuple(IterArg(n, i.type, self.ctx.loc(node), init=i)
                          for n, i in zip(carried_names, inits))
        self.scope = outer.child()
        if loop_var is not None:
            self.scope.bind(loop_var.name, loop_var)
        for ia in iter_args:
            self.scope.bind(ia.name, ia)
        try:
            cond = condition() if condition is not None else None
            stmts, yld = self.block(body, allow_yield=True)
            body_scope = self.scope
        finally:
            self.scope = outer
        if init_values is not None:
            if yld is None and iter_args and condition is None:
                raise self.ctx.error(node, "a loop with init_values must end with pl.yield_(...)",
                                     hint=f"end the body with pl.yield_({', '.join(ia_names)})")
            if yld is None:     # a pre-SSA while body rebinds its header names
                values = [body_scope.lookup(n) for n in carried_names]
                targets = [(n, None) for n in carried_names]
            else:
                values = yld.values
                targets = yld.targets or [(f"{ia.name}_out", None) for ia in iter_args]
        else:
            if yld is not None:
                raise self.ctx.error(yld.node, "pl.yield_ in a loop without init_values",
                                     hint="declare the carried values with init_values=(...)")
            values = [body_scope.lookup(n) for n in carried_names]
            targets = [(n, None) for n in carried_names]
        if len(values) != len(iter_args):
            raise self.ctx.error(node, f"the loop carries {len(iter_args)} values but pl.yield_ "
                                 f"gives {len(values)}")
        if init_values is None:
            iter_args, values, targets, retired = self.loop_local_names(body, iter_args, values,
                                                                        targets)
            for name in retired:
                outer.retire(name, f"it is rebound inside the loop at line {node.lineno} "
                             "with another type, so its value after the loop is not kept")
        return_vars = []
        for ia, value, (name, declared) in zip(iter_args, values, targets):
            if not compatible(ia.type, value.type):
                raise self.ctx.error(
                    node, f"carried value '{ia.name}' changes type inside the loop: "
                    f"{describe_type(ia.type)} on entry, {describe_type(value.type)} at the end",
                    hint="each carry must keep one type across the loop")
            return_vars.append(Var(name, declared or ia.type, self.ctx.loc(node)))
        if iter_args:
            append_yield(stmts, YieldStmt(tuple(values), self.ctx.loc(yld.node if yld else node)))
        for rv, (name, _) in zip(return_vars, targets):
            outer.bind(name, rv)
        self._bind_escaping_stores(body, stmts, body_scope, outer,
                                   dict(zip(iter_args, return_vars)))
        for name in body_scope.bindings:
            if outer.lookup(name) is None and outer.retired_reason(name) is None \
                    and (loop_var is None or name != loop_var.name):
                outer.retire(name, f"it is first assigned inside the loop at line {node.lineno}, "
                             "so it has no value before the loop (nor if the loop runs no "
                             "iteration); assign it before the loop to carry it out")
        return header, iter_args, stmts, return_vars, cond

    # --- while loops --------------------------------------------------------------------

    def while_loop(self, node: ast.For) -> list[Stmt]:
        """``for (x, y) in pl.while_(init_values=(x0, y0)):`` whose body starts with
        ``pl.cond(<scalar of the carries>)`` and ends with ``x1, y1 = pl.yield_(...)``."""
        args, kwargs = self.call_arguments(node.iter)
        init_values = kwargs.pop("init_values", None)
        if args or kwargs:
            raise self.ctx.error(node, "pl.while_ takes only init_values=(...)",
                                 hint="write 'for (x,) in pl.while_(init_values=(x0,)):'")
        if init_values is None:
            raise self.ctx.error(node, "while_() requires init_values to be specified",
                                 hint="add init_values=(...), even if it is a single counter, "
                                      "or write a plain 'while cond:' loop")
        if not isinstance(init_values, tuple):
            raise self.ctx.error(node, "init_values must be a tuple, e.g. init_values=(x0,)")
        target = node.target
        if not (isinstance(target, (ast.Tuple, ast.List))
                and all(isinstance(e, ast.Name) for e in target.elts)):
            raise self.ctx.error(node, f"unsupported pl.while_ target '{ast.unparse(target)}'",
                                 hint="bind the carried values as a tuple: "
                                      "'for (x,) in pl.while_(init_values=(x0,)):'")
        if node.orelse:
            raise self.ctx.error(node, "for-else is not supported in kernels")
        body = list(node.body)
        first = body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)
                and self._is_dsl(first.value.func, "cond")):
            raise self.ctx.error(first, "the first statement of a pl.while_ body must be "
                                 "pl.cond(<condition>)", hint="move pl.cond(...) to the first "
                                 "line of the loop body")
        cond_call = first.value
        if len(cond_call.args) != 1 or cond_call.keywords:
            raise self.ctx.error(first, "pl.cond takes one condition, e.g. pl.cond(x < n)")
        self._refuse_bare_yield(body)
        names = [e.id for e in target.elts]
        header, iter_args, stmts, return_vars, cond = self.carried_loop(
            node, body[1:], init_values, names,
            condition=lambda: self.while_condition(cond_call.args[0]))
        return header + [WhileStmt(cond, iter_args, SeqStmts(tuple(stmts)), tuple(return_vars),
                                   self.ctx.loc(node))]

    def _stmt_While(self, node: ast.While) -> list[Stmt]:
        """Python's ``while cond:``: the carries are the outer names the body rebinds."""
        if node.orelse:
            raise self.ctx.error(node, "while-else is not supported in kernels")
        if find_jump(node.body) is not None:
            before, node = lower_while(node, self.jump_error)
            return [s for b in before for s in self.stmt(b)] + self._stmt_While(node)
        header, iter_args, stmts, return_vars, cond = self.carried_loop(
            node, node.body, None, [], condition=lambda: self.while_condition(node.test))
        return header + [WhileStmt(cond, iter_args, SeqStmts(tuple(stmts)), tuple(return_vars),
                                   self.ctx.loc(node))]

    def loop_with_jumps(self, node: ast.For) -> list[Stmt]:
        """A ``pl.range`` loop (without init_values) whose body has ``break``/``continue``:
        rewritten without them (``ptoc.language.jumps``), then parsed."""
        it = node.iter
        if isinstance(it, ast.Call) and self._is_dsl(it.func, "while_"):
            return [s for st in self.pre_ssa_while(node) for s in self.stmt(st)]
        is_range = isinstance(it, ast.Call) and self._is_dsl(it.func, "range")
        if not is_range or any(k.arg == "init_values" for k in it.keywords) \
                or not isinstance(node.target, ast.Name) or node.orelse:
            raise self.jump_error(find_jump(node.body), "this loop cannot take it")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.ctx.error(node, "pl.range takes (stop), (start, stop) or "
                                 "(start, stop, step)")
        args = list(it.args)
        bounds = ([ast.Constant(0)] + args + [ast.Constant(1)] if len(args) == 1
                  else args + [ast.Constant(1)] * (3 - len(args)))
        before, loop = lower_range(node, bounds, self.jump_error)
        out = [s for b in before for s in self.stmt(b)]
        return out + self.stmt(loop)

    def pre_ssa_while(self, node: ast.For) -> list[ast.stmt]:
        """A ``pl.while_`` whose body rebinds its header names (no ``pl.yield_``) as the
        Python ``while`` it means: ``x = x0`` for each carry, then ``while <pl.cond>:``
        (which takes break/continue)."""
        body, inits = node.body, [k.value for k in node.iter.keywords
                                  if k.arg == "init_values"]
        first = body[0] if body else None
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)
                and self._is_dsl(first.value.func, "cond") and len(first.value.args) == 1):
            raise self.ctx.error(node, "the first statement of a pl.while_ body must be "
                                 "pl.cond(<condition>)")
        yields = [s for s in body if isinstance(getattr(s, "value", None), ast.Call)
                  and self._is_dsl(s.value.func, "yield_")]
        if yields or not inits \
                or not isinstance(inits[0], ast.Tuple) \
                or not isinstance(node.target, (ast.Tuple, ast.List)) \
                or len(node.target.elts) != len(inits[0].elts):
            raise self.jump_error(find_jump(body), "a pl.while_ takes it only when its body "
                                  "rebinds the header names (no pl.yield_)")
        assigns = [ast.fix_missing_locations(ast.copy_location(
            ast.Assign([ast.Name(t.id, ast.Store())], v), node))
            for t, v in zip(node.target.elts, inits[0].elts)]
        return assigns + [ast.copy_location(ast.While(first.value.args[0], body[1:], []), node)]

    def jump_error(self, node: ast.AST, why: str) -> PtocError:
        kind = type(node).__name__.lower() if isinstance(node, (ast.Break, ast.Continue)) \
            else "break/continue"
        return self.ctx.error(node, f"'{kind}' is not supported here: {why}",
                              hint=_JUMPS_WHERE + " (directly or under if); elsewhere make "
                                   "the exit a loop condition")

    def while_condition(self, test: ast.AST) -> Expr:
        """A while loop's condition: a BOOL scalar computed from the carries and values
        defined before the loop, with no op call (it is re-evaluated before every trip; an
        op's result would be computed once, before the loop)."""
        value = self.expr(test)
        if isinstance(value, bool):
            value = ConstBool(value)
        if self.pending or not (isinstance(value, Expr) and isinstance(value.type, ScalarType)
                                and value.type.dtype is DataType.BOOL) \
                or any(isinstance(e, Call) for e in scalar_subexprs(value)):
            self.pending = []
            raise self.ctx.error(test, f"the while condition '{ast.unparse(test)}' must be a "
                                 "comparison or logic of scalars (the carried values and values "
                                 "defined before the loop), with no op call",
                                 hint="compute the value in the loop body (e.g. v = pl.read(t, "
                                      "[i])), carry it, and test the carry: pl.cond(v < bound)")
        return value

    def _refuse_bare_yield(self, body: list[ast.stmt]) -> None:
        last = body[-1]
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) \
                and self._is_dsl(last.value.func, "yield_"):
            raise self.ctx.error(last, "a pl.while_ body must bind its pl.yield_: "
                                 "'x_next = pl.yield_(...)' (the name read after the loop)",
                                 hint="write 'x_next = pl.yield_(x + 1)' and read x_next after "
                                      "the loop")

    @staticmethod
    def loop_local_names(body: list[ast.stmt], iter_args, values, targets):
        """Implicit carries that are really loop-local: a name the body writes before it reads
        it, whose value changes type in the body (a name reused from an earlier loop with
        another shape). Its entry value is dead, so it needs no carry; its value after the
        loop is not kept (reading it there is an error, never the stale value)."""
        keep, retired = [], []
        for ia, value, target in zip(iter_args, values, targets):
            if not compatible(ia.type, value.type) and written_before_read(ia.name, body):
                retired.append(ia.name)
            else:
                keep.append((ia, value, target))
        if not retired:
            return iter_args, values, targets, []
        ias, vals, tgts = (list(x) for x in zip(*keep)) if keep else ([], [], [])
        return tuple(ias), vals, tgts, retired

    def _bind_escaping_stores(self, body: list[ast.stmt], stmts, body_scope, outer, results
                              ) -> None:
        """A name first bound inside the loop to a store into an outer tensor (``new =
        pl.store(t, offs, out)``) names that tensor after the loop, as PyPTO's ConvertToSSA
        promotes such loop-escaping values with the destination as their initial value."""
        roots = {v: v for v in _FreeTensors.of(stmts)}
        roots.update({ia: ia for ia in results})
        aliases = tensor_aliases(SeqStmts(tuple(stmts)), roots)
        for name in assigned_names(body):
            if outer.lookup(name) is not None:
                continue
            value = body_scope.bindings.get(name)
            root = aliases.root_of(value) if value is not None else None
            if root is not None:
                outer.bind(name, results.get(root, root))

    def runtime_init(self, node: ast.AST, value: Any) -> Expr:
        if not isinstance(value, Expr):
            return to_expr(value, "an init value", self.ctx.loc(node))
        return value

    def loop_header(self, node: ast.For):
        it = node.iter
        func = self.expr(it.func) if isinstance(it, ast.Call) else None
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
                and self.scope.lookup("range") is None:
            raise self.ctx.error(
                node, "a plain Python range() loop is not supported in kernels",
                hint="use pl.range(...) for a sequential loop, pl.unroll(...) to unroll, "
                     "pl.pipeline(..., stage=N) to software-pipeline, pl.parallel(...) for "
                     "independent iterations")
        if isinstance(func, DslPath) and func.dotted == "split_aiv":
            raise self.ctx.error(
                node, "pl.split_aiv regions (the hand-placed AIV-lane form of a mixed kernel) "
                      "are not supported by ptoc yet",
                hint="mark the pl.at scope optimizations=[pl.split(pl.SplitMode.UP_DOWN)] (or "
                     "LEFT_RIGHT) and write the cube and vector ops in its body: the compiler "
                     "inserts the aiv_shard/aic_gather transfers itself")
        if not (isinstance(func, DslPath) and func.dotted in LOOP_FUNCS):
            raise self.ctx.error(node, f"cannot loop over '{ast.unparse(it)}'",
                                 hint="loop with pl.range / pl.pipeline / pl.unroll / pl.parallel")
        kind = LOOP_FUNCS[func.dotted]
        args, kwargs = self.call_arguments(it)
        init_values = kwargs.pop("init_values", None)
        stage = kwargs.pop("stage", None)
        user_attrs = kwargs.pop("attrs", None) or {}
        if kwargs:
            raise self.ctx.error(node, f"pl.{func.dotted} got unknown arguments: {', '.join(kwargs)}")
        if not 1 <= len(args) <= 3:
            raise self.ctx.error(node, f"pl.{func.dotted} takes (stop), (start, stop) or "
                                 "(start, stop, step)")
        bounds = [0, args[0], 1] if len(args) == 1 else list(args) + [1] * (3 - len(args))
        if kind is ForKind.Unroll and not all(isinstance(b, int) for b in bounds):
            raise self.ctx.error(node, "pl.unroll bounds must be integer literals")
        if isinstance(bounds[2], int) and bounds[2] == 0:
            raise self.ctx.error(node, "a loop step of 0 never terminates", hint="use a step >= 1")
        exprs = tuple(self.loop_bound(node, b) for b in bounds)
        if init_values is not None and not isinstance(init_values, tuple):
            raise self.ctx.error(node, "init_values must be a tuple, e.g. init_values=(acc,)")
        if not isinstance(user_attrs, dict):
            raise self.ctx.error(node, "attrs= must be a dict literal")
        attrs: dict[str, Any] = {}
        if kind is ForKind.Pipeline:
            if not isinstance(stage, int) or isinstance(stage, bool) or stage < 1:
                raise self.ctx.error(node, f"pl.pipeline needs stage= an integer >= 1, got {stage!r}",
                                     hint="write pl.pipeline(0, n, step, stage=2)")
            if not isinstance(bounds[2], int):
                raise self.ctx.error(node, "pl.pipeline needs a constant step")
            attrs["pipeline_stages"] = stage
        elif stage is not None:
            raise self.ctx.error(node, f"stage= is only valid on pl.pipeline, not pl.{func.dotted}")
        attrs.update(user_attrs)
        return kind, exprs, init_values, attrs

    def loop_bound(self, node: ast.AST, value: Any) -> Expr:
        expr = to_expr(value, "a loop bound", self.ctx.loc(node)) if not isinstance(value, Expr) \
            else value
        if not isinstance(expr.type, ScalarType) or expr.type.dtype.is_float:
            raise self.ctx.error(node, "loop bounds must be integers or integer scalars")
        return self.hoist(node, expr)

    def loop_targets(self, node: ast.For, explicit: bool) -> tuple[str, list[str]]:
        target = node.target
        if isinstance(target, ast.Name):
            if explicit:
                raise self.ctx.error(node, "a loop with init_values binds "
                                     "'for i, (a, b) in pl.range(..., init_values=(a0, b0))'")
            return target.id, []
        if (isinstance(target, ast.Tuple) and len(target.elts) == 2
                and isinstance(target.elts[0], ast.Name)
                and isinstance(target.elts[1], (ast.Tuple, ast.List))
                and all(isinstance(e, ast.Name) for e in target.elts[1].elts)):
            if not explicit:
                raise self.ctx.error(node, "carried names in the loop target need init_values=(...)")
            return target.elts[0].id, [e.id for e in target.elts[1].elts]
        raise self.ctx.error(node, f"unsupported loop target '{ast.unparse(target)}'",
                             hint="write 'for i in ...' or 'for i, (a, b) in ...'")

    # --- branches -----------------------------------------------------------------------

    def _stmt_If(self, node: ast.If) -> list[Stmt]:
        cond = self.expr(node.test)
        if is_static(cond) and isinstance(cond, bool) and _arms_yield(node):
            # Printed IR of a phi-carrying if whose condition a pass folded to a constant
            # (LowerPipelineLoops' tail clone of ``if ko == 0``): keep the IfStmt.
            cond = ConstBool(cond)
        if is_static(cond):
            stmts, yld = self.block(node.body if cond else node.orelse, allow_yield=False)
            return stmts
        if not (isinstance(cond, Expr) and isinstance(cond.type, ScalarType)):
            raise self.ctx.error(node, f"if condition '{ast.unparse(node.test)}' must be a scalar")
        cond = self.hoist(node, cond)
        header = self.flush()  # what the condition computes runs before the branch
        outer = self.scope
        arms = []
        for body in (node.body, node.orelse):
            self.scope = outer.child()
            try:
                stmts, yld = self.block(body, allow_yield=True)
                arms.append((stmts, yld, self.scope))
            finally:
                self.scope = outer
        (then_stmts, then_yld, then_scope), (else_stmts, else_yld, else_scope) = arms
        if then_yld or else_yld:
            names, then_vals, else_vals = self.explicit_phis(node, then_yld, else_yld)
        else:
            names, then_vals, else_vals = self.implicit_phis(node, outer, then_scope, else_scope)
        if not names:
            return header + [IfStmt(cond, SeqStmts(tuple(then_stmts)),
                                    SeqStmts(tuple(else_stmts)) if node.orelse else None, (),
                                    self.ctx.loc(node))]
        return_vars = []
        for (name, declared), tv, ev in zip(names, then_vals, else_vals):
            if not compatible(tv.type, ev.type):
                raise self.ctx.error(
                    node, f"the if arms give '{name}' different types: {describe_type(tv.type)} "
                    f"vs {describe_type(ev.type)}", hint="both arms must yield the same types")
            return_vars.append(Var(name, declared or tv.type, self.ctx.loc(node)))
        append_yield(then_stmts, YieldStmt(tuple(then_vals),
                                           self.ctx.loc(then_yld.node if then_yld else node)))
        append_yield(else_stmts, YieldStmt(tuple(else_vals),
                                           self.ctx.loc(else_yld.node if else_yld else node)))
        for rv in return_vars:
            outer.bind(rv.name, rv)
        return header + [IfStmt(cond, SeqStmts(tuple(then_stmts)), SeqStmts(tuple(else_stmts)),
                                tuple(return_vars), self.ctx.loc(node))]

    def explicit_phis(self, node, then_yld, else_yld):
        if then_yld is None or else_yld is None:
            raise self.ctx.error(node, "only one arm of this if ends with pl.yield_",
                                 hint="both arms must pl.yield_ the same number of values")
        if len(then_yld.values) != len(else_yld.values):
            raise self.ctx.error(node, f"the if arms yield different numbers of values: "
                                 f"{len(then_yld.values)} vs {len(else_yld.values)}",
                                 hint="both arms must pl.yield_ the same number of values")
        names = then_yld.targets or else_yld.targets
        if not names:
            raise self.ctx.error(node, "bind the if's results: 'x = pl.yield_(...)' in each arm")
        return names, then_yld.values, else_yld.values

    def implicit_phis(self, node, outer: Scope, then_scope: Scope, else_scope: Scope):
        names, then_vals, else_vals = [], [], []
        for name in assigned_names(node.body + node.orelse):
            tv, ev = then_scope.lookup(name), else_scope.lookup(name)
            if tv is None or ev is None or (tv is ev):
                continue
            names.append((name, None))
            then_vals.append(tv)
            else_vals.append(ev)
        return names, then_vals, else_vals


def _subscript_head(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
        return node.value.attr
    return None


def _returned_types(stmts: list[Stmt]) -> tuple[Type, ...]:
    """Return types of a function written without an annotation, from its return statement."""
    for stmt in reversed(stmts):
        if isinstance(stmt, ReturnStmt):
            return tuple(v.type for v in stmt.values)
    return ()


def wrap_errors(ctx: ParseContext, node: ast.AST, fn, *args):
    """Run a parse step, attaching the node's location to location-less PtocErrors."""
    try:
        return fn(*args)
    except PtocError as err:
        if err.loc is None:
            raise type(err)(err.message, ctx.loc(node), hint=err.hint) from None
        raise


def _arms_yield(node: ast.If) -> bool:
    """True when both arms of ``node`` end in a ``pl.yield_`` (bare or assigned)."""
    def ends_in_yield(body) -> bool:
        if not body:
            return False
        last = body[-1]
        value = getattr(last, "value", None)
        func = getattr(value, "func", None)
        return isinstance(value, ast.Call) and getattr(func, "attr", None) == "yield_"
    return ends_in_yield(node.body) and ends_in_yield(node.orelse)


class _FreeTensors(IRVisitor):
    """Tensor Vars a statement list uses without defining them (loop-invariant operands)."""

    def __init__(self):
        super().__init__()
        self.defined: set[int] = set()
        self.found: list[Var] = []

    def visit_def(self, var: Var) -> None:
        self.defined.add(id(var))

    def visit_var(self, node: Var) -> None:
        if isinstance(node.type, TensorType) and id(node) not in self.defined \
                and node not in self.found:
            self.found.append(node)

    @classmethod
    def of(cls, stmts) -> list[Var]:
        walker = cls()
        for stmt in stmts:
            walker.visit(stmt)
        return walker.found


_POPS = ("tpop_from_aic", "tpop_from_aiv")


def _typed_pop(value_node: ast.AST, annotation: ast.AST | None) -> ast.AST:
    """PyPTO's ``t: pl.Tile[[r, c], dtype, ...] = pl.tpop_from_aic(split=s)``: a pop without
    shape and dtype takes them from the annotation (ptoc's pop op names them)."""
    if not (isinstance(value_node, ast.Call) and isinstance(value_node.func, ast.Attribute)
            and value_node.func.attr in _POPS and not value_node.args
            and not any(k.arg in ("shape", "dtype") for k in value_node.keywords)
            and isinstance(annotation, ast.Subscript)):
        return value_node
    items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    if len(items) < 2:
        return value_node
    call = ast.Call(value_node.func, [items[0], items[1]], value_node.keywords)
    return ast.copy_location(call, value_node)


_JUMPS_WHERE = ("break and continue work in pl.range loops without init_values, Python while "
                "loops and pl.while_ loops that rebind their header names instead of "
                "ending with pl.yield_ (PyPTO's sequential and while loops)")


def _reads_shape(node: ast.AST) -> bool:
    """Whether an expression mentions ``<value>.shape`` (its static dims fold to constants)."""
    return any(isinstance(n, ast.Attribute) and n.attr == "shape" for n in ast.walk(node))


def _narrowing(value) -> tuple | None:
    """The valid extents a ``pl.set_validshape(x, rows, cols)`` call declares (None for any
    other value); a tensor's type does not carry them."""
    if isinstance(value, Call) and value.op.endswith(".set_validshape") and len(value.args) == 3:
        return tuple(getattr(a, "value", a) for a in value.args[1:])
    return None


def counted_down(index: Var, start: Expr, stop: Expr, step: ConstInt):
    """``pl.range(start, stop, -s)`` as PyPTO runs it (start, start - s, ... while > stop), in
    the counted form every later stage takes (a PTO ``scf.for`` steps upwards): a count
    ``n`` over ``0 .. ceil((start - stop) / s)`` and ``index = start - n * s`` first in the
    body. Returns the count, its bounds and that first statement."""
    down = -step.value
    count = Var(f"{index.name}_n", index.type, index.loc)
    if isinstance(start, ConstInt) and isinstance(stop, ConstInt):
        trips = ConstInt(max(0, -(-(start.value - stop.value) // down)), DataType.INDEX)
    else:  # a negative count runs no iteration, as an empty range does
        span = BinOp("+", BinOp("-", start, stop), ConstInt(down - 1, DataType.INDEX))
        trips = BinOp("//", span, ConstInt(down, DataType.INDEX))
    first = AssignStmt(index, BinOp("-", start, BinOp("*", count, ConstInt(down, DataType.INDEX))),
                       index.loc)
    return count, (ConstInt(0, DataType.INDEX), trips, ConstInt(1, DataType.INDEX)), first
