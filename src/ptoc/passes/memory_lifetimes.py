"""Lifetime intervals of on-chip buffers, the input of MemoryReuse (reference §9.1).

Statements get order numbers in a full recursive walk (every assignment, evaluation,
yield and return takes one, two apart so that the copies MemoryReuse may insert before a
yield have a point of their own; an ``if`` numbers its then-branch before its
else-branch). A value is live from its defining statement to its last read; a value
defined before a loop and read inside it lives until the end of that loop, because every
trip reads it again. Touching ranges (a last read at the statement that defines the
other) do not overlap.

Values that already share a buffer (views, in-place results, loop carries, an ``if``
result and its then-branch value) form one interval, live over the *union* of their
ranges rather than the hull, with the two places where control flow joins modelled
exactly:

- a value defined before an ``if``, read in its else-branch and not in its then-branch
  nor after the ``if``, is dead while the then-branch runs (a hole in its range);
- a loop's next carried value arrives just before the body's yield (the yielded value
  itself, or a copy of it), so the iter-arg is live from the loop start to its last
  read and again at that arrival point; the yielded value may take the carry's buffer
  over once the iter-arg's last read is behind (then no copy is needed at the yield);
- an ``if`` result is written where the else-branch yields (by that branch's value, or by
  a copy of it placed just before the yield), so the result's buffer is free while the
  else-branch runs, except for the value yielded to it.

Nothing else is excused: two values live at the same program point never share,
whichever branches they come from. Each interval also records the
``pipeline_membership`` of its defining calls and whether it is a load, which the
pipeline-stage guard needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from ptoc.dtypes import MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, Expr, ForStmt, Function, IfStmt, ReturnStmt, SeqStmts, Stmt, Var,
    WhileStmt, YieldStmt,
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
    ranges: list[tuple[int, int, Var]] = field(default_factory=list)
    links: dict = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.base.name

    def describe(self) -> str:
        names = ", ".join(v.name for v in self.vars[:3]) + (", ..." if len(self.vars) > 3 else "")
        return f"{self.name} ({self.size} B: {names})"


def overlaps(a: Interval, b: Interval) -> bool:
    """Live at the same time; a last read at the other's defining statement is allowed."""
    if a.last_use <= b.def_point or b.last_use <= a.def_point:
        return False
    return any(_clash(ra, rb, a.links) for ra in a.ranges for rb in b.ranges)


def _clash(ra: tuple, rb: tuple, links: dict) -> bool:
    """Two value ranges overlap, unless one is the value that takes the other's place."""
    if ra[1] <= rb[0] or rb[1] <= ra[0]:
        return False
    for x, y in ((ra, rb), (rb, ra)):
        relaxed = links.get((x[2], y[2]))
        if relaxed is not None:
            return not (x[1] <= relaxed[0] or relaxed[1] <= x[0])
    return True


def analyze_lifetimes(fn: Function) -> list[Interval]:
    """One Interval per referenced ``tile.alloc`` of ``fn``, in allocation order."""
    walker = value_ranges(fn)
    intervals: list[Interval] = []
    by_base: dict[Var, Interval] = {}
    for s in fn.body.stmts:
        if is_alloc(s):
            iv = Interval(len(intervals), s.var, alloc_space(s), alloc_size(s),
                          pinned=bool(s.value.kwarg("pinned", False)))
            by_base[s.var] = iv
    all_pieces, calls = walker.pieces, walker.calls
    for var in walker.def_order:
        m = memref_of(var)
        iv = by_base.get(m.base) if m is not None and isinstance(m.base, Var) else None
        if iv is None:
            continue
        iv.vars.append(var)
        pieces = all_pieces[var]
        lo, last, ranges = pieces[0][0], iv.last_use, iv.ranges
        for a, b in pieces:
            if a < lo:
                lo = a
            if b > last:
                last = b
            ranges.append((a, b, var))
        iv.def_point = lo if iv.def_point < 0 or lo < iv.def_point else iv.def_point
        iv.last_use = last
        call = calls.get(var)
        if call is not None:
            iv.calls.append(call)
            if not iv.membership and membership_of(call):
                iv.membership = membership_of(call)
                iv.is_load = call.op in LOAD_OPS
    links = walker.links()
    for iv in by_base.values():
        if iv.vars:
            iv.links = links
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


def value_ranges(fn: Function) -> "_OrderWalker":
    """Order numbers, definitions and last reads of every value of ``fn`` (no MemRefs needed)."""
    walker = _OrderWalker()
    walker.block(fn.body)
    walker.finish()
    return walker


@dataclass(frozen=True)
class Join:
    """Where a loop carry or an ``if`` result is handed over: the yielded value, the value
    it becomes (iter-arg or result), and the points that matter for the hand-over."""

    source: Var
    target: Var
    start: int      # loop header / if condition
    handover: int   # the yield that delivers ``source`` (loop) / the else-branch's yield (if)
    end: int        # last point of the statement


