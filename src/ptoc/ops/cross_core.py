"""Cross-core ops of a mixed cube + vector kernel (PyPTO's explicit pipe API), one entry each.

* the split markers LowerAutoVectorSplit writes and ExpandMixedKernel folds: ``tile.aiv_shard``
  (cube -> vector: an Acc tile becomes each AIV lane's part, in Vec) and ``tile.aic_gather``
  (vector -> cube: the lanes' parts joined into one Mat tile);
* the transport pair they become: ``tile.tpush_to_aiv`` / ``tile.tpop_from_aic`` and
  ``tile.tpush_to_aic`` / ``tile.tpop_from_aiv``, with ``system.tfree_to_aic`` /
  ``system.tfree_to_aiv`` releasing a popped slot;
* the pipe setup: ``system.reserve_buffer`` (the consumer's ring), ``system.import_peer_buffer``
  (the producer learns its base), ``system.aic_initialize_pipe`` / ``system.aiv_initialize_pipe``;
* ``tile.get_subblock_idx``: which AIV lane runs this instance.

``split`` on the markers is the authored ``SplitMode`` code (0 none, 1 up-down, 2
left-right); on the transport ops it is pto-isa's split code (ExpandMixedKernel chooses it).
"""

from __future__ import annotations

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import ScalarType, TensorType, TileType, TupleType
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import OpDef, register

Mem = MemorySpace
_SPLIT_AXIS = {1: 0, 2: 1}
_NONE = TupleType(())
_I32 = ScalarType(DataType.INT32)


def split_shape(shape: tuple, split: int, lanes: int = 2) -> tuple:
    """A lane's part of ``shape`` under split code 1 (rows) or 2 (columns)."""
    axis = _SPLIT_AXIS.get(split)
    if axis is None:
        return tuple(shape)
    out = list(shape)
    out[axis] = shape[axis] // lanes if isinstance(shape[axis], int) else shape[axis]
    return tuple(out)


def joined_shape(shape: tuple, split: int, lanes: int = 2) -> tuple:
    """The full tile ``lanes`` parts of ``shape`` make under split code 1 or 2."""
    axis = _SPLIT_AXIS.get(split)
    if axis is None:
        return tuple(shape)
    out = list(shape)
    out[axis] = shape[axis] * lanes if isinstance(shape[axis], int) else shape[axis]
    return tuple(out)


def _split_arg(op: str, split, loc) -> int:
    if split not in (0, 1, 2, 3, 4):
        raise TypeCheckError(f"pl.{op}: split={split!r} is not a split code", loc,
                             hint="use 0 (no split), 1 (up-down) or 2 (left-right)")
    return split


def _even(op: str, name: str, shape: tuple, split: int, loc) -> None:
    axis = _SPLIT_AXIS.get(split)
    if axis is not None and isinstance(shape[axis], int) and shape[axis] % 2:
        side = "rows" if axis == 0 else "columns"
        raise TypeCheckError(f"pl.{op}: '{name}' has {shape[axis]} {side}, which the two AIV "
                             "lanes cannot split evenly", loc,
                             hint=f"pad the {side} to an even count, or use the other split mode")


# --- split markers (LowerAutoVectorSplit -> ExpandMixedKernel) -------------------------------

def _infer_shard(a, loc):
    src = checks.tile("tile.aiv_shard", "tile", a["tile"], loc)
    split = _split_arg("tile.aiv_shard", a["split"], loc)
    if src.memory_space not in (Mem.Acc, Mem.Mat):
        raise TypeCheckError(f"pl.tile.aiv_shard hands a cube tile to the AIV lanes; "
                             f"'{a['tile'].name}' is in {src.memory_space}", loc,
                             hint="shard the matmul result (Acc)")
    _even("tile.aiv_shard", a["tile"].name, tuple(src.shape), split, loc)
    return TileType(split_shape(tuple(src.shape), split), src.dtype, Mem.Vec)


register(OpDef(
    "tile.aiv_shard", (pos("tile"), kw("split", default=0)), _infer_shard, pipe="FIX",
    dsl_names=("aiv_shard",),
    doc="cube -> vector: each AIV lane's part (split 1 rows, 2 columns) of a cube tile, in Vec."))


def _infer_gather(a, loc):
    src = checks.tile("tile.aic_gather", "tile", a["tile"], loc)
    split = _split_arg("tile.aic_gather", a["split"], loc)
    if src.memory_space is not Mem.Vec:
        raise TypeCheckError(f"pl.tile.aic_gather joins the AIV lanes' Vec tiles; "
                             f"'{a['tile'].name}' is in {src.memory_space}", loc,
                             hint="gather a Vec tile")
    return TileType(joined_shape(tuple(src.shape), split), src.dtype, Mem.Mat)


register(OpDef(
    "tile.aic_gather", (pos("tile"), kw("split", default=0)), _infer_gather, pipe="MTE3",
    dsl_names=("aic_gather",),
    doc="vector -> cube: the AIV lanes' parts joined into one Mat tile on the AIC."))


# --- transport -----------------------------------------------------------------------------------

def _push(op: str, spaces: tuple):
    def infer(a, loc):
        src = checks.tile(op, "tile", a["tile"], loc)
        _split_arg(op, a["split"], loc)
        if src.memory_space not in spaces:
            want = " or ".join(str(s) for s in spaces)
            raise TypeCheckError(f"pl.{op} pushes a tile from {want}; '{a['tile'].name}' is in "
                                 f"{src.memory_space}", loc, hint=f"push a {want} tile")
        return _NONE
    return infer


