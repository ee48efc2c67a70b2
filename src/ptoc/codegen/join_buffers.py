"""Without addresses (PTOAS planner), a join's value is produced straight into its buffer.

Under the PYPTO planner MemoryReuse puts the value a loop body (or an else-branch) yields in
the carry's (or the ``if`` result's) buffer whenever their lifetimes allow, and copies it
there otherwise. Under PTOAS that pass does not run, so codegen does what PyPTO's PTO
codegen does: it re-points the yielded value's buffer at the join's — every value in that
buffer is retyped onto the join's MemRef — when the two are never live at the same time
(the lifetime rules of ``ptoc.passes.memory_lifetimes``), and leaves the rest to the copy
at the join. An accumulator has no copy, so an Acc join that cannot be re-pointed is an
error there.
"""

from __future__ import annotations

from ptoc.ir.nodes import Function, Var
from ptoc.ir.types import MemRef, TileType
from ptoc.passes.memory_lifetimes import analyze_lifetimes, overlaps, value_ranges
from ptoc.passes.memref_rewrite import memref_of, retype_function, with_memref, zero_offset


def coalesce_join_buffers(fn: Function) -> Function:
    """``fn`` with every safely re-pointable join value moved into its join's buffer."""
    while True:
        merge = _next_merge(fn)
        if merge is None:
            return fn
        source, target = merge
        fn = retype_function(fn, lambda v: _onto(v, source, target))


def _next_merge(fn: Function) -> tuple[Var, MemRef] | None:
    intervals = {iv.base: iv for iv in analyze_lifetimes(fn)}
    walker = value_ranges(fn)
    for join in walker.carries + walker.phis:
        if not isinstance(join.target.type, TileType):
            continue
        a, b = memref_of(join.target), memref_of(join.source)
        if a is None or b is None or a.base is b.base:
            continue
        into, moved = intervals.get(a.base), intervals.get(b.base)
        if into is None or moved is None or into.space is not moved.space \
                or moved.size > into.size or overlaps(into, moved):
            continue
        if not all(_whole(memref_of(v), moved.size) for v in moved.vars):
            continue
        return b.base, MemRef(a.base, zero_offset(), into.size)
    return None


def _whole(memref: MemRef | None, size: int) -> bool:
    return memref is not None and getattr(memref.offset, "value", None) == 0 \
        and memref.size == size


def _onto(var: Var, source, target: MemRef):
    m = memref_of(var)
    if m is None or m.base is not source:
        return None
    return with_memref(var.type, target)


__all__ = ["coalesce_join_buffers"]