class _OrderWalker:
    """Numbers statements, records definitions, reads and the loop/branch joins."""

    def __init__(self):
        self.order = 0
        self.defs: dict[Var, int] = {}
        self.def_order: list[Var] = []
        self.calls: dict[Var, Call] = {}
        self.reads: list[tuple[Var, int, tuple[int, ...]]] = []
        self.loops: list[list[int]] = []      # [start, end] per loop
        self.loop_stack: tuple[int, ...] = ()   # the enclosing loops, outermost first
        self._reader = _Reads()
        self.carries: list[Join] = []         # yield value -> iter-arg
        self.phis: list[Join] = []            # else-yield value -> if result
        self.spans: dict[int, tuple[int, int]] = {}   # id(for/if stmt) -> (start, end)
        self.then_spans: list[tuple[int, int, int]] = []  # (if start, then last, if end)
        self.last_use: dict[Var, int] = {}    # last read (reads in a loop of a value made
        #                                       before it count at the loop's end)
        self.pieces: dict[Var, list[tuple[int, int]]] = {}  # live ranges, holes cut out

    def define(self, var: Var, at: int) -> None:
        if var not in self.defs:
            self.defs[var] = at
            self.def_order.append(var)

    def read(self, exprs: Iterable[Expr], at: int) -> None:
        r = self._reader
        r.found = []
        r.visit_all(exprs)
        stack, add = self.loop_stack, self.reads.append
        for v in r.found:
            add((v, at, stack))

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
        elif isinstance(s, (ForStmt, WhileStmt)):
            self._for(s)
        elif isinstance(s, IfStmt):
            self._if(s)

    def _for(self, s: ForStmt | WhileStmt) -> None:
        start = self.tick()  # the header: inits are read and iter-args defined here
        header = [s.start, s.stop, s.step] if isinstance(s, ForStmt) else [s.cond]
        self.read(header + [ia.init for ia in s.iter_args if ia.init is not None], start)
        loop_id = len(self.loops)
        self.loops.append([start, start])
        for ia in s.iter_args:
            self.define(ia, start)
        outer = self.loop_stack
        self.loop_stack = outer + (loop_id,)
        self.block(s.body)
        self.loop_stack = outer
        end = max(self.order - 2, start)
        self.loops[loop_id][1] = end
        self.spans[id(s)] = (start, end)
        y = last_yield(s.body)
        for i, (ia, rv) in enumerate(zip(s.iter_args, s.return_vars)):
            self.define(rv, end)
            if y is not None and i < len(y.values) and isinstance(y.values[i], Var):
                self.carries.append(Join(y.values[i], ia, start, end, end))

    def _if(self, s: IfStmt) -> None:
        start = self.tick()
        self.read([s.cond], start)
        self.block(s.then_body)
        then_last = self.order - 2
        self.block(s.else_body)
        end = max(self.order - 2, start)
        self.spans[id(s)] = (start, end)
        self.then_spans.append((start, then_last, end))
        y = last_yield(s.else_body)
        for i, rv in enumerate(s.return_vars):
            self.define(rv, end - 1 if y is not None else end)
            if y is not None and i < len(y.values) and isinstance(y.values[i], Var):
                self.phis.append(Join(y.values[i], rv, start, end, end))

    def tick(self) -> int:
        at = self.order
        self.order += 2
        return at

    def finish(self) -> None:
        positions: dict[Var, list[int]] = {}
        defs, loops, last_use = self.defs, self.loops, self.last_use
        for var, at, stack in self.reads:
            use = at
            if stack:
                d = defs.get(var)
                if d is not None:
                    for loop_id in stack:
                        start, end = loops[loop_id]
                        if d < start and end > use:
                            use = end
            if use > last_use.get(var, -1):
                last_use[var] = use
            found = positions.get(var)
            if found is None:
                positions[var] = [use]
            else:
                found.append(use)
        arrivals = {join.target: join.end for join in self.carries}
        cut = self.then_spans
        for var, d in defs.items():
            u = last_use.get(var, d)
            if u < d:
                u = d
            pieces = self._cut_then_holes(d, u, positions.get(var, [])) if cut else [(d, u)]
            if var in arrivals:  # the next trip's carried value lands before the yield
                pieces.append((arrivals[var] - 1, arrivals[var]))
            self.pieces[var] = pieces

    def _cut_then_holes(self, d: int, u: int, reads: list[int]) -> list[tuple[int, int]]:
        """[d, u] minus the then-branches a value made before the ``if`` waits through
        unread, to be read only in the else-branch."""
        pieces = [(d, u)]
        for start, then_last, end in self.then_spans:
            if not (d < start and then_last < u <= end) or then_last <= start:
                continue
            if any(start < r <= then_last for r in reads):
                continue
            cut = []
            for a, b in pieces:
                if a < start < then_last < b:
                    cut += [(a, start), (then_last + 1, b)]
                else:
                    cut.append((a, b))
            pieces = cut
        return pieces

    def links(self) -> dict:
        """(value, carrier) -> the carrier's range as seen by the value that replaces it."""
        out = {}
        for join in self.carries:
            last = max(self.last_use.get(join.target, join.start), join.start)
            out[(join.source, join.target)] = (self.defs[join.target], last)
        for join in self.phis:
            out[(join.source, join.target)] = (join.handover,
                                               self.last_use.get(join.target, join.handover))
        return out


__all__ = ["Interval", "Join", "analyze_lifetimes", "overlaps", "value_ranges", "LOAD_OPS"]
