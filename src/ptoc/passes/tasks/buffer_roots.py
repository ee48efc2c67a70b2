"""Which orchestration buffer each tensor value names: the analysis every task pass shares.

In an orchestration function a tensor value is a handle on a buffer. A buffer's *root* is
the variable that owns it: a parameter, a ``pl.create_tensor`` result, or a
``pl.slice`` view (a view is a buffer of its own here, as in PyPTO's runtime, whose
TensorMap tracks each view by its own descriptor). Everything else names an existing root:
``a = b``, ``pl.assemble(target, ...)`` (its target), a kernel call's result (the argument
its callee returns), one item of a call's tuple result, a loop carry (its init and what
the body yields) and an ``if`` result (what either arm yields).

A value that may name one of several roots depending on control flow (an ``if`` whose
arms yield different buffers, a loop that might not run) is *ambiguous*; the passes that
need a single root take the first candidate and treat the value conservatively. A value
whose candidates may miss a root (an arm or a loop yields a value the analysis cannot
follow) is also *incomplete*: only its other candidates are known.
"""

from __future__ import annotations

from ptoc.ir.aliases import returned_params
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstInt, ForStmt, Function, IfStmt, Program, SeqStmts, TupleGetItem, Var,
    YieldStmt,
)
from ptoc.ir.types import TensorType, TupleType
from ptoc.ir.visitor import IRVisitor

#: ops whose result is a buffer of its own
NEW_ROOT_OPS = ("tensor.create", "tensor.slice")


def constant_trip_count(loop: ForStmt) -> int | None:
    """The number of iterations when start, stop and step are constants."""
    bounds = (loop.start, loop.stop, loop.step)
    if not all(isinstance(b, ConstInt) for b in bounds):
        return None
    start, stop, step = (b.value for b in bounds)
    if step == 0:
        return None
    return max(0, len(range(start, stop, step)))


def last_yield(body: SeqStmts | None) -> YieldStmt | None:
    if body is None or not body.stmts or not isinstance(body.stmts[-1], YieldStmt):
        return None
    return body.stmts[-1]


class BufferRoots(IRVisitor):
    """Root candidates of every tensor Var of one function (see the module docstring)."""

    def __init__(self, program: Program, function: Function):
        super().__init__()
        self.program = program
        self.candidates: dict[Var, tuple[Var, ...]] = {}
        self.ambiguous: set[Var] = set()
        self.incomplete: set[Var] = set()
        self.tuple_items: dict[Var, list[tuple[tuple[Var, ...], bool]]] = {}
        for param in function.params:
            self._record(param.var, (param.var,))
        self.visit(function.body)

    # ---- queries ------------------------------------------------------------------
    def root(self, value) -> Var | None:
        """The (first) root of ``value``; None when it names no tracked buffer."""
        roots = self.roots(value)
        return roots[0] if roots else None

    def roots(self, value) -> tuple[Var, ...]:
        return self.candidates.get(value, ()) if isinstance(value, Var) else ()

    def is_ambiguous(self, value) -> bool:
        return isinstance(value, Var) and value in self.ambiguous

    def is_complete(self, value) -> bool:
        """Whether ``roots(value)`` lists every buffer ``value`` may name (and is not empty)."""
        return bool(self.roots(value)) and value not in self.incomplete

    # ---- recording ----------------------------------------------------------------
    def _record(self, var: Var, roots, incomplete: bool = False) -> None:
        unique = tuple(dict.fromkeys(r for r in roots if r is not None))
        if not unique:
            return
        self.candidates[var] = unique
        if incomplete or len(unique) > 1:
            self.ambiguous.add(var)
        else:
            self.ambiguous.discard(var)
        if incomplete:
            self.incomplete.add(var)
        else:
            self.incomplete.discard(var)

    def _copy(self, var: Var, source) -> None:
        self._record(var, self.roots(source), not self.is_complete(source))

    def _call_outputs(self, call: Call) -> list[tuple[tuple[Var, ...], bool]]:
        """Per returned value of a kernel call: the roots of the argument it returns."""
        callee = self.program.get_function(call.op)
        if callee is None:
            return []
        outputs = []
        for index in returned_params(callee):
            arg = call.args[index] if index is not None and index < len(call.args) else None
            outputs.append((self.roots(arg), not self.is_complete(arg)))
        return outputs

    # ---- statements ---------------------------------------------------------------
    def visit_assign_stmt(self, stmt: AssignStmt) -> None:
        value, var = stmt.value, stmt.var
        if isinstance(value, Var):
            self._copy(var, value)
        elif isinstance(value, TupleGetItem) and isinstance(value.tuple, Var):
            items = self.tuple_items.get(value.tuple, [])
            if value.index < len(items):
                self._record(var, *items[value.index])
        elif isinstance(value, Call) and value.is_function:
            outputs = self._call_outputs(value)
            if isinstance(value.type, TupleType):
                self.tuple_items[var] = outputs
            elif outputs:
                self._record(var, *outputs[0])
        elif isinstance(value, Call) and value.op in NEW_ROOT_OPS:
            self._record(var, (var,))
        elif isinstance(value, Call) and value.op == "tensor.assemble":
            self._copy(var, value.args[0])
        super().visit_assign_stmt(stmt)

    def visit_if_stmt(self, stmt: IfStmt) -> None:
        super().visit_if_stmt(stmt)
        then_yield, else_yield = last_yield(stmt.then_body), last_yield(stmt.else_body)
        if then_yield is None or else_yield is None:
            return
        for rv, a, b in zip(stmt.return_vars, then_yield.values, else_yield.values):
            if not isinstance(rv.type, TensorType):
                continue
            incomplete = not self.is_complete(a) or not self.is_complete(b)
            self._record(rv, self.roots(a) + self.roots(b), incomplete)

    def visit_for_stmt(self, stmt: ForStmt) -> None:
        inits = []
        for ia in stmt.iter_args:
            inits.append(self.roots(ia.init))
            self._copy(ia, ia.init)
        super().visit_for_stmt(stmt)
        body_yield = last_yield(stmt.body)
        if body_yield is None:
            return
        runs = (constant_trip_count(stmt) or 0) > 0
        for rv, value, init in zip(stmt.return_vars, body_yield.values, inits):
            roots = self.roots(value)
            incomplete = not self.is_complete(value)
            if not runs:
                incomplete = incomplete or not init
                roots = roots + init
            self._record(rv, roots, incomplete)
