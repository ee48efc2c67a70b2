"""Creation: scratch/accumulator tiles, constant tiles and DDR tensors.
Each ``register`` call is one op's single entry."""

from __future__ import annotations

from ptoc.dtypes import MemorySpace
from ptoc.ir.types import TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import REQUIRED, OpDef, PtoForm, register


def _infer_tile_create(a, loc):
    shape = checks.shape("tile.create", "shape", a["shape"], loc)
    dtype = checks.dtype_arg("tile.create", "dtype", a["dtype"], loc)
    target = checks.space_arg("tile.create", "target_memory", a["target_memory"], loc)
    return TileType(shape, dtype, target)


register(OpDef(
    "tile.create",
    (pos("shape", "list"), kw("dtype", default=REQUIRED, also_positional=True),
     kw("target_memory", also_positional=True)),
    _infer_tile_create, pipe=None, dsl_names=("create_tile",),
    doc="Allocate a scratch or accumulator tile (target_memory=Acc gives an L0C accumulator)."))


def _infer_full(a, loc):
    shape = checks.shape("tile.full", "shape", a["shape"], loc)
    dtype = checks.dtype_arg("tile.full", "dtype", a["dtype"], loc)
    checks.scalar_like("tile.full", "value", a["value"], loc)
    return TileType(shape, dtype, MemorySpace.Vec)


register(OpDef(
    "tile.full",
    (pos("shape", "list"), pos("dtype", "static"), pos("value")),
    _infer_full, pipe="V", dsl_names=("full",), doc="A Vec tile filled with a constant.",
    pto=PtoForm("pto.texpands", ("value",))))


def _infer_tensor_create(a, loc):
    shape = checks.shape("tensor.create", "shape", a["shape"], loc)
    dtype = checks.dtype_arg("tensor.create", "dtype", a["dtype"], loc)
    return TensorType(shape, dtype)


register(OpDef(
    "tensor.create",
    (pos("shape", "list"), kw("dtype", default=REQUIRED, also_positional=True), kw("init_value"),
     kw("manual_dep", default=False)),
    _infer_tensor_create, level="tensor", dsl_names=("create_tensor",),
    doc="Allocate a DDR tensor in orchestration (or an accumulator seed inside a scope)."))
