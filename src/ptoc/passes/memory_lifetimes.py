"""Lifetime intervals of on-chip buffers, the input of MemoryReuse (reference §9.1).

Statements get order numbers in a full recursive walk (every assignment, evaluation,
yield and return takes one; an ``if`` numbers its then-branch before its else-branch). A
tile is live from its defining statement to its last read, with two corrections:

- a value defined before a loop and read inside it lives until the end of that loop,
  because every trip reads it again;
- a read of a loop result counts as a read of the loop's init value, and a read of an
  ``if`` result as a read of the values both arms yield (those arms form a "phi family":
  they are never live at the same time, so their overlap is excused).

Values that already share a buffer (views, in-place results, loop carries) form one
interval spanning all of them. Each interval also records the ``pipeline_membership`` of
its defining calls and whether it is a load, which the pipeline-stage guard needs.
Touching intervals (a last read at the statement that defines the other) do not overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from ptoc.dtypes import MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, Expr, ForStmt, Function, IfStmt, ReturnStmt, SeqStmts, Stmt, Var,
    YieldStmt,
)
from ptoc.ir.visitor import IRVisitor
from ptoc.passes.memref_rewrite import (
    alloc_size, alloc_space, is_alloc, last_yield, membership_of, memref_of,
)

LOAD_OPS = ("tile.load", "tile.read")


@dataclass(eq=False)
class Interval:
    """One buffer's lifetime: every value living in the ``tile.alloc`` named by ``base``."""

    index: int
    base: Var
    space: MemorySpace
    size: int
    pinned: bool = False
    vars: list[Var] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    def_point: int = -1
    last_use: int = -1
    membership: str = ""
    is_load: bool = False
    families: set[int] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.base.name

    def describe(self) -> str:
        names = ", ".join(v.name for v in self.vars[:3]) + (", ..." if len(self.vars) > 3 else "")
        return f"{self.name} ({self.size} B: {names})"


def overlaps(a: Interval, b: Interval) -> bool:
    """Live at the same time; a last read at the other's defining statement is allowed."""
    return not (a.last_use <= b.def_point or b.last_use <= a.def_point)


def analyze_lifetimes(fn: Function) -> list[Interval]:
    """One Interval per referenced ``tile.alloc`` of ``fn``, in allocation order."""
    walker = _OrderWalker()
    walker.block(fn.body)
    walker.finish()
    intervals: list[Interval] = []
    by_base: dict[Var, Interval] = {}
    for s in fn.body.stmts:
        if is_alloc(s):
            iv = Interval(len(intervals), s.var, alloc_space(s), alloc_size(s),
                          pinned=bool(s.value.kwarg("pinned", False)))
            by_base[s.var] = iv
    for var in walker.def_order:
        m = memref_of(var)
        iv = by_base.get(m.base) if m is not None and isinstance(m.base, Var) else None
        if iv is None:
            continue
        iv.vars.append(var)
        d = walker.defs[var]
        u = max(walker.last_use.get(var, d), d)
        iv.def_point = d if iv.def_point < 0 else min(iv.def_point, d)
        iv.last_use = max(iv.last_use, u)
        iv.families |= walker.families.get(var, set())
        call = walker.calls.get(var)
        if call is not None:
            iv.calls.append(call)
            if not iv.membership and membership_of(call):
                iv.membership = membership_of(call)
                iv.is_load = call.op in LOAD_OPS
    for iv in by_base.values():
        if iv.vars:
            intervals.append(iv)
    for i, iv in enumerate(intervals):
        iv.index = i
    return intervals


class _Reads(IRVisitor):
    """Collect the Vars an expression reads (MemRef bases in types are not reads)."""

    def __init__(self):
        self.found: list[Var] = []

    def visit_var(self, node: Var) -> None:
        self.found.append(node)

    def visit_type(self, ty) -> None:
        pass


def _reads(exprs: Iterable[Expr]) -> list[Var]:
    r = _Reads()
    for e in exprs:
        r.visit(e)
    return r.found


