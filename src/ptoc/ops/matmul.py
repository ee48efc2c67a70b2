"""The matmul family at tile level (result in Acc) and at tensor level (the compiler places
and tiles). Each ``register`` call is one op's single entry.

As in PyPTO, a tile-level operand may be in any on-chip space when the call is written:
InferTileMemorySpace moves Mat operands into Left/Right/Bias, AutoTileMatmulL0 stages a Vec
lhs through Mat, and whatever is still not in L0 is rejected there (no data path) or by
codegen, with the space named."""

from __future__ import annotations

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import OpDef, PtoForm, register

Mem = MemorySpace


def _mm_operands(op, a, loc):
    lhs = checks.tile(op, "lhs", a["lhs"], loc)
    rhs = checks.tile(op, "rhs", a["rhs"], loc)
    if len(lhs.shape) != 2 or len(rhs.shape) != 2:
        raise TypeCheckError(f"pl.{op} operands must be 2-D tiles", loc)
    k1, k2 = lhs.shape[1], rhs.shape[0]
    if isinstance(k1, int) and isinstance(k2, int) and k1 != k2:
        raise TypeCheckError(
            f"pl.{op} inner dimensions differ: lhs is {list(lhs.shape)} and rhs is "
            f"{list(rhs.shape)} (K {k1} != {k2})", loc, hint="lhs must be [M, K] and rhs [K, N]")
    acc = checks.accumulator_dtype(op, lhs.dtype, rhs.dtype, loc)
    return lhs, rhs, acc


def _product_view(lhs, rhs, shape):
    """The product's valid region, as PyPTO: lhs's valid rows by rhs's valid columns (a tail
    block of rows or columns stays a tail; the store then writes only those)."""
    lv, rv = checks.valid_of(lhs), checks.valid_of(rhs)
    if lv is None and rv is None:
        return None
    return checks.with_valid((lv[0] if lv else lhs.shape[0], rv[1] if rv else rhs.shape[1]),
                             shape)


def _infer_tile_matmul(a, loc):
    lhs, rhs, acc = _mm_operands("tile.matmul", a, loc)
    shape = (lhs.shape[0], rhs.shape[1])
    return TileType(shape, acc, Mem.Acc, view=_product_view(lhs, rhs, shape))


register(OpDef(
    "tile.matmul", (pos("lhs"), pos("rhs")), _infer_tile_matmul, pipe="M", dsl_names=("matmul",),
    doc="lhs @ rhs into a new Acc tile (FP32 for float operands, INT32 for INT8)."))


def _infer_tile_matmul_acc(a, loc):
    acc_ty = checks.tile("tile.matmul_acc", "acc", a["acc"], loc)
    checks.space("tile.matmul_acc", "acc", acc_ty, (Mem.Acc,), loc)
    lhs, rhs, acc = _mm_operands("tile.matmul_acc", a, loc)
    want = (lhs.shape[0], rhs.shape[1])
    if not checks.shapes_equal(tuple(acc_ty.shape), want) or acc_ty.dtype is not acc:
        raise TypeCheckError(
            f"pl.tile.matmul_acc accumulator is {checks.describe_type(acc_ty)} but lhs @ rhs gives "
            f"[{want[0]}, {want[1]}] {acc.value}", loc,
            hint="create the accumulator with pl.tile.create([M, N], dtype, target_memory=pl.Mem.Acc)")
    return TileType(acc_ty.shape, acc_ty.dtype, Mem.Acc,
                    view=checks.with_valid(checks.valid_of(acc_ty), acc_ty.shape))


register(OpDef(
    "tile.matmul_acc", (pos("acc"), pos("lhs"), pos("rhs"), pos("init_cond", "expr", None)),
    _infer_tile_matmul_acc, pipe="M", dsl_names=("matmul_acc",), reuses_input=0,
    doc="acc += lhs @ rhs; when init_cond holds the step overwrites instead."))


