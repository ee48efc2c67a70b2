"""Tile-level ops (``pl.tile.*``): data movement, matmul family, casts and vector compute.

Each ``register`` call below is the single definition of one op.
"""

from __future__ import annotations

from ptoc.dtypes import MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import PtrType, TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.registry import REQUIRED, OpDef, ParamSpec, register

Mem = MemorySpace
CUBE_LHS = (Mem.Left, Mem.Mat)
CUBE_RHS = (Mem.Right, Mem.Mat)
ON_CHIP = (Mem.Vec, Mem.Mat, Mem.Left, Mem.Right, Mem.Acc, Mem.Bias)
CAST_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")


def _kw(name, kind="static", default=None, also_positional=False):
    return ParamSpec(name, kind, positional=False, default=default, also_positional=also_positional)


def _pos(name, kind="expr", default=...):
    return ParamSpec(name, kind, positional=True, default=REQUIRED if default is ... else default)


def _copy_space_pipe(args) -> str:
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


# --- data movement -----------------------------------------------------------------------

def _infer_load(a, loc):
    src = checks.tensor("tile.load", "tensor", a["tensor"], loc)
    checks.rank("tile.load", "offsets", a["offsets"], len(src.shape), loc)
    shape = checks.shape("tile.load", "shapes", a["shapes"], loc)
    if a["valid_shapes"] is not None:
        checks.shape("tile.load", "valid_shapes", a["valid_shapes"], loc)
    target = checks.space_arg("tile.load", "target_memory", a["target_memory"], loc)
    if target is not None and target not in (Mem.Vec, Mem.Mat):
        raise TypeCheckError(
            f"pl.tile.load cannot load from DDR into pl.Mem.{target.value}: a DDR load lands only "
            "in pl.Mem.Vec or pl.Mem.Mat", loc,
            hint="load into pl.Mem.Mat, then pl.move(t, target_memory=pl.Mem.Left/Right)")
    return TileType(shape, src.dtype, target)


def _fill_valid_shapes(a):
    """A load without valid_shapes is valid over its whole tile (printed explicitly, as PyPTO)."""
    if a["valid_shapes"] is None:
        a["valid_shapes"] = a["shapes"]
    return a


register(OpDef(
    "tile.load",
    (_pos("tensor"), _pos("offsets", "list"), _pos("shapes", "list"),
     _pos("valid_shapes", "list", None), _kw("target_memory"), _kw("clamp", default=False)),
    _infer_load, pipe="MTE2", dsl_names=("load",), normalize=_fill_valid_shapes,
    doc="DDR -> Vec/Mat. Offsets first, then the tile shape; valid_shapes narrows the valid region."))


def _infer_store(a, loc):
    src = checks.tile("tile.store", "tile", a["tile"], loc)
    out = checks.tensor("tile.store", "output_tensor", a["output_tensor"], loc)
    checks.rank("tile.store", "offsets", a["offsets"], len(out.shape), loc)
    if src.memory_space in (Mem.Left, Mem.Right, Mem.Bias):
        raise TypeCheckError(
            f"pl.tile.store cannot store a tile in pl.Mem.{src.memory_space.value} to DDR", loc,
            hint="only Vec, Mat and Acc tiles reach DDR; store the matmul result (Acc) instead")
    return TensorType(out.shape, out.dtype)


