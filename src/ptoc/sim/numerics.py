"""Bit-level numerics of the simulated AI Core: cube MAD, FIXPIPE narrowing, ``tcvt``.

Why a module of its own: every number a simulated kernel produces goes through one of
these functions, so their rounding behaviour is the simulator's contract with users
(hw-model.md §4.3).

* ``mad`` in ``reference`` mode follows the pto-isa CPU reference order: for every output
  element a fresh fp32 partial starts at zero and takes the products in increasing k,
  rounding to fp32 after every step; ``tmatmul.acc`` then adds the old accumulator once.
  bf16/fp16 products are exact in fp32, so a rank-1 update per k reproduces fused
  multiply-add exactly; fp32 inputs take the product in float64 (exact) and round the sum
  once per step (a fused multiply-add up to rare double rounding).
* ``mad`` in ``fast`` mode uses one float64 BLAS matmul and rounds once to fp32 — not the
  reference order, but within an ulp or so and much faster for large sweeps.
* int8 x int8 accumulates in int32 exactly (two's-complement wrap, as the hardware register).
* FIXPIPE narrowing fp32 -> bf16/fp16 rounds half to even.
* ``convert`` honours the PyPTO cast modes ``none rint round floor ceil trunc odd``.
"""

from __future__ import annotations

import numpy as np

from ptoc.dtypes import DataType
from ptoc.errors import PtocError

MAD_MODES = ("reference", "fast")
ROUND_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")


class NumericsError(PtocError, RuntimeError):
    """An unsupported dtype combination or rounding mode reached the simulated datapath."""


# ----------------------------------------------------------------------------------------
# cube MAD
# ----------------------------------------------------------------------------------------
def mad(a: np.ndarray, b: np.ndarray, *, acc: np.ndarray | None = None,
        bias: np.ndarray | None = None, mode: str = "reference") -> np.ndarray:
    """Return ``acc + a @ b (+ bias)`` as the cube computes it.

    ``a`` is [m, k], ``b`` is [k, n] (bf16, fp16, fp32 or int8). ``acc`` is the old
    accumulator for ``tmatmul.acc`` (added once, after the product sum); ``bias`` is a
    [1, n] row added after the sum for ``tmatmul.bias``. The result is fp32, or int32 for
    int8 inputs.
    """
    if a.dtype == np.int8 or b.dtype == np.int8:
        return _mad_int8(a, b, acc, bias)
    if mode == "fast":
        prod = a.astype(np.float64) @ b.astype(np.float64)
        if acc is not None:
            prod += acc.astype(np.float64)
        if bias is not None:
            prod += bias.astype(np.float64).reshape(1, -1)
        return prod.astype(np.float32)
    if mode != "reference":
        raise NumericsError(f"unknown MAD mode {mode!r}", hint=f"use one of {MAD_MODES}")
    partial = _partial_reference(a, b)
    if bias is not None:
        partial = partial + bias.astype(np.float32).reshape(1, -1)
    if acc is not None:
        partial = acc.astype(np.float32) + partial
    return partial


def _partial_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """fp32 partial sums in increasing k, one fp32 rounding per product (see module doc)."""
    m, k = a.shape
    n = b.shape[1]
    exact_in_f32 = a.dtype.itemsize <= 2 and b.dtype.itemsize <= 2
    if exact_in_f32:
        a32 = a.astype(np.float32)
        b32 = b.astype(np.float32)
        out = np.zeros((m, n), dtype=np.float32)
        tmp = np.empty((m, n), dtype=np.float32)
        for kk in range(k):
            np.multiply(a32[:, kk:kk + 1], b32[kk:kk + 1, :], out=tmp)
            out += tmp
        return out
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    out = np.zeros((m, n), dtype=np.float32)
    for kk in range(k):
        out = (out.astype(np.float64) + a64[:, kk:kk + 1] * b64[kk:kk + 1, :]).astype(np.float32)
    return out


def _mad_int8(a, b, acc, bias) -> np.ndarray:
    if a.dtype != np.int8 or b.dtype != np.int8:
        raise NumericsError(f"cube MAD of {a.dtype} x {b.dtype} is not supported",
                            hint="both operands must be int8 for an int32 accumulation")
    prod = a.astype(np.int64) @ b.astype(np.int64)
    if bias is not None:
        prod += bias.astype(np.int64).reshape(1, -1)
    if acc is not None:
        prod += acc.astype(np.int64)
    return _wrap_int32(prod)


def _wrap_int32(x: np.ndarray) -> np.ndarray:
    return ((x + 2**31) % 2**32 - 2**31).astype(np.int32)


# ----------------------------------------------------------------------------------------
# FIXPIPE and tcvt
# ----------------------------------------------------------------------------------------
def fixpipe_convert(values: np.ndarray, dst: DataType) -> np.ndarray:
    """Narrow an accumulator on its way out of L0C (TSTORE / TINSERT / TMOV from Acc).

    Floats round half to even (the only mode of that path); int32 passes through.
    """
    return convert(values, dst, "rint")


