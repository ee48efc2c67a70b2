"""DeriveCallDirections: every kernel call records how the runtime tracks each argument.

A kernel's parameter directions (In / Out / InOut) say what the kernel does to a buffer;
the runtime needs to know what to do at the launch site. This pass writes one
``pl.adir`` value per argument into ``Call.attrs["arg_directions"]``:

- a scalar argument -> ``scalar``; an ``In`` tensor -> ``input``; an ``InOut`` one -> ``inout``;
- an ``Out`` tensor -> ``output_existing`` (become the buffer's writer, wait for nothing),
  promoted to ``inout`` (also wait for earlier users) when waiting may matter:
  under a sequential loop (the previous iteration wrote it: R-seq), when the argument may
  name different buffers on different paths, when an earlier statement of the same
  block already wrote its buffer (R-prior), or when its buffer is a parameter the
  enclosing function declares ``pl.InOut`` (R-enclosing).

Calls that already carry ``arg_directions`` keep them (they are authoritative, as hand-written
``pl.no_dep`` slots are not derivable); ``arg_direction_overrides`` (slot indices) force
``no_dep`` at those slots. Running the pass twice changes nothing.
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import ArgDirection, Direction, ForKind
from ptoc.ir.nodes import (
    ARG_DIRECTION_OVERRIDES, AssignStmt, Call, EvalStmt, ForStmt, Function, IfStmt, Program, SeqStmts, Stmt,
)
from ptoc.ir.memo import MISSING, IdentityMemo
from ptoc.ir.types import TensorType, TupleType
from ptoc.ir.visitor import IRMutator, calls_in
from ptoc.passes.base import program_pass, with_functions, refuse_orchestration_while_loops
from ptoc.passes.manager import register_default_pass
from ptoc.passes.properties import IRProperty, register_property_checker
from ptoc.passes.tasks.buffer_roots import BufferRoots

ARG_DIRECTIONS = "arg_directions"


def task_callee(program: Program, expr) -> Function | None:
    """The program function ``expr`` launches, when ``expr`` is a kernel (task) call."""
    if isinstance(expr, Call) and expr.is_function:
        return program.get_function(expr.op)
    return None


def _call_of(stmt: Stmt):
    if isinstance(stmt, AssignStmt):
        return stmt.value
    if isinstance(stmt, EvalStmt):
        return stmt.expr
    return None


class _PriorWriters:
    """For each call, the Out roots it is the first in its block to write (R-prior).

    A loop or ``if`` is one unit seen from its enclosing block: it is analysed with a copy
    of what was written before it, and everything it may write counts as written after it.
    """

    def __init__(self, program: Program, roots: BufferRoots):
        self.program = program
        self.roots = roots
        self.first: dict[int, set] = {}
        self._footprints: dict[int, set] = {}

    def run(self, body: SeqStmts) -> "_PriorWriters":
        self._scan(body, set())
        return self

    def _writes(self, call) -> list[tuple[Direction, object]]:
        callee = task_callee(self.program, call)
        if callee is None:
            return []
        found = []
        for param, arg in zip(callee.params, call.args):
            root = self.roots.root(arg)
            if param.direction is not Direction.In and root is not None:
                found.append((param.direction, root))
        return found

    def footprint(self, stmt: Stmt | None) -> set:
        """Every root a call inside ``stmt`` writes."""
        if stmt is None:
            return set()
        cached = self._footprints.get(id(stmt))
        if cached is not None:
            return cached
        result: set = set()
        for child in _children(stmt):
            result |= self.footprint(child)
        result |= {root for _, root in self._writes(_call_of(stmt))}
        self._footprints[id(stmt)] = result
        return result

    def _scan(self, stmt: Stmt | None, seen: set) -> None:
        if stmt is None:
            return
        if isinstance(stmt, (ForStmt, IfStmt)):
            for child in _children(stmt):
                self._scan(child, set(seen))
            seen |= self.footprint(stmt)
            return
        if not isinstance(stmt, (AssignStmt, EvalStmt)):
            for child in _children(stmt):
                self._scan(child, seen)
            return
        call = _call_of(stmt)
        writes = self._writes(call)
        self.first[id(call)] = {root for direction, root in writes
                                if direction is Direction.Out and root not in seen}
        seen |= {root for _, root in writes}


def _children(stmt: Stmt) -> tuple:
    """The statement lists directly inside ``stmt`` (bodies of loops, arms, scopes)."""
    if isinstance(stmt, SeqStmts):
        return stmt.stmts
    if isinstance(stmt, ForStmt):
        return (stmt.body,)
    if isinstance(stmt, IfStmt):
        return (stmt.then_body, stmt.else_body)
    body = getattr(stmt, "body", None)
    return (body,) if isinstance(body, SeqStmts) else ()


class _Directions(IRMutator):
    """Writes ``arg_directions`` into every kernel call of one function body."""

    def __init__(self, program: Program, function: Function):
        super().__init__()
        self.program = program
        self.roots = BufferRoots(program, function)
        self.first = _PriorWriters(program, self.roots).run(function.body).first
        self.inout_params = {p.var for p in function.params if p.direction is Direction.InOut}
        self.sequential = 0

    def mutate_for_stmt(self, node: ForStmt):
        sequential = node.kind is not ForKind.Parallel
        self.sequential += sequential
        try:
            return super().mutate_for_stmt(node)
        finally:
            self.sequential -= sequential

    def mutate_call(self, node: Call):
        call = super().mutate_call(node)
        callee = task_callee(self.program, call)
        if callee is None or ARG_DIRECTIONS in call.attrs or len(call.args) != len(callee.params):
            return call
        first = self.first.get(id(node), set())
        directions = [self._direction(param.direction, arg, first)
                      for param, arg in zip(callee.params, call.args)]
        for index in call.attrs.get(ARG_DIRECTION_OVERRIDES, ()):
            directions[index] = ArgDirection.NoDep
        attrs = dict(call.attrs)
        attrs[ARG_DIRECTIONS] = directions
        return dataclasses.replace(call, attrs=attrs)

    def _direction(self, declared: Direction, arg, first: set) -> ArgDirection:
        if not isinstance(arg.type, (TensorType, TupleType)):
            return ArgDirection.Scalar
        if declared is Direction.In:
            return ArgDirection.Input
        if declared is Direction.InOut:
            return ArgDirection.InOut
        root = self.roots.root(arg)
        if (self.sequential or self.roots.is_ambiguous(arg)
                or (root is not None and root not in first) or root in self.inout_params):
            return ArgDirection.InOut
        return ArgDirection.OutputExisting


@program_pass(name="DeriveCallDirections", produced={"CallDirectionsResolved"},
              handles_while_loops=True)
def derive_call_directions(program: Program, ctx) -> Program:
    """Record the runtime direction of every kernel-call argument (module docstring)."""
    refuse_orchestration_while_loops("DeriveCallDirections", program)
    functions = tuple(_Directions(program, fn).mutate(fn) if task_calls(program, fn) else fn
                      for fn in program.functions)   # no kernel call: nothing to record
    return with_functions(program, functions)


register_default_pass(derive_call_directions)


#: per function: (the program's function names, its kernel calls). DeriveCallDirections
#: skips the functions without any (the kernels themselves), and CallDirectionsResolved is
#: checked after it and after ExpandManualPhaseFence, which share most functions.
_TASK_CALLS = IdentityMemo(256)


def task_calls(program: Program, fn: Function) -> tuple[Call, ...]:
    """The calls in ``fn`` that launch a function of ``program`` (``task_callee``)."""
    names = tuple(f.name for f in program.functions)
    known = _TASK_CALLS.get(fn)
    if known is MISSING or known[0] != names:
        known = (names, tuple(calls_in(fn, lambda call: task_callee(program, call) is not None)))
        _TASK_CALLS.put(fn, known)
    return known[1]


def call_directions_resolved(program: Program) -> bool:
    """CallDirectionsResolved: every kernel call with arguments carries one direction per
    argument."""
    return all(len(call.attrs.get(ARG_DIRECTIONS, ())) == len(call.args)
               for fn in program.functions for call in task_calls(program, fn) if call.args)


register_property_checker(IRProperty.CallDirectionsResolved, call_directions_resolved)