register(OpDef(
    "tile.store",
    (_pos("tile"), _pos("offsets", "list"), _pos("output_tensor"), _pos("shapes", "list", None),
     _kw("atomic")),
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
    return TileType(src.shape, src.dtype, target)


register(OpDef(
    "tile.move",
    (_pos("tile"), _kw("target_memory", default=None), _kw("blayout"), _kw("slayout")),
    _infer_move, pipe=_copy_space_pipe, dsl_names=("move",),
    doc="On-chip -> on-chip copy; the only user path into Left, Right and Bias."))


def _infer_extract(a, loc):
    src = checks.tile("tile.extract", "src", a["src"], loc)
    checks.scalar_like("tile.extract", "index_row", a["index_row"], loc)
    checks.scalar_like("tile.extract", "index_col", a["index_col"], loc)
    shape = checks.shape("tile.extract", "shape", a["shape"], loc)
    target = checks.space_arg("tile.extract", "target_memory", a["target_memory"], loc)
    return TileType(shape, src.dtype, target)


register(OpDef(
    "tile.extract",
    (_pos("src"), _pos("index_row"), _pos("index_col"), _pos("shape", "list"),
     _kw("target_memory")),
    _infer_extract, pipe=_copy_space_pipe, dsl_names=("extract",),
    doc="TEXTRACT a sub-tile: Mat -> Left/Right, Acc -> Mat."))


def _infer_create(a, loc):
    shape = checks.shape("tile.create", "shape", a["shape"], loc)
    dtype = checks.dtype_arg("tile.create", "dtype", a["dtype"], loc)
    target = checks.space_arg("tile.create", "target_memory", a["target_memory"], loc)
    return TileType(shape, dtype, target)


register(OpDef(
    "tile.create",
    (_pos("shape", "list"), _kw("dtype", default=REQUIRED, also_positional=True),
     _kw("target_memory", also_positional=True)),
    _infer_create, pipe=None, dsl_names=("create_tile",),
    doc="Allocate a scratch or accumulator tile (target_memory=Acc gives an L0C accumulator)."))


def _infer_full(a, loc):
    shape = checks.shape("tile.full", "shape", a["shape"], loc)
    dtype = checks.dtype_arg("tile.full", "dtype", a["dtype"], loc)
    checks.scalar_like("tile.full", "value", a["value"], loc)
    return TileType(shape, dtype, Mem.Vec)


register(OpDef(
    "tile.full",
    (_pos("shape", "list"), _pos("dtype", "static"), _pos("value")),
    _infer_full, pipe="V", dsl_names=("full",), doc="A Vec tile filled with a constant."))


def _infer_assemble(a, loc):
    target = checks.tile("tile.assemble", "target", a["target"], loc)
    source = checks.tile("tile.assemble", "source", a["source"], loc)
    checks.rank("tile.assemble", "offset", a["offset"], len(target.shape), loc)
    if len(source.shape) != len(target.shape):
        raise TypeCheckError("pl.tile.assemble source and target ranks differ", loc)
    return TileType(target.shape, target.dtype, target.memory_space)


register(OpDef(
    "tile.assemble",
    (_pos("target"), _pos("source"), _pos("offset", "list")),
    _infer_assemble,
    pipe=lambda a: "FIX" if a["source"].type.memory_space is Mem.Acc else "V",
    dsl_names=("assemble",), reuses_input=0,
    doc="TINSERT source into target at offset (Acc -> Mat is the FIXPIPE write-back)."))


def _infer_slice(a, loc):
    src = checks.tile("tile.slice", "x", a["x"], loc)
    shape = checks.shape("tile.slice", "shape", a["shape"], loc)
    checks.rank("tile.slice", "offset", a["offset"], len(src.shape), loc)
    if len(shape) != len(src.shape):
        raise TypeCheckError(f"pl.tile.slice shape has rank {len(shape)} but the tile has rank "
                             f"{len(src.shape)}", loc)
    return TileType(shape, src.dtype, src.memory_space)


register(OpDef(
    "tile.slice",
    (_pos("x"), _pos("shape", "list"), _pos("offset", "list"), _pos("valid_shape", "list", None)),
    _infer_slice, pipe=None, dsl_names=("slice",), view=True,
    doc="A zero-copy sub-view. Shape first, then offset (the reverse of load)."))


def _infer_alloc(a, loc):
    if not isinstance(a["space"], MemorySpace) or a["space"] is Mem.DDR:
        raise TypeCheckError("pl.tile.alloc needs an on-chip memory space", loc)
    return PtrType()


register(OpDef(
    "tile.alloc",
    (_pos("space", "static"), _pos("size", "static"), _kw("pinned", default=False)),
    _infer_alloc, pipe=None, level="system",
    doc="One on-chip allocation (made by InitMemRef; printed as mem_x_N: pl.Ptr = ...)."))


# --- matmul family -----------------------------------------------------------------------

def _mm_operands(op, a, loc):
    lhs = checks.tile(op, "lhs", a["lhs"], loc)
    rhs = checks.tile(op, "rhs", a["rhs"], loc)
    checks.space(op, "lhs", lhs, CUBE_LHS, loc)
    checks.space(op, "rhs", rhs, CUBE_RHS, loc)
    if len(lhs.shape) != 2 or len(rhs.shape) != 2:
        raise TypeCheckError(f"pl.{op} operands must be 2-D tiles", loc)
    k1, k2 = lhs.shape[1], rhs.shape[0]
    if isinstance(k1, int) and isinstance(k2, int) and k1 != k2:
        raise TypeCheckError(
            f"pl.{op} inner dimensions differ: lhs is {list(lhs.shape)} and rhs is "
            f"{list(rhs.shape)} (K {k1} != {k2})", loc, hint="lhs must be [M, K] and rhs [K, N]")
    acc = checks.accumulator_dtype(op, lhs.dtype, rhs.dtype, loc)
    return lhs, rhs, acc


def _infer_matmul(a, loc):
    lhs, rhs, acc = _mm_operands("tile.matmul", a, loc)
    return TileType((lhs.shape[0], rhs.shape[1]), acc, Mem.Acc)


register(OpDef(
    "tile.matmul", (_pos("lhs"), _pos("rhs")), _infer_matmul, pipe="M", dsl_names=("matmul",),
    doc="lhs @ rhs into a new Acc tile (FP32 for float operands, INT32 for INT8)."))


def _infer_matmul_acc(a, loc):
    acc_ty = checks.tile("tile.matmul_acc", "acc", a["acc"], loc)
    checks.space("tile.matmul_acc", "acc", acc_ty, (Mem.Acc,), loc)
    lhs, rhs, acc = _mm_operands("tile.matmul_acc", a, loc)
    want = (lhs.shape[0], rhs.shape[1])
    if not checks.shapes_equal(tuple(acc_ty.shape), want) or acc_ty.dtype is not acc:
        raise TypeCheckError(
            f"pl.tile.matmul_acc accumulator is {checks.describe_type(acc_ty)} but lhs @ rhs gives "
            f"[{want[0]}, {want[1]}] {acc.value}", loc,
            hint="create the accumulator with pl.tile.create([M, N], dtype, target_memory=pl.Mem.Acc)")
    return TileType(acc_ty.shape, acc_ty.dtype, Mem.Acc)


register(OpDef(
    "tile.matmul_acc", (_pos("acc"), _pos("lhs"), _pos("rhs"), _kw("init_cond", "any")),
    _infer_matmul_acc, pipe="M", dsl_names=("matmul_acc",), reuses_input=0,
    doc="acc += lhs @ rhs; when init_cond holds the step overwrites instead."))


def _infer_matmul_bias(a, loc):
    lhs, rhs, acc = _mm_operands("tile.matmul_bias", a, loc)
    bias = checks.tile("tile.matmul_bias", "bias", a["bias"], loc)
    checks.space("tile.matmul_bias", "bias", bias, (Mem.Bias, Mem.Mat), loc)
    n = rhs.shape[1]
    if len(bias.shape) != 2 or bias.shape[0] != 1 or (isinstance(n, int) and bias.shape[1] != n):
        raise TypeCheckError(f"pl.tile.matmul_bias bias must be [1, {n}], got "
                             f"{list(bias.shape)}", loc)
    if bias.dtype is not acc:
        raise TypeCheckError(f"pl.tile.matmul_bias bias must be in the accumulator dtype "
                             f"{acc.value}, got {bias.dtype.value}", loc,
                             hint=f"cast the bias to {acc.value}")
    return TileType((lhs.shape[0], n), acc, Mem.Acc)


register(OpDef(
    "tile.matmul_bias", (_pos("lhs"), _pos("rhs"), _pos("bias")), _infer_matmul_bias, pipe="M",
    dsl_names=("matmul_bias",), doc="lhs @ rhs + bias[1, N], applied once per output tile."))


# --- cast and vector compute -------------------------------------------------------------

def _infer_cast(a, loc):
    src = checks.tile("tile.cast", "x", a["x"], loc)
    dtype = checks.dtype_arg("tile.cast", "target_type", a["target_type"], loc)
    mode = a["mode"]
    if isinstance(mode, int) and 0 <= mode < len(CAST_MODES):
        mode = CAST_MODES[mode]
    if mode not in CAST_MODES:
        raise TypeCheckError(f"pl.tile.cast mode {mode!r} is not one of {', '.join(CAST_MODES)}",
                             loc)
    # A cast of an accumulator is placed by the compiler: folded into the FIXPIPE write to
    # Mat when a matmul consumes it (AutoTileMatmulL0), otherwise a Vector tcvt.
    space = None if src.memory_space is Mem.Acc else src.memory_space
    return TileType(src.shape, dtype, space)


register(OpDef(
    "tile.cast", (_pos("x"), _pos("target_type", "static"), _kw("mode", default="round")),
    _infer_cast, pipe="V", dsl_names=("cast",),
    doc="Convert dtype; 'round' (default) rounds ties away from zero, 'rint' ties to even."))


def _binary(name):
    def infer(a, loc):
        lhs = checks.tile(f"tile.{name}", "lhs", a["lhs"], loc)
        rhs = checks.tile(f"tile.{name}", "rhs", a["rhs"], loc)
        checks.space(f"tile.{name}", "lhs", lhs, (Mem.Vec,), loc)
        checks.space(f"tile.{name}", "rhs", rhs, (Mem.Vec,), loc)
        checks.same_shape(f"tile.{name}", lhs, rhs, loc)
        checks.same_dtype(f"tile.{name}", lhs, rhs, loc)
        return TileType(lhs.shape, lhs.dtype, lhs.memory_space or rhs.memory_space)
    return infer


def _scalar_form(name):
    def infer(a, loc):
        lhs = checks.tile(f"tile.{name}", "lhs", a["lhs"], loc)
        checks.space(f"tile.{name}", "lhs", lhs, (Mem.Vec,), loc)
        checks.scalar_like(f"tile.{name}", "rhs", a["rhs"], loc)
        return TileType(lhs.shape, lhs.dtype, lhs.memory_space)
    return infer


def _unary(name):
    def infer(a, loc):
        x = checks.tile(f"tile.{name}", "x", a["x"], loc)
        checks.space(f"tile.{name}", "x", x, (Mem.Vec,), loc)
        return TileType(x.shape, x.dtype, x.memory_space)
    return infer


for _name in ("add", "sub", "mul", "div", "maximum", "minimum"):
    register(OpDef(f"tile.{_name}", (_pos("lhs"), _pos("rhs")), _binary(_name), pipe="V",
                   dsl_names=(_name,), doc=f"Elementwise {_name} of two Vec tiles."))

for _name in ("adds", "muls"):
    register(OpDef(f"tile.{_name}", (_pos("lhs"), _pos("rhs")), _scalar_form(_name), pipe="V",
                   dsl_names=(_name,), doc=f"Elementwise {_name[:-1]} of a Vec tile and a scalar."))

for _name in ("exp", "neg", "relu"):
    register(OpDef(f"tile.{_name}", (_pos("x"),), _unary(_name), pipe="V", dsl_names=(_name,),
                   doc=f"Elementwise {_name} of a Vec tile."))


def _row_reduce(name):
    def infer(a, loc):
        x = checks.tile(f"tile.{name}", "x", a["x"], loc)
        tmp = checks.tile(f"tile.{name}", "tmp", a["tmp"], loc)
        checks.space(f"tile.{name}", "x", x, (Mem.Vec,), loc)
        checks.space(f"tile.{name}", "tmp", tmp, (Mem.Vec,), loc)
        checks.same_dtype(f"tile.{name}", x, tmp, loc)
        if len(x.shape) != 2:
            raise TypeCheckError(f"pl.tile.{name} expects a 2-D tile", loc)
        if len(tmp.shape) != 2 or any(isinstance(t, int) and isinstance(s, int) and t < s
                                      for t, s in zip(tmp.shape, x.shape)):
            raise TypeCheckError(
                f"pl.tile.{name} scratch tile {list(tmp.shape)} is smaller than the input "
                f"{list(x.shape)}", loc, hint="pass a full-width scratch from pl.create_tile")
        return TileType((x.shape[0], 1), x.dtype, x.memory_space)
    return infer


for _name in ("row_max", "row_sum"):
    register(OpDef(f"tile.{_name}", (_pos("x"), _pos("tmp")), _row_reduce(_name), pipe="V",
                   dsl_names=(_name,), forbid_output_alias=(0, 1),
                   doc=f"Reduce each row ({_name[4:]}) to [R, 1]; needs a full-size scratch tile."))


def _row_expand(name):
    def infer(a, loc):
        x = checks.tile(f"tile.{name}", "x", a["x"], loc)
        row = checks.tile(f"tile.{name}", "row_vec", a["row_vec"], loc)
        checks.space(f"tile.{name}", "x", x, (Mem.Vec,), loc)
        checks.same_dtype(f"tile.{name}", x, row, loc)
        if len(row.shape) != 2 or row.shape[1] != 1 or (
                isinstance(row.shape[0], int) and isinstance(x.shape[0], int)
                and row.shape[0] != x.shape[0]):
            raise TypeCheckError(
                f"pl.tile.{name} row vector must be [{x.shape[0]}, 1], got {list(row.shape)}", loc,
                hint="pass the [R, 1] result of a row reduction of the same tile")
        return TileType(x.shape, x.dtype, x.memory_space)
    return infer


for _name in ("row_expand_sub", "row_expand_div", "row_expand_expdif"):
    register(OpDef(f"tile.{_name}", (_pos("x"), _pos("row_vec")), _row_expand(_name), pipe="V",
                   dsl_names=(_name,), forbid_output_alias=(1,),
                   doc="Broadcast an [R, 1] vector across each row (expdif computes exp(x - v))."))

del _name
