"""AutoDeriveTaskDependencies (PyPTO pass 38): task edges the compiler can state itself.

Off by default (``analyze_auto_scopes_for_deps=False``, as in PyPTO): the pass changes
nothing and the runtime infers every dependency from the tensors a task touches. Switched
on, it analyses each orchestration function's AUTO regions — the function body, and each
hand-written AUTO ``with pl.scope():`` inside it as a region of its own — in program order:

- every task argument is an access of a storage location (``storage.StorageMap``: the
  root buffer and, for constant slices, the window) that reads (``input``), writes
  (``output_existing``) or both (``inout``), as DeriveCallDirections resolved it;
- a later access that overlaps an earlier one, one of them writing (RAW, WAR, WAW), gets
  the earlier task as an edge in ``Call.attrs["compiler_manual_dep_edges"]`` — the value
  naming that task: a submit's task id, or the result of a plain kernel call — unless the
  user's ``deps=[...]`` already name it; two reads never order;
- a slot whose every hazard is so covered needs no run-time lookup: ``input`` becomes
  ``no_dep`` and ``inout`` becomes ``output_existing`` (it still registers as the writer),
  when its windows are static; a slot with no earlier hazard keeps its direction.

A hazard whose earlier task cannot be named at the later one — it ran in an earlier
iteration of the same loop, inside a finished loop or ``if`` arm, as a call without a
result, or in a region that gave up — or a task argument whose storage is unknown makes the
whole region give up: its edges and demotions are dropped (the runtime tracks it as
before) and its accesses stay visible to the enclosing region only as unnamed ones.
``pl.manual_scope()`` regions are the user's contract and are skipped, and so are
``pl.no_dep`` slots and ``manual_dep=True`` tensors (no edge for them). A function another
function calls is not analysed (its caller's tasks are not visible here), nor is one whose
body holds a statement the analysis does not know (a while loop). Running the pass twice
changes nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ptoc.dtypes import ArgDirection, Direction, FunctionType, ScopeKind
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, ForStmt, Function, IfStmt, ListExpr, Program, ReturnStmt,
    ScopeStmt, SeqStmts, Submit, TupleGetItem, Var, YieldStmt,
)
from ptoc.ir.types import TensorType
from ptoc.ir.visitor import IRMutator, IRVisitor
from ptoc.passes.base import program_pass, with_functions
from ptoc.passes.manager import register_default_pass
from ptoc.passes.tasks.buffer_roots import constant_trip_count, last_yield
from ptoc.passes.tasks.derive_call_directions import ARG_DIRECTIONS, task_callee
from ptoc.passes.tasks.storage import Location, StorageMap, overlap

COMPILER_EDGES = "compiler_manual_dep_edges"

#: what a covered slot no longer needs to look up
_DEMOTED = {ArgDirection.Input: ArgDirection.NoDep,
            ArgDirection.InOut: ArgDirection.OutputExisting}


@dataclass
class _Region:
    """An AUTO region; when it gives up, so does everything nested in it."""

    parent: "_Region | None" = None
    gave_up: bool = False

    def dropped(self) -> bool:
        region = self
        while region is not None:
            if region.gave_up:
                return True
            region = region.parent
        return False


@dataclass(frozen=True)
class _Access:
    locations: tuple[Location, ...]
    reads: bool
    writes: bool
    task: Var | None      # the value naming the task at this point (None: none does)

    def unnamed(self) -> "_Access":
        return dataclasses.replace(self, task=None)

    def conflicts(self, locations, reads: bool, writes: bool) -> bool:
        return (reads and self.writes or writes and (self.reads or self.writes)) \
            and overlap(self.locations, locations)


@dataclass
class _Decision:
    region: _Region
    edges: list[Var] = field(default_factory=list)
    directions: list[ArgDirection] = field(default_factory=list)


class _Unsupported(Exception):
    """A statement the analysis does not model: the function is left as it is."""


class _Analysis:
    """Decides the edges and demotions of every task call of one function."""

    def __init__(self, program: Program, function: Function):
        self.program = program
        self.storage = StorageMap(program, function)
        self.task_ids = _task_id_names(function)
        self.decisions: dict[int, _Decision] = {}

    def run(self, body: SeqStmts) -> None:
        self.block(body, _Region(), [])

    def block(self, body: SeqStmts | None, region: _Region, seen: list[_Access]) -> None:
        for stmt in body.stmts if body is not None else ():
            self.stmt(stmt, region, seen)

    def stmt(self, stmt, region: _Region, seen: list[_Access]) -> None:
        if isinstance(stmt, SeqStmts):
            self.block(stmt, region, seen)
        elif isinstance(stmt, (AssignStmt, EvalStmt)):
            call = stmt.value if isinstance(stmt, AssignStmt) else stmt.expr
            if task_callee(self.program, call) is not None and ARG_DIRECTIONS in call.attrs:
                self.launch(stmt, call, region, seen)
        elif isinstance(stmt, ScopeStmt) and stmt.kind is ScopeKind.Runtime:
            if not stmt.attrs.get("manual"):
                self.scope(stmt, region, seen)
        elif isinstance(stmt, ForStmt):
            self.loop(stmt, region, seen)
        elif isinstance(stmt, IfStmt):
            start = len(seen)
            self.block(stmt.then_body, region, seen)
            then_accesses = seen[start:]
            del seen[start:]
            self.block(stmt.else_body, region, seen)
            seen[start:] = [a.unnamed() for a in then_accesses + seen[start:]]
        elif not isinstance(stmt, (ReturnStmt, YieldStmt)):
            raise _Unsupported(type(stmt).__name__)

    def scope(self, stmt: ScopeStmt, region: _Region, seen: list[_Access]) -> None:
        inner, start = _Region(region), len(seen)
        self.block(stmt.body, inner, seen)
        if inner.gave_up:                 # nothing it did may be named from outside
            seen[start:] = [a.unnamed() for a in seen[start:]]

    def loop(self, stmt: ForStmt, region: _Region, seen: list[_Access]) -> None:
        start = len(seen)
        self.block(stmt.body, region, seen)
        inside = seen[start:]
        trips = constant_trip_count(stmt)
        if trips is None or trips > 1:
            local = _defined_in(stmt.body)
            if any(b.conflicts(a.locations, a.reads, a.writes) for a in inside for b in inside
                   if not all(loc.root in local for loc in a.locations)):
                region.gave_up = True     # an earlier iteration's task has no name here
        if not self._carries_known_buffers(stmt):
            region.gave_up = True
        seen[start:] = [a.unnamed() for a in inside]

    def _carries_known_buffers(self, stmt: ForStmt) -> bool:
        """Each tensor carry yields a buffer its init may name (else the body's view of the
        carry, taken from the init, misses one)."""
        body_yield = last_yield(stmt.body)
        if body_yield is None:
            return True
        roots = self.storage.roots
        return all(set(roots.roots(value)) <= set(roots.roots(ia.init))
                   for ia, value in zip(stmt.iter_args, body_yield.values)
                   if isinstance(ia.type, TensorType))

    def launch(self, stmt, call: Call, region: _Region, seen: list[_Access]) -> None:
        callee = task_callee(self.program, call)
        directions = list(call.attrs[ARG_DIRECTIONS])
        known = list(call.attrs.get(COMPILER_EDGES, ListExpr(())).items)
        named = {id(d) for d in (*getattr(call, "deps", ()), *known) if isinstance(d, Var)}
        decision = _Decision(region, known, list(directions))
        task = self._task_name(stmt, call)
        accesses = []
        for index, (arg, direction) in enumerate(zip(call.args, directions)):
            if not isinstance(arg.type, TensorType):
                continue
            locations = self.storage.locations(arg)
            users = direction is ArgDirection.NoDep or (locations is not None and all(
                loc.root in self.storage.untracked for loc in locations))
            if users:     # pl.no_dep / manual_dep=True: the user's; still an access for later
                if locations is not None:
                    declared = callee.params[index].direction
                    accesses.append(_Access(locations, declared is not Direction.Out,
                                            declared is not Direction.In, task))
                continue
            if locations is None:
                region.gave_up = True     # the argument's storage is not known
                continue
            hazards = [a for a in seen if a.conflicts(locations, direction.reads,
                                                      direction.writes)]
            if any(a.task is None for a in hazards):
                region.gave_up = True
            for a in hazards:
                if a.task is not None and id(a.task) not in named:
                    named.add(id(a.task))
                    decision.edges.append(a.task)
            static = all(loc.box is not None for loc in locations)
            if hazards and static and direction in _DEMOTED:
                decision.directions[index] = _DEMOTED[direction]
            accesses.append(_Access(locations, direction.reads, direction.writes, task))
        seen.extend(accesses)
        self.decisions[id(call)] = decision

    def _task_name(self, stmt, call: Call) -> Var | None:
        """A submit's task id; a plain call's result stands for its task (PyPTO's
        synthetic edge); a call without a result has no name."""
        if not isinstance(stmt, AssignStmt):
            return None
        if isinstance(call, Submit):
            return self.task_ids.get(id(stmt.var), stmt.var)
        return stmt.var


def _task_id_names(function: Function) -> dict[int, Var]:
    """id(submit result) -> the variable bound to its task id (its last item)."""
    names: dict[int, Var] = {}
    submits: dict[int, int] = {}

    class _Find(IRVisitor):
        def visit_assign_stmt(self, stmt: AssignStmt) -> None:
            value = stmt.value
            if isinstance(value, Submit):
                submits[id(stmt.var)] = len(value.type.types) - 1
            elif isinstance(value, TupleGetItem) and isinstance(value.tuple, Var) \
                    and submits.get(id(value.tuple)) == value.index:
                names.setdefault(id(value.tuple), stmt.var)
            super().visit_assign_stmt(stmt)

    _Find().visit(function.body)
    return names


def _defined_in(body: SeqStmts) -> set[Var]:
    """Variables a statement list binds (a buffer made there is new every iteration)."""
    found: set[Var] = set()

    class _Defs(IRVisitor):
        def visit_assign_stmt(self, stmt: AssignStmt) -> None:
            found.add(stmt.var)
            super().visit_assign_stmt(stmt)

    _Defs().visit(body)
    return found


class _Apply(IRMutator):
    def __init__(self, decisions: dict[int, _Decision]):
        super().__init__()
        self.decisions = decisions

    def mutate_call(self, node: Call):
        decision = self.decisions.get(id(node))
        call = super().mutate_call(node)
        if decision is None or decision.region.dropped():
            return call
        attrs = dict(call.attrs)
        attrs[ARG_DIRECTIONS] = decision.directions
        if decision.edges:
            attrs[COMPILER_EDGES] = ListExpr(tuple(decision.edges))
        return dataclasses.replace(call, attrs=attrs)


def _called(program: Program) -> set[str]:
    names: set[str] = set()

    class _Calls(IRVisitor):
        def visit_call(self, node: Call) -> None:
            if node.is_function:
                names.add(node.op.name)
            super().visit_call(node)

    _Calls().visit(program)
    return names


def _derive(program: Program, function: Function, called: set[str]) -> Function:
    if function.func_type is not FunctionType.Orchestration or function.name in called:
        return function
    analysis = _Analysis(program, function)
    try:
        analysis.run(function.body)
    except _Unsupported:
        return function
    if not analysis.decisions:
        return function
    return dataclasses.replace(function, body=_Apply(analysis.decisions).mutate_body(function.body))


@program_pass(name="AutoDeriveTaskDependencies",
              required={"SplitIncoreOrch", "CallDirectionsResolved"},
              produced={"CallDirectionsResolved"}, handles_while_loops=True)
def auto_derive_task_dependencies(program: Program, ctx, analyze_auto_scopes=None) -> Program:
    """Compiler-stated task edges and the lookups they make unnecessary (module docstring);
    ``analyze_auto_scopes`` defaults to the PassContext's ``analyze_auto_scopes_for_deps``."""
    if analyze_auto_scopes is None:
        analyze_auto_scopes = ctx.analyze_auto_scopes_for_deps
    if not analyze_auto_scopes:
        return program
    called = _called(program)
    return with_functions(program, tuple(_derive(program, fn, called)
                                         for fn in program.functions))


register_default_pass(auto_derive_task_dependencies)