def _pop(op: str, space):
    def infer(a, loc):
        _split_arg(op, a["split"], loc)
        if a["shape"] is None or a["dtype"] is None:
            raise TypeCheckError(f"pl.{op} needs the popped tile's shape and dtype", loc,
                                 hint=f"write pl.{op}([rows, cols], pl.FP32, split=...)")
        shape = checks.shape(op, "shape", a["shape"], loc)
        return TileType(shape, a["dtype"], space)
    return infer


def _free(op: str, space):
    def infer(a, loc):
        src = checks.tile(op, "tile", a["tile"], loc)
        _split_arg(op, a["split"], loc)
        if src.memory_space is not space:
            raise TypeCheckError(f"pl.{op} releases a popped {space} tile; '{a['tile'].name}' "
                                 f"is in {src.memory_space}", loc,
                                 hint="pass the result of the matching tpop")
        return _NONE
    return infer


def _cube_push_pipe(a) -> str:
    """An Acc tile drains on FIX; a Mat tile (PyPTO's Mat -> Vec boundary move) is copied out
    of L1 by MTE3, the pipe of an L1 -> GM store."""
    return "FIX" if a["tile"].type.memory_space is Mem.Acc else "MTE3"


_PIPE_KWS = (kw("split", default=0), kw("id"))
for _name, _spaces, _pipe in (("tpush_to_aiv", (Mem.Acc, Mem.Mat), _cube_push_pipe),
                              ("tpush_to_aic", (Mem.Vec,), "MTE3")):
    register(OpDef(f"tile.{_name}", (pos("tile"),) + _PIPE_KWS, _push(f"tile.{_name}", _spaces),
                   pipe=_pipe, dsl_names=(_name,),
                   doc=f"producer side of a cross-core pipe ({_name.removeprefix('tpush_to_')} "
                       "consumes): wait for a free slot, copy the tile in, signal."))
for _name, _space in (("tpop_from_aic", Mem.Vec), ("tpop_from_aiv", Mem.Mat)):
    register(OpDef(f"tile.{_name}", (pos("shape", "list", None), pos("dtype", "static", None))
                   + _PIPE_KWS, _pop(f"tile.{_name}", _space), pipe="MTE2",
                   dsl_names=(_name,),
                   doc="consumer side: wait for the next tile; the result lives in a ring slot."))
for _name, _space in (("tfree_to_aic", Mem.Vec), ("tfree_to_aiv", Mem.Mat)):
    register(OpDef(f"system.{_name}", (pos("tile"),) + _PIPE_KWS, _free(f"system.{_name}", _space),
                   pipe="V" if _space is Mem.Vec else "MTE1", dsl_names=(_name,), level="system",
                   doc="consumer side: release a popped tile's slot after its last reader."))


# --- pipe setup ----------------------------------------------------------------------------------

def _infer_reserve(a, loc):
    if not isinstance(a["name"], str) or not a["name"]:
        raise TypeCheckError("pl.reserve_buffer needs name=\"...\"", loc)
    if not isinstance(a["size"], int) or a["size"] <= 0:
        raise TypeCheckError(f"pl.reserve_buffer size={a['size']!r} must be a positive int", loc)
    return _I32


register(OpDef(
    "system.reserve_buffer",
    (kw("name"), kw("size"), kw("base", default=-1), kw("location", default=Mem.Vec)),
    _infer_reserve, pipe="S", dsl_names=("reserve_buffer",), level="system",
    doc="consumer: reserve [base, base + size) of its UB/L1 for a pipe's ring (base -1: placed "
        "by AllocateMemoryAddr at the start of the space)."))


def _infer_import(a, loc):
    for key in ("name", "peer_func"):
        if not isinstance(a[key], str) or not a[key]:
            raise TypeCheckError(f"pl.import_peer_buffer needs {key}=\"...\"", loc)
    return _I32


register(OpDef(
    "system.import_peer_buffer", (kw("name"), kw("peer_func")), _infer_import, pipe="S",
    dsl_names=("import_peer_buffer",), level="system",
    doc="producer: the base of the ring its peer reserved under name."))


def _infer_init(op: str):
    def infer(a, loc):
        if a["dir_mask"] not in (1, 2, 3):
            raise TypeCheckError(f"pl.{op}: dir_mask={a['dir_mask']!r}", loc,
                                 hint="use 1 (cube -> vector), 2 (vector -> cube) or 3 (both)")
        for key in ("slot_size", "slot_num"):
            if not isinstance(a[key], int) or a[key] <= 0:
                raise TypeCheckError(f"pl.{op}: {key}={a[key]!r} must be a positive int", loc)
        gm = a["gm_slot_buffer"]
        if gm is not None and not isinstance(gm.type, TensorType):
            raise TypeCheckError(f"pl.{op}: gm_slot_buffer must be a GM tensor", loc)
        return _NONE
    return infer


for _core in ("aic", "aiv"):
    register(OpDef(
        f"system.{_core}_initialize_pipe",
        (kw("dir_mask"), kw("slot_size"), kw("slot_num"), kw("c2v_consumer_buf", "expr", 0),
         kw("v2c_consumer_buf", "expr", 0), kw("gm_slot_buffer", "expr"), kw("id")),
        _infer_init(f"system.{_core}_initialize_pipe"), pipe="S",
        dsl_names=(f"{_core}_initialize_pipe",), level="system",
        doc="bind a pipe's rings: the consumer buffers (a5) or the GM slot buffer (a2a3)."))


register(OpDef(
    "tile.get_subblock_idx", (), lambda a, loc: ScalarType(DataType.INDEX), pipe="S",
    dsl_names=("get_subblock_idx",),
    doc="the AIV lane (0 or 1) running this instance of a vector kernel."))
