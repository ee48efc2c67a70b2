"""Element semantics of the vector (UB -> UB) tile ops.

Why a table: each op is one numpy function over fp32 (or the integer dtype itself); the
result is rounded once, half to even, to the destination dtype, which is how the vector
unit narrows a correctly-rounded fp32 result for bf16/fp16 tiles.
"""

from __future__ import annotations

import numpy as np

#: binary elementwise ops: ins(a, b) outs(c)
BINARY = {
    "pto.tadd": np.add, "pto.tsub": np.subtract, "pto.tmul": np.multiply,
    "pto.tdiv": np.divide, "pto.tmax": np.maximum, "pto.tmin": np.minimum,
}
#: tile-scalar ops: ins(a, scalar) outs(c)
SCALAR = {
    "pto.tadds": np.add, "pto.tsubs": np.subtract, "pto.tmuls": np.multiply,
    "pto.tdivs": np.divide, "pto.tmaxs": np.maximum, "pto.tmins": np.minimum,
}
#: unary ops: ins(a) outs(c)
UNARY = {
    "pto.texp": np.exp, "pto.tneg": np.negative, "pto.trelu": lambda x: np.maximum(x, 0),
    "pto.tabs": np.abs, "pto.tsqrt": np.sqrt, "pto.trsqrt": lambda x: 1 / np.sqrt(x),
    "pto.trecip": lambda x: 1 / x, "pto.tlog": np.log, "pto.tmov.v": lambda x: x,
}
#: row reductions: ins(a[, tmp]) outs(c[R, 1])
ROW_REDUCE = {
    "pto.trowsum": np.sum, "pto.trowmax": np.max, "pto.trowmin": np.min,
    "pto.trowprod": np.prod,
}
#: row broadcast ops: ins(a, v[R, 1]) outs(c) = f(a, v)
ROW_EXPAND = {
    "pto.trowexpandadd": np.add, "pto.trowexpandsub": np.subtract,
    "pto.trowexpandmul": np.multiply, "pto.trowexpanddiv": np.divide,
    "pto.trowexpandmax": np.maximum, "pto.trowexpandmin": np.minimum,
    "pto.trowexpandexpdif": lambda a, v: np.exp(a - v),
}
#: pure broadcast: ins(v[R, 1]) outs(c)
EXPAND = ("pto.trowexpand",)
#: fill with a scalar: ins(s) outs(c)
FILL = ("pto.texpands",)

ALL_VECTOR_OPS = (set(BINARY) | set(SCALAR) | set(UNARY) | set(ROW_REDUCE) | set(ROW_EXPAND)
                  | set(EXPAND) | set(FILL) | {"pto.tcvt"})


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """fp32 for every float tile (bf16/fp16 are widened), the dtype itself for ints."""
    return np.dtype(np.float32) if dtype.kind == "f" or dtype.name == "bfloat16" else dtype


def widen(x: np.ndarray) -> np.ndarray:
    return x.astype(compute_dtype(x.dtype), copy=False)


def reduce_rows(fn, x: np.ndarray) -> np.ndarray:
    """Row reduction in increasing column order (sequential fp32, like a scalar loop)."""
    if fn is np.sum:
        out = np.zeros((x.shape[0], 1), dtype=x.dtype)
        for j in range(x.shape[1]):
            out[:, 0] += x[:, j]
        return out
    return fn(x, axis=1, keepdims=True)
