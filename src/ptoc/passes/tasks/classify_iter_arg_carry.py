"""ClassifyIterArgCarry: how each loop carry of an orchestration function is carried.

A carry is *trivial* when its yielded value names the same buffer as the carry itself (it
lies in the carry's alias class), so the runtime can keep one tensor handle for the loop —
a fresh handle would break the dependency chain the runtime tracks by handle; otherwise it
is a *rebind* (the yield hands over a different buffer or value, which must be copied
back). A ``Scalar[TASK_ID]`` carry is never trivial: every launch makes a new id. The alias
class of a carry holds the values that reach it through one of PyPTO's four rules:

* ``tensor.assemble``: the result names its target (``args[0]``);
* a kernel call: a result names the ``Out``/``InOut`` argument the kernel returns;
* a tuple item of a kernel call or ``pl.submit``: item ``i`` names the argument the
  kernel's ``i``-th result returns;
* a nested loop: its result names its init value (not for ``pl.Array`` carries: each loop
  level owns its array).

Inside ``pl.manual_scope()`` a ``Scalar[TASK_ID]`` rebind carry of a ``pl.parallel`` loop is
a fence of all the loop's launches, sized by the loop's constant trip count; a sequential
loop threading such a carry through an inner ``pl.parallel`` takes the inner size. A
``pl.parallel`` loop with a run-time trip count cannot size it: that is an error.

The plan is stamped on the loop: ``attrs["iter_arg_rebind_<i>"]`` (bool) for every slot,
``attrs["iter_arg_array_size_<i>"]`` (int) for a fence. ptoc's orchestration runtime reads
the size: a fence carry of a parallel loop gives every iteration the value it had on entry
and leaves the loop holding all iterations' task ids.
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import DataType, Direction, ForKind, FunctionType
from ptoc.errors import PassError
from ptoc.ir.aliases import returned_params
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstInt, ForStmt, Function, Program, TupleGetItem, Var,
    YieldStmt, body_scope,
)
from ptoc.ir.printer import flatten
from ptoc.ir.types import ArrayType, ScalarType, TupleType
from ptoc.ir.visitor import IRVisitor
from ptoc.passes.base import program_pass, with_functions, refuse_orchestration_while_loops
from ptoc.passes.manager import register_default_pass
from ptoc.passes.properties import IRProperty, register_property_checker
from ptoc.passes.tasks.materialize_runtime_scopes import ManualDepth

REBIND = "iter_arg_rebind_{}"
ARRAY_SIZE = "iter_arg_array_size_{}"


def iter_arg_is_rebind(loop: ForStmt, slot: int) -> bool:
    return bool(loop.attrs[REBIND.format(slot)])


def iter_arg_array_size(loop: ForStmt, slot: int) -> int:
    """The fence size of carry ``slot`` (0: not a fence)."""
    return int(loop.attrs.get(ARRAY_SIZE.format(slot), 0))


def _is_task_id(var) -> bool:
    return isinstance(var.type, ScalarType) and var.type.dtype is DataType.TASK_ID


def _body(loop: ForStmt) -> list:
    """The loop body's statements (inside its whole-body runtime scope, if any)."""
    stmts = flatten(loop.body)
    scope = body_scope(stmts)
    return flatten(scope.body) if scope is not None else stmts


def loop_yield(loop: ForStmt) -> YieldStmt | None:
    stmts = _body(loop)
    return stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None


class _AliasEdges(IRVisitor):
    """``source[v]``: the one value ``v`` names the buffer of (the four rules)."""

    def __init__(self, program: Program):
        super().__init__()
        self.program = program
        self.source: dict[Var, Var] = {}
        self.tuples: dict[Var, Call] = {}

    def visit_assign_stmt(self, node: AssignStmt) -> None:
        value = node.value
        if isinstance(value, Call) and value.op == "tensor.assemble" and value.args:
            self._edge(node.var, value.args[0])
        elif isinstance(value, Call) and value.is_function:
            if isinstance(node.var.type, TupleType):
                self.tuples[node.var] = value
            else:
                self._edge(node.var, self._returned_arg(value, 0))
        elif isinstance(value, TupleGetItem) and value.tuple in self.tuples:
            self._edge(node.var, self._returned_arg(self.tuples[value.tuple], value.index))
        super().visit_assign_stmt(node)

    def visit_for_stmt(self, node: ForStmt) -> None:
        super().visit_for_stmt(node)
        for ia, rv in zip(node.iter_args, node.return_vars):
            if not isinstance(ia.type, ArrayType):
                self._edge(rv, ia.init)

    def _returns(self, call: Call) -> list[int | None]:
        callee = self.program.get_function(call.op)
        return returned_params(callee, self.program) if callee is not None else []

    def _returned_arg(self, call: Call, index: int):
        returns = self._returns(call)
        if index >= len(returns) or returns[index] is None:
            return None
        param = self.program.get_function(call.op).params[returns[index]]
        return call.args[returns[index]] if param.direction is not Direction.In else None

    def _edge(self, var: Var, source) -> None:
        if isinstance(source, Var):
            self.source[var] = source


