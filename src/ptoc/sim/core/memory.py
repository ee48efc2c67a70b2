"""Byte-addressed on-chip buffers and global-memory tensors of the simulated core.

Why bytes: on hardware two tiles whose address ranges overlap share data, and the
compiler's memory planner relies on (or breaks) exactly that. Each on-chip buffer
(Mat/L1, Left/L0A, Right/L0B, Acc/L0C, Vec/UB, Bias) is one ``numpy.uint8`` array sized
by the target's usable capacity; a tile is a typed view of its byte range.

Layout inside a tile: the simulator stores a tile's elements *logically row-major*
(``rows x cols`` of its physical shape) starting at the tile's base address, not in the
hardware's NZ/ZN fractal order. Overlap semantics are exact at the byte-range level (a
tile writes exactly the bytes ``[addr, addr + rows*cols*elem)``), but two *differently
shaped* tiles aliasing the same bytes see each other's elements in row-major order rather
than fractal order. Accumulators reserve their padded L0C footprint (rows rounded up to
the target's L0C row alignment) but store their rows x cols elements at its start.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtocError, SourceLoc


class MemoryAccessError(PtocError, RuntimeError):
    """A tile or transfer falls outside its buffer, is misaligned, or has a bad GM binding."""


ON_CHIP = (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc,
           MemorySpace.Vec, MemorySpace.Bias)


@dataclass(frozen=True)
class TileRef:
    """Where a tile lives: buffer, base byte address, physical shape, valid shape, dtype.

    ``nbytes`` is the tile's footprint in its buffer (padded for accumulators); the
    elements occupy the first ``rows*cols*dtype.nbytes`` of it.
    """

    name: str
    space: MemorySpace
    addr: int
    rows: int
    cols: int
    dtype: DataType
    valid_rows: int
    valid_cols: int
    nbytes: int
    elem: int = 0          # element bytes (cached: enum property lookups are slow)
    buffer: str = ""       # buffer name used in race reports (``Mat``, ``Acc``, ...)
    pad: int = 0           # pad code of the tile type (0 none, 1 zero, 2 max, 3 min)
    transposed: bool = False  # an L1 tile in ZN layout: its bytes hold the transpose (NZ)
    pitch: int = 0         # elements from one row to the next; 0 = ``cols`` (a dense tile).
    #                        A column window of a wider tile (pto.subview) keeps its source's.

    def __hash__(self) -> int:
        # enum members hash through a Python-level method; their identity is as good a key
        return hash((self.name, self.addr, self.rows, self.cols, self.valid_rows,
                     self.valid_cols, self.pitch, id(self.space), id(self.dtype)))

    def __post_init__(self):
        if not self.elem:
            object.__setattr__(self, "elem", self.dtype.nbytes)
        if not self.buffer:
            object.__setattr__(self, "buffer", self.space.value)

    @property
    def row_pitch(self) -> int:
        return self.pitch or self.cols

    @property
    def strided(self) -> bool:
        return self.row_pitch != self.cols

    @property
    def data_bytes(self) -> int:
        """Bytes from the first element to past the last (a strided tile's bounding range)."""
        return ((self.rows - 1) * self.row_pitch + self.cols) * self.elem

    @property
    def end(self) -> int:
        return self.addr + self.nbytes

    def describe(self) -> str:
        return (f"%{self.name} ({self.space.value} [{self.addr}, {self.end}), "
                f"{self.rows}x{self.cols} {self.dtype.pto_name})")


class BufferMemory:
    """One byte array per on-chip buffer of a target.

    ``label`` tells the buffers of one core of a group apart in race reports
    (``Vec@aiv0``); a lone core has none.
    """

    def __init__(self, capacities: dict[MemorySpace, int], alignment: int, label: str = ""):
        self.capacities = dict(capacities)
        self.alignment = alignment
        self.label = label
        self.buffers = {space: np.zeros(size, dtype=np.uint8)
                        for space, size in self.capacities.items()}
        self._views: dict[tuple, np.ndarray] = {}

    def buffer_name(self, space: MemorySpace) -> str:
        """How accesses to ``space`` of this core are named (``Vec``, or ``Vec@aiv0``)."""
        return f"{space.value}@{self.label}" if self.label else space.value

    def check_tile(self, tile: TileRef, loc: SourceLoc | None = None) -> None:
        """Raise MemoryAccessError when ``tile`` is misaligned or outside its buffer."""
        cap = self.capacities.get(tile.space)
        if cap is None:
            raise MemoryAccessError(
                f"tile %{tile.name} is in {tile.space.value}, which is not an on-chip buffer "
                f"of this target", loc, hint="use loc=mat, left, right, acc, vec or bias")
        if tile.addr < 0 or tile.end > cap:
            raise MemoryAccessError(
                f"tile {tile.describe()} needs bytes [{tile.addr}, {tile.end}) but "
                f"{tile.space.value} holds {cap} bytes", loc,
                hint=f"place the tile at an address <= {max(cap - tile.nbytes, 0)} or shrink it")
        if tile.addr % self.alignment:
            raise MemoryAccessError(
                f"tile %{tile.name} address {tile.addr} in {tile.space.value} is not "
                f"{self.alignment}-byte aligned", loc,
                hint=f"use a multiple of {self.alignment}, e.g. "
                     f"{tile.addr - tile.addr % self.alignment + self.alignment}")

    def view(self, tile: TileRef) -> np.ndarray:
        """A writable typed [rows, cols] view of ``tile``'s bytes (shares the buffer)."""
        key = (tile.space, tile.addr, tile.rows, tile.cols, tile.dtype, tile.transposed,
               tile.pitch)
        found = self._views.get(key)
        if found is None:
            raw = self.buffers[tile.space][tile.addr:tile.addr + tile.data_bytes]
            typed = raw.view(tile.dtype.numpy)
            if tile.strided:   # rows `pitch` elements apart: a view, so writes reach the buffer
                found = np.lib.stride_tricks.as_strided(
                    typed, (tile.rows, tile.cols), (tile.row_pitch * tile.elem, tile.elem))
                self._views[key] = found
                return found
            # A ZN tile [K, N] occupies the bytes of the NZ tile [N, K] holding its transpose
            # (pl.tile.transpose_view), so it is the transposed view of those elements.
            found = typed.reshape(tile.cols, tile.rows).T if tile.transposed else \
                typed.reshape(tile.rows, tile.cols)
            self._views[key] = found
        return found

    def valid_view(self, tile: TileRef) -> np.ndarray:
        return self.view(tile)[:tile.valid_rows, :tile.valid_cols]


def bind_tensor(name: str, value, dtype: DataType, loc: SourceLoc | None = None) -> np.ndarray:
    """A user tensor (numpy array, torch tensor, list) as a flat array of the pointer's
    element type (a view when possible: the caller copies it into GM).

    A dtype mismatch is an error, not a cast, because silently casting inputs hides bugs in
    the caller.
    """
    if hasattr(value, "detach") and hasattr(value, "cpu"):   # torch tensor, without importing torch
        value = _torch_to_numpy(value)
    arr = np.asarray(value)
    if arr.dtype != dtype.numpy:
        raise MemoryAccessError(
            f"tensor bound to %{name} has dtype {arr.dtype}, but the kernel declares "
            f"!pto.ptr<{dtype.pto_name}>", loc,
            hint=f"pass an array of dtype {dtype.numpy} (e.g. {dtype.astype_hint()})")
    return np.ascontiguousarray(arr).reshape(-1)


def _torch_to_numpy(t) -> np.ndarray:
    t = t.detach().cpu()
    if str(t.dtype) == "torch.bfloat16":
        import ml_dtypes
        return t.view(dtype=_torch_int16()).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def _torch_int16():
    import torch  # only reached when the caller passed a torch tensor
    return torch.int16
