"""Dtype conversion (``pl.cast``) at tile and tensor level. Each ``register`` call is one op's
single entry."""

from __future__ import annotations

from ptoc.dtypes import MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import ScalarType, TensorType, TileLayout, TileType, TileView
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import OpDef, PtoForm, register

CAST_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")


def _infer_tile_cast(a, loc):
    src = checks.tile("tile.cast", "x", a["x"], loc)
    dtype = checks.dtype_arg("tile.cast", "target_type", a["target_type"], loc)
    mode = a["mode"]
    if isinstance(mode, int) and 0 <= mode < len(CAST_MODES):
        mode = CAST_MODES[mode]
    if mode not in CAST_MODES:
        raise TypeCheckError(f"pl.tile.cast mode {mode!r} is not one of {', '.join(CAST_MODES)}",
                             loc)
    if src.memory_space is MemorySpace.Acc:
        # PyPTO's type: a Vec tile still in the accumulator's box layout. A matmul may consume
        # it; AutoTileMatmulL0 then folds the cast into the FIXPIPE write of a Mat scratch.
        return TileType(src.shape, dtype, MemorySpace.Vec, None, ACC_CAST_VIEW)
    return TileType(src.shape, dtype, src.memory_space,
                    view=checks.with_valid(checks.valid_of(src), src.shape))


#: the view of a cast accumulator (the Acc's col-major boxes of row-major elements)
ACC_CAST_VIEW = TileView((("blayout", TileLayout.col_major), ("slayout", TileLayout.row_major)))


def is_accumulator_cast(ty) -> bool:
    """Whether ``ty`` is the type of a ``tile.cast`` of an accumulator, which the compiler
    still places (a FIXPIPE drain into a Mat scratch when a matmul consumes it)."""
    return (isinstance(ty, TileType) and ty.memory_space is MemorySpace.Vec
            and ty.view is not None and dict(ty.view.fields) == dict(ACC_CAST_VIEW.fields))


def _cast_mode(a) -> tuple:
    mode = a["mode"] or "round"
    if isinstance(mode, int):
        mode = CAST_MODES[mode]
    return (("rmode", "pto.round_mode", getattr(mode, "value", mode)),)


register(OpDef(
    "tile.cast", (pos("x"), pos("target_type", "static"), kw("mode", default="round")),
    _infer_tile_cast, pipe="V", dsl_names=("cast",),
    doc="Convert dtype; 'round' (default) rounds ties away from zero, 'rint' ties to even.",
    pto=PtoForm("pto.tcvt", ("x",), attrs=_cast_mode)))


def _infer_tensor_cast(a, loc):
    src = checks.tensor("tensor.cast", "x", a["x"], loc)
    dtype = checks.dtype_arg("tensor.cast", "target_type", a["target_type"], loc)
    return TensorType(src.shape, dtype)


register(OpDef(
    "tensor.cast", (pos("x"), pos("target_type", "static"), kw("mode", default="round")),
    _infer_tensor_cast, level="tensor", dsl_names=("cast",), row_local=True,
    doc="Convert a tensor's dtype."))


def _infer_scalar_cast(a, loc):
    checks.scalar_like("scalar.cast", "value", a["value"], loc)
    dtype = checks.dtype_arg("scalar.cast", "target_type", a["target_type"], loc)
    if a["mode"] not in ("round", 2):
        raise TypeCheckError(f"pl.cast of a scalar supports the default mode only, got "
                             f"mode={a['mode']!r}", loc, hint="drop mode= for scalar casts")
    return ScalarType(dtype)


register(OpDef(
    "scalar.cast", (pos("value"), pos("target_type", "static"), kw("mode", default="round")),
    _infer_scalar_cast, pipe="S", level="scalar", dsl_names=("cast",),
    numerics="scalar unit: ints wrap to the width, float -> int truncates, floats round to "
             "nearest even",
    doc="Convert a scalar (index, integer or float) to another scalar dtype"))
