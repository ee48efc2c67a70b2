"""Data movement (``pl.load``, ``pl.store``, ``pl.move``, ``pl.tile.extract``) and the
``tile.alloc`` base that InitMemRef creates. Each ``register`` call is one op's single entry."""

from __future__ import annotations

from ptoc.dtypes import MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.nodes import ConstInt, ListExpr
from ptoc.ir.types import PtrType, TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import OpDef, register, to_expr

Mem = MemorySpace


def copy_space_pipe(args) -> str:
    """Pipe of a tile leaving its buffer: FIXPIPE drains Acc, MTE1 feeds L0, V copies in UB."""
    src = args["src"].type.memory_space if "src" in args else args["tile"].type.memory_space
    dst = args.get("target_memory")
    if src is Mem.Acc:
        return "FIX"
    if src is Mem.Vec and dst in (Mem.Vec, None):
        return "V"
    if src is Mem.Vec:
        return "MTE3"
    return "MTE1"


def _infer_load(a, loc):
    src = checks.tensor("tile.load", "tensor", a["tensor"], loc)
    checks.rank("tile.load", "offsets", a["offsets"], len(src.shape), loc)
    shape = checks.shape("tile.load", "shapes", a["shapes"], loc)
    valid = None
    if a["valid_shape"] is not None:
        _check_window_holds_data(a, loc)
        valid = checks.shape("tile.load", "valid_shape", a["valid_shape"], loc)
    target = checks.space_arg("tile.load", "target_memory", a["target_memory"], loc)
    if target is not None and target not in (Mem.Vec, Mem.Mat):
        raise TypeCheckError(
            f"pl.tile.load cannot load from DDR into pl.Mem.{target.value}: a DDR load lands only "
            "in pl.Mem.Vec or pl.Mem.Mat", loc,
            hint="load into pl.Mem.Mat, then pl.move(t, target_memory=pl.Mem.Left/Right)")
    return TileType(shape, src.dtype, target, view=checks.with_valid(valid, shape))


def _check_window_holds_data(a, loc) -> None:
    """A window a partly valid view leaves without any data (``_valid_from_view`` gave 0) is
    refused: a load of no rows or columns is no instruction (TLOAD needs valid extents > 0)."""
    tensor = a["tensor"]
    view = tensor.type.view if isinstance(tensor.type, TensorType) else None
    if view is None or view.valid_shape is None or not any(
            isinstance(x, ConstInt) and x.value == 0 for x in a["valid_shape"].items):
        return
    raise TypeCheckError(
        f"pl.load of '{getattr(tensor, 'name', 'tensor')}': its view is valid only over "
        f"{checks.dims_text(view.valid_shape)} of {checks.dims_text(tensor.type.shape)}, so "
        f"the {checks.dims_text(a['shapes'].items)} window at "
        f"{checks.dims_text(a['offsets'].items)} holds no data", loc,
        hint="load only windows that start inside the valid region")


def _same_dim(a, b) -> bool:
    a = a.value if isinstance(a, ConstInt) else a
    b = b.value if isinstance(b, ConstInt) else b
    return a == b if isinstance(a, int) and isinstance(b, int) else a is b


def _valid_from_view(tensor, offsets, shapes, requested) -> ListExpr:
    """The valid extents of a load whose source tensor is valid only over part of it (its
    ``pl.TensorView(valid_shape=...)``), as PyPTO derives them: on an axis the view narrows
    and the load does not (its valid extent is the window), the tile is valid over what the
    view leaves under the window, ``clamp(valid - offset, 0, window)`` (a run-time
    expression where the extents or the offset are; ``checks.window_read_valid``). A
    narrower request is taken as written."""
    ty = getattr(tensor, "type", None)
    view_valid = ty.view.valid_shape if isinstance(ty, TensorType) and ty.view is not None \
        else None
    if view_valid is None or not all(isinstance(x, ListExpr) for x in (offsets, shapes)):
        return requested
    window = tuple(shapes.items)
    available = checks.window_read_valid(tuple(ty.shape), tuple(view_valid), offsets.items,
                                         window)
    if available is None:
        return requested
    return ListExpr(tuple(
        to_expr(have, "valid_shape") if _same_dim(want, w) else want
        for want, have, w in zip(requested.items, available, window)))