def _infer_tile_matmul_bias(a, loc):
    lhs, rhs, acc = _mm_operands("tile.matmul_bias", a, loc)
    bias = checks.tile("tile.matmul_bias", "bias", a["bias"], loc)
    n = rhs.shape[1]
    if len(bias.shape) != 2 or bias.shape[0] != 1 or (isinstance(n, int) and bias.shape[1] != n):
        raise TypeCheckError(f"pl.tile.matmul_bias bias must be [1, {n}], got "
                             f"{list(bias.shape)}", loc)
    if bias.dtype is not acc:
        raise TypeCheckError(f"pl.tile.matmul_bias bias must be in the accumulator dtype "
                             f"{acc.value}, got {bias.dtype.value}", loc,
                             hint=f"cast the bias to {acc.value}")
    return TileType((lhs.shape[0], n), acc, Mem.Acc,
                    view=_product_view(lhs, rhs, (lhs.shape[0], n)))


register(OpDef(
    "tile.matmul_bias", (pos("lhs"), pos("rhs"), pos("bias")), _infer_tile_matmul_bias, pipe="M",
    dsl_names=("matmul_bias",), doc="lhs @ rhs + bias[1, N], applied once per output tile."))


# ---- matrix-vector forms: lhs is one row [1, K] -------------------------------------------------

ACC_PHASES = ("unspecified", "partial", "final")
GEMV = "bit-exact vs the cube reference: fp32 sum in increasing k (int8: exact int32)"


def _gemv_operands(op, a, loc):
    lhs, rhs, acc = _mm_operands(op, a, loc)
    if lhs.shape[0] != 1:
        raise TypeCheckError(f"pl.{op} lhs must be one row [1, K], got {list(lhs.shape)}", loc,
                             hint="use pl.matmul for more rows")
    if a["acc_phase"] not in ACC_PHASES:
        raise TypeCheckError(f"pl.{op} acc_phase {a['acc_phase']!r} is not one of "
                             f"{', '.join(ACC_PHASES)}", loc)
    return lhs, rhs, acc


def _infer_gemv(a, loc):
    lhs, rhs, acc = _gemv_operands("tile.gemv", a, loc)
    return TileType((1, rhs.shape[1]), acc, Mem.Acc)


def _infer_gemv_acc(a, loc):
    acc_ty = checks.tile("tile.gemv_acc", "acc", a["acc"], loc)
    checks.space("tile.gemv_acc", "acc", acc_ty, (Mem.Acc,), loc)
    lhs, rhs, acc = _gemv_operands("tile.gemv_acc", a, loc)
    if not checks.shapes_equal(tuple(acc_ty.shape), (1, rhs.shape[1])) or acc_ty.dtype is not acc:
        raise TypeCheckError(f"pl.tile.gemv_acc accumulator is {checks.describe_type(acc_ty)} "
                             f"but lhs @ rhs gives [1, {rhs.shape[1]}] {acc.value}", loc)
    return TileType(acc_ty.shape, acc_ty.dtype, Mem.Acc,
                    view=checks.with_valid(checks.valid_of(acc_ty), acc_ty.shape))


def _infer_gemv_bias(a, loc):
    lhs, rhs, acc = _gemv_operands("tile.gemv_bias", a, loc)
    bias = checks.tile("tile.gemv_bias", "bias", a["bias"], loc)
    checks.space("tile.gemv_bias", "bias", bias, (Mem.Bias, Mem.Mat), loc)
    if bias.dtype is not acc or not checks.shapes_equal(tuple(bias.shape), (1, rhs.shape[1])):
        raise TypeCheckError(f"pl.tile.gemv_bias bias must be [1, {rhs.shape[1]}] {acc.value}, "
                             f"got {checks.describe_type(bias)}", loc)
    return TileType((1, rhs.shape[1]), acc, Mem.Acc)


def _phase(a) -> tuple:
    phase = a["acc_phase"]
    return () if phase == "unspecified" else (("accPhase", "pto.acc_phase", phase),)


_PHASE = kw("acc_phase", default="unspecified", also_positional=True)
register(OpDef(
    "tile.gemv", (pos("lhs"), pos("rhs"), _PHASE), _infer_gemv, pipe="M", dsl_names=("gemv",),
    numerics=GEMV, doc="[1, K] @ [K, N] into a new [1, N] Acc tile",
    pto=PtoForm("pto.tgemv", ("lhs", "rhs"), attrs=_phase)))
