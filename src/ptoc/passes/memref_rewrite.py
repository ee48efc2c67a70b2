"""Shared helpers of the memory passes: find MemRefs, rewrite variable types, sizes.

InitMemRef, MaterializeSemanticAliases, MemoryReuse and AllocateMemoryAddr all end the
same way: some variables get a new type (a new or different MemRef) and every use must
follow. ``retype_function`` does that once, for all of them, keeping the Call result type
of an assignment equal to its variable's type (as the printed IR shows a single type).
"""

from __future__ import annotations

from typing import Callable

from ptoc.ir.nodes import replace
from ptoc.dtypes import DataType, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstInt, EvalStmt, Expr, ForStmt, Function, IfStmt, IterArg, SeqStmts,
    WhileStmt, Stmt, Var, YieldStmt,
)
from ptoc.ir.types import MemRef, PtrType, TensorType, TileType, Type
from ptoc.ir.visitor import IRMutator

PIPELINE_MEMBERSHIP = "pipeline_membership"
#: PyPTO's membership of an accumulator that ``dbc_parity`` re-tagged (MemoryReuse may undo it)
PYPTO_MEMBERSHIP = "pipeline_membership_pypto"


def zero_offset() -> ConstInt:
    """The offset PyPTO prints before allocation: ``pl.const(0, pl.INT64)``."""
    return ConstInt(0, DataType.INT64)


def memref_of(var: Expr) -> MemRef | None:
    ty = getattr(var, "type", None)
    return getattr(ty, "memref", None)


def is_on_chip(memref: MemRef | None) -> bool:
    """True for a MemRef based on a ``tile.alloc`` pointer (DDR MemRefs carry a name string)."""
    return memref is not None and isinstance(memref.base, Var)


def with_memref(ty: Type, memref: MemRef | None) -> Type:
    """``ty`` with its MemRef replaced (tiles and tensors only)."""
    if isinstance(ty, (TileType, TensorType)):
        return replace(ty, memref=memref)
    return ty


def is_alloc(stmt: Stmt) -> bool:
    """A ``mem_x_N: pl.Ptr = pl.tile.alloc(...)`` statement."""
    return (isinstance(stmt, AssignStmt) and isinstance(stmt.value, Call)
            and stmt.value.op == "tile.alloc")


def alloc_space(stmt: AssignStmt) -> MemorySpace:
    return stmt.value.args[0]


def alloc_size(stmt: AssignStmt) -> int:
    return int(stmt.value.args[1])


def walk_stmts(stmt: Stmt | None) -> list[Stmt]:
    """Every statement in program order, descending into loops and branches (a list, made
    with an explicit stack: nested generators re-yield each statement once per level)."""
    out: list[Stmt] = []
    stack = [stmt]
    pop, push, extend, add = stack.pop, stack.append, stack.extend, out.append
    while stack:
        s = pop()
        if s is None:
            continue
        if isinstance(s, SeqStmts):
            extend(reversed(s.stmts))
            continue
        add(s)
        if isinstance(s, (ForStmt, WhileStmt)):
            push(s.body)
        elif isinstance(s, IfStmt):
            push(s.else_body)
            push(s.then_body)
    return out


def defined_vars(fn: Function) -> list[Var]:
    """Every variable the function defines, params first, in program order."""
    out = [p.var for p in fn.params]
    for s in walk_stmts(fn.body):
        if isinstance(s, AssignStmt):
            out.append(s.var)
        elif isinstance(s, (ForStmt, WhileStmt)):
            out += s.iter_args
            out += s.return_vars
        elif isinstance(s, IfStmt):
            out += s.return_vars
    return out


def membership_of(call: Expr) -> str:
    if isinstance(call, Call):
        return str(call.attrs.get(PIPELINE_MEMBERSHIP, "") or "")
    return ""


def last_yield(body: SeqStmts | None) -> YieldStmt | None:
    if body is None or not body.stmts:
        return None
    tail = body.stmts[-1]
    if isinstance(tail, SeqStmts):
        return last_yield(tail)
    return tail if isinstance(tail, YieldStmt) else None