class _OrderWalker:
    """Numbers statements, records defs and reads, then applies the redirections."""

    def __init__(self):
        self.order = 0
        self.defs: dict[Var, int] = {}
        self.def_order: list[Var] = []
        self.calls: dict[Var, Call] = {}
        self.reads: list[tuple[Var, int, tuple[int, ...]]] = []
        self.loops: list[list[int]] = []      # [start, end] per loop
        self.loop_stack: list[int] = []
        self.loop_init: dict[Var, Expr] = {}  # loop result -> init value
        self.phi_sources: dict[Var, list[Var]] = {}
        self.families: dict[Var, set[int]] = {}
        self.last_use: dict[Var, int] = {}
        self._family = 0

    def define(self, var: Var, at: int) -> None:
        if var not in self.defs:
            self.defs[var] = at
            self.def_order.append(var)

    def read(self, exprs: Iterable[Expr], at: int) -> None:
        for v in _reads(exprs):
            self.reads.append((v, at, tuple(self.loop_stack)))

    def block(self, body: SeqStmts | None) -> None:
        if body is None:
            return
        for s in body.stmts:
            self.stmt(s)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            self.block(s)
        elif isinstance(s, AssignStmt):
            at = self.tick()
            self.read([s.value], at)
            self.define(s.var, at)
            if isinstance(s.value, Call):
                self.calls[s.var] = s.value
        elif isinstance(s, EvalStmt):
            self.read([s.expr], self.tick())
        elif isinstance(s, (YieldStmt, ReturnStmt)):
            self.read(s.values, self.tick())
        elif isinstance(s, ForStmt):
            start = self.order
            self.read([s.start, s.stop, s.step] + [ia.init for ia in s.iter_args
                                                   if ia.init is not None], start)
            loop_id = len(self.loops)
            self.loops.append([start, start])
            for ia in s.iter_args:
                self.define(ia, start)
            self.loop_stack.append(loop_id)
            self.block(s.body)
            self.loop_stack.pop()
            end = max(self.order - 1, start)
            self.loops[loop_id][1] = end
            for ia, rv in zip(s.iter_args, s.return_vars):
                self.define(rv, end)
                if ia.init is not None:
                    self.loop_init[rv] = ia.init
        elif isinstance(s, IfStmt):
            self.read([s.cond], self.order)
            self.block(s.then_body)
            self.block(s.else_body)
            end = max(self.order - 1, 0)
            ys = [last_yield(s.then_body), last_yield(s.else_body)]
            for i, rv in enumerate(s.return_vars):
                self.define(rv, end)
                sources = [y.values[i] for y in ys
                           if y is not None and i < len(y.values) and isinstance(y.values[i], Var)]
                self.phi_sources[rv] = sources
                family = self._family
                self._family += 1
                for src in sources:
                    self.families.setdefault(src, set()).add(family)

    def tick(self) -> int:
        at = self.order
        self.order += 1
        return at

    def finish(self) -> None:
        for var, at, stack in self.reads:
            for target in self.redirect(var, set()):
                use = at
                d = self.defs.get(target)
                for loop_id in stack:
                    start, end = self.loops[loop_id]
                    if d is not None and d < start:
                        use = max(use, end)
                self.last_use[target] = max(self.last_use.get(target, -1), use)

    def redirect(self, var: Var, seen: set) -> list[Var]:
        """The values a read of ``var`` really reads (loop results -> init, phis -> arms)."""
        if var in seen:
            return []
        seen.add(var)
        if var in self.loop_init and isinstance(self.loop_init[var], Var):
            return [var] + self.redirect(self.loop_init[var], seen)
        if var in self.phi_sources:
            out = [var]
            for src in self.phi_sources[var]:
                out.extend(self.redirect(src, seen))
            return out
        return [var]


__all__ = ["Interval", "analyze_lifetimes", "overlaps", "LOAD_OPS"]
