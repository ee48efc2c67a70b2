"""Shape and layout: sub-views (``slice``), writing a sub-region back (``assemble``),
``reshape``, ``transpose`` (a copy) and ``transpose_view`` (a re-view of L1 bytes), column
``concat``, and valid-region ops (``set_validshape``, ``fillpad``). Each ``register`` call is
one op's single entry."""

from __future__ import annotations

from ptoc.backend.layouts import TILE_LAYOUTS
from ptoc.dtypes import MemorySpace, PadValue
from ptoc.errors import TypeCheckError
from ptoc.ir.nodes import BinOp, ConstInt, ListExpr
from ptoc.ir.visitor import fold_constants
from ptoc.ir.types import TensorLayout, TensorType, TensorView, TileLayout, TileType, TileView
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import OpDef, PtoForm, TileForm, make_call, register, to_expr


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
    checks.atomic("tensor.assemble", a.get("atomic"), target.dtype, loc)
    return TensorType(target.shape, target.dtype)


register(OpDef(
    "tensor.assemble",
    (pos("target"), pos("source"), pos("offset", "list"), kw("atomic")),
    _infer_tensor_assemble, level="tensor", dsl_names=("assemble",), reuses_input=0,
    doc="Write source into target at offset (out[:] = expr sugar); atomic=Add for split-K."))


def _clamped_valid(a, src, shape, loc) -> ListExpr:
    """PyPTO's ``clamp=True``: a window that runs past the source's end is valid only up to
    it, ``min(dim - offset, window)`` per axis (a constant when both are), so the last
    window of a loop over a dynamic dimension is its tail."""
    if a.get("valid_shape") is not None:
        raise TypeCheckError("pl.slice takes valid_shape= or clamp=True, not both", loc,
                             hint="narrow the window with one of them")
    valid = []
    for axis, (dim, off, window) in enumerate(zip(src.shape, a["offset"].items, shape)):
        if isinstance(dim, int) and isinstance(off, ConstInt):
            left = dim - off.value
            if left <= 0:
                raise TypeCheckError(f"pl.slice with clamp=True: offset {off.value} on axis "
                                     f"{axis} is past the source's extent {dim}", loc)
            valid.append(ConstInt(min(left, window)))
        else:
            rest = fold_constants(BinOp("-", to_expr(dim, "dim"), off))
            valid.append(make_call("tile.min", (rest, window), loc=loc))
    return ListExpr(tuple(valid))


def _slice_defaults(a):
    """``clamp=True`` stored as the valid_shape it means (printed and parsed back as such)."""
    if a.get("clamp"):
        a["valid_shape"] = _clamped_valid(a, a["x"].type, tuple(
            i.value if isinstance(i, ConstInt) else i for i in a["shape"].items), None)
        a["clamp"] = False
    return a


def _infer_tensor_slice(a, loc):
    """A window of ``x``; valid over the requested ``valid_shape`` and never past what ``x``
    holds under the window (PyPTO's slice validity: ``clamp(valid - offset, 0, window)`` of
    a partly valid source, so a slice of a tail view is a tail too; the intersection with a
    request is the exact run-time ``min``, never the request taken on trust)."""
    src = checks.tensor("tensor.slice", "x", a["x"], loc)
    shape = checks.shape("tensor.slice", "shape", a["shape"], loc)
    checks.rank("tensor.slice", "offset", a["offset"], len(src.shape), loc)
    requested = None
    if a.get("valid_shape") is not None:
        requested = checks.shape("tensor.slice", "valid_shape", a["valid_shape"], loc)
        checks.rank("tensor.slice", "valid_shape", a["valid_shape"], len(shape), loc)
    source = src.view.valid_shape if src.view is not None else None
    available = checks.window_read_valid(tuple(src.shape), source and tuple(source),
                                         a["offset"].items, shape) \
        if len(shape) == len(src.shape) else None
    valid = _intersect(requested, available, shape)
    if valid is None:
        return TensorType(shape, src.dtype)
    view = TensorView((("valid_shape", tuple(valid)), ("stride", ()),
                       ("layout", TensorLayout.ND)))
    return TensorType(shape, src.dtype, view=view)