def convert(values: np.ndarray, dst: DataType, mode: str = "rint") -> np.ndarray:
    """Convert ``values`` to ``dst`` with a PyPTO rounding mode.

    ``none`` and ``rint`` round half to even; ``round`` rounds half away from zero;
    ``floor``/``ceil``/``trunc`` round toward -inf/+inf/zero; ``odd`` rounds to the
    neighbour whose last mantissa bit is 1 (von Neumann rounding). Float -> int applies the
    mode and saturates to the integer range; int -> int wraps like a register move.
    """
    if mode not in ROUND_MODES:
        raise NumericsError(f"unknown rounding mode {mode!r} for tcvt",
                            hint=f"use one of {', '.join(ROUND_MODES)}")
    target = dst.numpy
    src = np.asarray(values)
    if src.dtype == target:
        return src.copy()
    src_is_float = src.dtype.kind == "f" or src.dtype.name in ("bfloat16",)
    if dst.is_float:
        x = src.astype(np.float64)
        return _round_to_float(x, target, mode)
    if src_is_float:
        x = src.astype(np.float64)
        r = _round_to_integer(x, mode)
        info = np.iinfo(target)
        r = np.nan_to_num(r, nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(r, info.min, info.max).astype(target)
    return src.astype(target)


def _round_to_integer(x: np.ndarray, mode: str) -> np.ndarray:
    if mode in ("none", "rint"):
        return np.rint(x)
    if mode == "round":
        return np.sign(x) * np.floor(np.abs(x) + 0.5)
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    if mode == "trunc":
        return np.trunc(x)
    # odd: an inexact value goes to whichever neighbour integer is odd
    lo = np.floor(x)
    return np.where(lo == x, x, np.where(np.mod(lo, 2) == 1, lo, lo + 1))


_UINT_OF_WIDTH = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _round_to_float(x: np.ndarray, target: np.dtype, mode: str) -> np.ndarray:
    """Round float64 ``x`` to ``target`` (which must hold a subset of float64's values)."""
    with np.errstate(over="ignore"):               # overflow to inf is the IEEE result
        nearest = x.astype(target)                 # numpy/ml_dtypes casts round half to even
    if mode in ("none", "rint"):
        return nearest
    back = nearest.astype(np.float64)
    inexact = (back != x) & np.isfinite(x)
    if not inexact.any():
        return nearest
    lo = np.where(back > x, _step(nearest, target, down=True), nearest)
    hi = np.where(back < x, _step(nearest, target, down=False), nearest)
    lo64, hi64 = lo.astype(np.float64), hi.astype(np.float64)
    if mode == "floor":
        pick_hi = np.zeros_like(inexact)
    elif mode == "ceil":
        pick_hi = np.ones_like(inexact)
    elif mode == "trunc":
        pick_hi = x < 0
    elif mode == "round":
        # past the largest finite value the upper neighbour is inf; IEEE rounds to it from
        # halfway to the next power of two on, so measure the distance to that value
        beyond = _overflow_threshold(target)
        d_lo = x - np.where(np.isinf(lo64), -beyond, lo64)
        d_hi = np.where(np.isinf(hi64), beyond, hi64) - x
        pick_hi = np.where(d_lo == d_hi, x > 0, d_hi < d_lo)
    else:  # odd
        bits_lo = lo.view(_UINT_OF_WIDTH[target.itemsize])
        pick_hi = (bits_lo & 1) == 0
    out = np.where(inexact, np.where(pick_hi, hi, lo), nearest)
    return out.astype(target)


def _overflow_threshold(target: np.dtype) -> float:
    """The value one ulp above ``target``'s largest finite value (65536 for fp16): a
    round-to-nearest conversion overflows to inf from halfway between the two on."""
    top = _step(np.array([np.inf], np.float64).astype(target), target, down=True)
    below = _step(top, target, down=True)
    return float(2 * top.astype(np.float64)[0] - below.astype(np.float64)[0])


def _step(values: np.ndarray, target: np.dtype, *, down: bool) -> np.ndarray:
    """The adjacent representable value of ``target`` below (``down``) or above."""
    utype = _UINT_OF_WIDTH[target.itemsize]
    v = np.ascontiguousarray(values.astype(target))
    bits = v.view(utype).astype(np.int64)
    sign = (bits >> (8 * target.itemsize - 1)) & 1
    magnitude_bits = bits & ((1 << (8 * target.itemsize - 1)) - 1)
    is_zero = magnitude_bits == 0
    # moving away from zero adds one ulp to the magnitude, toward zero subtracts one
    away = np.where(sign == 1, down, not down)
    new_bits = np.where(away, bits + 1, bits - 1)
    # crossing zero: +0 stepping down -> smallest negative subnormal, -0 up -> smallest positive
    sign_bit = 1 << (8 * target.itemsize - 1)
    new_bits = np.where(is_zero, np.where(down, sign_bit | 1, 1), new_bits)
    return new_bits.astype(utype).view(target)


# ----------------------------------------------------------------------------------------
# atomic-add store
# ----------------------------------------------------------------------------------------
def atomic_add(old: np.ndarray, added: np.ndarray) -> np.ndarray:
    """What an atomic-add store leaves in GM: ``old + added`` in the GM element type.

    Floats add in fp32 and round once to the element type [A] (the store pipe's adder width
    is not documented); integers wrap.
    """
    if old.dtype.kind == "f" or old.dtype == np.dtype(DataType.BF16.numpy):
        total = old.astype(np.float32) + added.astype(np.float32)
        return total.astype(old.dtype)
    return (old + added.astype(old.dtype)).astype(old.dtype)
