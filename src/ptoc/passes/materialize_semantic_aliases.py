"""MaterializeSemanticAliases: loop-carried tiles write in place (reference §8).

After InitMemRef, a loop-carried accumulator has its buffer (the iter-arg's, shared with the
init value) but the values it yields may have been given buffers of their own, e.g. the
``if ko == 0: matmul else: matmul_acc`` phi of a K loop. For every loop, each iter-arg's
MemRef is pushed down the producer chain of the value yielded for it: into both arms of an
``if`` result, through in-place ops (``matmul_acc`` into its accumulator) and views into
their source, and through bare aliases. The chain stops at a fresh producer (``matmul``),
which then writes the carried buffer directly, so the loop needs no copy and the whole
chain lives in one buffer. The buffers left without users are removed by MemoryReuse. A
yielded value whose definition is followed by another read of the carry (the online-softmax
``m_new = max(m, x); alpha = exp(m - m_new)``) keeps its own buffer: writing the carry in
place would clobber the old value before that read; MemoryReuse's yield fix-up copies it.

Runs under every planner (PYPTO's coalescing of if-phis outside loops and the yield
fix-ups belong to MemoryReuse; PTOAS needs only this). Tensors are not retargeted.
"""

from __future__ import annotations

from ptoc.ir.nodes import AssignStmt, Call, ForStmt, Function, IfStmt, IterArg, Var, WhileStmt
from ptoc.ir.types import MemRef, TileType
from ptoc.ir.visitor import IRVisitor
from ptoc.ops import get_op
from ptoc.ops.registry import has_op
from ptoc.passes.base import function_pass
from ptoc.passes.manager import register_default_pass
from ptoc.passes.memref_rewrite import (
    is_on_chip, last_yield, memref_of, retype_function, walk_stmts, with_memref,
)


@function_pass(name="MaterializeSemanticAliases", required={"MemRefsAssigned"},
               produced={"MemRefsAssigned"}, func_types=None,
               handles_while_loops=True)
def materialize_semantic_aliases(fn: Function, ctx) -> Function:
    """Retarget yielded producer chains onto their loop's carried buffer."""
    retargeter = _TopDownRetargeter(fn)
    retargeter.run()
    if not retargeter.target:
        return fn
    return retype_function(fn, retargeter.type_for)


class _TopDownRetargeter:
    """Outer loops first; each loop pushes its iter-args' MemRefs into its yields."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.defs: dict[Var, AssignStmt] = {}
        self.phi: dict[Var, tuple[IfStmt, int]] = {}
        self.stmts = walk_stmts(fn.body)
        for s in self.stmts:
            if isinstance(s, AssignStmt):
                self.defs[s.var] = s
            elif isinstance(s, IfStmt):
                for i, rv in enumerate(s.return_vars):
                    self.phi[rv] = (s, i)
        self.target: dict[Var, MemRef] = {}

    def current(self, var: Var) -> MemRef | None:
        return self.target.get(var) or memref_of(var)

    def run(self) -> None:
        for s in self.stmts:
            if not isinstance(s, (ForStmt, WhileStmt)):
                continue
            y = last_yield(s.body)
            if y is None:
                continue
            for ia, value in zip(s.iter_args, y.values):
                carried = self.current(ia)
                if isinstance(ia.type, TileType) and is_on_chip(carried) and isinstance(value, Var) \
                        and not _read_after(s.body.stmts[:-1], ia, value):
                    self.push(value, carried, set())

    def push(self, var: Var, carried: MemRef, seen: set) -> None:
        if var in seen or isinstance(var, IterArg) or not isinstance(var.type, TileType):
            return
        seen.add(var)
        mine = self.current(var)
        if not is_on_chip(mine):
            return
        if mine.base is not carried.base:
            self.target[var] = carried
        if var in self.phi:
            stmt, i = self.phi[var]
            for body in (stmt.then_body, stmt.else_body):
                y = last_yield(body)
                if y is not None and i < len(y.values) and isinstance(y.values[i], Var):
                    self.push(y.values[i], carried, seen)
            return
        d = self.defs.get(var)
        if d is None:
            return
        value = d.value
        if isinstance(value, Var):
            self.push(value, carried, seen)
        elif isinstance(value, Call) and not value.is_function and has_op(value.op):
            op = get_op(value.op)
            index = op.reuses_input if op.reuses_input is not None else (0 if op.view else None)
            if index is not None and index < len(value.args) and isinstance(value.args[index], Var):
                self.push(value.args[index], carried, seen)

    def type_for(self, var: Var):
        memref = self.target.get(var)
        return None if memref is None else with_memref(var.type, memref)


def _read_after(stmts, carry: IterArg, value: Var) -> bool:
    """True when a statement after the one that defines ``value`` still reads ``carry``
    (e.g. ``m_new = max(m, x); d = m_new - m``): writing ``value`` into the carried buffer
    would then clobber a value that is read later, so the yield keeps its own buffer."""
    at = next((i for i, st in enumerate(stmts) if value in _defined(st)), None)
    if at is None:
        return False
    return any(carry in _read(st) for st in stmts[at + 1:])


def _defined(stmt) -> set:
    out = set()
    for st in walk_stmts(stmt):
        if isinstance(st, AssignStmt):
            out.add(st.var)
        elif isinstance(st, (ForStmt, WhileStmt, IfStmt)):
            out.update(st.return_vars)
    return out


class _Reads(IRVisitor):
    def __init__(self):
        self.found: set = set()

    def visit_var(self, var):
        self.found.add(var)


def _read(stmt) -> set:
    reads = _Reads()
    reads.visit(stmt)
    return reads.found


register_default_pass(materialize_semantic_aliases)

__all__ = ["materialize_semantic_aliases"]
