"""The no-alias rule of memory planning: an op that reads an operand while writing its result
at a different stride must not get its result in that operand's buffer (reference §9.2).

Both planners keep it: MemoryReuse refuses to pack such a pair into one buffer, and the
DSA_RP allocator makes it a hard separation.
"""

from __future__ import annotations

from ptoc.ir.nodes import Call, Var
from ptoc.ir.types import TileType
from ptoc.ops import get_op
from ptoc.ops.registry import has_op
from ptoc.passes.memory_lifetimes import Interval
from ptoc.passes.memref_rewrite import memref_of


class NoAliasGuard:
    """Pairs of intervals where an op writes one while reading the other.

    An op with ``forbid_output_alias`` indices (row reductions, row-expand ops) and a
    widening ``tile.cast`` read their operand while writing their result, element by
    element at different strides, so result and operand must be different buffers even
    though the operand's last read is the very statement that defines the result.
    """

    def __init__(self, intervals: list[Interval]):
        by_base = {iv.base: iv for iv in intervals}
        self.pairs: set[tuple[int, int]] = set()
        for iv in intervals:
            for call in iv.calls:
                for arg in unsafe_operands(call):
                    m = memref_of(arg)
                    other = by_base.get(m.base) if m is not None else None
                    if other is not None and other is not iv:
                        self.pairs.add((iv.index, other.index))
                        self.pairs.add((other.index, iv.index))

    def forbids(self, a: Interval, b: Interval) -> bool:
        return (a.index, b.index) in self.pairs


def unsafe_operands(call: Call) -> list[Var]:
    """The operands ``call`` reads while writing its result (they need their own buffer)."""
    if call.is_function or not has_op(call.op):
        return []
    op = get_op(call.op)
    indices = list(op.forbid_output_alias)
    if call.op == "tile.cast" and call.args and isinstance(call.args[0].type, TileType):
        src = call.args[0].type
        if isinstance(call.type, TileType) and call.type.dtype.get_byte() > src.dtype.get_byte():
            indices.append(0)
    return [call.args[i] for i in indices if i < len(call.args) and isinstance(call.args[i], Var)]


__all__ = ["NoAliasGuard", "unsafe_operands"]
