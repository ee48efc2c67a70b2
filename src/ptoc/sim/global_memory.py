"""Global memory as one address space: named allocations and tensor regions inside them.

Why one space: on the device every core and every task sees the same GM. Two kernel
parameters bound to overlapping slices of one tensor, or two tasks that touch the same
bytes, must be seen to share them — for the data (a write through one is read through the
other) and for the race checker (accesses are named by allocation and byte offset, so
overlap is overlap of bytes). Each allocation also has a base address in one byte address
space, which the chip's L2 model uses to tell cache lines apart.

``GlobalMemory.alloc`` makes an allocation; a ``GMTensor`` is a strided region of one
(offset, shape, element strides, dtype) — a whole tensor or a slice of it. The simulator
binds a kernel's pointer parameter to a region without copying (``GMTensor.flat``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ptoc.dtypes import DataType
from ptoc.errors import PtocError

#: Base-address alignment of allocations (the a2a3 GM transfer granularity and L2 line, so two
#: allocations never share a line) [S] hw-model.md §1.3.
ALLOCATION_ALIGNMENT = 512


class GlobalMemoryError(PtocError, ValueError):
    """A slice outside its tensor, or a region of the wrong size for what binds it."""


@dataclass(eq=False)
class Allocation:
    """One GM buffer: a unique name, its base address and its bytes. ``manual_dep``: the
    runtime tracks no task's use of it (``pl.create_tensor(..., manual_dep=True)``)."""

    name: str
    base: int
    data: np.ndarray          # uint8, the allocation's bytes
    manual_dep: bool = False

    @property
    def nbytes(self) -> int:
        return int(self.data.size)