def _intersect(requested, available, window) -> tuple | None:
    """Per axis the smaller of a requested and an available valid extent (either may be
    None: no narrowing); a run-time pair is the scalar ``min``."""
    if available is None or checks.shapes_equal(tuple(available), tuple(window)):
        return requested
    if requested is None:
        return available
    out = []
    for want, have, w in zip(requested, available, window):
        if checks.shapes_equal((want,), (w,)) or checks.shapes_equal((want,), (have,)):
            out.append(have)
        elif checks.shapes_equal((have,), (w,)):
            out.append(want)
        elif isinstance(want, int) and isinstance(have, int):
            out.append(min(want, have))
        else:
            out.append(make_call("tile.min", (want, have)))
    return tuple(out)


register(OpDef(
    "tensor.slice", (pos("x"), pos("shape", "list"), pos("offset", "list"),
                     pos("valid_shape", "list", None), kw("clamp", default=False)),
    _infer_tensor_slice, level="tensor", dsl_names=("slice",), view=True,
    normalize=_slice_defaults,
    doc="A sub-view of a tensor. Shape first, then offset; valid_shape: the leading region "
        "that holds data (a kernel taking it reads its extent, MaterializeValidShapeSymbols); "
        "clamp=True: a window past the end is valid up to it (stored as that valid_shape)."))


# ---- reshape, transpose, concat ------------------------------------------------------------

def _count(shape) -> int | None:
    n = 1
    for d in shape:
        if not isinstance(d, int):
            return None
        n *= d
    return n


def _full_valid(op: str, ty: TileType, loc) -> None:
    """A zero-copy re-view needs the whole source valid (the valid box would not map)."""
    valid = ty.view.get("valid_shape") if ty.view is not None else None
    if valid is not None and tuple(valid) != tuple(ty.shape):
        raise TypeCheckError(
            f"pl.{op} of a tile valid only over {list(valid)} of {list(ty.shape)}: the valid "
            "region does not map to the new shape", loc,
            hint="fill the invalid region first (pl.fillpad) or reshape a fully valid tile")


def _infer_reshape(level: str):
    op = f"{level}.reshape"

    def infer(a, loc):
        src = checks.value(op, level, level, a[level], loc)
        shape = checks.shape(op, "shape", a["shape"], loc)
        before, after = _count(src.shape), _count(shape)
        if before is not None and after is not None and before != after:
            raise TypeCheckError(
                f"pl.{op} from {list(src.shape)} ({before} elements) to {list(shape)} ({after} "
                "elements) changes the element count", loc, hint="keep rows * cols the same")
        if level == "tensor":
            return TensorType(shape, src.dtype)
        _full_valid(op, src, loc)
        return TileType(shape, src.dtype, src.memory_space)
    return infer


register(OpDef(
    "tile.reshape", (pos("tile"), pos("shape", "list")), _infer_reshape("tile"), pipe=None,
    dsl_names=("reshape",), view=True, numerics="exact (no data movement)",
    doc="Reinterpret a tile's dimensions in place (a [R, 1] column is a [1, R] row)"))
register(OpDef(
    "tensor.reshape", (pos("tensor"), pos("shape", "list")), _infer_reshape("tensor"),
    level="tensor", dsl_names=("reshape",), numerics="exact (no data movement)",
    tile_form=TileForm("tile.reshape"), doc="Reinterpret a tensor's dimensions"))


def _axes(op: str, a, rank: int, loc) -> None:
    axes = []
    for name in ("axis1", "axis2"):
        value = a[name]
        if not isinstance(value, int) or isinstance(value, bool) or not -rank <= value < rank:
            raise TypeCheckError(f"pl.{op} {name} must be an axis of a rank-{rank} value, got "
                                 f"{value!r}", loc)
        axes.append(value % rank)
    if axes[0] == axes[1]:
        raise TypeCheckError(f"pl.{op} swaps axis {axes[0]} with itself", loc,
                             hint="name two different axes")


def _infer_transpose(level: str):
    op = f"{level}.transpose"

    def infer(a, loc):
        src = checks.value(op, level, level, a[level], loc)
        if len(src.shape) != 2:
            raise TypeCheckError(f"pl.{op} supports 2-D values, got {list(src.shape)}", loc)
        _axes(op, a, 2, loc)
        shape = (src.shape[1], src.shape[0])
        if level == "tensor":
            return TensorType(shape, src.dtype)
        checks.space(op, "tile", src, (MemorySpace.Vec,), loc)
        return TileType(shape, src.dtype, src.memory_space)
    return infer


