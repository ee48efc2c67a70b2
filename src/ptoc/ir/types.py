"""IR types: scalars, DDR tensors, on-chip tiles, pointers, and the MemRef slot.

Shapes hold Python ints for static dimensions and IR expressions for dynamic ones.
A MemRef names the buffer a tensor or tile lives in; passes fill it in (InitMemRef),
and the printer shows it inside the type annotation as PyPTO does.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ptoc.dtypes import DataType, DslEnum, MemorySpace

if TYPE_CHECKING:  # pragma: no cover
    from ptoc.ir.nodes import Expr, Var

Dim = Any  # int (static) or an IR Expr (dynamic)


class TileLayout(enum.Enum):
    """Block/scatter layout names used by ``pl.TileView``."""

    row_major = "row_major"
    col_major = "col_major"
    none_box = "none_box"

    def __repr__(self) -> str:
        return f"pl.TileLayout.{self.value}"


class Type:
    """Base of all IR types."""


@dataclass(frozen=True, eq=False)
class ScalarType(Type):
    dtype: DataType


@dataclass(frozen=True, eq=False)
class PtrType(Type):
    """An on-chip allocation handle made by ``pl.tile.alloc``."""


@dataclass(frozen=True, eq=False)
class UnknownType(Type):
    """A result type not known yet (PyPTO's ``UnknownType``): a call of a program function
    built before its callee's signature is looked up (``IRBuilder.let`` fills it in)."""


@dataclass(frozen=True, eq=False)
class MemRef:
    """The buffer a value lives in: a base (allocation Var, or a DDR buffer name), offset, size."""

    base: "Var | str"
    offset: "Expr"
    size: int

    # PyPTO's field names
    @property
    def base_(self) -> "Var | str":
        return self.base

    @property
    def byte_offset_(self) -> "Expr":
        return self.offset

    @property
    def size_(self) -> int:
        return self.size


@dataclass(frozen=True, eq=False)
class TileView:
    """Layout facts of a tile (``pl.TileView(blayout=..., ...)``), kept as keyword pairs."""

    fields: tuple[tuple[str, Any], ...] = ()

    def get(self, name: str, default=None):
        for key, value in self.fields:
            if key == name:
                return value
        return default


class TensorLayout(DslEnum):
    """Layout names of ``pl.TensorView`` (ptoc's DDR tensors are ``ND``, row-major)."""

    ND = "ND"
    DN = "DN"
    NZ = "NZ"


@dataclass(frozen=True, eq=False)
class TensorView(TileView):
    """What a DDR tensor's ``pl.TensorView(...)`` says, kept as keyword pairs in PyPTO's
    printed order: ``valid_shape`` (the leading region that holds data; PyPTO's
    ``valid_shape`` of a slice), ``stride`` (empty: row-major), ``layout`` (``ND``) and an
    optional ``pad``."""

    @property
    def valid_shape(self) -> tuple | None:
        return self.get("valid_shape")


@dataclass(frozen=True, eq=False)
class TensorType(Type):
    shape: tuple[Dim, ...]
    dtype: DataType
    memref: MemRef | None = None
    view: TensorView | None = None

    @property
    def tensor_view(self) -> TensorView | None:
        """PyPTO's name for the view."""
        return self.view

    @property
    def valid_shape(self) -> tuple:
        """The region that holds data: the view's ``valid_shape``, else the whole shape."""
        valid = self.view.valid_shape if self.view is not None else None
        return tuple(valid) if valid is not None else tuple(self.shape)


@dataclass(frozen=True, eq=False)
class TileType(Type):
    shape: tuple[Dim, ...]
    dtype: DataType
    memory_space: MemorySpace | None = None
    memref: MemRef | None = None
    view: TileView | None = None

    @property
    def tile_view(self) -> TileView | None:
        return self.view


@dataclass(frozen=True, eq=False)
class ArrayType(Type):
    """A small fixed-size orchestration array (``pl.array.create(n, pl.TASK_ID)``)."""

    size: Dim
    dtype: DataType


@dataclass(frozen=True, eq=False)
class TupleType(Type):
    types: tuple[Type, ...] = field(default_factory=tuple)


def static_shape(shape: tuple[Dim, ...]) -> tuple[int, ...] | None:
    """The shape as ints, or None when any dimension is dynamic."""
    return tuple(shape) if all(isinstance(d, int) for d in shape) else None


def num_bytes(ty: TensorType | TileType) -> int | None:
    """Logical byte size of a statically shaped tensor or tile."""
    dims = static_shape(ty.shape)
    if dims is None:
        return None
    count = 1
    for d in dims:
        count *= d
    return count * ty.dtype.get_byte()
