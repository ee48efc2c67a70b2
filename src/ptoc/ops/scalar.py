"""Scalar access: one element of a tile (``read``/``write``, the scalar unit reading UB) or of
a DDR tensor, and a tensor's dimension (``tensor.dim``). Each ``register`` call is one op's
single entry."""

from __future__ import annotations

from ptoc.dtypes import DataType
from ptoc.errors import TypeCheckError
from ptoc.ir.nodes import ListExpr
from ptoc.ir.types import ScalarType, TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import pos
from ptoc.ops.registry import OpDef, register, to_expr

EXACT = "exact: the stored element; the scalar unit waits for every pipe first"


def _indices(op: str, value, shape, loc) -> None:
    items = value.items if isinstance(value, ListExpr) else (value,)
    if len(items) not in (1, len(shape)):
        raise TypeCheckError(f"pl.{op} takes one flat index or {len(shape)} indices, got "
                             f"{len(items)}", loc)
    for i, item in enumerate(items):
        checks.scalar_like(op, "indices", item, loc)
        if not item.type.dtype.is_int:     # True would index 1, 1.5 nothing defined
            shown = getattr(item, "value", None)
            what = repr(shown) if shown is not None else "a scalar"
            raise TypeCheckError(f"pl.{op}: the index for dimension {i} is {what} of type "
                                 f"{item.type.dtype.value}, not an integer", loc,
                                 hint="index with integers or integer scalars (pl.INDEX, "
                                      "pl.INT32, ...); convert a float with pl.cast")
        static = getattr(item, "value", None)
        bound = shape[i] if len(items) == len(shape) else None
        if isinstance(static, int) and isinstance(bound, int) and not 0 <= static < bound:
            raise TypeCheckError(f"pl.{op} index {static} is outside dimension {i} (size "
                                 f"{bound})", loc, hint=f"use 0..{bound - 1}")


def _infer_read(level: str):
    op = f"{level}.read"

    def infer(a, loc):
        src = checks.value(op, level, level, a[level], loc)
        _indices(op, a["indices"], src.shape, loc)
        return ScalarType(src.dtype)
    return infer


def _infer_write(level: str):
    op = f"{level}.write"

    def infer(a, loc):
        dst = checks.value(op, level, level, a[level], loc)
        _indices(op, a["indices"], dst.shape, loc)
        checks.scalar_like(op, "value", a["value"], loc)
        if level == "tensor":
            return TensorType(dst.shape, dst.dtype)
        return TileType(dst.shape, dst.dtype, dst.memory_space, view=dst.view)
    return infer


def _index_list(a: dict) -> dict:
    """``[i, j]`` / ``i`` as IR expressions (PyPTO takes one flat index or one per dim)."""
    a["indices"] = to_expr(a["indices"], "pl.read/pl.write indices")
    return a


for _level in ("tile", "tensor"):
    register(OpDef(
        f"{_level}.read", (pos(_level), pos("indices", "any")), _infer_read(_level), pipe="S",
        level=_level, dsl_names=("read",), numerics=EXACT, normalize=_index_list,
        doc=f"One element of a {_level} as a scalar (indices: one per dim, or one flat index)"))
    register(OpDef(
        f"{_level}.write", (pos(_level), pos("indices", "any"), pos("value")),
        _infer_write(_level), pipe="S", level=_level, dsl_names=("write",), reuses_input=0,
        normalize=_index_list,
        numerics="exact: the value converted to the element dtype",
        doc=f"Store one scalar into a {_level} in place"))


def _infer_dim(a, loc):
    src = checks.tensor("tensor.dim", "tensor", a["tensor"], loc)
    axis = a["axis"]
    if not isinstance(axis, int) or isinstance(axis, bool) or not -len(src.shape) <= axis < len(
            src.shape):
        raise TypeCheckError(f"pl.tensor.dim axis must be an axis of a rank-{len(src.shape)} "
                             f"tensor, got {axis!r}", loc)
    return ScalarType(DataType.INDEX)


register(OpDef(
    "tensor.dim", (pos("tensor"), pos("axis", "static")), _infer_dim, pipe="S", level="tensor",
    dsl_names=("dim",), numerics="exact", doc="A tensor's size along one axis (an index)"))

del _level