register(OpDef(
    "tile.transpose",
    (pos("tile"), pos("axis1", "static"), pos("axis2", "static"), pos("tmp_tile", "expr", None)),
    _infer_transpose("tile"), pipe="V", dsl_names=("transpose",), forbid_output_alias=(0, 3),
    compiler_scratch=("tmp_tile",), numerics="exact (data movement)",
    doc="Swap the two axes of a Vec tile (TTRANS; the compiler allocates its scratch)",
    pto=PtoForm("pto.ttrans", ("tile", "tmp_tile"))))
register(OpDef(
    "tensor.transpose", (pos("tensor"), pos("axis1", "static"), pos("axis2", "static")),
    _infer_transpose("tensor"), level="tensor", dsl_names=("transpose",),
    numerics="exact (data movement)", tile_form=TileForm("tile.transpose"),
    doc="Swap the two axes of a tensor"))


def _infer_transpose_view(a, loc):
    src = checks.tile("tile.transpose_view", "tile", a["tile"], loc)
    if len(src.shape) != 2:
        raise TypeCheckError("pl.tile.transpose_view needs a 2-D tile", loc)
    checks.space("tile.transpose_view", "tile", src, (MemorySpace.Mat,), loc)
    blayout, slayout = TILE_LAYOUTS[MemorySpace.Mat][:2]
    if src.view is not None and src.view.get("slayout") is not None:
        blayout, slayout = src.view.get("blayout"), src.view.get("slayout")
    flipped = {TileLayout.col_major: TileLayout.row_major, TileLayout.row_major: TileLayout.col_major,
               "col_major": TileLayout.row_major, "row_major": TileLayout.col_major}
    return TileType((src.shape[1], src.shape[0]), src.dtype, src.memory_space,
                    view=TileView((("blayout", flipped[blayout]), ("slayout", flipped[slayout]))))


register(OpDef(
    "tile.transpose_view", (pos("tile"),), _infer_transpose_view, pipe=None,
    dsl_names=("transpose_view",), view=True, numerics="exact (no data movement)",
    doc="The same L1 bytes read as the transpose (NZ [N, K] <-> ZN [K, N]); feed it to "
        "pl.move(..., target_memory=pl.Mem.Right/Left) for a transposed matmul operand"))


def _infer_concat(level: str):
    op = f"{level}.concat"

    def infer(a, loc):
        x = checks.value(op, level, "src0", a["src0"], loc)
        y = checks.value(op, level, "src1", a["src1"], loc)
        checks.same_dtype(op, x, y, loc)
        if len(x.shape) != 2 or len(y.shape) != 2 or not checks.shapes_equal(
                (x.shape[0],), (y.shape[0],)):
            raise TypeCheckError(f"pl.{op} joins columns of 2-D values with the same rows, got "
                                 f"{list(x.shape)} and {list(y.shape)}", loc)
        cols = x.shape[1] + y.shape[1] if isinstance(x.shape[1], int) and isinstance(
            y.shape[1], int) else None
        if cols is None:
            raise TypeCheckError(f"pl.{op} needs static column counts", loc)
        if level == "tensor":
            return TensorType((x.shape[0], cols), x.dtype)
        checks.space(op, "src0", x, (MemorySpace.Vec,), loc)
        checks.space(op, "src1", y, (MemorySpace.Vec,), loc)
        return TileType((x.shape[0], cols), x.dtype, x.memory_space)
    return infer


register(OpDef(
    "tile.concat", (pos("src0"), pos("src1")), _infer_concat("tile"), pipe="V",
    dsl_names=("concat",), forbid_output_alias=(0, 1), numerics="exact (data movement)",
    doc="Join two Vec tiles along the columns: [R, C0] | [R, C1] -> [R, C0 + C1]",
    pto=PtoForm("pto.tconcat", ("src0", "src1"))))
