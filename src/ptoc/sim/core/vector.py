"""What every vector (UB -> UB) PTO instruction computes, bit for bit.

The definitions follow pto-isa's CPU reference of the instructions (``include/pto/cpu``):

* arithmetic happens in the element type: a float op is correctly rounded to the destination
  dtype (computed in float64 for fp32 and in float32 for fp16/bf16, which is exact for
  + - * / sqrt: the wide format has at least 2p + 2 bits, so the one rounding to the narrow
  dtype is the IEEE result); a scalar operand is first converted to the tile's dtype;
* integer ops wrap (two's complement) in the element type; integer division truncates toward
  zero; an integer divide by zero or an out-of-range shift is undefined on the hardware and
  raises ``NumericsError`` instead of inventing a value;
* ``max``/``min`` are the comparisons ``a < b ? b : a`` / ``b < a ? b : a`` (a NaN in the
  first operand wins, in the second it loses), ``relu`` is ``max(x, 0)`` the same way;
* transcendental ops (exp, log, sqrt-based rsqrt, expdif) evaluate in float64 and round once
  to fp32 (twice, through fp32, for fp16/bf16): within one ulp of the float64 value, the
  tolerance the docs state for them;
* row sums accumulate left to right in fp32 for fp16/bf16 sources (else in the source dtype),
  column sums top to bottom in the destination dtype, products in the destination dtype;
  max/min reductions keep the first value and replace it only when a later one compares
  greater (smaller);
* comparisons write a packed predicate mask: bit ``c % 8`` of byte ``c // 8`` of the row,
  1 where the comparison holds; ``tsel`` reads that bit stream row after row.

Each opcode maps to one ``VectorOp``: how many tile and scalar operands it takes, which
region of each tile operand it reads, and a function computing the destination's valid
region from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ptoc.dtypes import DataType
from ptoc.sim import numerics
from ptoc.sim.numerics import NumericsError


@dataclass
class VecCall:
    """One execution of a vector op: operand regions (native dtype), scalars, attributes.

    ``dst`` is the destination dtype, ``shape`` its valid (rows, cols), ``tiles`` the
    simulator's operand descriptors (for valid extents and pad codes), ``attrs`` the
    instruction's attributes by name (enum values as strings).
    """

    args: list[np.ndarray]
    scalars: list
    dst: DataType
    shape: tuple[int, int]
    attrs: dict
    tiles: list
    out: object = None

    @property
    def np_dst(self) -> np.dtype:
        return self.dst.numpy


@dataclass(frozen=True)
class VectorOp:
    """One vector opcode. ``reads`` names, per tile operand in ``ins`` order, the region it
    reads: ``dst`` (the destination's valid region), ``own`` (its own valid region),
    ``rows`` (``[R, 1]`` of the destination's rows), ``cols`` (``[1, C]``), ``none``
    (scratch the op may clobber but whose values it does not use). ``writes_all``: the op
    writes the destination's whole physical tile (fill-pad), not only its valid region."""

    compute: Callable[[VecCall], np.ndarray]
    reads: tuple[str, ...]
    scalars: int = 0
    writes_all: bool = False
    attrs: tuple[str, ...] = field(default_factory=tuple)


# ---- element-type arithmetic ----------------------------------------------------------------

def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def wide(dtype: np.dtype) -> np.dtype:
    """The format an op runs in before its one rounding to ``dtype`` (see module doc)."""
    if is_float(dtype):
        return np.dtype(np.float64) if dtype.itemsize >= 4 else np.dtype(np.float32)
    return np.dtype(np.int64)


def narrow(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round a wide result to ``dtype`` (nearest-even for floats, wrap for integers)."""
    x = np.asarray(x)
    if is_float(dtype):
        if x.dtype == np.float64 and dtype.itemsize < 4:
            x = x.astype(np.float32)   # ml_dtypes rounds float64 -> bf16 twice; go via fp32
        return x.astype(dtype)
    return x.astype(np.int64).astype(dtype)


def scalar_in(value, dtype: np.dtype):
    """A scalar operand converted to the tile's element type, then widened."""
    if is_float(dtype):
        return np.asarray(value, dtype=np.float64).astype(dtype).astype(wide(dtype))
    return np.asarray(int(value), dtype=np.int64).astype(dtype).astype(np.int64)


def elementwise(fn: Callable, scalar: bool = False) -> Callable[[VecCall], np.ndarray]:
    """An op computing ``fn`` on the widened tile operands (and scalar), rounded once."""
    def compute(call: VecCall) -> np.ndarray:
        src = call.args[0].dtype
        xs = [a.astype(wide(a.dtype)) for a in call.args]
        if scalar:
            xs.insert(1, scalar_in(call.scalars[0], src))
        with np.errstate(all="ignore"):
            return narrow(fn(*xs), call.np_dst)
    return compute


def transcendental(fn: Callable) -> Callable[[VecCall], np.ndarray]:
    """A float op evaluated in float64 and rounded to the destination (see module doc)."""
    def compute(call: VecCall) -> np.ndarray:
        with np.errstate(all="ignore"):
            return narrow(fn(*[a.astype(np.float64) for a in call.args]), call.np_dst)
    return compute


def vmax(a, b):
    return np.where(a < b, b, a)


def vmin(a, b):
    return np.where(b < a, b, a)


def _check_int_divisor(b) -> None:
    if np.any(np.asarray(b) == 0):
        raise NumericsError("integer division by zero on the vector unit (the hardware result "
                            "is undefined)", hint="mask or replace zero divisors before dividing")


def vdiv(a, b):
    if a.dtype.kind == "i":
        _check_int_divisor(b)
        q = np.abs(a) // np.abs(b)
        return np.where((a < 0) != (b < 0), -q, q)
    return a / b


def vfmod(a, b):
    """C ``fmod`` / ``%``: the remainder takes the sign of the dividend."""
    if a.dtype.kind == "i":
        return a - vdiv(a, b) * b
    return np.fmod(a, b)


def vrem(a, b):
    """TREM: ``fmod``, then moved into the divisor's sign when the signs differ."""
    r = vfmod(a, b)
    return np.where(((a >= 0) != (b >= 0)) & (r != 0), r + b, r)


def _shift(left: bool):
    def fn(a, b):
        bits = 64 if a.dtype.kind != "i" else 8 * a.dtype.itemsize
        if np.any((np.asarray(b) < 0) | (np.asarray(b) >= bits)):
            raise NumericsError("shift amount outside [0, bits) on the vector unit (undefined)",
                                hint="keep shift amounts within the element width")
        return np.left_shift(a, b) if left else np.right_shift(a, b)
    return fn


def _integer_only(name: str, fn: Callable) -> Callable:
    def checked(*xs):
        if any(x.dtype.kind == "f" for x in xs):
            raise NumericsError(f"{name} is a bitwise op; it needs integer tiles")
        return fn(*xs)
    return checked


# ---- per-op semantics -------------------------------------------------------------------------

def _fill(call: VecCall) -> np.ndarray:
    value = scalar_in(call.scalars[0], call.np_dst)
    return narrow(np.full(call.shape, value, dtype=value.dtype), call.np_dst)


def _row_expand(fn: Callable) -> Callable[[VecCall], np.ndarray]:
    return elementwise(lambda a, v: fn(a, v))   # numpy broadcasts [R, 1] across columns


def _expdif_op(call: VecCall) -> np.ndarray:
    src = call.args[0].dtype
    a, v = (x.astype(np.float64) for x in call.args)
    with np.errstate(all="ignore"):
        d = narrow(a - v, src).astype(np.float64)
        return narrow(np.exp(d), call.np_dst)


def _broadcast(call: VecCall) -> np.ndarray:
    return np.broadcast_to(call.args[0], call.shape).astype(call.np_dst)


def _row_sum(call: VecCall) -> np.ndarray:
    x = call.args[0]
    acc = np.float32 if is_float(x.dtype) and x.dtype.itemsize < 4 else x.dtype
    out = np.zeros((x.shape[0], 1), dtype=acc)
    with np.errstate(all="ignore"):
        for j in range(x.shape[1]):
            out[:, 0] += x[:, j].astype(acc)
    return out.astype(call.np_dst)


def _fold(fn: Callable, start: int, axis: int) -> Callable[[VecCall], np.ndarray]:
    """``fn`` applied in order along a row (axis 1) or down a column (axis 0), rounded to the
    destination dtype at every step (TROWPROD, TCOLSUM, TCOLPROD)."""
    def compute(call: VecCall) -> np.ndarray:
        x = call.args[0] if axis == 1 else call.args[0].T
        dtype = call.np_dst
        out = np.full(x.shape[0], start, dtype=dtype)
        with np.errstate(all="ignore"):
            for j in range(x.shape[1]):
                out = narrow(fn(out.astype(wide(dtype)), x[:, j].astype(wide(dtype))), dtype)
        return out.reshape(-1, 1) if axis == 1 else out.reshape(1, -1)
    return compute


def _select_first(better: Callable, axis: int) -> Callable[[VecCall], np.ndarray]:
    """Keep the first value; replace it when a later one is ``better`` (the reference loop)."""
    def compute(call: VecCall) -> np.ndarray:
        x = call.args[0] if axis == 1 else call.args[0].T
        best = x[:, 0].copy()
        for j in range(1, x.shape[1]):
            best = np.where(better(x[:, j], best), x[:, j], best)
        best = best.astype(call.np_dst)
        return best.reshape(-1, 1) if axis == 1 else best.reshape(1, -1)
    return compute


def _arg_select(better: Callable, axis: int) -> Callable[[VecCall], np.ndarray]:
    """Index of the first extreme value along a row (axis=1) or column (axis=0)."""
    def compute(call: VecCall) -> np.ndarray:
        x = call.args[0] if axis == 1 else call.args[0].T
        best, idx = x[:, 0].copy(), np.zeros(x.shape[0], dtype=np.int64)
        for j in range(1, x.shape[1]):
            take = better(x[:, j], best)
            best = np.where(take, x[:, j], best)
            idx = np.where(take, j, idx)
        idx = idx.astype(call.np_dst)
        return idx.reshape(-1, 1) if axis == 1 else idx.reshape(1, -1)
    return compute


CMP_MODES = ("eq", "ne", "lt", "le", "gt", "ge")
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}


def pack_predicate(pred: np.ndarray, out_cols: int) -> np.ndarray:
    """Pack a boolean [R, C] predicate into bytes: bit ``c % 8`` of byte ``c // 8``."""
    rows, cols = pred.shape
    nbytes = -(-cols // 8)
    padded = np.zeros((rows, nbytes * 8), dtype=np.uint8)
    padded[:, :cols] = pred
    packed = np.packbits(padded.reshape(rows, nbytes, 8), axis=2, bitorder="little")[..., 0]
    out = np.zeros((rows, out_cols), dtype=np.uint8)
    out[:, :min(nbytes, out_cols)] = packed[:, :out_cols]
    return out


def _cmp(scalar: bool) -> Callable[[VecCall], np.ndarray]:
    def compute(call: VecCall) -> np.ndarray:
        mode = str(call.attrs.get("cmpMode", "eq")).lower()
        a = call.args[0].astype(wide(call.args[0].dtype))
        b = scalar_in(call.scalars[0], call.args[0].dtype) if scalar else \
            call.args[1].astype(wide(call.args[1].dtype))
        with np.errstate(all="ignore"):
            pred = _CMP[mode](a, b)
        return pack_predicate(pred, call.shape[1]).astype(call.np_dst)
    return compute


def mask_bits(mask: np.ndarray, mask_cols: int, rows: int, cols: int) -> np.ndarray:
    """TSEL's view of a packed mask: one bit stream over the mask's valid bytes, row by row."""
    stream = np.unpackbits(np.ascontiguousarray(mask[:, :mask_cols]).astype(np.uint8).view(
        np.uint8).reshape(-1), bitorder="little")
    need = rows * cols
    if stream.size < need:
        stream = np.concatenate([stream, np.zeros(need - stream.size, dtype=np.uint8)])
    return stream[:need].reshape(rows, cols).astype(bool)


def _sel(call: VecCall) -> np.ndarray:
    mask_tile = call.tiles[0]
    r, c = call.shape
    bits = mask_bits(call.args[0], mask_tile.valid_cols, r, c)
    return np.where(bits, call.args[1], call.args[2]).astype(call.np_dst)


def _sels(call: VecCall) -> np.ndarray:
    r, c = call.shape
    mask = call.args[0]
    per = 8 * mask.dtype.itemsize
    cols = np.arange(c)
    words = mask[:r, cols // per].astype(np.uint64)
    bits = ((words >> (cols % per).astype(np.uint64)) & 1).astype(bool)
    scalar = scalar_in(call.scalars[0], call.args[1].dtype)
    return np.where(bits, call.args[1], narrow(scalar, call.args[1].dtype)).astype(call.np_dst)


def _part(fn: Callable) -> Callable[[VecCall], np.ndarray]:
    """TPART*: ``fn`` where both sources are valid, the valid one's value, else 0."""
    def compute(call: VecCall) -> np.ndarray:
        r, c = call.shape
        a_t, b_t = call.tiles[0], call.tiles[1]
        out = np.zeros((r, c), dtype=wide(call.np_dst))
        a = np.zeros((r, c), dtype=out.dtype)
        b = np.zeros((r, c), dtype=out.dtype)
        ar, ac = min(r, a_t.valid_rows), min(c, a_t.valid_cols)
        br, bc = min(r, b_t.valid_rows), min(c, b_t.valid_cols)
        a[:ar, :ac] = call.args[0][:ar, :ac]
        b[:br, :bc] = call.args[1][:br, :bc]
        in_a = np.zeros((r, c), dtype=bool)
        in_a[:ar, :ac] = True
        in_b = np.zeros((r, c), dtype=bool)
        in_b[:br, :bc] = True
        with np.errstate(all="ignore"):
            both = fn(a, b)
        out = np.where(in_a & in_b, both, np.where(in_a, a, np.where(in_b, b, 0)))
        return narrow(out, call.np_dst)
    return compute


PAD_CODES = {0: "null", 1: "zero", 2: "max", 3: "min"}


def pad_value(dtype: np.dtype, pad: int):
    """The fill of a pad code: 0 for zero, +-inf (floats) or the integer range ends."""
    name = PAD_CODES.get(pad, "zero")
    if name in ("null", "zero"):
        return 0
    if is_float(dtype):
        return np.inf if name == "max" else -np.inf
    info = np.iinfo(dtype)
    return info.max if name == "max" else info.min


def _fillpad(call: VecCall) -> np.ndarray:
    out_tile = call.out
    src_tile = call.tiles[0]
    rows, cols = out_tile.rows, out_tile.cols
    out = np.full((rows, cols), pad_value(call.np_dst, out_tile.pad), dtype=call.np_dst)
    r, c = min(rows, src_tile.valid_rows), min(cols, src_tile.valid_cols)
    out[:r, :c] = call.args[0][:r, :c]
    return out


def _tri(call: VecCall) -> np.ndarray:
    r, c = call.shape
    diagonal = int(call.scalars[0])
    upper = str(call.attrs.get("upperOrLower", "0")) in ("1", "upper", "True", "true")
    rows = np.arange(r).reshape(-1, 1)
    cols = np.arange(c).reshape(1, -1)
    ones = cols >= rows + diagonal if upper else cols <= rows + diagonal
    return ones.astype(call.np_dst)


def _ci(call: VecCall) -> np.ndarray:
    r, c = call.shape
    start = int(call.scalars[0])
    desc = str(call.attrs.get("descending", "false")).lower() in ("true", "1")
    seq = start - np.arange(c) if desc else start + np.arange(c)
    out = np.zeros((r, c), dtype=np.int64)
    out[0] = seq
    return narrow(out, call.np_dst)


def _concat(call: VecCall) -> np.ndarray:
    a, b = call.args
    return np.concatenate([a, b], axis=1).astype(call.np_dst)


def _trans(call: VecCall) -> np.ndarray:
    return np.ascontiguousarray(call.args[0].T).astype(call.np_dst)


def _two_step(first: Callable, second: Callable, *, scalar: bool) -> Callable:
    """``second(first(a, b), c)`` with a rounding to the element type after each step."""
    def compute(call: VecCall) -> np.ndarray:
        dtype = call.args[0].dtype
        a = call.args[0].astype(wide(dtype))
        b = scalar_in(call.scalars[0], dtype) if scalar else call.args[1].astype(wide(dtype))
        c = call.args[-1].astype(wide(dtype))
        with np.errstate(all="ignore"):
            step = narrow(first(a, b), dtype).astype(wide(dtype))
            return narrow(second(step, c), call.np_dst)
    return compute


def _relu(x):
    return np.where(x < 0, np.zeros_like(x), x)


def _prelu(a, slope):
    return np.where(a > 0, a, a * slope)


def _convert(call: VecCall) -> np.ndarray:
    return numerics.convert(call.args[0], call.dst, call.attrs.get("rmode", "rint"))


_B = ("dst", "dst")
VECTOR_OPS: dict[str, VectorOp] = {
    # elementwise binary
    "pto.tadd": VectorOp(elementwise(np.add), _B),
    "pto.tsub": VectorOp(elementwise(np.subtract), _B),
    "pto.tmul": VectorOp(elementwise(np.multiply), _B),
    "pto.tdiv": VectorOp(elementwise(vdiv), _B),
    "pto.tmax": VectorOp(elementwise(vmax), _B),
    "pto.tmin": VectorOp(elementwise(vmin), _B),
    "pto.trem": VectorOp(elementwise(vrem), ("dst", "dst", "none")),
    "pto.tfmod": VectorOp(elementwise(vfmod), _B),
    "pto.tand": VectorOp(elementwise(_integer_only("tand", np.bitwise_and)), _B),
    "pto.tor": VectorOp(elementwise(_integer_only("tor", np.bitwise_or)), _B),
    "pto.txor": VectorOp(elementwise(_integer_only("txor", np.bitwise_xor)),
                         ("dst", "dst", "none")),
    "pto.tshl": VectorOp(elementwise(_integer_only("tshl", _shift(True))), _B),
    "pto.tshr": VectorOp(elementwise(_integer_only("tshr", _shift(False))), _B),
    "pto.tprelu": VectorOp(elementwise(_prelu), ("dst", "dst", "none")),
    "pto.tpartadd": VectorOp(_part(np.add), ("own", "own")),
    "pto.tpartmul": VectorOp(_part(np.multiply), ("own", "own")),
    "pto.tpartmax": VectorOp(_part(vmax), ("own", "own")),
    "pto.tpartmin": VectorOp(_part(vmin), ("own", "own")),
    # tile (op) scalar
    "pto.tadds": VectorOp(elementwise(np.add, scalar=True), ("dst",), 1),
    "pto.tsubs": VectorOp(elementwise(np.subtract, scalar=True), ("dst",), 1),
    "pto.tmuls": VectorOp(elementwise(np.multiply, scalar=True), ("dst",), 1),
    "pto.tdivs": VectorOp(elementwise(vdiv, scalar=True), ("dst",), 1),
    "pto.tmaxs": VectorOp(elementwise(vmax, scalar=True), ("dst",), 1),
    "pto.tmins": VectorOp(elementwise(vmin, scalar=True), ("dst",), 1),
    "pto.trems": VectorOp(elementwise(vrem, scalar=True), ("dst", "none"), 1),
    "pto.tfmods": VectorOp(elementwise(vfmod, scalar=True), ("dst",), 1),
    "pto.tands": VectorOp(elementwise(_integer_only("tands", np.bitwise_and), scalar=True),
                          ("dst",), 1),
    "pto.tors": VectorOp(elementwise(_integer_only("tors", np.bitwise_or), scalar=True),
                         ("dst",), 1),
    "pto.txors": VectorOp(elementwise(_integer_only("txors", np.bitwise_xor), scalar=True),
                          ("dst", "none"), 1),
    "pto.tshls": VectorOp(elementwise(_integer_only("tshls", _shift(True)), scalar=True),
                          ("dst",), 1),
    "pto.tshrs": VectorOp(elementwise(_integer_only("tshrs", _shift(False)), scalar=True),
                          ("dst",), 1),
    "pto.tlrelu": VectorOp(elementwise(_prelu, scalar=True), ("dst",), 1),
    # three inputs: two roundings, as the instruction does (TADD + TADD)
    "pto.taddc": VectorOp(_two_step(np.add, np.add, scalar=False), ("dst",) * 3),
    "pto.tsubc": VectorOp(_two_step(np.subtract, np.add, scalar=False), ("dst",) * 3),
    "pto.taddsc": VectorOp(_two_step(np.add, np.add, scalar=True), ("dst", "dst"), 1),
    "pto.tsubsc": VectorOp(_two_step(np.subtract, np.add, scalar=True), ("dst", "dst"), 1),
    # unary
    "pto.tneg": VectorOp(elementwise(np.negative), ("dst",)),
    "pto.tabs": VectorOp(elementwise(np.abs), ("dst",)),
    "pto.trelu": VectorOp(elementwise(_relu), ("dst",)),
    "pto.tnot": VectorOp(elementwise(_integer_only("tnot", np.invert)), ("dst",)),
    "pto.tsqrt": VectorOp(elementwise(np.sqrt), ("dst",)),
    "pto.trecip": VectorOp(elementwise(lambda x: vdiv(np.ones_like(x), x)), ("dst",)),
    "pto.texp": VectorOp(transcendental(np.exp), ("dst",)),
    "pto.tlog": VectorOp(transcendental(np.log), ("dst",)),
    "pto.trsqrt": VectorOp(transcendental(lambda x: 1.0 / np.sqrt(x)), ("dst", "none?")),
    "pto.tcvt": VectorOp(_convert, ("dst",), attrs=("rmode",)),
    "pto.texpands": VectorOp(_fill, (), 1),
    # reductions
    "pto.trowsum": VectorOp(_row_sum, ("own", "none")),
    "pto.trowmax": VectorOp(_select_first(np.greater, 1), ("own", "none")),
    "pto.trowmin": VectorOp(_select_first(np.less, 1), ("own", "none")),
    "pto.trowprod": VectorOp(_fold(np.multiply, 1, 1), ("own", "none")),
    "pto.trowargmax": VectorOp(_arg_select(np.greater, 1), ("own", "none")),
    "pto.trowargmin": VectorOp(_arg_select(np.less, 1), ("own", "none")),
    "pto.tcolsum": VectorOp(_fold(np.add, 0, 0), ("own", "none?")),
    "pto.tcolmax": VectorOp(_select_first(np.greater, 0), ("own",)),
    "pto.tcolmin": VectorOp(_select_first(np.less, 0), ("own",)),
    "pto.tcolprod": VectorOp(_fold(np.multiply, 1, 0), ("own",)),
    "pto.tcolargmax": VectorOp(_arg_select(np.greater, 0), ("own", "none")),
    "pto.tcolargmin": VectorOp(_arg_select(np.less, 0), ("own", "none")),
    # broadcasts
    "pto.trowexpand": VectorOp(_broadcast, ("rows",)),
    "pto.tcolexpand": VectorOp(_broadcast, ("cols",)),
    "pto.trowexpandadd": VectorOp(_row_expand(np.add), ("dst", "rows", "none?")),
    "pto.trowexpandsub": VectorOp(_row_expand(np.subtract), ("dst", "rows")),
    "pto.trowexpandmul": VectorOp(_row_expand(np.multiply), ("dst", "rows")),
    "pto.trowexpanddiv": VectorOp(_row_expand(vdiv), ("dst", "rows")),
    "pto.trowexpandmax": VectorOp(_row_expand(vmax), ("dst", "rows")),
    "pto.trowexpandmin": VectorOp(_row_expand(vmin), ("dst", "rows")),
    "pto.trowexpandexpdif": VectorOp(_expdif_op, ("dst", "rows")),
    "pto.tcolexpandadd": VectorOp(_row_expand(np.add), ("dst", "cols")),
    "pto.tcolexpandsub": VectorOp(_row_expand(np.subtract), ("dst", "cols")),
    "pto.tcolexpandmul": VectorOp(_row_expand(np.multiply), ("dst", "cols")),
    "pto.tcolexpanddiv": VectorOp(_row_expand(vdiv), ("dst", "cols")),
    "pto.tcolexpandmax": VectorOp(_row_expand(vmax), ("dst", "cols")),
    "pto.tcolexpandmin": VectorOp(_row_expand(vmin), ("dst", "cols")),
    "pto.tcolexpandexpdif": VectorOp(_expdif_op, ("dst", "cols")),
    # compare and select
    "pto.tcmp": VectorOp(_cmp(False), ("own", "own"), attrs=("cmpMode",)),
    "pto.tcmps": VectorOp(_cmp(True), ("own",), 1, attrs=("cmpMode",)),
    "pto.tsel": VectorOp(_sel, ("own", "dst", "dst", "none")),
    "pto.tsels": VectorOp(_sels, ("own", "dst", "none"), 1),
    # valid region, masks, layout
    "pto.tfillpad": VectorOp(_fillpad, ("own",), writes_all=True),
    "pto.tfillpad_expand": VectorOp(_fillpad, ("own",), writes_all=True),
    "pto.ttri": VectorOp(_tri, (), 1, attrs=("upperOrLower",)),
    "pto.tci": VectorOp(_ci, (), 1, attrs=("descending",)),
    "pto.tconcat": VectorOp(_concat, ("own", "own")),
    "pto.ttrans": VectorOp(_trans, ("own", "none")),
}

ALL_VECTOR_OPS = frozenset(VECTOR_OPS)