class Retyper(IRMutator):
    """Give chosen definitions new types; uses follow through the substitution map.
    With ``strip_membership`` the same walk drops ``pipeline_membership`` attrs (see
    ``strip_membership``)."""

    def __init__(self, new_type: Callable[[Var], Type | None],
                 stmt_hook: Callable[[Stmt], Stmt | None] | None = None, *,
                 strip_membership: bool = False):
        super().__init__()
        self.new_type = new_type
        self.stmt_hook = stmt_hook
        self.strip_membership = strip_membership
        #: an assignment's call is rebuilt with its variable's type in one step
        self._one_rebuild = type(self).mutate_call is Retyper.mutate_call

    def mutate_call(self, node: Call):
        out = super().mutate_call(node)
        return _without_membership(out) if self.strip_membership else out

    def mutate_def(self, var: Var) -> Var:
        mapped = self.var_map.get(var)
        if isinstance(mapped, Var):
            return mapped
        ty = self.new_type(var)
        if ty is None or ty is var.type:
            ty = self.mutate_type(var.type)   # what IRMutator.mutate_def gives it
        return self._def_with_type(var, ty)

    def _iter_arg(self, ia: IterArg, init: Expr | None) -> IterArg:
        ty = self.new_type(ia)
        if ty is None or ty is ia.type:
            return super()._iter_arg(ia, init)
        new = replace(ia, type=ty, init=init)
        self.var_map[ia] = new
        return new

    def mutate_assign_stmt(self, node: AssignStmt):
        if self.stmt_hook is not None:
            hooked = self.stmt_hook(node)
            if hooked is not node:
                return hooked
        value = node.value
        if type(value) is Call and self._one_rebuild \
                and isinstance(value.type, (TileType, TensorType)):
            # one rebuild of the call, with the type its (retyped) variable gets; the
            # variable first: in SSA form a value never reads its own variable
            var = self.mutate_def(node.var)
            if isinstance(var.type, (TileType, TensorType)):
                value = self.rebuild_call(value, var.type)
                if self.strip_membership:
                    value = _without_membership(value)
                if value is node.value and var is node.var:
                    return node
                return replace(node, var=var, value=value)
            value = self.mutate(value)
        else:
            value = self.mutate(value)
            var = self.mutate_def(node.var)
        if (isinstance(value, Call) and isinstance(var.type, (TileType, TensorType))
                and isinstance(value.type, (TileType, TensorType)) and value.type is not var.type):
            value = replace(value, type=var.type)
        if value is node.value and var is node.var:
            return node
        return replace(node, var=var, value=value)

    def mutate_eval_stmt(self, node: EvalStmt):
        if self.stmt_hook is not None:
            hooked = self.stmt_hook(node)
            if hooked is not node:
                return hooked
        return super().mutate_eval_stmt(node)


def retype_function(fn: Function, new_type: Callable[[Var], Type | None], *,
                    stmt_hook: Callable[[Stmt], Stmt | None] | None = None) -> Function:
    """``fn`` with each definition ``v`` retyped to ``new_type(v)`` (None: unchanged).

    ``stmt_hook(stmt)`` may replace or delete (None) an AssignStmt/EvalStmt before it is
    rewritten; return the statement itself to keep it.
    """
    return Retyper(new_type, stmt_hook).mutate(fn)


def physical_bytes(ty: TileType | TensorType, target) -> int | None:
    """Bytes a statically shaped value occupies (§1.2): Acc pads M rows, others are dense.

    For an Acc tile the penultimate dim is M (padded to the target's row alignment for the
    dtype), the last is N, and leading dims multiply. None when a dimension is dynamic.
    """
    dims = ty.shape
    for d in dims:
        if not isinstance(d, int):
            return None
    nbytes = ty.dtype.get_byte()
    if isinstance(ty, TileType) and ty.memory_space is MemorySpace.Acc and len(dims) >= 2:
        batch = 1
        for d in dims[:-2]:
            batch *= d
        rows, cols = dims[-2], dims[-1]
        if rows <= 0 or cols <= 0:
            return 0
        return target.acc_physical_bytes(rows, cols, ty.dtype) * batch
    count = 1
    for d in dims:
        count *= d
    return count * nbytes


def new_ptr(name: str) -> Var:
    return Var(name, PtrType())


def _without_membership(call: Call) -> Call:
    if PIPELINE_MEMBERSHIP in call.attrs or PYPTO_MEMBERSHIP in call.attrs:
        return replace(call, attrs={k: v for k, v in call.attrs.items()
                                    if k not in (PIPELINE_MEMBERSHIP, PYPTO_MEMBERSHIP)})
    return call


class _StripMembership(IRMutator):
    def mutate_call(self, node: Call):
        return _without_membership(super().mutate_call(node))


def strip_membership(fn: Function) -> Function:
    """``fn`` without ``pipeline_membership`` (and ``PYPTO_MEMBERSHIP``) attrs: the planner that consumed them (MemoryReuse
    or the DSA_RP allocator) strips them so they do not ride into codegen."""
    return _StripMembership().mutate(fn)


__all__ = [
    "strip_membership",
    "PIPELINE_MEMBERSHIP", "PYPTO_MEMBERSHIP", "zero_offset", "memref_of", "is_on_chip", "with_memref",
    "is_alloc", "alloc_space", "alloc_size", "walk_stmts", "defined_vars", "membership_of",
    "last_yield", "retype_function", "Retyper", "physical_bytes", "new_ptr",
]
