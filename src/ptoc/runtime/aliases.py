"""Which kernel parameter each returned tensor is (``y = self.kernel(a, b, y)``).

A kernel returns its output tensors after threading them through stores (whose result
reuses the tensor operand), loop carries and phis; following those links from each
returned value back to a parameter tells the runtime where the result lives.
"""

from __future__ import annotations

from ptoc.ir.nodes import AssignStmt, Call, ForStmt, Function, IfStmt, ReturnStmt, Var
from ptoc.ir.visitor import IRVisitor
from ptoc.ops import get_op, has_op


class _AliasTracer(IRVisitor):
    def __init__(self, function: Function):
        super().__init__()
        self.root: dict[int, int] = {id(p.var): i for i, p in enumerate(function.params)}
        self.returned: list[int | None] = []

    def _of(self, value) -> int | None:
        return self.root.get(id(value)) if isinstance(value, Var) else None

    def _link(self, var: Var, source) -> None:
        index = self._of(source)
        if index is not None:
            self.root[id(var)] = index

    def visit_assign_stmt(self, stmt: AssignStmt) -> None:
        value = stmt.value
        if isinstance(value, Var):
            self._link(stmt.var, value)
        elif isinstance(value, Call) and not value.is_function and has_op(value.op):
            reused = get_op(value.op).reuses_input
            if reused is not None and reused < len(value.args):
                self._link(stmt.var, value.args[reused])
        super().visit_assign_stmt(stmt)

    def visit_for_stmt(self, stmt: ForStmt) -> None:
        for ia in stmt.iter_args:
            self._link(ia, ia.init)
        super().visit_for_stmt(stmt)
        for ia, rv in zip(stmt.iter_args, stmt.return_vars):
            self._link(rv, ia)

    def visit_if_stmt(self, stmt: IfStmt) -> None:
        super().visit_if_stmt(stmt)
        then_yield = stmt.then_body.stmts[-1] if stmt.then_body.stmts else None
        if stmt.return_vars and then_yield is not None:
            for rv, value in zip(stmt.return_vars, then_yield.values):
                self._link(rv, value)

    def visit_return_stmt(self, stmt: ReturnStmt) -> None:
        self.returned = [self._of(v) for v in stmt.values]


def returned_params(function: Function) -> list[int | None]:
    """For each returned value, the index of the parameter it aliases (None if none)."""
    tracer = _AliasTracer(function)
    tracer.visit_function(function)
    return tracer.returned
