"""The memory map's model: every tile of a kernel as an address range x lifetime rectangle.

Why the Level-3 PTO and not the IR: every ``pto.alloc_tile`` carries its ``addr`` under both
planners (AllocateMemoryAddr bakes it; ptoc's PTOAS-style planner writes it), so one model
serves both. Lifetimes are the PTOAS planner's own (``ptoc.pto.planner.kernel_lifetimes``:
program-order positions, whole loops for loop-carried or loop-used tiles), so the picture
shows exactly what the planner reasons about.

Storage identity decides what counts as a conflict. Tiles that are one storage (the same
IR allocation when the caller passes the compile's allocations, else the same space,
address and size) legitimately share bytes: in-place accumulators, loop joins, windows.
Two rectangles of *different* storage that overlap in bytes and in lifetime are a conflict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ptoc.backend.targets import Target, align_up, get_target
from ptoc.dtypes import MemorySpace
from ptoc.errors import SourceLoc
from ptoc.sim.occupancy import union_length

#: Panel order: the cube path (L1, L0A, L0B, L0C, BT) then the vector unit's UB.
SPACES: tuple[MemorySpace, ...] = (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right,
                                   MemorySpace.Acc, MemorySpace.Bias, MemorySpace.Vec)

#: Usage at or above this share of a space's capacity is flagged.
FULL_THRESHOLD = 0.95


@dataclass(frozen=True)
class TileSpan:
    """One ``alloc_tile``: name, space, byte range, closed lifetime [start, end] and origin."""

    name: str
    space: MemorySpace
    addr: int
    nbytes: int
    start: int
    end: int
    line: int = 0
    loc: SourceLoc | None = None
    storage: str | None = None     # storage identity; None: derived from space/addr/size

    @property
    def key(self) -> str:
        return self.storage or f"{self.space.value}@{self.addr}+{self.nbytes}"


@dataclass
class Buffer:
    """One rectangle: tiles of one storage and byte range whose lifetimes overlap."""

    storage: str
    space: MemorySpace
    addr: int
    nbytes: int
    start: int
    end: int
    tiles: list[TileSpan] = field(default_factory=list)
    conflict: bool = False
    view: bool = False             # lies inside a co-live rectangle of the same storage

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tiles]

    @property
    def hi(self) -> int:
        return self.addr + self.nbytes

    def shares_bytes(self, other: "Buffer") -> bool:
        return self.addr < other.hi and other.addr < self.hi

    def shares_life(self, other: "Buffer") -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class Conflict:
    """Two rectangles of different storage live at once on common bytes (the overlap box)."""

    a: Buffer
    b: Buffer
    lo: int
    hi: int
    start: int
    end: int


@dataclass
class SpacePanel:
    """One memory space: its capacity, rectangles, conflicts and usage."""

    space: MemorySpace
    capacity: int
    buffers: list[Buffer]
    conflicts: list[Conflict]

    @cached_property
    def high_water(self) -> int:
        """Highest byte used (what must fit in the capacity). Computed once: a panel is
        built whole by ``map_from_tiles`` and only read after (the page asks often)."""
        return max((b.addr + b.nbytes for b in self.buffers), default=0)

    @property
    def usage(self) -> float:
        return self.high_water / self.capacity if self.capacity else 0.0

    @property
    def full(self) -> bool:
        return self.usage >= FULL_THRESHOLD

    @cached_property
    def peak_live(self) -> int:
        """Most bytes live at one program position (union of ranges, aliases counted once)."""
        best = 0
        for pos in {b.start for b in self.buffers}:
            ranges = sorted((b.addr, b.hi) for b in self.buffers if b.start <= pos <= b.end)
            best = max(best, union_length(ranges))
        return best


@dataclass
class KernelMemoryMap:
    """Everything the page shows for one kernel."""

    kernel: str
    target: str
    positions: int
    panels: list[SpacePanel]
    unplaced: list[str] = field(default_factory=list)
    source: str = ""

    def panel(self, space: MemorySpace) -> SpacePanel:
        return next(p for p in self.panels if p.space is space)

    @property
    def conflicts(self) -> list[Conflict]:
        return [c for p in self.panels for c in p.conflicts]


def build_memory_map(kernel, target: "str | Target", *, allocations=None,
                     source: str = "") -> KernelMemoryMap:
    """The map of a parsed Level-3 PTO ``kernel`` (``ptoc.pto.model.Kernel``).

    ``allocations`` (a compile's ``Allocation`` list) names each tile's storage: a tile
    lying inside an allocation of its kernel and space belongs to it. Without them a
    tile's storage is its exact (space, address, size).
    """
    from ptoc.pto.planner import kernel_lifetimes

    tgt = get_target(target)
    lives = kernel_lifetimes(kernel, tgt)   # ``fixed`` is the alloc_tile's constant addr
    mine = [a for a in allocations or () if a.function == kernel.name and a.addr is not None]
    tiles, unplaced = [], []
    for life in lives:
        addr = life.fixed
        if addr is None:
            unplaced.append(life.name)
            continue
        tiles.append(TileSpan(life.name, life.space, addr, life.nbytes, life.start, life.end,
                              life.line, life.loc, _storage_of(life.space, addr, life.nbytes,
                                                               mine, tgt.address_alignment)))
    positions = max((life.end for life in lives), default=0)
    return map_from_tiles(kernel.name, tgt, tiles, positions=positions, unplaced=unplaced,
                          source=source)


def _storage_of(space, addr, nbytes, allocations, alignment: int) -> str | None:
    """The smallest allocation holding [addr, addr + nbytes) (sizes compared aligned)."""
    holders = [a for a in allocations if a.space is space and a.addr <= addr
               and addr + nbytes <= a.addr + align_up(a.size, alignment)]
    return min(holders, key=lambda a: a.size).name if holders else None


def map_from_tiles(kernel: str, target: "str | Target", tiles: list[TileSpan], *,
                   positions: int | None = None, unplaced=(), source: str = "") -> KernelMemoryMap:
    """Group tiles into rectangles per space and find the conflicts (also for hand-made maps)."""
    tgt = get_target(target)
    panels = []
    for space in SPACES:
        buffers = _rectangles([t for t in tiles if t.space is space])
        conflicts = _conflicts(buffers)
        capacity = tgt.capacities.get(space, 0)
        panels.append(SpacePanel(space, capacity, buffers, conflicts))
    if positions is None:
        positions = max((t.end for t in tiles), default=0)
    return KernelMemoryMap(kernel, tgt.name, positions, panels, list(unplaced), source)


def _rectangles(tiles: list[TileSpan]) -> list[Buffer]:
    """Tiles of one storage and range merge while their lifetimes overlap."""
    groups: dict[tuple, list[TileSpan]] = {}
    for t in tiles:
        groups.setdefault((t.key, t.addr, t.nbytes), []).append(t)
    out: list[Buffer] = []
    for (key, addr, nbytes), members in groups.items():
        current: Buffer | None = None
        for t in sorted(members, key=lambda t: (t.start, t.end, t.name)):
            if current is not None and t.start <= current.end:
                current.tiles.append(t)
                current.end = max(current.end, t.end)
                continue
            current = Buffer(key, t.space, addr, nbytes, t.start, t.end, [t])
            out.append(current)
    out.sort(key=lambda b: (b.addr, b.start, b.nbytes))
    by_storage: dict[str, list[Buffer]] = {}
    for b in out:
        by_storage.setdefault(b.storage, []).append(b)
    for b in out:
        b.view = any(o is not b and o.shares_life(b) and o.addr <= b.addr and b.hi <= o.hi
                     and o.nbytes > b.nbytes for o in by_storage[b.storage])
    return out


def _conflicts(buffers: list[Buffer]) -> list[Conflict]:
    found = []
    for i, a in enumerate(buffers):
        for b in buffers[i + 1:]:
            if a.storage != b.storage and a.shares_bytes(b) and a.shares_life(b):
                a.conflict = b.conflict = True
                found.append(Conflict(a, b, max(a.addr, b.addr), min(a.hi, b.hi),
                                      max(a.start, b.start), min(a.end, b.end)))
    return found
