"""Run one small kernel on the simulated core and hand back its outputs.

``run_kernel(inputs, out, body)`` writes a one-kernel ``@pl.program`` whose parameters are
the named input arrays and one output tensor, compiles it with the default pipeline and runs
it; a data race fails the test. ``bits_equal`` compares floats bit for bit (NaN matches NaN,
-0 does not match +0), ``ulps`` measures the distance to a float64 reference.
"""

from __future__ import annotations

import tempfile

import ml_dtypes
import numpy as np

import ptoc.language as pl
from ptoc.runtime import compile_program

DTYPES = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16,
          "INT32": np.int32, "INT16": np.int16, "INT8": np.int8, "UINT8": np.uint8}
FLOATS = ("FP32", "FP16", "BF16")


def name_of(dtype) -> str:
    return next(k for k, v in DTYPES.items() if np.dtype(v) == np.dtype(dtype))


def tensor_annotation(shape, dtype, out: bool = False) -> str:
    text = f"pl.Tensor[[{', '.join(map(str, shape))}], pl.{name_of(dtype)}]"
    return f"pl.Out[{text}]" if out else text


def program_text(inputs: dict, out: tuple, body: str) -> str:
    params = [f"{n}: {tensor_annotation(a.shape, a.dtype)}" for n, a in inputs.items()]
    params.append(f"out: {tensor_annotation(out[0], out[1], out=True)}")
    lines = "\n".join("        " + ln for ln in body.strip().splitlines())
    return ("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def kernel(self, {', '.join(params)}) -> {tensor_annotation(*out)}:\n"
            f"{lines}\n        return out\n")


def run_kernel(inputs: dict, out: tuple, body: str, **compile_options) -> np.ndarray:
    """Compile and simulate; returns the output array. ``out`` is (shape, numpy dtype)."""
    program = pl.parse_program(program_text(inputs, out, body), "kernel.py")
    with tempfile.TemporaryDirectory() as work:
        compiled = compile_program(program, work, **compile_options)
        result = compiled.run(*inputs.values())
    assert not result.races, result.races
    return result.outputs["out"]


def load_lines(inputs: dict) -> str:
    """``<name>_t = pl.load(<name>, [0, 0], shape)`` for every input."""
    return "\n".join(f"{n}_t = pl.load({n}, [0, 0], [{a.shape[0]}, {a.shape[1]}])"
                     for n, a in inputs.items())


def bits_equal(got: np.ndarray, want: np.ndarray) -> bool:
    got, want = np.asarray(got), np.asarray(want).astype(got.dtype)
    if got.dtype.kind in "iub":
        return np.array_equal(got, want)
    width = {2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
    both_nan = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
    return bool(np.all(both_nan | (got.view(width) == want.view(width))))


def ulps(got: np.ndarray, exact: np.ndarray) -> float:
    """Largest distance of ``got`` from the float64 value ``exact``, in ulps of got's dtype at
    the exact value; where the exact value overflows the dtype (or is inf/nan) ``got`` must be
    that inf/nan."""
    got64 = got.astype(np.float64)
    rounded = exact.astype(np.float32).astype(got.dtype).astype(np.float64)
    special = ~np.isfinite(rounded)
    assert np.array_equal(np.isnan(got64[special]), np.isnan(rounded[special]))
    inf = special & ~np.isnan(rounded)
    assert np.array_equal(got64[inf], rounded[inf])
    finite = ~special
    if not finite.any():
        return 0.0
    eps, tiny = _EPS_TINY[np.dtype(got.dtype)]
    _, exponent = np.frexp(np.maximum(np.abs(exact[finite]), tiny))
    scale = np.ldexp(eps, exponent - 1)          # one ulp at the exact value's binade
    return float(np.max(np.abs(got64[finite] - exact[finite]) / scale))


_EPS_TINY = {np.dtype(np.float32): (2.0**-23, 2.0**-126), np.dtype(np.float16): (2.0**-10, 2.0**-14),
             np.dtype(ml_dtypes.bfloat16): (2.0**-7, 2.0**-126)}
