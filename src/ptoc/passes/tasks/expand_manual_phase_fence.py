"""ExpandManualPhaseFence: one barrier task instead of an all-to-all fan-in.

In a ``pl.manual_scope()``, a loop whose launches each wait for a whole ``pl.array`` of
task ids (``deps=[tids]``) makes N x M edges (N ids, M launches). When that is more than
N + M, this pass inserts, before the loop, one ``fence = pl.system.task_dummy(deps=[tids])``
(attrs ``dummy_task``) and rewrites those launches to ``deps=[fence]``: N edges into the
barrier and M out of it, with the same order.

A launch is a candidate when its only dependency is one ``Array[TASK_ID]``. The array must
be stable over the loop: not the loop's own carry, not defined in the loop body, and not
updated there (``tids[i] = ...``), directly or through a nested loop's carry that starts
from it. Scalar, mixed and several-array dependencies, non-manual scopes, loops with a
run-time or zero trip count and unprofitable shapes (N -> 1, 2 -> 2) are left as written.

On ptoc's runtime the barrier launches nothing (``pl.system.task_dummy`` stands for its
dependencies), so every task waits for the same tasks before and after the pass.
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import DataType, FunctionType
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstInt, ForStmt, Function, Program, SeqStmts, Submit, Var,
)
from ptoc.ir.types import ArrayType, ScalarType
from ptoc.ir.visitor import IRMutator, IRVisitor
from ptoc.ops import make_call
from ptoc.passes.base import program_pass, with_functions, refuse_orchestration_while_loops
from ptoc.passes.manager import register_default_pass
from ptoc.passes.tasks.materialize_runtime_scopes import ManualDepth

TASK_ID = ScalarType(DataType.TASK_ID)


def _task_id_array(expr) -> bool:
    return isinstance(expr, Var) and isinstance(expr.type, ArrayType) \
        and expr.type.dtype is DataType.TASK_ID


class _Body(IRVisitor):
    """What a loop body does with task-id arrays: the candidate launches per array, the
    arrays it defines and those it updates (through nested-loop carries too)."""

    def __init__(self):
        super().__init__()
        self.candidates: dict[Var, int] = {}
        self.defined: set[Var] = set()
        self.updated: set[Var] = set()
        self.carried_from: dict[Var, Var] = {}   # nested carry -> its init

    def visit_assign_stmt(self, node: AssignStmt) -> None:
        self.defined.add(node.var)
        value = node.value
        if isinstance(value, Call) and value.op == "array.update_element":
            self.updated.add(value.args[0])
        super().visit_assign_stmt(node)

    def visit_submit(self, node: Submit) -> None:
        if len(node.deps) == 1 and _task_id_array(node.deps[0]):
            self.candidates[node.deps[0]] = self.candidates.get(node.deps[0], 0) + 1
        super().visit_submit(node)

    def visit_for_stmt(self, node: ForStmt) -> None:
        self.defined.update((*node.iter_args, *node.return_vars))
        for ia in node.iter_args:
            if isinstance(ia.init, Var):
                self.carried_from[ia] = ia.init
        super().visit_for_stmt(node)

    def updates(self, array: Var) -> bool:
        """Whether ``array`` or a nested carry starting from it is updated."""
        for var in self.updated:
            while isinstance(var, Var):
                if var is array:
                    return True
                var = self.carried_from.get(var)
        return False


class _Redirect(IRMutator):
    def __init__(self, array: Var, fence: Var):
        super().__init__()
        self.array, self.fence = array, fence

    def mutate_submit(self, node: Submit):
        node = super().mutate_submit(node)
        if len(node.deps) == 1 and node.deps[0] is self.array:
            return dataclasses.replace(node, deps=(self.fence,))
        return node


def _trips(loop: ForStmt) -> int | None:
    bounds = (loop.start, loop.stop, loop.step)
    if all(isinstance(b, ConstInt) for b in bounds) and loop.step.value != 0:
        return len(range(*(b.value for b in bounds)))
    return None


class _Fences(ManualDepth):
    def mutate_for_stmt(self, node: ForStmt):
        node = super().mutate_for_stmt(node)
        trips = _trips(node) if isinstance(node, ForStmt) else None
        if not self.manual or not trips:
            return node
        body = _Body()
        body.visit(node.body)
        barriers = []
        for array, launches in body.candidates.items():
            n, m = array.type.size, launches * trips
            if not isinstance(n, int) or n * m <= n + m or array in node.iter_args \
                    or array in body.defined or body.updates(array):
                continue
            fence = Var(f"{array.name}_fence", TASK_ID, node.loc)
            barriers.append(AssignStmt(fence, make_call(
                "system.task_dummy", (), {"deps": [array]}, loc=node.loc,
                attrs={"dummy_task": True}), node.loc))
            node = _Redirect(array, fence).mutate(node)
        return SeqStmts((*barriers, node), node.loc) if barriers else node


def _expand(fn: Function) -> Function:
    if fn.func_type is not FunctionType.Orchestration:
        return fn
    return _Fences().mutate(fn)


@program_pass(name="ExpandManualPhaseFence", required={"CallDirectionsResolved"},
              produced={"CallDirectionsResolved"},
              handles_while_loops=True)
def expand_manual_phase_fence(program: Program, ctx) -> Program:
    """Compress full-array task-id fan-ins of manual-scope loops (module docstring)."""
    refuse_orchestration_while_loops("ExpandManualPhaseFence", program)
    functions = tuple(_expand(fn) for fn in program.functions)
    return with_functions(program, functions)


register_default_pass(expand_manual_phase_fence)
