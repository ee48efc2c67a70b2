"""The matmul family on the simulated cube: tile-level matmul/matmul_bias/gemv forms are
bit-exact against the cube's reference order (a fresh fp32 partial per element, products
added in increasing k; int8 exact in int32); tensor-level matmul with a_trans/b_trans (read
through a transposed L1 view) matches float64 within fp32 accumulation error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from op_harness import DTYPES, bits_equal, name_of, run_kernel


def cube(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The reference MAD order: fp32 partial sums in increasing k (int8: int32, exact)."""
    if a.dtype == np.int8:
        return (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    out = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(a.shape[1]):
        out = (out.astype(np.float64) + a[:, k:k + 1].astype(np.float64)
               * b[k:k + 1, :].astype(np.float64)).astype(np.float32)
    return out


def _values(shape, dtype, rng):
    if np.dtype(dtype) == np.int8:
        return rng.integers(-8, 8, shape).astype(np.int8)
    return rng.standard_normal(shape).astype(dtype)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.sampled_from((1, 16, 32)), k=st.sampled_from((32, 64)), n=st.sampled_from((16, 32)),
       dt=st.sampled_from(("FP16", "BF16", "FP32", "INT8")), bias=st.booleans(),
       seed=st.integers(0, 999))
def test_tile_matmul_and_gemv_are_bit_exact(m, k, n, dt, bias, seed):
    rng = np.random.default_rng(seed)
    dtype = DTYPES[dt]
    a, b = _values((m, k), dtype, rng), _values((k, n), dtype, rng)
    acc_dtype = np.int32 if dt == "INT8" else np.float32
    arrays = {"a": a, "b": b}
    op = "gemv" if m == 1 else "matmul"
    body = f"""a_m = pl.load(a, [0, 0], [{m}, {k}], target_memory=pl.Mem.Mat)
b_m = pl.load(b, [0, 0], [{k}, {n}], target_memory=pl.Mem.Mat)
a_l = pl.move(a_m, target_memory=pl.Mem.Left)
b_r = pl.move(b_m, target_memory=pl.Mem.Right)
"""
    want = cube(a, b)
    if bias:
        arrays["bias"] = _values((1, n), acc_dtype, rng)
        body += f"""bias_m = pl.load(bias, [0, 0], [1, {n}], target_memory=pl.Mem.Mat)
bias_b = pl.move(bias_m, target_memory=pl.Mem.Bias)
c = pl.{op}_bias(a_l, b_r, bias_b)
"""
        want = (want + arrays["bias"]).astype(acc_dtype) if dt == "INT8" else \
            (want.astype(np.float32) + arrays["bias"]).astype(np.float32)
    else:
        body += f"c = pl.{op}(a_l, b_r)\n"
    got = run_kernel(arrays, ((m, n), acc_dtype), body + "out = pl.store(c, [0, 0], out)")
    assert bits_equal(got, want), f"{op} {name_of(dtype)}"


@pytest.mark.parametrize("a_trans,b_trans", [(False, True), (True, False), (True, True)])
@pytest.mark.parametrize("m,k,n", [(64, 64, 64), (128, 256, 256)])
def test_tensor_matmul_transposed_operands(m, k, n, a_trans, b_trans):
    rng = np.random.default_rng(m + k)
    a = rng.standard_normal((k, m) if a_trans else (m, k)).astype(np.float16)
    b = rng.standard_normal((n, k) if b_trans else (k, n)).astype(np.float16)
    body = (f"c = pl.matmul(a, b, a_trans={a_trans}, b_trans={b_trans}, c_matrix_nz=False)\n"
            "out = pl.assemble(out, c, [0, 0])")
    got = run_kernel({"a": a, "b": b}, ((m, n), np.float32), body)
    want = (a.T if a_trans else a).astype(np.float64) @ (b.T if b_trans else b).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(k))
