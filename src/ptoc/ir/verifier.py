"""The IR verifier: SSA form, type consistency, loop/branch result arity, pipeline attrs.

Passes run it after every rewrite (through the verify instrument), so a pass that builds
bad IR fails at the pass that broke it, not three passes later in codegen. Every failure
is a ``VerificationError`` carrying the statement's location, naming the variable or op,
and saying how to fix the IR.

Type consistency ignores MemRefs and TileViews: they are memory-planning and layout
annotations that passes attach to variables, while the op registry infers only shape,
dtype and memory space.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from ptoc.dtypes import DataType, ForKind
from ptoc.errors import PtocError, SourceLoc, VerificationError
from ptoc.ir.equality import equal_by_identity
from ptoc.ir.memo import IdentityMemo
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, DimVar, EvalStmt, Expr, ForStmt,
    Function, IfStmt, IterArg, ListExpr, Program, ReturnStmt, ScopeStmt, SeqStmts, Stmt, Submit,
    TupleGetItem, UnaryOp, Var, WhileStmt, YieldStmt, body_scope,
)
from ptoc.ir.printer import flatten, format_node
from ptoc.ir.types import (
    ArrayType, MemRef, PtrType, ScalarType, TensorType, TileType, TupleType, Type,
)


def verify(node: Program | Function, *,
           verified: Callable[[Function], bool] | None = None,
           structure_only: bool = False) -> None:
    """Check ``node`` (a Program, or one Function on its own); raise VerificationError on the
    first fault. ``verified(fn)`` True skips a function of a Program already checked as it
    is, in a program whose function signatures are the same (see VerificationInstrument).

    ``structure_only`` checks only the statement structure (yield placement and arity,
    loop and branch result counts, pipeline attrs): no scopes, no types, no op calls. It
    costs about a twentieth of the full check and is what runs after each pass inside a
    pipeline at VerificationLevel.BASIC (the full check runs on the pipeline's input and
    output)."""
    checker = _StructureVerifier if structure_only else _FunctionVerifier
    if isinstance(node, Program):
        names: dict[str, Function] = {}
        for fn in node.functions:
            if fn.name in names:
                raise VerificationError(
                    f"program '{node.name}' defines function '{fn.name}' twice", fn.loc or node.loc,
                    hint="give each function a distinct name")
            names[fn.name] = fn
        for fn in node.functions:
            if verified is None or not verified(fn):
                checker(fn, node).run()
    elif isinstance(node, Function):
        checker(node, None).run()
    else:
        raise TypeError(f"verify() takes a Program or a Function, not {type(node).__name__}")


_INT64 = {DataType.INDEX, DataType.INT64}


def type_mismatch(expected: Type, actual: Type, *, static_dims_only: bool = False) -> str | None:
    """Why ``actual`` cannot stand where ``expected`` is declared, or None when they agree.

    Kind, shape and dtype must match; a tile memory space must match when both sides
    name one; MemRefs and TileViews are not compared. ``static_dims_only`` skips dynamic
    dimensions (across a function call they name different functions' Vars).
    """
    if expected is actual:
        return None
    if type(expected) is not type(actual):
        return f"{type(expected).__name__} vs {type(actual).__name__}"
    if isinstance(expected, ScalarType):  # INDEX and INT64 are one 64-bit integer (PyPTO)
        same = expected.dtype is actual.dtype or {expected.dtype, actual.dtype} == _INT64
        return None if same else f"dtype {expected.dtype.value} vs {actual.dtype.value}"
    if isinstance(expected, (TensorType, TileType)):
        same_shape = expected.shape is actual.shape or (
            len(expected.shape) == len(actual.shape) and all(
                _dim_equal(x, y, static_dims_only) for x, y in zip(expected.shape, actual.shape)))
        if not same_shape:
            return f"shape {_shape(expected.shape)} vs {_shape(actual.shape)}"
        if expected.dtype is not actual.dtype:
            return f"dtype {expected.dtype.value} vs {actual.dtype.value}"
        if isinstance(expected, TileType) and expected.memory_space is not None \
                and actual.memory_space is not None \
                and expected.memory_space is not actual.memory_space:
            return f"memory space {expected.memory_space.value} vs {actual.memory_space.value}"
        return None
    if isinstance(expected, ArrayType):
        return None if expected.dtype is actual.dtype and expected.size == actual.size else \
            f"array {expected.dtype.value}[{expected.size}] vs {actual.dtype.value}[{actual.size}]"
    if isinstance(expected, TupleType):
        if len(expected.types) != len(actual.types):
            return f"{len(expected.types)} elements vs {len(actual.types)}"
        for x, y in zip(expected.types, actual.types):
            why = type_mismatch(x, y, static_dims_only=static_dims_only)
            if why:
                return why
        return None
    return None  # PtrType and friends carry no further facts


def at_param_rank(param: Type, arg: Type) -> Type:
    """A tensor argument as a lower-rank tensor parameter sees it: leading dims of size 1
    dropped (FuseCreateAssembleToSlice pads a staging slice to its target's rank, as PyPTO
    does, and the kernel still takes the staging tensor's shape). Anything else unchanged."""
    if not (isinstance(param, TensorType) and isinstance(arg, TensorType)):
        return arg
    drop = len(arg.shape) - len(param.shape)
    if drop <= 0 or any(not (isinstance(d, int) and d == 1) for d in arg.shape[:drop]):
        return arg
    return dataclasses.replace(arg, shape=tuple(arg.shape[drop:]))


def _names_dim_var(dim) -> bool:
    from ptoc.ir.dynamic import shape_dim_vars

    return isinstance(dim, Expr) and bool(shape_dim_vars((dim,)))


def _int_as_flag(expected: Type, actual: Type) -> bool:
    """An integer scalar passed for a BOOL parameter (nonzero is true), as PyPTO's calls
    take ``is_first = pl.yield_(1)`` for a ``pl.Scalar[pl.BOOL]`` flag."""
    return isinstance(expected, ScalarType) and isinstance(actual, ScalarType) \
        and expected.dtype is DataType.BOOL and actual.dtype.is_int


def _dim_equal(a, b, static_only: bool = False) -> bool:
    if type(a) is int and type(b) is int:
        return a == b
    if static_only and (isinstance(a, Expr) or isinstance(b, Expr)):
        return True
    if _names_dim_var(a) or _names_dim_var(b):
        return True   # a pl.dynamic size: bound and checked when the program runs
    if isinstance(a, Expr) and isinstance(b, Expr):
        return a is b or equal_by_identity(a, b)
    if isinstance(a, Expr) or isinstance(b, Expr):
        return False
    return a == b


def _shape(shape) -> str:
    return "[" + ", ".join(format_node(d) for d in shape) + "]"


def _dense_bytes(ty: TensorType | TileType) -> int | None:
    """Bytes of a statically shaped value without padding (None when a dim is dynamic)."""
    count = 1
    for d in ty.shape:
        if not isinstance(d, int):
            return None
        count *= d
    return count * ty.dtype.get_byte()


def _t(ty: Type) -> str:
    return format_node(ty)


#: op calls whose type the registry confirmed, with the op definition that confirmed it: a
#: call is immutable, and passes share the calls they do not rewrite, so the same call is
#: otherwise re-inferred after every pass. Re-registering an op invalidates its entries.
_TYPE_CHECKED = IdentityMemo(50_000)


def _ops():
    """The op registry, imported lazily (ptoc.ir must not need ptoc.ops to import)."""
    try:
        from ptoc import ops
    except ImportError:  # pragma: no cover - the registry ships with ptoc
        return None
    return ops


class _FunctionVerifier:
    """Checks one function, tracking which Vars are in scope at each point."""

    def __init__(self, fn: Function, program: Program | None):
        self.fn = fn
        self.program = program
        self.scopes: list[list[Var]] = [[]]     # the Vars each open body defined
        self.visible: set[Var] = set()            # every Var of the open bodies (SSA: no
        #                                           name is defined twice, so a set serves)
        self.defined: dict[Var, SourceLoc | None] = {}
        self.alloc_bytes: dict[Var, int] = {}        # pl.tile.alloc results -> their size
        self.alloc_extent: dict[Var, tuple[int, int]] = {}   # -> bytes their MemRefs span
        self.loc: SourceLoc | None = fn.loc
        self.ops = _ops()

    def error(self, message: str, hint: str) -> VerificationError:
        return VerificationError(f"in function '{self.fn.name}': {message}", self.loc, hint=hint)

    def mismatch(self, expected: Type, actual: Type, *, static_dims_only: bool = False) -> str | None:
        return type_mismatch(expected, actual, static_dims_only=static_dims_only)

    # ---- scopes ----------------------------------------------------------------------
    def define(self, var: Var, what: str, checked_type: Type | None = None) -> None:
        """Bring ``var`` into scope. ``checked_type`` is a type object whose uses were just
        checked at this point (an assignment's call type): the same object is not checked
        again (nothing in scope changed between the two checks)."""
        if not isinstance(var, Var):
            raise self.error(f"{what} is {type(var).__name__}, not a variable",
                             "bind results to ptoc.ir.Var objects")
        if isinstance(var, DimVar):
            raise self.error(f"{what} is the pl.dynamic dimension '{var.name}', which no "
                             "statement may define", "bind the value to a new variable")
        if var in self.defined:
            first = self.defined[var]
            where = f" (first defined at {first})" if first is not None else ""
            raise self.error(
                f"variable '{var.name}' is defined twice{where}; the IR must be in SSA form",
                "create a fresh Var for every new value (ptoc.ir.visitor.clone_with_fresh_vars "
                "copies a body with fresh variables)")
        if var.type is not checked_type:
            self.check_type_uses(var.type, f"the type of '{var.name}'")
        self.defined[var] = self.loc
        self.scopes[-1].append(var)
        self.visible.add(var)

    def use(self, var: Var) -> None:
        if var in self.visible or isinstance(var, DimVar):
            return  # a pl.dynamic dimension is a program-wide symbol
        if var in self.defined:
            raise self.error(
                f"variable '{var.name}' is used outside the loop or branch body that defines it",
                "after a loop or if, read its return variable (bound by pl.yield_) instead")
        raise self.error(f"variable '{var.name}' is used before it is defined",
                         "define it earlier in the function or pass it as a parameter")

    def push(self) -> None:
        self.scopes.append([])

    def pop(self) -> None:
        self.visible.difference_update(self.scopes.pop())

    # ---- function --------------------------------------------------------------------
    def run(self) -> None:
        fn = self.fn
        for p in fn.params:
            if not isinstance(p.var, Var):
                raise self.error(f"parameter {p.var!r} is not a variable", "use ptoc.ir.Var")
            if p.var in self.defined:
                raise self.error(f"parameter '{p.var.name}' appears twice",
                                 "give each parameter its own Var")
            self.defined[p.var] = fn.loc
            self.scopes[-1].append(p.var)
            self.visible.add(p.var)
        for p in fn.params:
            self.check_type_uses(p.var.type, f"the type of parameter '{p.var.name}'")
        for ty in fn.return_types:
            self.check_type_uses(ty, "the return type")
        self.body(fn.body, results=None)

    # ---- statements ------------------------------------------------------------------
    def body(self, body: Stmt | None, results: tuple[Type, ...] | None,
             owner: str = "") -> None:
        """Check a statement list; ``results`` are the types a final yield must produce.

        ``results is None`` means the function body (no yield allowed at all).
        """
        stmts = flatten(body) if body is not None else []
        scope = body_scope(stmts) if results is not None else None
        if scope is not None:   # a whole-body runtime scope holds the trailing yield
            self.stmt(dataclasses.replace(scope, body=SeqStmts(())))
            stmts = flatten(scope.body)
        for i, s in enumerate(stmts):
            if isinstance(s, YieldStmt):
                outer, self.loc = self.loc, s.loc or self.loc
                if results is None:
                    raise self.error("pl.yield_ appears outside any loop or if body",
                                     "use return at function level; yield only ends loop/if bodies")
                if i != len(stmts) - 1:
                    raise self.error(f"pl.yield_ is not the last statement of the {owner} body",
                                     "move the yield to the end of the body")
                self.yield_stmt(s, results, owner)
                self.loc = outer
            else:
                self.stmt(s)
        if results and not (stmts and isinstance(stmts[-1], YieldStmt)):
            raise self.error(
                f"the {owner} body must end with pl.yield_ of {len(results)} value(s)",
                "end the body with pl.yield_(...) of the values carried out")

    def yield_stmt(self, s: YieldStmt, results: tuple[Type, ...], owner: str) -> None:
        for v in s.values:
            self.expr(v)
        if len(s.values) != len(results):
            raise self.error(
                f"the {owner} body yields {len(s.values)} value(s) but {len(results)} are expected",
                "yield exactly one value per iter arg / return variable")
        for k, (v, want) in enumerate(zip(s.values, results)):
            why = self.mismatch(want, v.type)
            if why:
                raise self.error(
                    f"yielded value {k} (`{format_node(v)}`) of the {owner} has type {_t(v.type)} "
                    f"but {_t(want)} is expected ({why})",
                    "yield a value of the carried variable's type")

    def stmt(self, s: Stmt) -> None:
        """Check one statement; errors carry its loc (or the enclosing one's when it has none)."""
        outer = self.loc
        self.loc = getattr(s, "loc", None) or outer
        try:
            self._stmt(s)
        finally:
            self.loc = outer

    def _stmt(self, s: Stmt) -> None:
        if isinstance(s, AssignStmt):
            self.expr(s.value)
            if isinstance(s.value, Call) and s.value.op == "tile.alloc" and \
                    len(s.value.args) >= 2 and isinstance(s.value.args[1], int):
                self.alloc_bytes[s.var] = s.value.args[1]
            self.define(s.var, "the assignment target",
                        s.value.type if type(s.value) is Call else None)
            why = self.mismatch(s.var.type, s.value.type)
            if why:
                raise self.error(
                    f"'{s.var.name}' is declared {_t(s.var.type)} but its value has type "
                    f"{_t(s.value.type)} ({why})",
                    "make the variable's type match the value's type")
        elif isinstance(s, EvalStmt):
            self.expr(s.expr)
        elif isinstance(s, ReturnStmt):
            self.return_stmt(s)
        elif isinstance(s, ForStmt):
            self.for_stmt(s)
        elif isinstance(s, WhileStmt):
            self.while_stmt(s)
        elif isinstance(s, IfStmt):
            self.if_stmt(s)
        elif isinstance(s, SeqStmts):
            for c in flatten(s):
                self.stmt(c)
        elif isinstance(s, ScopeStmt):
            for dep in (*s.deps, *s.no_dep_args):
                self.expr(dep)
            for e in (s.core_num, s.predicate):
                if e is not None:
                    self.expr(e)
            if s.task_id is not None:
                self.define(s.task_id, "the scope's task id")
            for c in flatten(s.body):
                self.stmt(c)
        else:
            raise self.error(f"unknown statement {type(s).__name__}", "build IR from ptoc.ir nodes")

    def return_stmt(self, s: ReturnStmt) -> None:
        for v in s.values:
            self.expr(v)
        want = self.fn.return_types
        if len(s.values) != len(want):
            raise self.error(
                f"return gives {len(s.values)} value(s) but the function declares {len(want)}",
                "return one value per declared return type")
        for k, (v, ty) in enumerate(zip(s.values, want)):
            why = self.mismatch(ty, v.type)
            if why:
                raise self.error(
                    f"returned value {k} (`{format_node(v)}`) has type {_t(v.type)} but the "
                    f"function declares {_t(ty)} ({why})",
                    "return a value of the declared type or fix the return annotation")

    def for_stmt(self, s: ForStmt) -> None:
        iv = s.loop_var.name if isinstance(s.loop_var, Var) else "?"
        self.pipeline_attrs(s, iv)
        for bound_name in ("start", "stop", "step"):
            e = getattr(s, bound_name)
            self.expr(e)
            if not isinstance(e.type, ScalarType):
                raise self.error(f"the {bound_name} of the loop over '{iv}' is not a scalar",
                                 "loop bounds are ints or pl.Scalar expressions")
        self.iter_args(s, f"the loop over '{iv}'")
        if not isinstance(s.loop_var.type, ScalarType):
            raise self.error(f"loop variable '{iv}' has type {_t(s.loop_var.type)}, not a scalar",
                             "make the loop variable pl.Scalar[pl.INDEX]")
        self.push()
        self.define(s.loop_var, "the loop variable")
        for ia in s.iter_args:
            self.define(ia, "an iter arg")
        self.body(s.body, tuple(ia.type for ia in s.iter_args), f"loop over '{iv}'")
        self.pop()
        self.loop_results(s)

    def while_stmt(self, s: WhileStmt) -> None:
        self.iter_args(s, "the while loop")
        self.push()
        for ia in s.iter_args:
            self.define(ia, "an iter arg")
        self.expr(s.cond)
        if not (isinstance(s.cond.type, ScalarType) and s.cond.type.dtype is DataType.BOOL):
            raise self.error(f"the while condition `{format_node(s.cond)}` has type "
                             f"{_t(s.cond.type)}, not a BOOL scalar",
                             "test a comparison such as pl.cond(x < n)")
        if any(isinstance(e, Call) for e in scalar_subexprs(s.cond)):
            raise self.error(f"the while condition `{format_node(s.cond)}` calls an op; it is "
                             "evaluated before every trip from scalars only",
                             "compute the value in the body, carry it, and test the carry")
        self.body(s.body, tuple(ia.type for ia in s.iter_args), "while loop")
        self.pop()
        self.loop_results(s)

    def iter_args(self, s: ForStmt | WhileStmt, what: str) -> None:
        """A loop's iter args have inits of their type (checked outside the loop) and one
        return variable each."""
        for ia in s.iter_args:
            if not isinstance(ia, IterArg):
                raise self.error(f"iter arg '{getattr(ia, 'name', ia)}' of {what} "
                                 "is not an IterArg", "build loop-carried values with ptoc.ir.IterArg")
            if ia.init is None:
                raise self.error(f"iter arg '{ia.name}' of {what} has no initial value",
                                 "set IterArg.init to the value carried into the first trip")
            self.expr(ia.init)
            why = self.mismatch(ia.type, ia.init.type)
            if why:
                raise self.error(
                    f"iter arg '{ia.name}' has type {_t(ia.type)} but its initial value "
                    f"`{format_node(ia.init)}` has type {_t(ia.init.type)} ({why})",
                    "a carried value keeps one type across the loop")
        if len(s.return_vars) != len(s.iter_args):
            raise self.error(
                f"{what} has {len(s.iter_args)} iter arg(s) but "
                f"{len(s.return_vars)} return variable(s)",
                "bind one return variable per iter arg")

    def loop_results(self, s: ForStmt | WhileStmt) -> None:
        for ia, rv in zip(s.iter_args, s.return_vars):
            self.define(rv, "a loop return variable")
            why = self.mismatch(ia.type, rv.type)
            if why:
                raise self.error(
                    f"return variable '{rv.name}' has type {_t(rv.type)} but iter arg '{ia.name}' "
                    f"has {_t(ia.type)} ({why})",
                    "give the return variable its iter arg's type")

    def pipeline_attrs(self, s: ForStmt, iv: str) -> None:
        has = "pipeline_stages" in s.attrs
        if s.kind is ForKind.Pipeline and not has:
            raise self.error(f"the pipeline loop over '{iv}' has no 'pipeline_stages' attr",
                             "write pl.pipeline(..., stage=F) or set attrs['pipeline_stages']")
        if has and s.kind is not ForKind.Pipeline:
            raise self.error(
                f"the {s.kind.value} loop over '{iv}' has a 'pipeline_stages' attr, which only "
                "pipeline loops may carry",
                "make it ForKind.Pipeline or drop the attr when lowering the pipeline")
        if has:
            stages = s.attrs["pipeline_stages"]
            if isinstance(stages, bool) or not isinstance(stages, int) or stages < 1:
                raise self.error(
                    f"the pipeline loop over '{iv}' has pipeline_stages={stages!r}; it must be "
                    "an int >= 1", "use stage=1 (IO reorder only) or more")

    def if_stmt(self, s: IfStmt) -> None:
        self.expr(s.cond)
        if not isinstance(s.cond.type, ScalarType):
            raise self.error(f"the if condition `{format_node(s.cond)}` is not a scalar",
                             "branch on a scalar comparison such as i == 0")
        results = tuple(rv.type for rv in s.return_vars)
        names = ", ".join(f"'{rv.name}'" for rv in s.return_vars)
        if results and (s.else_body is None or not flatten(s.else_body)):
            raise self.error(f"the if that produces {names} has no else branch",
                             "both arms must pl.yield_ the same number and types of values")
        self.push()
        self.body(s.then_body, results, "if (then)")
        self.pop()
        if s.else_body is not None:
            self.push()
            self.body(s.else_body, results, "if (else)")
            self.pop()
        for rv in s.return_vars:
            self.define(rv, "an if return variable")

    # ---- expressions -----------------------------------------------------------------
    def expr(self, e) -> None:
        kind = type(e)
        if kind is Call:        # the common kinds first, by exact class
            self.call(e)
        elif kind is Var:
            self.use(e)
        elif kind is ConstInt or kind is int:
            pass
        elif kind is ListExpr:
            for item in e.items:
                self.expr(item)
        elif isinstance(e, Var):
            self.use(e)
        elif isinstance(e, (ConstInt, ConstFloat, ConstBool)):
            pass
        elif isinstance(e, BinOp):
            self.expr(e.lhs)
            self.expr(e.rhs)
        elif isinstance(e, UnaryOp):
            self.expr(e.operand)
        elif isinstance(e, ListExpr):
            for item in e.items:
                self.expr(item)
        elif isinstance(e, TupleGetItem):
            self.expr(e.tuple)
            arity = len(e.tuple.type.types) if isinstance(e.tuple.type, TupleType) else None
            if arity is None or not 0 <= e.index < arity:
                raise self.error(f"'{format_node(e)}' indexes element {e.index} of a "
                                 f"{'non-tuple' if arity is None else f'{arity}-tuple'} value",
                                 "index a tuple result within its arity")
        elif isinstance(e, Call):
            self.call(e)
        elif isinstance(e, Expr):
            raise self.error(f"unknown expression {type(e).__name__}", "build IR from ptoc.ir nodes")
        # plain values (static call arguments) need no checks

    def call(self, c: Call) -> None:
        visible = self.visible
        for a in c.args:
            if type(a) is not Var or a not in visible:  # an argument in scope: nothing to do
                self.expr(a)
        for _, v in c.kwargs:
            self.expr(v)
        self.check_type_uses(c.type, f"the type of the call of {c.op}")
        if c.is_function:
            self.function_call(c)
        elif self.ops is not None:
            self.op_call(c)

    def op_call(self, c: Call) -> None:
        try:
            op = self.ops.get_op(c.op, c.loc or self.loc)
            if _TYPE_CHECKED.get(c) is op:
                return
            inferred = op.infer_type(c.args, c.kwargs, c.loc or self.loc)
        except VerificationError:
            raise
        except PtocError as err:
            raise VerificationError(f"in function '{self.fn.name}': invalid call of pl.{c.op}: "
                                    f"{err.message}", c.loc or self.loc,
                                    hint=err.hint or "use a registered op (see ptoc.ops.all_ops()) "
                                    "with the arguments its signature asks for") from None
        why = self.mismatch(inferred, c.type)
        if why:
            raise self.error(
                f"the call of pl.{c.op} has type {_t(c.type)} but the op registry infers "
                f"{_t(inferred)} ({why})",
                "build calls with ptoc.ops.make_call so their type is inferred")
        _TYPE_CHECKED.put(c, op)

    def function_call(self, c: Call) -> None:
        if self.program is None:
            return
        callee = self.program.get_function(c.op)
        if callee is None:
            known = ", ".join(f.name for f in self.program.functions)
            raise self.error(f"call of self.{c.op}: program '{self.program.name}' has no "
                             f"function '{c.op}' (functions: {known})",
                             "call an existing function or add it to the program")
        if len(c.args) != len(callee.params):
            raise self.error(
                f"self.{c.op} takes {len(callee.params)} argument(s) but is called with {len(c.args)}",
                f"pass one argument per parameter of '{c.op}'")
        for k, (a, p) in enumerate(zip(c.args, callee.params)):
            if isinstance(a, Expr) and not _int_as_flag(p.var.type, a.type):
                why = self.mismatch(p.var.type, at_param_rank(p.var.type, a.type),
                                    static_dims_only=True)
                if why:
                    raise self.error(
                        f"argument {k} of self.{c.op} has type {_t(a.type)} but parameter "
                        f"'{p.var.name}' is {_t(p.var.type)} ({why})",
                        "pass a value of the parameter's type")
        rets = callee.return_types
        if isinstance(c, Submit):  # the callee's results, then the launched task's id
            rets = (*rets, ScalarType(DataType.TASK_ID))
            for dep in c.deps:
                self.expr(dep)
            if c.predicate is not None:
                self.expr(c.predicate)
            why = self.mismatch(TupleType(tuple(rets)), c.type, static_dims_only=True)
        elif len(rets) == 1:
            why = self.mismatch(rets[0], c.type, static_dims_only=True)
        elif len(rets) > 1:
            why = self.mismatch(TupleType(tuple(rets)), c.type, static_dims_only=True)
        else:
            why = None
        if why:
            raise self.error(
                f"the call of self.{c.op} has type {_t(c.type)} but '{c.op}' returns "
                f"{', '.join(_t(t) for t in rets)} ({why})",
                "give the call the callee's return type")

    def check_type_uses(self, ty, what: str) -> None:
        """Vars inside a type (dynamic dims, MemRef bases and offsets) must be in scope."""
        if isinstance(ty, (TensorType, TileType)):
            for d in ty.shape:
                if type(d) is not int and isinstance(d, Expr):
                    self.expr(d)
            if ty.memref is not None:
                self.memref(ty.memref, ty)
        elif isinstance(ty, TupleType):
            for t in ty.types:
                self.check_type_uses(t, what)

    def memref(self, m: MemRef, ty: TensorType | TileType) -> None:
        if isinstance(m.base, Var):
            self.use(m.base)
            if not isinstance(m.base.type, PtrType):
                raise self.error(f"MemRef base '{m.base.name}' has type {_t(m.base.type)}, not pl.Ptr",
                                 "base a MemRef on a pl.tile.alloc result or a DDR buffer name")
        if isinstance(m.offset, Expr):
            self.expr(m.offset)
        self.memref_bounds(m, ty)

    def memref_bounds(self, m: MemRef, ty: TensorType | TileType) -> None:
        """A value's bytes lie inside its MemRef, and the MemRefs on one allocation span no
        more than its size: a smaller allocation lets the next one overlap it (a race and
        wrong numbers on the core). Offsets are relative before AllocateMemoryAddr and
        absolute after it, so the span (lowest to highest byte) is what is compared."""
        dense = _dense_bytes(ty)
        base = m.base.name if isinstance(m.base, Var) else m.base
        dynamic_ddr = isinstance(m.base, str) and m.size == 0  # a pl.dynamic-sized tensor
        if dense is not None and m.size < dense and not dynamic_ddr:
            raise self.error(
                f"{_t(ty)} needs {dense} bytes but its MemRef on '{base}' gives {m.size}",
                "make the MemRef size at least the value's bytes (shape x dtype bytes)")
        cap = self.alloc_bytes.get(m.base) if isinstance(m.base, Var) else None
        if cap is None or not isinstance(m.offset, ConstInt):
            return
        lo, hi = m.offset.value, m.offset.value + m.size
        seen = self.alloc_extent.get(m.base)
        if seen is not None:
            lo, hi = min(lo, seen[0]), max(hi, seen[1])
        self.alloc_extent[m.base] = (lo, hi)
        if hi - lo > cap:
            raise self.error(
                f"{_t(ty)} makes the values on allocation '{base}' span bytes [{lo}, {hi}) "
                f"({hi - lo} bytes), but pl.tile.alloc gave it {cap}",
                f"make pl.tile.alloc of '{base}' at least {hi - lo} bytes, or place the "
                "values inside it")


def scalar_subexprs(e: Expr):
    """``e`` and the scalar expressions inside it (operands of its operators)."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, BinOp):
            stack += [x.lhs, x.rhs]
        elif isinstance(x, UnaryOp):
            stack.append(x.operand)


class _StructureVerifier(_FunctionVerifier):
    """The statement structure only (``verify(..., structure_only=True)``): what is left of
    the full check without expressions, variable scopes and types."""

    def stmt(self, s: Stmt) -> None:
        if type(s) is AssignStmt or type(s) is EvalStmt:
            return   # an assignment or evaluation has no structure of its own
        super().stmt(s)

    def expr(self, e) -> None:
        pass

    def define(self, var: Var, what: str, checked_type: Type | None = None) -> None:
        pass

    def check_type_uses(self, ty, what: str) -> None:
        pass

    def mismatch(self, expected: Type, actual: Type, *, static_dims_only: bool = False) -> None:
        return None