register(OpDef(
    "tensor.concat", (pos("src0"), pos("src1")), _infer_concat("tensor"), level="tensor",
    dsl_names=("concat",), numerics="exact (data movement)", tile_form=TileForm("tile.concat"),
    row_local=True,
    doc="Join two tensors along the columns"))


# ---- valid shape and padding -----------------------------------------------------------------

def _infer_set_validshape(a, loc):
    src = checks.tile("tile.set_validshape", "tile", a["tile"], loc)
    if len(src.shape) != 2:
        raise TypeCheckError("pl.set_validshape needs a 2-D tile", loc)
    valid = []
    for name, dim in (("valid_rows", src.shape[0]), ("valid_cols", src.shape[1])):
        value = a[name]
        checks.scalar_like("tile.set_validshape", name, value, loc)
        static = getattr(value, "value", None)
        if isinstance(static, int) and isinstance(dim, int) and not 0 < static <= dim:
            raise TypeCheckError(f"pl.set_validshape {name}={static} is outside 1..{dim}", loc)
        valid.append(static if isinstance(static, int) else value)
    return TileType(src.shape, src.dtype, src.memory_space,
                    view=TileView((("valid_shape", tuple(valid)),)))


register(OpDef(
    "tile.set_validshape", (pos("tile"), pos("valid_rows"), pos("valid_cols")),
    _infer_set_validshape, pipe=None, dsl_names=("set_validshape",), view=True,
    numerics="exact (metadata only)",
    doc="Declare the meaningful [rows, cols] region of a tile (runtime values allowed)"))


def pad_value(op: str, value, loc) -> PadValue:
    """PyPTO's pad spellings: ``pl.PadValue.zero/max/min`` or the sugars 0, inf, -inf."""
    if isinstance(value, PadValue) and value is not PadValue.null:
        return value
    sugar = {0: PadValue.zero, float("inf"): PadValue.max, float("-inf"): PadValue.min}
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value in sugar:
        return sugar[value]
    raise TypeCheckError(f"pl.{op} pad_value {value!r} is not a padding mode", loc,
                         hint="use pl.PadValue.zero, pl.PadValue.max or pl.PadValue.min "
                              "(or 0, math.inf, -math.inf)")


def _infer_fillpad(expand: bool):
    op = "tile.fillpad_expand" if expand else "tile.fillpad"

    def infer(a, loc):
        src = checks.tile(op, "tile", a["tile"], loc)
        checks.space(op, "tile", src, (MemorySpace.Vec,), loc)
        pad = pad_value(op, a["pad_value"], loc)
        shape = checks.shape(op, "shape", a["shape"], loc) if expand else tuple(src.shape)
        if expand and (len(shape) != len(src.shape) or any(
                isinstance(p, int) and isinstance(q, int) and p < q
                for p, q in zip(shape, src.shape))):
            raise TypeCheckError(f"pl.{op} shape {list(shape)} is smaller than the source "
                                 f"{list(src.shape)}", loc, hint="expand to a larger shape")
        return TileType(shape, src.dtype, src.memory_space, view=TileView(
            (("valid_shape", tuple(shape)), ("pad", pad))))
    return infer


register(OpDef(
    "tile.fillpad", (pos("tile"), kw("pad_value", default=PadValue.zero, also_positional=True)),
    _infer_fillpad(False), pipe="V", dsl_names=("fillpad",),
    numerics="exact: valid values kept; 0, +inf/-inf (integers: dtype max/min) outside",
    doc="A fully valid copy whose invalid region holds the pad value (the identity of the next "
        "reduction)", pto=PtoForm("pto.tfillpad", ("tile",))))
register(OpDef(
    "tile.fillpad_expand",
    (pos("tile"), pos("shape", "list"), kw("pad_value", default=PadValue.zero,
                                            also_positional=True)),
    _infer_fillpad(True), pipe="V", dsl_names=("fillpad_expand",), forbid_output_alias=(0,),
    numerics="exact: valid values kept; the pad value elsewhere",
    doc="Copy into a larger tile, padding everything outside the source's valid region",
    pto=PtoForm("pto.tfillpad_expand", ("tile",))))