class _Classify(ManualDepth):
    def __init__(self, source: dict[Var, Var]):
        super().__init__()
        self.source = source

    def in_class(self, value, carry: Var) -> bool:
        seen = set()
        while isinstance(value, Var) and value not in seen:
            if value is carry:
                return True
            seen.add(value)
            value = self.source.get(value)
        return False

    def mutate_for_stmt(self, node: ForStmt):
        node = super().mutate_for_stmt(node)
        if not isinstance(node, ForStmt) or not node.iter_args:
            return node
        yld = loop_yield(node)
        attrs = dict(node.attrs)
        for slot, ia in enumerate(node.iter_args):
            value = yld.values[slot] if yld is not None else ia
            rebind = _is_task_id(ia) or not self.in_class(value, ia)
            attrs[REBIND.format(slot)] = rebind
            size = self.fence_size(node, ia) if rebind and self.manual and _is_task_id(ia) else 0
            if size:
                attrs[ARRAY_SIZE.format(slot)] = size
        return dataclasses.replace(node, attrs=attrs)

    def fence_size(self, loop: ForStmt, carry: Var) -> int:
        if loop.kind is ForKind.Parallel:
            bounds = (loop.start, loop.stop, loop.step)
            if not all(isinstance(b, ConstInt) for b in bounds) or loop.step.value == 0:
                raise PassError(
                    f"manual_scope: the pl.parallel loop over '{loop.loop_var.name}' carries the "
                    f"task id '{carry.name}' (a manual_scope dependency), so it must have a "
                    "statically-known trip count", loop.loc,
                    hint="give pl.parallel constant bounds, or use pl.range (sequential)")
            return len(range(*(b.value for b in bounds)))
        for inner in _body(loop):
            if isinstance(inner, ForStmt):
                for slot, ia in enumerate(inner.iter_args):
                    if ia.init is carry and iter_arg_array_size(inner, slot):
                        return iter_arg_array_size(inner, slot)
        return 0


def _classify(program: Program, fn: Function) -> Function:
    if fn.func_type is not FunctionType.Orchestration:
        return fn
    edges = _AliasEdges(program)
    edges.visit(fn.body)
    return _Classify(edges.source).mutate(fn)


@program_pass(name="ClassifyIterArgCarry",
              required={"CallDirectionsResolved", "RuntimeScopesMaterialized"},
              produced={"IterArgCarryClassified", "RuntimeScopesMaterialized"},
              handles_while_loops=True)
def classify_iter_arg_carry(program: Program, ctx) -> Program:
    """Stamp every orchestration loop carry trivial or rebind, and size task-id fences
    (module docstring)."""
    refuse_orchestration_while_loops("ClassifyIterArgCarry", program)
    functions = tuple(_classify(program, fn) for fn in program.functions)
    return with_functions(program, functions)


register_default_pass(classify_iter_arg_carry)


class _StampCheck(IRVisitor):
    """Clears ``ok`` at a loop with an unstamped carry (a module-level class: the check runs
    after every pass producing the property)."""

    def __init__(self):
        self.ok = True

    def visit_for_stmt(self, node: ForStmt) -> None:
        self.ok = self.ok and all(REBIND.format(i) in node.attrs
                                  for i in range(len(node.iter_args)))
        super().visit_for_stmt(node)


def iter_arg_carry_classified(program: Program) -> bool:
    """IterArgCarryClassified: every carry of an orchestration loop has its stamp."""
    check = _StampCheck()
    for fn in program.functions:
        if fn.func_type is FunctionType.Orchestration:
            check.visit(fn.body)
    return check.ok


register_property_checker(IRProperty.IterArgCarryClassified, iter_arg_carry_classified)
