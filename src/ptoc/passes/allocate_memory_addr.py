"""AllocateMemoryAddr: give every on-chip MemRef its byte address (reference §10).

Sequential allocator, per memory space, DDR skipped: the MemRefs are sorted by name
(plain string order, so ``mem_acc_10`` comes before ``mem_acc_5``, exactly as PyPTO),
grouped by base in that order, and each base gets ``cursor`` while the cursor moves on by
the base's largest MemRef rounded up to 32 bytes. A view inside a base keeps its relative
offset. The result is then checked against the space's capacity; an overflow is an
``AllocationError`` that names the space, the bytes, the buffers and the tiles in them.

Kernel functions only; the pass does nothing under the PTOAS planner, whose own planner
places tiles later (ptoc.pto). Under DSA_RP (no MemoryReuse) the bases are placed by
lifetime within capacity instead (``dsa_allocation``). ``tile.alloc`` statements stay as they are: they declare
the buffers, the addresses live in the MemRefs (printed as ``pl.const(addr, pl.INT64)``).
Two dbC accumulators therefore land at ``{0, align32(physical Acc bytes)}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ptoc.dtypes import DataType, FunctionType, MemorySpace
from ptoc.errors import AllocationError
from ptoc.ir.nodes import ConstInt, Function, Var
from ptoc.ir.types import MemRef, TileType
from ptoc.passes.base import function_pass
from ptoc.passes.context import MemoryPlanner
from ptoc.passes.manager import register_default_pass
from ptoc.passes.mixed.rings import has_auto_ring, reserved_bytes, resolve_ring_bases
from ptoc.passes.memref_rewrite import (
    alloc_size, alloc_space, defined_vars, is_alloc, memref_of, retype_function,
    strip_membership, with_memref,
)
from ptoc.passes.pipeline_capacity_gate import align32
from ptoc.passes.tile_sources import describe_tile, source_loc, tile_definitions

KERNEL_TYPES = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)


@dataclass
class Placement:
    """One allocated base: where it starts, how many bytes it spans, who lives there."""

    name: str
    space: MemorySpace
    addr: int
    size: int
    tiles: list[str] = field(default_factory=list)
    origin: int = 0  # the offset the base's MemRefs are relative to (0 before allocation)
    tile_vars: list[Var] = field(default_factory=list, repr=False, compare=False)


@function_pass(name="AllocateMemoryAddr", required={"MemRefsAssigned"},
               produced={"AddressesAllocated"}, func_types=KERNEL_TYPES,
               handles_while_loops=True)
def allocate_memory_addr(fn: Function, ctx, *, reserved: Mapping[MemorySpace, int] | None = None
                         ) -> Function:
    """Bump-allocate every on-chip base per space and bake the addresses into the MemRefs.

    ``reserved`` bytes at the bottom of a space (PyPTO's ``reserve_buffer``) are skipped:
    allocation starts at the reserved end and still has to end within the capacity. Left
    out, it is what the kernel's ``system.reserve_buffer`` rings take, and their bases are
    written (``ptoc.passes.mixed.rings``).
    """
    planner = ctx.get_memory_planner()
    if planner is MemoryPlanner.PTOAS:
        return fn
    if reserved is None:
        reserved = reserved_bytes(fn)      # the kernel's cross-core rings
        fn = resolve_ring_bases(fn)
    if planner is MemoryPlanner.DSA_RP:  # MemoryReuse did not run: place by lifetime here
        from ptoc.passes.dsa_allocation import plan_dsa_addresses

        placements = plan_dsa_addresses(fn, ctx.get_backend(), collect_bases(fn), reserved)
        fn = strip_membership(fn)
    else:
        placements = plan_addresses(fn, ctx.get_backend(), reserved)
    if not placements:
        return fn
    by_name = {p.name: p for p in placements}

    def new_type(var: Var):
        m = memref_of(var)
        if m is None or not isinstance(m.base, Var) or m.base.name not in by_name:
            return None
        place = by_name[m.base.name]
        addr = ConstInt(place.addr + _offset(m) - place.origin, DataType.INT64)
        return with_memref(var.type, MemRef(m.base, addr, m.size))

    return retype_function(fn, new_type)


def collect_bases(fn: Function) -> dict[MemorySpace, list[Placement]]:
    """Every on-chip base per space, in name order, unplaced (``addr`` 0): its span (the
    declared size of a pinned allocation, else the extent of the views into it), the offset
    its MemRefs are relative to, and the tiles living in it."""
    spaces: dict[Var, MemorySpace] = {}
    declared: dict[Var, int] = {}
    for s in fn.body.stmts:
        if is_alloc(s):
            spaces[s.var] = alloc_space(s)
            if s.value.kwarg("pinned", False):
                declared[s.var] = alloc_size(s)
    refs: dict[Var, list[tuple[MemRef, Var]]] = {}
    for v in defined_vars(fn):
        m = memref_of(v)
        if m is None or not isinstance(m.base, Var):
            continue
        refs.setdefault(m.base, []).append((m, v))
        if m.base not in spaces and isinstance(v.type, TileType) and v.type.memory_space:
            spaces[m.base] = v.type.memory_space
    by_space: dict[MemorySpace, list[Placement]] = {}
    for base in sorted(refs, key=lambda b: b.name):
        space = spaces.get(base)
        if space is None or space is MemorySpace.DDR:
            continue
        members = refs[base]
        origin = min(_offset(m) for m, _ in members)  # re-running keeps the layout
        span = declared.get(base) or max(_offset(m) - origin + m.size for m, _ in members)
        tile_vars = list(dict.fromkeys(v for _, v in members))
        by_space.setdefault(space, []).append(Placement(
            base.name, space, 0, span, [v.name for v in tile_vars], origin, tile_vars))
    return by_space


def plan_addresses(fn: Function, target, reserved: Mapping[MemorySpace, int] | None = None
                   ) -> list[Placement]:
    """Sequential addresses per base (name order), checked against each space's capacity."""
    placements: list[Placement] = []
    for space, mine in collect_bases(fn).items():
        start = int((reserved or {}).get(space, 0))
        cursor = start
        for place in mine:
            place.addr = cursor
            cursor = align32(cursor + place.size)
        limit = target.capacities.get(space, 0)
        if limit and cursor > limit:
            raise overflow_error(fn, space, cursor, limit, mine, start)
        placements.extend(mine)
    return placements


def _offset(m: MemRef) -> int:
    return m.offset.value if isinstance(m.offset, ConstInt) else 0


def overflow_error(fn: Function, space: MemorySpace, used: int, limit: int,
              placements: list[Placement], reserved: int) -> AllocationError:
    """The overflow error, located at the user statement that made the largest buffer and
    naming each buffer's tiles by what the user wrote (``ptoc.passes.tile_sources``)."""
    defs = tile_definitions(fn)

    def tiles(p: Placement) -> str:
        shown = [describe_tile(v, defs.get(v)) for v in p.tile_vars[:4]]
        return ", ".join(dict.fromkeys(shown)) + (", ..." if len(p.tile_vars) > 4 else "")

    live = "; ".join(f"{p.name} at {p.addr} ({p.size} B: {tiles(p)})" for p in placements)
    ring = has_auto_ring(fn, space)
    what = "the cross-core pipe ring " if ring else ""
    note = (f" (the first {reserved} bytes are {what}reserved by system.reserve_buffer; tiles "
            "are allocated above them)") if reserved else ""
    biggest = max(placements, key=lambda p: p.size)
    first = biggest.tile_vars[0] if biggest.tile_vars else None
    loc = source_loc(first, defs.get(first)) if first is not None else None
    message = (f"{space.value} buffer usage ({used} bytes) exceeds platform limit ({limit} "
               f"bytes){note} in function '{fn.name}'; buffers: {live}")
    return AllocationError(message, loc or fn.loc,
                           hint=_overflow_hint(space, reserved if ring else 0))


def _overflow_hint(space: MemorySpace, reserved: int = 0) -> str:
    """``reserved``: bytes of ExpandMixedKernel's rings in the space (only those rings are
    resized by ``pl.cross_core_slot``, as PyPTO's note says)."""
    if reserved:
        return ("lower the ring depth with optimizations=[pl.cross_core_slot(slot_num=N)] on "
                "the pl.at scope, or shrink the tile that crosses between cube and vector "
                "(a slot holds one whole crossing tile, with or without pl.split)")
    if space is MemorySpace.Acc:
        return ("use smaller accumulator tiles (let AutoTileMatmulL0 tile the matmul) or fewer "
                "co-live accumulators")
    return (f"use smaller tiles, fewer tiles live at once in {space.value}, or a lower "
            "pipeline stage count")


register_default_pass(allocate_memory_addr)

__all__ = ["allocate_memory_addr", "plan_addresses", "Placement"]
