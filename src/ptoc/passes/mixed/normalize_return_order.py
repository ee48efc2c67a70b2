"""NormalizeReturnOrder (PyPTO pass 25): ``return[i]`` of a kernel is its i-th Out/InOut
parameter, so the host maps results to arguments by position.

* A0 — in InCore, AIV and Group functions, a returned DDR tensor that is a new version of a
  parameter (a store's result, a loop-carried copy) is returned as the parameter itself;
  kernel-allocated tensors and scalars stay as they are.
* A — when every returned value of such a function is one of its Out/InOut parameters, the
  return values (and return types) are sorted into parameter order.
* B — in every other function, ``r[i]`` of a call to a reordered function becomes
  ``r[perm[i]]``, so callers still see the same values under the same names.

A no-op when the order already matches (the common single-output case).
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import Direction, FunctionType
from ptoc.ir.nodes import (
    AssignStmt, Call, Function, Program, ReturnStmt, TupleGetItem, Var,
)
from ptoc.ir.types import TupleType
from ptoc.ir.visitor import IRMutator
from ptoc.passes.base import program_pass, with_functions
from ptoc.passes.manager import register_default_pass
from ptoc.passes.mixed.prune import tensor_parents

RETURNING = (FunctionType.InCore, FunctionType.AIV, FunctionType.Group)


@program_pass(name="NormalizeReturnOrder", required=("SSAForm",),
              handles_while_loops=True)
def normalize_return_order(program: Program, ctx) -> Program:
    """Returns in Out/InOut parameter order; callers' tuple indices follow (module doc)."""
    perms: dict[str, list[int]] = {}
    functions = []
    for fn in program.functions:
        if fn.func_type in RETURNING:
            fn = _params_returned(fn)
            fn, perm = _reorder(fn)
            if perm is not None:
                perms[fn.name] = perm
        functions.append(fn)
    if perms:
        functions = [fn if fn.func_type in RETURNING and fn.name in perms
                     else _remap_callers(fn, perms) for fn in functions]
    return with_functions(program, functions)


register_default_pass(normalize_return_order)


def _return(fn: Function) -> ReturnStmt | None:
    last = fn.body.stmts[-1] if fn.body.stmts else None
    return last if isinstance(last, ReturnStmt) else None


def _params_returned(fn: Function) -> Function:
    """A0: returned versions of a parameter become the parameter."""
    ret = _return(fn)
    if ret is None:
        return fn
    params = {p.var for p in fn.params}
    parents = tensor_parents(fn.body)
    values = []
    for v in ret.values:
        root = v
        while isinstance(root, Var) and root not in params and root in parents:
            root = parents[root]
        values.append(root if isinstance(root, Var) and root in params else v)
    if all(a is b for a, b in zip(values, ret.values)):
        return fn
    body = replace(fn.body, stmts=fn.body.stmts[:-1] + (replace(ret, values=tuple(values)),))
    return replace(fn, body=body)


def _reorder(fn: Function) -> tuple[Function, list[int] | None]:
    """A: the permutation old return index -> new one, or None when nothing changes."""
    ret = _return(fn)
    if ret is None or len(ret.values) < 2:
        return fn, None
    outs = [p.var for p in fn.params if p.direction in (Direction.Out, Direction.InOut)]
    positions = []
    for v in ret.values:
        match = [i for i, o in enumerate(outs) if o is v]
        if not match:
            return fn, None            # a kernel-allocated or scalar return: leave the order
        positions.append(match[0])
    order = sorted(range(len(positions)), key=lambda i: positions[i])
    perm = [0] * len(order)
    for new, old in enumerate(order):
        perm[old] = new
    if perm == list(range(len(perm))):
        return fn, None
    values = tuple(ret.values[i] for i in order)
    types = tuple(fn.return_types[i] for i in order)
    body = replace(fn.body, stmts=fn.body.stmts[:-1] + (replace(ret, values=values),))
    return replace(fn, body=body, return_types=types), perm


def _remap_callers(fn: Function, perms: dict[str, list[int]]) -> Function:
    """B: a call of a reordered function returns the reordered tuple; indices into it
    follow the permutation."""
    results: dict[Var, list[int]] = {}

    class _Remap(IRMutator):
        def mutate_assign_stmt(self, node: AssignStmt):
            call = node.value
            if isinstance(call, Call) and call.is_function and call.op in perms \
                    and isinstance(node.var.type, TupleType):
                perm = perms[call.op]
                order = sorted(range(len(perm)), key=lambda i: perm[i])
                ty = TupleType(tuple(node.var.type.types[i] for i in order))
                var = replace(node.var, type=ty)
                self.var_map[node.var] = var
                results[var] = perm
                return replace(node, var=var, value=replace(self.mutate(call), type=ty))
            return super().mutate_assign_stmt(node)

        def mutate_tuple_get_item(self, node: TupleGetItem):
            node = super().mutate_tuple_get_item(node)
            perm = results.get(node.tuple) if isinstance(node.tuple, Var) else None
            if perm is None or not 0 <= node.index < len(perm):
                return node
            return replace(node, index=perm[node.index])

    body = _Remap().mutate(fn.body)
    return fn if body is fn.body else replace(fn, body=body)


__all__ = ["normalize_return_order"]