def _fill_load_defaults(a):
    """PyPTO's defaults, stored and printed explicitly as PyPTO prints them: a load without
    valid_shape is valid over its whole tile (narrowed to a partly valid source's view,
    ``_valid_from_view``), and one without target_memory lands in Vec."""
    if a["valid_shape"] is None:
        a["valid_shape"] = a["shapes"]
    a["valid_shape"] = _valid_from_view(a["tensor"], a["offsets"], a["shapes"],
                                        a["valid_shape"])
    if a["target_memory"] is None:
        a["target_memory"] = Mem.Vec
    return a


register(OpDef(
    "tile.load",
    (pos("tensor"), pos("offsets", "list"), pos("shapes", "list"),
     pos("valid_shape", "list", None), kw("target_memory"), kw("clamp", default=False)),
    _infer_load, pipe="MTE2", dsl_names=("load",), normalize=_fill_load_defaults,
    doc="DDR -> Vec/Mat. Offsets first, then the tile shape; valid_shape narrows the valid region."))


def _infer_store(a, loc):
    src = checks.tile("tile.store", "tile", a["tile"], loc)
    out = checks.tensor("tile.store", "output_tensor", a["output_tensor"], loc)
    checks.rank("tile.store", "offsets", a["offsets"], len(out.shape), loc)
    if src.memory_space in (Mem.Left, Mem.Right, Mem.Bias):
        raise TypeCheckError(
            f"pl.tile.store cannot store a tile in pl.Mem.{src.memory_space.value} to DDR", loc,
            hint="only Vec, Mat and Acc tiles reach DDR; store the matmul result (Acc) instead")
    checks.atomic("tile.store", a.get("atomic"), out.dtype, loc)
    return TensorType(out.shape, out.dtype)


register(OpDef(
    "tile.store",
    (pos("tile"), pos("offsets", "list"), pos("output_tensor"), pos("shapes", "list", None),
     kw("atomic")),
    _infer_store,
    pipe=lambda a: "FIX" if a["tile"].type.memory_space is Mem.Acc else "MTE3",
    dsl_names=("store",), reuses_input=2,
    doc="On-chip -> DDR; returns the updated tensor (Acc -> DDR is the FIXPIPE drain)."))


def _infer_move(a, loc):
    src = checks.tile("tile.move", "tile", a["tile"], loc)
    target = checks.space_arg("tile.move", "target_memory", a["target_memory"], loc)
    if target is None or target is Mem.DDR:
        raise TypeCheckError("pl.tile.move needs an on-chip target_memory", loc,
                             hint="pass target_memory=pl.Mem.Left, Right, Bias, Vec or Mat")
    # the valid region moves with the data (PyPTO keeps the source's valid_shape)
    return TileType(src.shape, src.dtype, target,
                    view=checks.with_valid(checks.valid_of(src), src.shape))


register(OpDef(
    "tile.move",
    (pos("tile"), kw("target_memory", default=None), kw("blayout"), kw("slayout")),
    _infer_move, pipe=copy_space_pipe, dsl_names=("move",),
    doc="On-chip -> on-chip copy; the only user path into Left, Right and Bias."))


def _infer_extract(a, loc):
    src = checks.tile("tile.extract", "src", a["src"], loc)
    checks.scalar_like("tile.extract", "index_row", a["index_row"], loc)
    checks.scalar_like("tile.extract", "index_col", a["index_col"], loc)
    shape = checks.shape("tile.extract", "shape", a["shape"], loc)
    target = checks.space_arg("tile.extract", "target_memory", a["target_memory"], loc)
    # the window is valid only where the source is (PyPTO's window-read inference)
    valid = checks.window_valid(src, (a["index_row"], a["index_col"]), shape)
    return TileType(shape, src.dtype, target, view=checks.with_valid(valid, shape))


register(OpDef(
    "tile.extract",
    (pos("src"), pos("index_row"), pos("index_col"), pos("shape", "list"),
     kw("target_memory")),
    _infer_extract, pipe=copy_space_pipe, dsl_names=("extract",),
    doc="TEXTRACT a sub-tile: Mat -> Left/Right, Acc -> Mat."))


def _infer_alloc(a, loc):
    if not isinstance(a["space"], MemorySpace) or a["space"] is Mem.DDR:
        raise TypeCheckError("pl.tile.alloc needs an on-chip memory space", loc)
    return PtrType()


register(OpDef(
    "tile.alloc",
    (pos("space", "static"), pos("size", "static"), kw("pinned", default=False)),
    _infer_alloc, pipe=None, level="system",
    doc="One on-chip allocation (made by InitMemRef; printed as mem_x_N: pl.Ptr = ...)."))
