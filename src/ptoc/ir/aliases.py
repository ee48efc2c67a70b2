"""Which values are the same DDR tensor, and which tensors a body writes in place.

An op that updates a tensor in place (``tile.store`` its destination, ``tensor.assemble``
its target: the registry's ``reuses_input`` on a tensor operand) returns that tensor; a view
(``tensor.slice``) names part of its operand's bytes, so a write through it writes the
operand; a loop result is its iter-arg, an iter-arg its init, an ``if`` result what its arms yield,
and ``a = b`` is ``b``. Following those links back to a *root* (a parameter, or a tensor
captured from an enclosing scope) answers three questions:

- which roots a body writes (a bare ``pl.store(t, offs, c)`` writes ``c`` exactly as
  ``c = pl.store(t, offs, c)`` does: the store's result is a name for the same bytes);
- which roots it also reads (anything but a destination slot or an alias link counts,
  so the answer can only err towards ``InOut``, as PyPTO's direction inference does);
- which root each returned value is (where a kernel's result lives).

Given ``program``, a call of one of its functions (a wrapper calling a kernel) follows the
callee's signature: an ``Out``/``InOut`` argument is written (``InOut`` also read), an
``In`` one read, and the call's result is the argument its callee returns.
"""

from __future__ import annotations

from ptoc.ir.nodes import (
    AssignStmt, Call, Expr, ForStmt, Function, IfStmt, Program, ReturnStmt, SeqStmts,
    TupleGetItem, Var, WhileStmt, YieldStmt,
)
from ptoc.ir.memo import MISSING, IdentityMemo
from ptoc.ir.types import TensorType
from ptoc.ir.visitor import IRVisitor
from ptoc.ops import get_op, has_op


def _viewed_operand(call: Call) -> int | None:
    """0 when ``call`` is a view of its first operand (``tensor.slice``): the same bytes."""
    if call.is_function or not has_op(call.op) or not call.args:
        return None
    return 0 if get_op(call.op).view and isinstance(call.args[0].type, TensorType) else None


def written_operand(call: Call) -> int | None:
    """The index of the tensor ``call`` updates in place, or None."""
    if call.is_function or not has_op(call.op):
        return None
    index = get_op(call.op).reuses_input
    if index is None or index >= len(call.args):
        return None
    return index if isinstance(call.args[index].type, TensorType) else None


class TensorAliases(IRVisitor):
    """Root tracking over one body; ``roots`` maps each root Var to a key of the caller's."""

    def __init__(self, roots: dict[Var, object], program=None):
        super().__init__()
        self.program = program
        self.root: dict[int, object] = {id(v): key for v, key in roots.items()}
        self.items: dict[int, list] = {}  # a tuple-valued call result: the root of each item
        self.written: list[object] = []
        self.read: list[object] = []
        self.returned: list[object | None] = []
        self.calls_functions = False   # the answer may depend on the program's functions

    def root_of(self, value) -> object | None:
        return self.root.get(id(value)) if isinstance(value, Var) else None

    def _link(self, var: Var, source) -> None:
        key = self.root_of(source)
        if key is not None:
            self.root[id(var)] = key

    def _note(self, bucket: list, key) -> None:
        if key is not None and key not in bucket:
            bucket.append(key)

    def visit_assign_stmt(self, stmt: AssignStmt) -> None:
        value = stmt.value
        if isinstance(value, Var):
            self._link(stmt.var, value)
            self.visit_def(stmt.var)
            return
        if isinstance(value, TupleGetItem) and id(value.tuple) in self.items:
            items = self.items[id(value.tuple)]
            if value.index < len(items) and items[value.index] is not None:
                self.root[id(stmt.var)] = items[value.index]
            self.visit_def(stmt.var)
            return
        if isinstance(value, Call):
            index = written_operand(value)
            callee = self._callee(value)
            if callee is not None:
                returned = returned_params(callee, self.program)
                keys = [self.root_of(value.args[i]) if i is not None else None for i in returned]
                if len(returned) > 1:
                    self.items[id(stmt.var)] = keys
                index = returned[0] if len(returned) == 1 else None
            if index is not None:
                self._link(stmt.var, value.args[index])
            elif _viewed_operand(value) is not None and self.root_of(value.args[0]) is not None:
                self._link(stmt.var, value.args[0])
                self.visit_def(stmt.var)
                return
        super().visit_assign_stmt(stmt)

    def _callee(self, call: Call) -> Function | None:
        if not call.is_function:
            return None
        self.calls_functions = True
        return self.program.get_function(call.op) if self.program is not None else None

    def visit_call(self, node: Call) -> None:
        index = written_operand(node)
        callee = self._callee(node)
        for i, arg in enumerate(node.args):
            key = self.root_of(arg)
            if key is None:
                self.visit(arg)
            elif callee is not None and i < len(callee.params):
                direction = callee.params[i].direction.value
                if direction != "In":
                    self._note(self.written, key)
                if direction != "Out":
                    self._note(self.read, key)
            else:
                self._note(self.written if i == index else self.read, key)
        for _, value in node.kwargs:
            self.visit(value)

    def visit_var(self, node: Var) -> None:
        self._note(self.read, self.root_of(node))

    def visit_tuple_get_item(self, node: TupleGetItem) -> None:
        self.visit(node.tuple)

    def visit_for_stmt(self, stmt: ForStmt) -> None:
        for ia in stmt.iter_args:
            self._link(ia, ia.init)
        for bound in (stmt.start, stmt.stop, stmt.step):
            self.visit(bound)
        self.visit(stmt.body)
        for ia, rv in zip(stmt.iter_args, stmt.return_vars):
            self._link(rv, ia)

    def visit_while_stmt(self, stmt: WhileStmt) -> None:
        for ia in stmt.iter_args:
            self._link(ia, ia.init)
        self.visit(stmt.cond)
        self.visit(stmt.body)
        for ia, rv in zip(stmt.iter_args, stmt.return_vars):
            self._link(rv, ia)

    def visit_if_stmt(self, stmt: IfStmt) -> None:
        self.visit(stmt.cond)
        self.visit(stmt.then_body)
        self.visit(stmt.else_body)
        for body in (stmt.then_body, stmt.else_body):
            last = body.stmts[-1] if body is not None and body.stmts else None
            if isinstance(last, YieldStmt):
                for rv, value in zip(stmt.return_vars, last.values):
                    if self.root_of(rv) is None:
                        self._link(rv, value)

    def visit_yield_stmt(self, stmt: YieldStmt) -> None:
        for value in stmt.values:
            if self.root_of(value) is None:
                self.visit(value)

    def visit_return_stmt(self, stmt: ReturnStmt) -> None:
        self.returned = [self.root_of(v) for v in stmt.values]
        for value in stmt.values:
            if self.root_of(value) is None:
                self.visit(value)