register(OpDef(
    "tile.fillpad_inplace",
    (pos("tile"), kw("pad_value", default=PadValue.zero, also_positional=True)),
    _infer_fillpad(False), pipe="V", dsl_names=("fillpad_inplace",), reuses_input=0,
    numerics="exact: valid values kept; the pad value elsewhere",
    doc="fillpad writing the source tile's own buffer", pto=PtoForm("pto.tfillpad", ("tile",))))


def _infer_tensor_fillpad_expand(a, loc):
    src = checks.tensor("tensor.fillpad_expand", "tensor", a["tensor"], loc)
    pad_value("tensor.fillpad_expand", a["pad_value"], loc)
    return TensorType(checks.shape("tensor.fillpad_expand", "shape", a["shape"], loc), src.dtype)


register(OpDef(
    "tensor.fillpad_expand",
    (pos("tensor"), pos("shape", "list"), kw("pad_value", default=PadValue.zero,
                                              also_positional=True)),
    _infer_tensor_fillpad_expand, level="tensor", dsl_names=("fillpad_expand",),
    numerics="exact: valid values kept; the pad value elsewhere",
    tile_form=TileForm("tile.fillpad_expand"), doc="Copy into a larger tensor, padding"))


def _infer_tensor_set_validshape(a, loc):
    src = checks.tensor("tensor.set_validshape", "tensor", a["tensor"], loc)
    for name in ("valid_rows", "valid_cols"):
        checks.scalar_like("tensor.set_validshape", name, a[name], loc)
    return TensorType(src.shape, src.dtype)


register(OpDef(
    "tensor.set_validshape", (pos("tensor"), pos("valid_rows"), pos("valid_cols")),
    _infer_tensor_set_validshape, level="tensor", dsl_names=("set_validshape",),
    numerics="exact (metadata only)", tile_form=TileForm("tile.set_validshape"),
    doc="Declare the meaningful region of a tensor value"))


def _infer_reinterpret(level: str):
    op = f"{level}.reinterpret_view"

    def infer(a, loc):
        src = checks.value(op, level, "data", a["data"], loc)
        dtype = checks.dtype_arg(op, "dtype", a["dtype"], loc)
        shape = tuple(src.shape[:-1]) + (src.shape[-1] * src.dtype.nbytes // dtype.nbytes,) \
            if a["shape"] is None else checks.shape(op, "shape", a["shape"], loc)
        before, after = _count(src.shape), _count(shape)
        if before is not None and after is not None and \
                before * src.dtype.nbytes != after * dtype.nbytes:
            raise TypeCheckError(
                f"pl.{op} from {list(src.shape)} {src.dtype.value} to {list(shape)} "
                f"{dtype.value} changes the byte count", loc, hint="keep the bytes the same")
        if level == "tensor":
            return TensorType(shape, dtype)
        _full_valid(op, src, loc)
        return TileType(shape, dtype, src.memory_space)
    return infer


register(OpDef(
    "tile.reinterpret_view", (pos("data"), pos("dtype", "static"), kw("shape", "list")),
    _infer_reinterpret("tile"), pipe=None, dsl_names=("reinterpret_view",), view=True,
    numerics="exact: the same bytes read as another dtype",
    doc="The tile's bytes viewed as another dtype (and shape), no data movement"))
register(OpDef(
    "tensor.reinterpret_view", (pos("data"), pos("dtype", "static"), kw("shape", "list")),
    _infer_reinterpret("tensor"), level="tensor", dsl_names=("reinterpret_view",),
    numerics="exact: the same bytes read as another dtype",
    tile_form=TileForm("tile.reinterpret_view"),
    doc="A tensor's bytes viewed as another dtype (and shape)"))


def _infer_tensor_fillpad(a, loc):
    src = checks.tensor("tensor.fillpad", "tensor", a["tensor"], loc)
    pad_value("tensor.fillpad", a["pad_value"], loc)
    return TensorType(src.shape, src.dtype)


register(OpDef(
    "tensor.fillpad", (pos("tensor"), kw("pad_value", default=PadValue.zero,
                                         also_positional=True)),
    _infer_tensor_fillpad, level="tensor", dsl_names=("fillpad",),
    numerics="exact: valid values kept; the pad value elsewhere",
    tile_form=TileForm("tile.fillpad"), doc="Fill a tensor's invalid region"))
