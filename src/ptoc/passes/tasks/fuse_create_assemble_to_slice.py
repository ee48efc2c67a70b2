"""FuseCreateAssembleToSlice (PyPTO's pass 36): in an orchestration function, a staging
tensor made by ``pl.create_tensor`` that is written back by exactly one
``pl.assemble(target, staging, offset)`` becomes ``pl.slice(target, shape, offset)``, and
the assemble is dropped: the kernels that fill the staging tensor write the target in
place, with no temporary buffer and no copy.

Why a pass (and not the runtime): the rewrite changes which buffer a kernel call writes,
which the following task passes (DeriveCallDirections) must see.

When it applies: the staging buffer's root is the ``create`` itself (BufferRoots), it is
assembled exactly once, not through an ambiguous value, and the target and the offsets
name only values already defined where the ``create`` stands (the slice replaces it
there). A loop carry that only passed the assemble's result around becomes pass-through
and is removed (its uses read the initial value). Not fused (the program is unchanged):
two assembles of one staging buffer, an assemble whose source is a ``pl.slice``, a target
or offset defined after the ``create``. A target of higher rank than the staging tensor
(a [2, 8] chunk assembled into a [B, 4, 16] tensor at [b, 0, c]) is fused as PyPTO fuses
it: the slice's shape gets leading 1s ([1, 2, 8]) so shape and offsets have the target's
rank, and so does the staging value's type; a kernel taking it as a [2, 8] parameter gets
the region in that rank (the runtime drops the leading unit dims).
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import FunctionType
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstInt, ForStmt, Function, IfStmt, ListExpr, Program,
    SeqStmts, Var,
)
from ptoc.ir.visitor import IRMutator, IRVisitor, substitute
from ptoc.ops import make_call
from ptoc.passes.base import program_pass, refuse_orchestration_while_loops
from ptoc.passes.manager import register_default_pass
from ptoc.passes.tasks.buffer_roots import BufferRoots, last_yield


def _vars_in(expr) -> set[Var]:
    found: set[Var] = set()

    class _Uses(IRVisitor):
        def visit_var(self, node) -> None:
            found.add(node)

    _Uses().visit(expr)
    return found


class _Visible(IRVisitor):
    """For each statement: the variables defined before it (params, enclosing loop
    variables and carries, earlier assignments of the enclosing blocks)."""

    def __init__(self, fn: Function):
        super().__init__()
        self.scope: list[set[Var]] = [{p.var for p in fn.params}]
        self.at: dict[int, frozenset[Var]] = {}
        self.visit(fn.body)

    def visible(self) -> frozenset[Var]:
        return frozenset().union(*self.scope)

    def visit_seq_stmts(self, node: SeqStmts) -> None:
        self.scope.append(set())
        for s in node.stmts:
            self.at[id(s)] = self.visible()
            self.visit(s)
            if isinstance(s, AssignStmt):
                self.scope[-1].add(s.var)
            elif isinstance(s, (ForStmt, IfStmt)):
                self.scope[-1].update(s.return_vars)
        self.scope.pop()

    def visit_for_stmt(self, node: ForStmt) -> None:
        self.scope.append({node.loop_var, *node.iter_args})
        self.visit(node.body)
        self.scope.pop()


class _Find(IRVisitor):
    """The ``tensor.create`` statements, and the assembles of each root (``roots``)."""

    def __init__(self, roots: BufferRoots):
        self.roots = roots
        self.creates: dict[Var, AssignStmt] = {}
        self.assembles: dict[Var, list[AssignStmt]] = {}

    def visit_assign_stmt(self, s: AssignStmt) -> None:
        value = s.value
        if isinstance(value, Call) and value.op == "tensor.create":
            self.creates[s.var] = s
        elif isinstance(value, Call) and value.op == "tensor.assemble":
            source = value.args[1]
            root = self.roots.root(source)
            if root is not None and not self.roots.is_ambiguous(source):
                self.assembles.setdefault(root, []).append(s)
        super().visit_assign_stmt(s)


def fusible_pairs(program: Program, fn: Function) -> dict[Var, AssignStmt]:
    """create Var -> the one assemble statement that writes it back (fusible ones only)."""
    found = _Find(BufferRoots(program, fn))
    found.visit(fn.body)
    creates, assembles = found.creates, found.assembles
    visible = None   # worked out when a pair is a candidate (a walk of the whole function)
    pairs = {}
    for var, uses in assembles.items():
        create = creates.get(var)
        if create is None or len(uses) != 1:
            continue
        if visible is None:
            visible = _Visible(fn).at
        target, offset = uses[0].value.args[0], uses[0].value.args[2]
        if len(target.type.shape) < len(var.type.shape):
            continue
        if not (_vars_in(target) | _vars_in(offset)) <= visible[id(create)]:
            continue
        pairs[var] = uses[0]
    return pairs


class _Fuse(IRMutator):
    def __init__(self, pairs: dict[Var, AssignStmt]):
        super().__init__()
        self.pairs = pairs
        self.dropped = {id(s) for s in pairs.values()}

    def mutate_assign_stmt(self, node: AssignStmt):
        if id(node) in self.dropped:          # its result is the target from now on
            self.var_map[node.var] = self.mutate(node.value.args[0])
            return None
        assemble = self.pairs.get(node.var)
        if assemble is not None:
            target, offset = (self.mutate(a) for a in (assemble.value.args[0],
                                                       assemble.value.args[2]))
            shape = node.value.args[0].items
            pad = len(target.type.shape) - len(shape)    # a lower-rank staging tensor
            shape = ListExpr((ConstInt(1),) * pad + tuple(shape))
            view = make_call("tensor.slice", (target, shape, offset), {}, loc=node.value.loc)
            # the staging value's MemRef stays (InitMemRef gave it one, if any); a padded
            # slice has the target's rank, as in PyPTO
            ty = dataclasses.replace(view.type, memref=node.value.type.memref)
            if not pad:
                ty = node.value.type
            var = dataclasses.replace(node.var, type=ty) if pad else node.var
            if pad:
                self.var_map[node.var] = var
            return dataclasses.replace(node, var=var, value=dataclasses.replace(view, type=ty))
        return super().mutate_assign_stmt(node)

    def mutate_for_stmt(self, node: ForStmt):
        new = super().mutate_for_stmt(node)
        if not isinstance(new, ForStmt):
            return new
        body_yield = last_yield(new.body)
        if body_yield is None:
            return new
        through = [i for i, (ia, v) in enumerate(zip(new.iter_args, body_yield.values))
                   if v is ia]
        if not through:
            return new
        keep = [i for i in range(len(new.iter_args)) if i not in through]
        mapping = {new.iter_args[i]: new.iter_args[i].init for i in through}
        for i in through:
            self.var_map[new.return_vars[i]] = new.iter_args[i].init
        body = substitute(new.body, mapping)
        stmts = list(body.stmts)
        stmts[-1] = dataclasses.replace(stmts[-1], values=tuple(body_yield.values[i] for i in keep))
        if not keep:
            stmts.pop()
        return dataclasses.replace(
            new, iter_args=tuple(new.iter_args[i] for i in keep),
            return_vars=tuple(new.return_vars[i] for i in keep),
            body=dataclasses.replace(body, stmts=tuple(stmts)))


@program_pass(name="FuseCreateAssembleToSlice", handles_while_loops=True)
def fuse_create_assemble_to_slice(program: Program, ctx) -> Program:
    """create + single assemble -> a slice of the target (orchestration functions)."""
    refuse_orchestration_while_loops("FuseCreateAssembleToSlice", program)
    functions, changed = [], False
    for fn in program.functions:
        pairs = fusible_pairs(program, fn) if fn.func_type is FunctionType.Orchestration else {}
        if pairs:
            fn = _Fuse(pairs).mutate(fn)
            changed = True
        functions.append(fn)
    return dataclasses.replace(program, functions=tuple(functions)) if changed else program


register_default_pass(fuse_create_assemble_to_slice)

__all__ = ["fuse_create_assemble_to_slice", "fusible_pairs"]
