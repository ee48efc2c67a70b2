"""Global-memory tensor views and windows (``make_tensor_view`` / ``partition_view``).

Why: a GM window is what ``tload`` reads and ``tstore`` writes; the simulator needs both
its numpy view (for the data) and the exact set of elements it covers (for the race
checker), and clear errors when a window leaves its tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptoc.dtypes import DataType
from ptoc.errors import SourceLoc

from ptoc.sim.instr import Access
from ptoc.sim.core.memory import MemoryAccessError


class GMPointer:
    """What a kernel's pointer parameter is bound to: a typed flat view of GM from the
    parameter's region on. Windows read it when their instructions run, so an issued
    instruction stream can be replayed for another task by re-pointing it (``flat``)."""

    __slots__ = ("flat",)

    def __init__(self, flat: np.ndarray):
        self.flat = flat


@dataclass(frozen=True)
class GMView:
    """A strided tensor descriptor over one bound GM pointer (element strides).

    ``param`` is the kernel parameter (for messages); ``space`` the GM allocation the
    parameter's region lies in and ``origin`` the element offset of ``flat[0]`` in it, so
    accesses are named by allocation bytes: two parameters bound to one tensor see the
    same bytes.
    """

    param: str
    pointer: GMPointer
    dtype: DataType
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    space: str = ""
    origin: int = 0

    @property
    def flat(self) -> np.ndarray:
        return self.pointer.flat

    @property
    def buffer(self) -> str:
        return f"GM %{self.space or self.param}"

    def grid(self) -> np.ndarray | None:
        """[rows, row stride] reshape of the pointer's array for row-major 2-D views (fast
        window slicing), kept while the pointer points at the same array."""
        flat = self.pointer.flat
        cached = self.__dict__.get("_grid")
        if cached is not None and cached[0] is flat:
            return cached[1]
        shape, strides = self.shape, self.strides
        grid = None
        if len(shape) == 2 and strides[1] == 1 and strides[0] >= shape[1] \
                and flat.size >= shape[0] * strides[0]:
            grid = flat[:shape[0] * strides[0]].reshape(shape[0], strides[0])
        object.__setattr__(self, "_grid", (flat, grid))
        return grid


@dataclass(frozen=True)
class GMWindow:
    """``partition_view``: a rectangular window ``offsets + [0, sizes)`` of a view."""

    view: GMView
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]

    @property
    def rows(self) -> int:
        return self.sizes[-2] if len(self.sizes) >= 2 else 1

    @property
    def cols(self) -> int:
        return self.sizes[-1] if self.sizes else 1

    def array(self) -> np.ndarray:
        """A writable 2-D numpy view of the window's elements (shares the GM array)."""
        v = self.view
        grid = v.grid()
        if grid is not None:
            (r0, c0), (r, c) = self.offsets, self.sizes
            return grid[r0:r0 + r, c0:c0 + c]
        start = sum(o * s for o, s in zip(self.offsets, v.strides))
        flat = v.flat
        item = flat.itemsize
        arr = np.lib.stride_tricks.as_strided(
            flat[start:], shape=self.sizes, strides=[s * item for s in v.strides])
        return arr.reshape(self.rows, self.cols) if arr.ndim != 2 else arr

    def access(self) -> Access:
        """The window's bytes in its allocation; a 2-D window of a row-strided view also
        carries its rectangle in allocation rows and columns (exact overlap tests between
        windows of any two views with the same row stride)."""
        v = self.view
        item = v.flat.itemsize
        first = v.origin + sum(o * s for o, s in zip(self.offsets, v.strides))
        last = first + sum((n - 1) * s for n, s in zip(self.sizes, v.strides))
        rect = None
        if len(self.sizes) == 2 and v.strides[1] == 1 and v.strides[0] > 0:
            pitch = v.strides[0]
            row, col = divmod(v.origin, pitch)
            c0 = col + self.offsets[1]
            if c0 + self.sizes[1] <= pitch:
                r0 = row + self.offsets[0]
                rect = ((v.buffer, pitch), r0, r0 + self.sizes[0], c0, c0 + self.sizes[1])
        return Access(v.buffer, first * item, (last + 1) * item, rect, False,
                      (self.sizes, v.strides, item))


def make_view(param: str, pointer: "GMPointer | np.ndarray", dtype: DataType, shape, strides,
              loc: SourceLoc | None, *, space: str = "", origin: int = 0) -> GMView:
    if not isinstance(pointer, GMPointer):
        pointer = GMPointer(pointer)
    flat = pointer.flat
    shape, strides = tuple(int(x) for x in shape), tuple(int(x) for x in strides)
    if len(shape) != len(strides):
        raise MemoryAccessError(
            f"make_tensor_view of %{param}: shape {list(shape)} and strides {list(strides)} "
            f"have different ranks", loc, hint="give one stride per dimension")
    if any(d <= 0 for d in shape) or any(s < 0 for s in strides):
        raise MemoryAccessError(
            f"make_tensor_view of %{param}: shape {list(shape)} must be positive and strides "
            f"{list(strides)} non-negative", loc, hint="check the view's shape and strides")
    # a view may reach past the bound tensor (a slice overhanging its tensor's last rows,
    # as PyPTO's orchestration takes them); each window is checked against the tensor
    return GMView(param, pointer, dtype, shape, strides, space or param, origin)


def make_window(view: GMView, offsets, sizes, loc: SourceLoc | None) -> GMWindow:
    offsets, sizes = tuple(int(x) for x in offsets), tuple(int(x) for x in sizes)
    if len(offsets) != len(view.shape) or len(sizes) != len(view.shape):
        raise MemoryAccessError(
            f"partition_view of %{view.param}: {len(offsets)} offsets and {len(sizes)} sizes "
            f"for a rank-{len(view.shape)} view", loc, hint="give one offset and size per dim")
    for d, (o, n, dim) in enumerate(zip(offsets, sizes, view.shape)):
        if o < 0 or n <= 0 or o + n > dim:
            raise MemoryAccessError(
                f"partition_view of %{view.param}: dim {d} window [{o}, {o + n}) is outside "
                f"the view's extent {dim} (view shape {list(view.shape)})", loc,
                hint="keep offsets + sizes within the tensor view")
    first = sum(o * s for o, s in zip(offsets, view.strides))
    last = first + sum((n - 1) * s for n, s in zip(sizes, view.strides))
    if last >= view.flat.size:
        raise MemoryAccessError(
            f"partition_view of %{view.param} (shape {list(view.shape)}, strides "
            f"{list(view.strides)}): window at {list(offsets)} of {list(sizes)} reaches element "
            f"{last}, but the bound tensor has only {view.flat.size} elements", loc,
            hint=f"bind an array of at least {last + 1} elements to %{view.param}, or keep the "
                 "window within the tensor passed")
    return GMWindow(view, offsets, sizes)
