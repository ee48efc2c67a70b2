"""Creation: scratch/accumulator tiles, constant tiles and DDR tensors.
Each ``register`` call is one op's single entry."""

from __future__ import annotations

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import TensorType, TileType, TileView
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import REQUIRED, OpDef, PtoForm, TileForm, register


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
    _infer_full, pipe="V", doc="A Vec tile filled with a constant.",
    numerics="exact: the value converted to the dtype", pto=PtoForm("pto.texpands", ("value",))))


def _infer_tensor_full(a, loc):
    shape = checks.shape("tensor.full", "shape", a["shape"], loc)
    dtype = checks.dtype_arg("tensor.full", "dtype", a["dtype"], loc)
    checks.scalar_like("tensor.full", "value", a["value"], loc)
    return TensorType(shape, dtype)


register(OpDef(
    "tensor.full",
    (pos("shape", "list"), kw("dtype", default=REQUIRED, also_positional=True),
     kw("value", "expr", default=REQUIRED, also_positional=True)),
    _infer_tensor_full, level="tensor", dsl_names=("full",),
    numerics="exact: the value converted to the dtype", tile_form=TileForm("tile.full"),
    doc="A tensor filled with a constant (inside a kernel: a Vec tile, tile.full)."))


def _valid(op: str, a, shape, loc):
    if a.get("valid_shape") is None:
        return None
    valid = checks.shape(op, "valid_shape", a["valid_shape"], loc)
    if len(valid) != len(shape) or any(isinstance(v, int) and isinstance(s, int) and v > s
                                       for v, s in zip(valid, shape)):
        raise TypeCheckError(f"pl.{op} valid_shape {list(valid)} does not fit the shape "
                             f"{list(shape)}", loc, hint="each valid extent must be <= the shape")
    return TileView((("valid_shape", tuple(valid)),))


def _infer_tri(a, loc):
    checks.scalar_like("tile.tri", "diagonal", a["diagonal"], loc)
    shape = checks.shape("tile.tri", "shape", a["shape"], loc)
    dtype = checks.dtype_arg("tile.tri", "dtype", a["dtype"], loc)
    if len(shape) != 2:
        raise TypeCheckError(f"pl.tile.tri makes a 2-D tile, got shape {list(shape)}", loc)
    return TileType(shape, dtype, MemorySpace.Vec, view=_valid("tile.tri", a, shape, loc))


register(OpDef(
    "tile.tri",
    (pos("diagonal"), pos("shape", "list"), pos("valid_shape", "list", None),
     kw("dtype", default=DataType.INT32, also_positional=True),
     kw("upper", default=False, also_positional=True)),
    _infer_tri, pipe="V", dsl_names=("tri",), numerics="exact: 1 inside the triangle, 0 outside",
    doc="Triangular mask: 1 where col <= row + diagonal (upper: col >= row + diagonal), over the "
        "valid region only",
    pto=PtoForm("pto.ttri", ("diagonal",), scalar_dtype=DataType.INT32,
                attrs=lambda a: (("upperOrLower", None, 1 if a["upper"] else 0),))))


def _infer_ci(op: str):
    def infer(a, loc):
        checks.scalar_like(op, "start", a["start"], loc)
        shape = checks.shape(op, "shape", a["shape"], loc)
        dtype = checks.dtype_arg(op, "dtype", a["dtype"], loc)
        if dtype not in (DataType.INT16, DataType.INT32):
            raise TypeCheckError(f"pl.{op} makes INT16 or INT32 sequences, got {dtype.value}", loc)
        if len(shape) != 2 or shape[0] != 1:
            raise TypeCheckError(f"pl.{op} makes one row: shape must be [1, N], got "
                                 f"{list(shape)}", loc, hint="use [1, N]")
        if op.startswith("tensor"):
            return TensorType(shape, dtype)
        return TileType(shape, dtype, MemorySpace.Vec)
    return infer


_CI_PARAMS = (pos("start"), pos("shape", "list"),
              kw("dtype", default=DataType.INT32, also_positional=True),
              kw("descending", default=False, also_positional=True))
register(OpDef(
    "tile.ci", _CI_PARAMS, _infer_ci("tile.ci"), pipe="V",
    numerics="exact: start + c (start - c descending)",
    doc="Consecutive integers along one row (arange)",
    pto=PtoForm("pto.tci", ("start",),
                attrs=lambda a: (("descending", None, bool(a["descending"])),))))
register(OpDef(
    "tensor.ci", _CI_PARAMS, _infer_ci("tensor.ci"), level="tensor", dsl_names=("arange",),
    numerics="exact: start + c (start - c descending)", tile_form=TileForm("tile.ci"),
    doc="Consecutive integers along one row (pl.arange)"))


def _infer_tensor_create(a, loc):
    shape = checks.shape("tensor.create", "shape", a["shape"], loc)
    dtype = checks.dtype_arg("tensor.create", "dtype", a["dtype"], loc)
    _check_init_value(a.get("init_value"), dtype, loc)
    if not isinstance(a.get("manual_dep", False), bool):
        raise TypeCheckError(f"pl.create_tensor manual_dep={a['manual_dep']!r} must be True or "
                             "False (a constant: the tensor's tracking is fixed when it is made)",
                             loc)
    return TensorType(shape, dtype)


def _check_init_value(value, dtype: DataType, loc) -> None:
    """PyPTO's limits on the runtime's pre-fill: a finite constant; zero for every dtype,
    other values only for integer and 32/64-bit float tensors."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
            or value in (float("inf"), float("-inf")):
        raise TypeCheckError(f"pl.create_tensor init_value={value!r} must be a finite number "
                             "written in the program", loc)
    if value != 0 and dtype in (DataType.FP16, DataType.BF16):
        raise TypeCheckError(f"pl.create_tensor init_value={value!r} on a {dtype.value} tensor: "
                             "the runtime pre-fills non-zero values only for integer and "
                             "32/64-bit float tensors (as PyPTO)", loc,
                             hint="pre-fill with 0, or fill it with a kernel (pl.full)")


register(OpDef(
    "tensor.create",
    (pos("shape", "list"), kw("dtype", default=REQUIRED, also_positional=True), kw("init_value"),
     kw("manual_dep", default=False)),
    _infer_tensor_create, level="tensor", dsl_names=("create_tensor",),
    doc="Allocate a DDR tensor in orchestration (or an accumulator seed inside a scope); "
        "init_value: the runtime pre-fills it; manual_dep=True: no task's use of it is tracked."))