register(OpDef(
    "tile.gemv_acc", (pos("acc"), pos("lhs"), pos("rhs"), _PHASE), _infer_gemv_acc, pipe="M",
    dsl_names=("gemv_acc",), reuses_input=0, numerics=GEMV,
    doc="acc[1, N] += [1, K] @ [K, N], in place"))
register(OpDef(
    "tile.gemv_bias", (pos("lhs"), pos("rhs"), pos("bias"), _PHASE), _infer_gemv_bias,
    pipe="M", dsl_names=("gemv_bias",), numerics=GEMV,
    doc="[1, K] @ [K, N] + bias[1, N]",
    pto=PtoForm("pto.tgemv.bias", ("lhs", "rhs", "bias"), attrs=_phase)))


def _matmul_shape(op, a_ty, b_ty, a_trans, b_trans, loc):
    if len(a_ty.shape) != 2 or len(b_ty.shape) != 2:
        raise TypeCheckError(f"pl.{op} operands must be 2-D tensors", loc)
    m, k1 = (a_ty.shape[1], a_ty.shape[0]) if a_trans else a_ty.shape
    k2, n = (b_ty.shape[1], b_ty.shape[0]) if b_trans else b_ty.shape
    if isinstance(k1, int) and isinstance(k2, int) and k1 != k2:
        raise TypeCheckError(
            f"pl.{op} inner dimensions differ: a is {list(a_ty.shape)} and b is "
            f"{list(b_ty.shape)} (K {k1} != {k2})", loc,
            hint="a must be [M, K] and b [K, N] (or pass a_trans=/b_trans=)")
    return m, n


def _infer_tensor_matmul(a, loc):
    lhs = checks.tensor("tensor.matmul", "a", a["a"], loc)
    rhs = checks.tensor("tensor.matmul", "b", a["b"], loc)
    acc = checks.accumulator_dtype("tensor.matmul", lhs.dtype, rhs.dtype, loc)
    m, n = _matmul_shape("tensor.matmul", lhs, rhs, a["a_trans"], a["b_trans"], loc)
    out = a["out_dtype"]
    if out is not None and not isinstance(out, DataType):
        raise TypeCheckError(f"pl.tensor.matmul out_dtype must be a dtype, got {out!r}", loc)
    return TensorType((m, n), out or acc)


register(OpDef(
    "tensor.matmul",
    (pos("a"), pos("b"), kw("out_dtype", also_positional=True),
     kw("a_trans", default=False, also_positional=True),
     kw("b_trans", default=False, also_positional=True),
     kw("c_matrix_nz", default=False, also_positional=True)),
    _infer_tensor_matmul, level="tensor", dsl_names=("matmul",),
    doc="a @ b on whole tensors; the compiler picks the data path and the L0 tiling."))


def _infer_tensor_matmul_acc(a, loc):
    acc = checks.tensor("tensor.matmul_acc", "acc", a["acc"], loc)
    lhs = checks.tensor("tensor.matmul_acc", "a", a["a"], loc)
    rhs = checks.tensor("tensor.matmul_acc", "b", a["b"], loc)
    checks.accumulator_dtype("tensor.matmul_acc", lhs.dtype, rhs.dtype, loc)
    m, n = _matmul_shape("tensor.matmul_acc", lhs, rhs, a["a_trans"], a["b_trans"], loc)
    if not checks.shapes_equal(tuple(acc.shape), (m, n)):
        raise TypeCheckError(f"pl.tensor.matmul_acc accumulator is {list(acc.shape)} but a @ b "
                             f"gives [{m}, {n}]", loc)
    return TensorType(acc.shape, acc.dtype)


register(OpDef(
    "tensor.matmul_acc",
    (pos("acc"), pos("a"), pos("b"), kw("a_trans", default=False),
     kw("b_trans", default=False), kw("init_cond", "any")),
    _infer_tensor_matmul_acc, level="tensor", dsl_names=("matmul_acc",), reuses_input=0,
    doc="acc += a @ b on whole tensors."))
