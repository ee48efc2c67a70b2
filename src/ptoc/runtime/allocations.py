"""The final on-chip placements of a compiled kernel, reported under either planner.

Under the PYPTO planner they come from the IR (``tile.alloc`` statements and the MemRef
offsets AllocateMemoryAddr baked); under PTOAS from the addresses the PTO-level planner
wrote into ``pto.alloc_tile``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.dtypes import MemorySpace
from ptoc.ir.nodes import AssignStmt, EvalStmt, Function, Var
from ptoc.ir.types import TensorType, TileType
from ptoc.ir.visitor import IRVisitor


@dataclass(frozen=True)
class Allocation:
    """One buffer: which kernel, memory space, buffer name, byte address and size."""

    function: str
    space: MemorySpace
    name: str
    addr: int | None
    size: int


class _MemRefCollector(IRVisitor):
    """The ``tile.alloc`` statements and the first MemRef offset defined for each base.

    Only statements define variables, so the walk does not descend into the expressions
    of assignments and evaluations (the calls and their arguments: most of the IR)."""

    def __init__(self):
        super().__init__()
        self.offsets: dict[int, int] = {}
        self.allocs: list[tuple[Var, MemorySpace, int]] = []

    def visit_assign_stmt(self, stmt: AssignStmt) -> None:
        value = stmt.value
        if getattr(value, "op", None) == "tile.alloc":
            space, size = value.args[0], value.args[1]
            self.allocs.append((stmt.var, space, int(size)))
        self.visit_def(stmt.var)

    def visit_eval_stmt(self, stmt: EvalStmt) -> None:
        pass

    def visit_def(self, var: Var) -> None:
        ty = var.type
        memref = getattr(ty, "memref", None)
        if isinstance(ty, (TileType, TensorType)) and memref is not None and isinstance(
                memref.base, Var):
            offset = getattr(memref.offset, "value", None)
            if offset is not None:
                self.offsets.setdefault(id(memref.base), int(offset))


def allocations_from_ir(function: Function) -> list[Allocation]:
    """Buffers of one kernel as the PYPTO planner placed them (address None if unplaced)."""
    collector = _MemRefCollector()
    collector.visit_function(function)
    return [Allocation(function.name, space, var.name, collector.offsets.get(id(var)), size)
            for var, space, size in collector.allocs]
