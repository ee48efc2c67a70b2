"""Placement of tile buffers in one memory space: addresses with reuse, or a clear error.

Why a separate module: given lifetimes (``planner_lifetimes``), placement is a small
interval-packing problem that is easiest to test on its own. Two buffers may share bytes
only when their lifetimes are disjoint; co-live buffers (e.g. the two accumulators of an
L0C double buffer) always get disjoint byte ranges.

Strategy: fixed buffers stay where the program put them; the others are placed one by one
in order of their start of life (so the first of two co-live accumulators lands at 0):

* separate (optional, first): every buffer on bytes of its own, as PTOAS' PlanMemory does
  whenever the sum of a space's buffers fits its capacity (it plans "without reuse" then and
  reuses by lifetime only when they do not fit; hw-native-sys/PTOAS
  lib/PTO/Transforms/PTOPlanMemory.cpp, ``IsEnoughForBuffersNoReuse``). Used for L0C, so the
  accumulators of a user's pipeline clones never make the cube wait for a drain;
* spread (optional, first): the free address whose bytes were released longest ago,
  untouched bytes first, so a tile does not wait for the pipe that used the bytes just
  before (what PyPTO's pipeline-stage separation achieves for pipelined clones);
* pack: the start of an already placed buffer that is dead by then and at least as large
  (a later tile coalesces into an earlier buffer, as PyPTO's MemoryReuse does), else the
  lowest aligned address that clashes with no co-live buffer; then the same largest-first
  when program order fragments the space.

The first attempt that fits wins, so the result is deterministic.
"""

from __future__ import annotations

from ptoc.backend.targets import Target
from ptoc.dtypes import MemorySpace
from ptoc.errors import AllocationError
from ptoc.pto.planner_lifetimes import TileLife


class PlanMemoryError(AllocationError):
    """The tiles of a kernel cannot be placed (no room, or an address the planner cannot use)."""


class PlanCapacityError(PlanMemoryError):
    """The co-live tiles of one memory space do not fit its capacity (or its free gaps)."""


def place_space(space: MemorySpace, lives: list[TileLife], target: Target, *,
                spread: bool = False, separate: bool = False) -> dict[str, int]:
    """Address of every buffer in ``lives`` (all in ``space``); PlanMemoryError on overflow.

    ``separate`` first tries bytes of its own for every buffer (no reuse at all), as PTOAS
    does when a space's buffers fit together. ``spread`` then tries to give each tile the free bytes that were released longest ago
    (never-used bytes first), so consecutive tiles land on different bytes and their pipes
    need not wait for each other; when that does not fit, tiles are packed as usual.
    """
    capacity = target.capacity(space)
    fixed = [t for t in lives if t.fixed is not None]
    free = [t for t in lives if t.fixed is None]
    by_start = sorted(free, key=lambda t: (t.start, t.order))
    attempts = [(by_start, _separate_choice)] if separate else []
    attempts += [(by_start, _spread_choice)] if spread else []
    attempts += [(by_start, _pack_choice),
                 (sorted(free, key=lambda t: (-t.nbytes, t.start, t.order)), _pack_choice)]
    for order, choose in attempts:
        placed = _place(order, fixed, capacity, target.address_alignment, choose)
        if placed is not None:
            return placed
    raise _overflow(space, lives, capacity)


def _place(order: list[TileLife], fixed: list[TileLife], capacity: int, alignment: int,
           choose) -> dict[str, int] | None:
    at: dict[str, int] = {t.name: t.fixed for t in fixed}
    done: list[TileLife] = list(fixed)
    for tile in order:
        clashes = [(at[o.name], at[o.name] + o.nbytes) for o in done if o.overlaps(tile)]

        def free(addr: int, tile=tile, clashes=clashes) -> bool:
            end = addr + tile.nbytes
            return end <= capacity and all(end <= lo or hi <= addr for lo, hi in clashes)

        addr = choose(tile, done, at, clashes, free, alignment)
        if addr is None:
            return None
        at[tile.name] = addr
        done.append(tile)
    return at