def tensor_aliases(body: SeqStmts | Expr, roots: dict[Var, object],
                   program=None) -> TensorAliases:
    """Walk ``body`` once with the given roots; read ``written``, ``read``, ``returned``.
    ``program`` lets calls of its functions be followed (see the module docstring)."""
    walker = TensorAliases(roots, program)
    walker.visit(body)
    return walker


class _ReturnedRoots(TensorAliases):
    """``TensorAliases`` reduced to what ``returned`` depends on: the root links that
    assignments, loops and branches make. Reads and writes inside expressions and types
    (``visit_call`` / ``visit_var`` / definitions' types) only fill ``read`` / ``written``,
    so they are skipped; a function call in an assigned value still sets
    ``calls_functions`` (one anywhere else does not change ``returned``)."""

    def visit_call(self, node: Call) -> None:
        pass

    def visit_var(self, node: Var) -> None:
        pass

    def visit_def(self, var: Var) -> None:
        pass

    def visit_type(self, ty) -> None:
        pass


#: per function: ((the program's functions, or () without a program), its answer) pairs;
#: None for the functions when the body calls none (then the answer holds in any program).
#: Every call of a kernel asks about the kernel's whole body, and the task passes ask again
#: about kernels they left unchanged (while the orchestration they rewrite changes the
#: program).
_RETURNED = IdentityMemo(256)


def returned_params(function: Function, program=None) -> list[int | None]:
    """For each returned value, the index of the parameter it aliases (None if none).
    ``program`` is a Program (remembered with the answer) or anything else with
    ``get_function`` (e.g. a pass's table of functions under construction: not remembered)."""
    roots = {p.var: i for i, p in enumerate(function.params)}
    if program is not None and not isinstance(program, Program):
        return _returned_roots(function, roots, program).returned
    context = tuple(program.functions) if program is not None else ()
    known = _RETURNED.get(function)
    answers = [] if known is MISSING else known
    for functions, returned in answers:
        if functions is None or (len(functions) == len(context)
                                 and all(a is b for a, b in zip(functions, context))):
            return list(returned)
    walker = _returned_roots(function, roots, program)
    returned = walker.returned
    _RETURNED.put(function, [*answers[-1:], (context if walker.calls_functions else None,
                                             tuple(returned))])
    return returned


def _returned_roots(function: Function, roots: dict[Var, object], program) -> TensorAliases:
    walker = _ReturnedRoots(roots, program)
    walker.visit(function.body)
    return walker


__all__ = ["TensorAliases", "returned_params", "tensor_aliases", "written_operand"]
