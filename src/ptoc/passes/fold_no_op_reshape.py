"""FoldNoOpReshape: a ``tile.reshape`` whose result is the very buffer of its source — same
MemRef base and offset, same shape, dtype, memory space and view — becomes a plain
``lhs = rhs`` (PyPTO's pass 35, right after the memory planner's stage).

Why: such a reshape changes nothing on the hardware; folding it in the IR (instead of a
peephole in codegen) lets codegen translate every surviving reshape one to one, and lets a
no-op reshape compile under the PTOAS planner too (where a real reshape has no spelling in
ptoc). ptoc also requires the same byte offset, not only the same MemRef base: an alias
of another offset would read the wrong bytes.
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import FunctionType
from ptoc.ir.equality import structural_equal
from ptoc.ir.nodes import AssignStmt, Call, ConstInt, Function, Var
from ptoc.ir.types import TileType
from ptoc.ir.visitor import IRMutator
from ptoc.passes.base import function_pass
from ptoc.passes.manager import register_default_pass


def is_no_op_reshape(stmt: AssignStmt) -> bool:
    """Whether ``stmt`` is ``lhs = tile.reshape(rhs, ...)`` onto rhs's own buffer."""
    call = stmt.value
    if not (isinstance(call, Call) and call.op == "tile.reshape" and call.args
            and isinstance(call.args[0], Var)):
        return False
    lhs, rhs = stmt.var.type, call.args[0].type
    if not (isinstance(lhs, TileType) and isinstance(rhs, TileType)):
        return False
    a, b = lhs.memref, rhs.memref
    if a is None or b is None or a.base is not b.base or a.size != b.size:
        return False
    same_offset = a.offset is b.offset or (isinstance(a.offset, ConstInt)
                                           and isinstance(b.offset, ConstInt)
                                           and a.offset.value == b.offset.value)
    return same_offset and structural_equal(dataclasses.replace(lhs, memref=None),
                                            dataclasses.replace(rhs, memref=None))


class _Fold(IRMutator):
    def mutate_assign_stmt(self, node: AssignStmt):
        if is_no_op_reshape(node):
            return dataclasses.replace(node, value=node.value.args[0])
        return super().mutate_assign_stmt(node)


@function_pass(name="FoldNoOpReshape", required={"MemRefsAssigned"},
               func_types=(FunctionType.InCore, FunctionType.AIC, FunctionType.AIV),
               handles_while_loops=True)
def fold_no_op_reshape(fn: Function, ctx) -> Function:
    """No-op tile reshapes folded into Var-to-Var assignments."""
    return _Fold().mutate(fn)


register_default_pass(fold_no_op_reshape)

__all__ = ["fold_no_op_reshape", "is_no_op_reshape"]