def _pack_choice(tile, done, at, clashes, free, alignment):
    """The slot of a buffer that is dead by now (as PyPTO coalesces a tile into an existing
    MemRef), else the lowest free address."""
    reuse = sorted({at[o.name] for o in done if not o.overlaps(tile) and o.nbytes >= tile.nbytes})
    fresh = sorted({0, *(_up(hi, alignment) for _, hi in clashes)})
    return next((a for a in (*reuse, *fresh) if free(a)), None)


def _separate_choice(tile, done, at, clashes, free, alignment):
    """The lowest address that shares no byte with any placed buffer, live or dead."""
    taken = [(at[o.name], at[o.name] + o.nbytes) for o in done]
    end = max((hi for _, hi in taken), default=0)
    addr = _up(end, alignment)
    return addr if free(addr) and all(addr + tile.nbytes <= lo or hi <= addr
                                      for lo, hi in taken) else None


def _spread_choice(tile, done, at, clashes, free, alignment):
    """The free address whose bytes were last used longest ago (unused bytes first)."""
    released: dict[tuple[int, int], int] = {}   # (addr, bytes) of a dead placement -> its end
    for o in done:
        if not o.overlaps(tile):
            key = (at[o.name], at[o.name] + o.nbytes)
            released[key] = max(released.get(key, -1), o.end)
    bounds = {0, *(_up(hi, alignment) for _, hi in clashes)}
    for lo, hi in released:
        bounds.update((lo, _up(hi, alignment)))
    size = tile.nbytes

    def last_use(addr: int) -> int:
        end = addr + size
        return max((e for (lo, hi), e in released.items() if lo < end and addr < hi), default=-1)

    valid = [a for a in sorted(bounds) if free(a)]
    return min(valid, key=lambda a: (last_use(a), a)) if valid else None


def _up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def _source(t: TileLife) -> str | None:
    return f"{t.loc.file}:{t.loc.line}" if t.loc is not None and t.loc.line else None


def _live_names(live: list[TileLife]) -> str:
    """``%a (N bytes, mm.py:7), ...``; tiles all made for one source statement (the copies a
    compiler makes of one tile for pipeline stages and tails, with numbered names) say so
    once, so a name like ``%1`` still leads to the user's line."""
    sources = {_source(t) for t in live}
    shared = sources.pop() if len(sources) == 1 else None
    text = ", ".join(
        f"%{t.name} ({t.nbytes} bytes" + (f", PTO line {t.line}" if t.line else "")
        + (f", {_source(t)}" if shared is None and _source(t) else "") + ")" for t in live)
    if shared is not None and len(live) > 1:
        text += f", all made for the statement at {shared}"
    return text


def _overflow(space: MemorySpace, lives: list[TileLife], capacity: int) -> PlanCapacityError:
    """The error naming the peak co-live set (or fragmentation when the peak fits)."""
    peak_at, peak, live = 0, 0, []
    for point in sorted({t.start for t in lives}):
        here = [t for t in lives if t.start <= point <= t.end]
        used = sum(t.nbytes for t in here)
        if used > peak:
            peak_at, peak, live = point, used, here
    names = _live_names(sorted(live, key=lambda t: t.order))
    first = min(live, key=lambda t: t.order, default=None)
    loc = first.loc if first is not None else None
    if peak > capacity:
        return PlanCapacityError(
            f"{space.value} buffer usage ({peak} bytes) exceeds platform limit ({capacity} "
            f"bytes): these tiles are live together: {names}", loc,
            hint=f"use smaller tiles, fewer pipeline stages, or end some {space.value} tiles' "
                 "lifetimes earlier so they can share memory")
    return PlanCapacityError(
        f"{space.value} buffers fit in total ({peak} of {capacity} bytes at peak) but cannot be "
        f"placed: free space is fragmented by buffers of different lifetimes or fixed "
        f"addresses; live together at the peak: {names}", loc,
        hint="drop hand-written addr on some tiles, or use smaller tiles")