class GlobalMemory:
    """The GM of one run: allocations with unique names at distinct, aligned addresses."""

    def __init__(self):
        self.allocations: dict[str, Allocation] = {}
        self._next = 0

    def alloc(self, name: str, shape, dtype: DataType, init: np.ndarray | None = None,
              *, manual_dep: bool = False) -> "GMTensor":
        """A new zero-filled (or ``init``-filled) row-major tensor named after ``name``
        (``name``, ``name#2``, ... when the name is taken)."""
        shape = tuple(int(d) for d in shape)
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        nbytes = count * dtype.nbytes
        unique, k = name, 1
        while unique in self.allocations:
            k += 1
            unique = f"{name}#{k}"
        data = np.zeros(max(nbytes, 1), dtype=np.uint8)
        alloc = Allocation(unique, self._next, data, manual_dep)
        self._next += -(-max(nbytes, 1) // ALLOCATION_ALIGNMENT) * ALLOCATION_ALIGNMENT
        self.allocations[unique] = alloc
        tensor = GMTensor(alloc, 0, shape, _row_major(shape), dtype)
        if init is not None:
            tensor.array()[...] = np.asarray(init).reshape(shape)
        return tensor

    def __getitem__(self, name: str) -> Allocation:
        return self.allocations[name]


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return tuple(reversed(strides))


@dataclass(frozen=True, eq=False)
class GMTensor:
    """A strided region of one allocation: ``offset`` (elements from the allocation start),
    ``shape`` and element ``strides``, read as ``dtype``."""

    alloc: Allocation
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: DataType

    @property
    def name(self) -> str:
        return self.alloc.name

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.nbytes if self.shape \
            else self.dtype.nbytes

    @cached_property
    def is_contiguous(self) -> bool:
        """True when the region is one row-major block (what a kernel parameter expects)."""
        return all(s == r for s, r, d in zip(self.strides, _row_major(self.shape), self.shape)
                   if d > 1)

    def flat(self) -> np.ndarray:
        """A typed 1-D view of the allocation from the region's first element to its end
        (shares the bytes: what a kernel's pointer parameter is bound to)."""
        item = self.dtype.nbytes
        usable = (self.alloc.nbytes // item) * item
        return self.alloc.data[:usable].view(self.dtype.numpy)[self.offset:]

    def array(self) -> np.ndarray:
        """A writable numpy view of the region in its shape."""
        if self.overhangs:
            raise GlobalMemoryError(
                f"{self.describe()} runs past the end of '{self.name}' "
                f"({self._span[1] - self.alloc.nbytes} bytes)",
                hint="read only rows that exist: slice within the tensor")
        flat = self.flat()
        if not self.shape:
            return flat[:1].reshape(())
        item = self.dtype.nbytes
        return np.lib.stride_tricks.as_strided(flat, shape=self.shape,
                                               strides=[s * item for s in self.strides])

    @cached_property
    def start(self) -> int:
        """The region's first byte in its allocation."""
        return self.offset * self.dtype.nbytes

    def byte_span(self) -> tuple[int, int]:
        """[lo, hi) byte offsets in the allocation that bound the region."""
        return self._span

    @cached_property
    def _span(self) -> tuple[int, int]:
        item = self.dtype.nbytes
        last = self.offset + sum((d - 1) * s for d, s in zip(self.shape, self.strides))
        return self.offset * item, (last + 1) * item

    def overlaps(self, other: "GMTensor") -> bool:
        """Whether the two regions share a byte: disjoint byte spans are disjoint; two views
        with one row-major layout are then compared axis by axis (``x[:, 0:4]`` and
        ``x[:, 8:12]`` do not overlap though their spans interleave); any other pair that
        spans overlap counts as overlapping (never a missed overlap)."""
        if self.alloc is not other.alloc:
            return False
        a, b = self.byte_span(), other.byte_span()
        if a[1] <= b[0] or b[1] <= a[0]:
            return False
        boxes = self._boxes(other)
        if boxes is None:
            return True
        return all(lo1 < hi2 and lo2 < hi1 for (lo1, hi1), (lo2, hi2) in zip(*boxes))

    def covers(self, other: "GMTensor") -> bool:
        """Whether every byte of ``other`` is one of this region's (exact for a row-major
        block and for two views with one layout; False when unsure)."""
        if self.alloc is not other.alloc:
            return False
        a, b = self.byte_span(), other.byte_span()
        if self.is_contiguous:
            return a[0] <= b[0] and b[1] <= a[1]
        boxes = self._boxes(other)
        return boxes is not None and all(lo1 <= lo2 and hi2 <= hi1
                                         for (lo1, hi1), (lo2, hi2) in zip(*boxes))

    def _boxes(self, other: "GMTensor"):
        """Both regions as per-axis [lo, hi) ranges of one row-major lattice, or None when
        they do not share one (different strides, dtype or rank, or strides that are not
        multiples of each other down to 1)."""
        if self.strides != other.strides or self.dtype is not other.dtype or not self.strides:
            return None
        strides = self.strides
        if strides[-1] != 1 or any(s % t for s, t in zip(strides, strides[1:])):
            return None

        def box(region: GMTensor):
            rest, coords = region.offset, []
            for s in strides:
                q, rest = divmod(rest, s)
                coords.append(q)
            inner = [s // t for s, t in zip(strides, strides[1:])]
            if any(c + n > lim for c, n, lim in zip(coords[1:], region.shape[1:], inner)):
                return None                    # a row of the region wraps past the lattice
            return [(c, c + n) for c, n in zip(coords, region.shape)]

        mine, theirs = box(self), box(other)
        return None if mine is None or theirs is None else (mine, theirs)

    @cached_property
    def ends_alloc(self) -> bool:
        """A row-major block that ends where its allocation ends: rows past its last one
        lie past the allocation, so any access to them is refused (``overhangs``)."""
        return self.is_contiguous and self._span[1] == self.alloc.nbytes

    @cached_property
    def overhangs(self) -> bool:
        """Whether the region runs past the end of its allocation (a slice that leaves the
        tensor's last rows, as PyPTO's orchestration may take when the kernel reads only
        its first rows: the simulator refuses an access that reaches the missing rows)."""
        return self._span[1] > self.alloc.nbytes

    def slice(self, offsets, sizes) -> "GMTensor":
        """The sub-region ``offsets + [0, sizes)`` (one offset and size per dimension). The
        first dimension may run past the end of a tensor that ends its allocation
        (``overhangs``); every other range must lie inside."""
        offsets, sizes = tuple(int(o) for o in offsets), tuple(int(s) for s in sizes)
        if len(offsets) != len(self.shape) or len(sizes) != len(self.shape):
            raise GlobalMemoryError(
                f"slice of '{self.name}' (shape {list(self.shape)}) needs {len(self.shape)} "
                f"offsets and sizes, got {len(offsets)} and {len(sizes)}",
                hint="give one offset and one size per dimension")
        for d, (o, n, dim) in enumerate(zip(offsets, sizes, self.shape)):
            if o < 0 or n <= 0 or o + n > dim and not (d == 0 and o < dim and self.ends_alloc):
                raise GlobalMemoryError(
                    f"slice of '{self.name}': dim {d} range [{o}, {o + n}) is outside its "
                    f"extent {dim} (shape {list(self.shape)})",
                    hint="keep offset + size within the tensor")
        start = self.offset + sum(o * s for o, s in zip(offsets, self.strides))
        return GMTensor(self.alloc, start, sizes, self.strides, self.dtype)

    def with_rank(self, rank: int) -> "GMTensor":
        """The region seen with ``rank`` dimensions: leading dims of size 1 dropped (a slice
        whose shape was padded to its tensor's rank, viewed as the lower-rank value it
        stands for)."""
        drop = len(self.shape) - rank
        if drop <= 0 or any(d != 1 for d in self.shape[:drop]):
            return self
        return GMTensor(self.alloc, self.offset, self.shape[drop:], self.strides[drop:],
                        self.dtype)

    def describe(self) -> str:
        """``c[0:128, 256:512]`` style: the allocation and the rows/cols the region covers."""
        if self.offset == 0 and self.strides == _row_major(self.shape) and \
                self.nbytes == self.alloc.nbytes:
            return f"'{self.name}'"
        return f"'{self.name}' elements from {self.offset}, shape {list(self.shape)}"


def as_gm_tensor(memory: GlobalMemory, name: str, value, dtype: DataType) -> GMTensor:
    """``value`` itself when it is a GMTensor, else a fresh allocation holding a copy of it."""
    if isinstance(value, GMTensor):
        return value
    arr = np.asarray(value)
    return memory.alloc(name, arr.shape, dtype, init=arr)
