"""IR tile/tensor types -> PTO buffer types (``!pto.tile_buf<...>``, views, pointers).

A PTO ``tile_buf`` spells out what the IR leaves implicit: the block/scatter layout and the
fractal box of the buffer, which follow from the memory space (the cube's operand formats,
hw-model.md §1.4) unless the IR's ``pl.TileView`` says otherwise. The defaults below are the
ones PyPTO's own kernels show:

    space   blayout     slayout     fractal
    Mat     col_major   row_major   512      (NZ: 16 x 32-byte boxes, column of boxes first)
    Left    row_major   row_major   512      (what PyPTO's passes stamp on every Left tile)
    Right   row_major   col_major   512      (ZN)
    Acc     col_major   row_major   1024     (16 x 16 fp32 boxes)
    Vec     row_major   none_box    512      (plain row-major UB tile)
    Bias    row_major   none_box    512

The valid extents are always emitted as operands of ``pto.alloc_tile`` (``v_row=?``), as
PyPTO does, so one type serves tiles whose valid region is only known at run time.

Vec rows are 32-byte aligned on the vector unit (hw-model.md §1.3). A single-column Vec tile —
the ``[N, 1]`` result of a row reduction, the operand of a row broadcast — is a DN column vector
instead: ``blayout=col_major`` with ``cols=1``, its N elements contiguous, as PyPTO emits it
(so it occupies exactly the ``N * bytes`` the memory planner reserved). Any other Vec tile with a
row narrower than 32 bytes cannot be expressed and is a CodegenError naming the fix.
"""

from __future__ import annotations

from ptoc.backend.layouts import TILE_LAYOUTS
from ptoc.dtypes import MemorySpace, PadValue
from ptoc.codegen.errors import CodegenError
from ptoc.ir.types import TileLayout, TileType
from ptoc.pto.model import TileBufType

def _layout_name(value) -> str:
    if isinstance(value, TileLayout):
        return value.value
    return str(value)


def static_2d(shape, what: str, loc=None) -> tuple[int, int]:
    """``shape`` as (rows, cols): 1-D shapes are one row; every dim must be a static int."""
    dims = tuple(shape)
    if not all(isinstance(d, int) for d in dims):
        raise CodegenError(f"{what} has a dynamic shape {list(dims)}; PTO tile buffers need a "
                        "static physical shape", loc,
                        hint="give the tile a static shape and narrow it with valid_shape")
    if len(dims) == 1:
        return 1, dims[0]
    if len(dims) == 2:
        return dims[0], dims[1]
    if len(dims) > 2 and all(d == 1 for d in dims[:-2]):
        return dims[-2], dims[-1]
    raise CodegenError(f"{what} has shape {list(dims)}; PTO tiles are 2-D", loc,
                    hint="reshape the tile to 2-D before codegen")


_ROW_ALIGN = 32  # bytes; vector operands and Vec rows are 32-byte aligned


def tile_buf_type(ty: TileType, what: str, loc=None) -> TileBufType:
    """The ``!pto.tile_buf`` of an IR tile type (``what`` names the variable for errors)."""
    space = ty.memory_space
    if space is None or space is MemorySpace.DDR:
        raise CodegenError(f"tile {what} has no on-chip memory space at codegen", loc,
                        hint="run InferTileMemorySpace before codegen")
    rows, cols = static_2d(ty.shape, f"tile {what}", loc)
    blayout, slayout, fractal = TILE_LAYOUTS[space]
    if space is MemorySpace.Vec and cols == 1:
        blayout = "col_major"  # DN column vector
    elif space is MemorySpace.Vec and (cols * ty.dtype.nbytes) % _ROW_ALIGN:
        per_row = -(-cols * ty.dtype.nbytes // _ROW_ALIGN) * _ROW_ALIGN // ty.dtype.nbytes
        raise CodegenError(
            f"Vec tile {what} is {rows}x{cols} {ty.dtype.pto_name}: its rows are "
            f"{cols * ty.dtype.nbytes} bytes, but vector tiles need rows of a multiple of "
            f"{_ROW_ALIGN} bytes (or a single column)", loc,
            hint=f"allocate [{rows}, {per_row}] and narrow it with "
            f"pl.TileView(valid_shape=[{rows}, {cols}]); for tensor ops on a pl.slice window, "
            f"slice [{rows}, {per_row}] windows with valid_shape=[rows, {cols}] (the window may "
            "reach past the tensor's last column: only the valid ones are read and written)")
    pad = 0
    view = ty.view
    if view is not None:
        blayout = _layout_name(view.get("blayout", blayout))
        slayout = _layout_name(view.get("slayout", slayout))
        fractal = int(view.get("fractal", fractal))
        pad_value = view.get("pad", 0)
        pad = pad_value.value if isinstance(pad_value, PadValue) else (
            pad_value if isinstance(pad_value, int) else 0)
    # loc, dtype, rows, cols, v_row, v_col, blayout, slayout, fractal, pad (by position: one
    # per tile of every kernel)
    return TileBufType(space, ty.dtype, rows, cols, None, None, blayout, slayout, fractal, pad)


def valid_shape(ty: TileType, fallback: tuple | None = None) -> tuple:
    """The valid (rows, cols) of a tile: ``TileView(valid_shape=...)`` when given, else
    ``fallback`` (e.g. a load's ``valid_shape``), else its shape. Entries are ints or IR
    expressions."""
    dims = None
    if ty.view is not None and ty.view.get("valid_shape") is not None:
        dims = ty.view.get("valid_shape")
    elif fallback is not None:
        dims = fallback
    if dims is None:
        dims = ty.shape
    dims = tuple(getattr(dims, "items", dims))
    return (1, dims[0]) if len(dims) == 1 else tuple(dims[-2:])
