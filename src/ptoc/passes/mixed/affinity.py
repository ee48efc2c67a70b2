"""Which core a statement of a mixed kernel belongs to (PyPTO's core affinity).

Cube memory is Mat, Left, Right, Acc and Bias; vector memory is Vec. An op is CUBE when it is
a matmul or touches only cube memory (a load into Mat, a store from Acc, a Mat -> Left move),
VECTOR when it touches Vec, SHARED when it touches no tile (scalar arithmetic, control flow,
``tile.get_subblock_idx``), and MIXED when it is a boundary (a ``tile.move`` from one side to
the other, ``tile.aiv_shard`` / ``tile.aic_gather``) or a compound statement with both kinds
inside. ExpandMixedKernel keeps CUBE + SHARED in the AIC function and VECTOR + SHARED in the
AIV function.
"""

from __future__ import annotations

import enum

from ptoc.dtypes import MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, Expr, ForStmt, IfStmt, ReturnStmt, SeqStmts, Stmt, WhileStmt,
    YieldStmt,
)
from ptoc.ir.types import TileType

Mem = MemorySpace
CUBE_SPACES = frozenset({Mem.Mat, Mem.Left, Mem.Right, Mem.Acc, Mem.Bias})
CUBE_OPS = frozenset({"tile.matmul", "tile.matmul_acc", "tile.matmul_bias", "tile.gemv",
                      "tile.gemv_acc", "tile.gemv_bias", "tile.batch_matmul"})
BOUNDARY_OPS = frozenset({"tile.aiv_shard", "tile.aic_gather"})
#: Ops that belong to one side by declaration, whatever their operands.
DECLARED = {"tile.tpush_to_aiv": "cube", "tile.tpop_from_aiv": "cube",
            "system.tfree_to_aiv": "cube", "system.aic_initialize_pipe": "cube",
            "tile.tpush_to_aic": "vector", "tile.tpop_from_aic": "vector",
            "system.tfree_to_aic": "vector", "system.aiv_initialize_pipe": "vector"}


class Affinity(enum.Enum):
    SHARED = "shared"
    CUBE = "cube"
    VECTOR = "vector"
    MIXED = "mixed"

    def join(self, other: "Affinity") -> "Affinity":
        if self is other or other is Affinity.SHARED:
            return self
        if self is Affinity.SHARED:
            return other
        return Affinity.MIXED


def side_of(space: MemorySpace | None) -> Affinity:
    if space is None or space is Mem.DDR:
        return Affinity.SHARED
    return Affinity.CUBE if space in CUBE_SPACES else Affinity.VECTOR


def crosses_cores(src: MemorySpace | None, dst: MemorySpace | None) -> bool:
    """True for a move between cube memory and Vec: a cross-core transfer in a mixed kernel."""
    sides = {side_of(src), side_of(dst)}
    return sides == {Affinity.CUBE, Affinity.VECTOR}


def _space(e) -> MemorySpace | None:
    ty = getattr(e, "type", None)
    return ty.memory_space if isinstance(ty, TileType) else None


def call_affinity(call: Call) -> Affinity:
    """The side of one op call (see the module doc)."""
    if call.is_function:
        return Affinity.SHARED
    declared = DECLARED.get(call.op)
    if declared is not None:
        return Affinity(declared)
    if call.op in CUBE_OPS:
        return Affinity.CUBE
    if call.op in BOUNDARY_OPS:
        return Affinity.MIXED
    if call.op == "tile.move" and crosses_cores(_space(call.args[0]), call.kwarg("target_memory")):
        return Affinity.MIXED
    side = Affinity.SHARED
    spaces = [_space(a) for a in call.args] + [_space(call)]
    target = call.kwarg("target_memory")
    if isinstance(target, MemorySpace):
        spaces.append(target)
    for space in spaces:
        side = side.join(side_of(space))
    if side is Affinity.MIXED:     # e.g. a store of a Vec tile into a Mat-typed call: by source
        return side_of(_space(call.args[0])) if call.args else side
    return side


def expr_affinity(e: Expr | None) -> Affinity:
    return call_affinity(e) if isinstance(e, Call) else Affinity.SHARED


def stmt_affinity(s: Stmt) -> Affinity:
    """The side of a statement; compound statements join their bodies."""
    if isinstance(s, AssignStmt):
        return expr_affinity(s.value)
    if isinstance(s, EvalStmt):
        return expr_affinity(s.expr)
    if isinstance(s, SeqStmts):
        side = Affinity.SHARED
        for x in s.stmts:
            side = side.join(stmt_affinity(x))
        return side
    if isinstance(s, (ForStmt, WhileStmt)):
        return stmt_affinity(s.body)
    if isinstance(s, IfStmt):
        side = stmt_affinity(s.then_body)
        return side.join(stmt_affinity(s.else_body)) if s.else_body is not None else side
    if isinstance(s, (YieldStmt, ReturnStmt)):
        return Affinity.SHARED
    return Affinity.SHARED
