"""Shape and layout: sub-views (``slice``) and writing a sub-region back (``assemble``).
Each ``register`` call is one op's single entry."""

from __future__ import annotations

from ptoc.dtypes import MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import OpDef, register


def _infer_tile_assemble(a, loc):
    target = checks.tile("tile.assemble", "target", a["target"], loc)
    source = checks.tile("tile.assemble", "source", a["source"], loc)
    checks.rank("tile.assemble", "offset", a["offset"], len(target.shape), loc)
    if len(source.shape) != len(target.shape):
        raise TypeCheckError("pl.tile.assemble source and target ranks differ", loc)
    return TileType(target.shape, target.dtype, target.memory_space)


register(OpDef(
    "tile.assemble",
    (pos("target"), pos("source"), pos("offset", "list")),
    _infer_tile_assemble,
    pipe=lambda a: "FIX" if a["source"].type.memory_space is MemorySpace.Acc else "V",
    dsl_names=("assemble",), reuses_input=0,
    doc="TINSERT source into target at offset (Acc -> Mat is the FIXPIPE write-back)."))


def _infer_tile_slice(a, loc):
    src = checks.tile("tile.slice", "x", a["x"], loc)
    shape = checks.shape("tile.slice", "shape", a["shape"], loc)
    checks.rank("tile.slice", "offset", a["offset"], len(src.shape), loc)
    if len(shape) != len(src.shape):
        raise TypeCheckError(f"pl.tile.slice shape has rank {len(shape)} but the tile has rank "
                             f"{len(src.shape)}", loc)
    return TileType(shape, src.dtype, src.memory_space)


register(OpDef(
    "tile.slice",
    (pos("x"), pos("shape", "list"), pos("offset", "list"), pos("valid_shape", "list", None)),
    _infer_tile_slice, pipe=None, dsl_names=("slice",), view=True,
    doc="A zero-copy sub-view. Shape first, then offset (the reverse of load)."))


def _infer_tensor_assemble(a, loc):
    target = checks.tensor("tensor.assemble", "target", a["target"], loc)
    src_ty = checks.type_of(a["source"])
    if src_ty is None or not hasattr(src_ty, "shape"):
        raise TypeCheckError("pl.tensor.assemble source must be a Tensor or Tile", loc)
    checks.rank("tensor.assemble", "offset", a["offset"], len(target.shape), loc)
    return TensorType(target.shape, target.dtype)


register(OpDef(
    "tensor.assemble",
    (pos("target"), pos("source"), pos("offset", "list"), kw("atomic")),
    _infer_tensor_assemble, level="tensor", dsl_names=("assemble",), reuses_input=0,
    doc="Write source into target at offset (out[:] = expr sugar); atomic=Add for split-K."))


def _infer_tensor_slice(a, loc):
    src = checks.tensor("tensor.slice", "x", a["x"], loc)
    shape = checks.shape("tensor.slice", "shape", a["shape"], loc)
    checks.rank("tensor.slice", "offset", a["offset"], len(src.shape), loc)
    return TensorType(shape, src.dtype)


register(OpDef(
    "tensor.slice", (pos("x"), pos("shape", "list"), pos("offset", "list")),
    _infer_tensor_slice, level="tensor", dsl_names=("slice",), view=True,
    doc="A sub-view of a tensor. Shape first, then offset."))
