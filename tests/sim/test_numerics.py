"""Rounding contract of the simulated datapath (hw-model.md §4.3)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.dtypes import DataType
from ptoc.sim.numerics import NumericsError, convert, fixpipe_convert, mad

BF16 = ml_dtypes.bfloat16


def _scalar_reference(a, b, acc=None):
    """Element-by-element pto-isa order: fresh fp32 partial, increasing k, then + acc once."""
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), np.float32)
    for i in range(m):
        for j in range(n):
            p = np.float32(0)
            for kk in range(k):
                p = np.float32(p + np.float32(a[i, kk]) * np.float32(b[kk, j]))
            out[i, j] = p if acc is None else np.float32(acc[i, j] + p)
    return out


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 5), k=st.integers(1, 9), n=st.integers(1, 5), seed=st.integers(0, 9999),
       with_acc=st.booleans())
def test_reference_mad_is_the_scalar_kloop(m, k, n, seed, with_acc):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((m, k)) * 100).astype(BF16)
    b = (rng.standard_normal((k, n)) * 100).astype(BF16)
    acc = (rng.standard_normal((m, n)) * 1e4).astype(np.float32) if with_acc else None
    np.testing.assert_array_equal(mad(a, b, acc=acc), _scalar_reference(a, b, acc))


def test_reference_order_differs_from_blas_order_but_fast_is_float64_once():
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((32, 256)) * 1e3).astype(BF16)
    b = (rng.standard_normal((256, 32)) * 1e3).astype(BF16)
    ref = mad(a, b)
    fast = mad(a, b, mode="fast")
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(fast, exact)
    assert not np.array_equal(ref, fast)        # sequential fp32 sums round differently
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert np.all(np.abs(ref.astype(np.float64) - fast) <= 256 * 2.0**-24 * scale)


def test_accumulator_is_added_once_after_the_partial():
    a = np.array([[1.0, 1.0]], np.float32).astype(BF16)
    b = np.array([[2.0**-24], [2.0**-24]], np.float32).astype(BF16)
    acc = np.array([[1.0]], np.float32)
    # partial = 2^-23 exactly, then 1 + 2^-23 is representable: one add keeps it
    assert mad(a, b, acc=acc)[0, 0] == np.float32(1 + 2.0**-23)
    # adding the products one by one onto 1.0 would have lost both (ties to even)
    assert np.float32(np.float32(1.0 + 2.0**-24) + 2.0**-24) == np.float32(1.0)


def test_bias_is_added_after_the_sum_broadcast_over_rows():
    a = np.ones((3, 4), np.float32).astype(BF16)
    b = np.ones((4, 2), np.float32).astype(BF16)
    bias = np.array([[10.0, 20.0]], np.float32)
    np.testing.assert_array_equal(mad(a, b, bias=bias), [[14, 24]] * 3)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 9999), k=st.integers(1, 64))
def test_int8_accumulates_exactly_in_int32(seed, k):
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (4, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, 3)).astype(np.int8)
    acc = rng.integers(-2**20, 2**20, (4, 3)).astype(np.int32)
    want = a.astype(np.int64) @ b.astype(np.int64) + acc
    got = mad(a, b, acc=acc)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_int8_with_float_operand_is_rejected():
    with pytest.raises(NumericsError, match="int8"):
        mad(np.zeros((2, 2), np.int8), np.zeros((2, 2), np.float32))


def test_fixpipe_rounds_half_to_even_for_bf16_and_fp16():
    ulp = 2.0**-7                                  # bf16 spacing at 1.0
    x = np.array([1 + ulp / 2, 1 + 3 * ulp / 2, -(1 + ulp / 2), 1 + ulp / 2 + 2.0**-20],
                 np.float32)
    got = fixpipe_convert(x, DataType.BF16).astype(np.float32)
    np.testing.assert_array_equal(got, [1.0, 1 + 2 * ulp, -1.0, 1 + ulp])
    h = np.array([1 + 2.0**-11, 1 + 3 * 2.0**-11], np.float32)
    np.testing.assert_array_equal(fixpipe_convert(h, DataType.FP16).astype(np.float32),
                                  [1.0, 1 + 2.0**-9])


@pytest.mark.parametrize("mode,expected", [
    ("rint", [2.0, 2.0, -2.0, 3.0]),
    ("none", [2.0, 2.0, -2.0, 3.0]),
    ("round", [3.0, 2.0, -3.0, 3.0]),
    ("floor", [2.0, 2.0, -3.0, 2.0]),
    ("ceil", [3.0, 3.0, -2.0, 3.0]),
    ("trunc", [2.0, 2.0, -2.0, 2.0]),
    ("odd", [3.0, 3.0, -3.0, 3.0]),
])
def test_tcvt_float_to_int_modes(mode, expected):
    x = np.array([2.5, 2.25, -2.5, 2.75], np.float32)
    got = convert(x, DataType.INT32, mode)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mode,expected_ulps", [
    # x = 1 + 0.5 ulp (a tie), 1 + 0.25 ulp, -(1 + 0.5 ulp), 1 + 1.5 ulp (tie, odd below)
    ("rint", [0, 0, 0, 2]),
    ("round", [1, 0, -1, 2]),
    ("floor", [0, 0, -1, 1]),
    ("ceil", [1, 1, 0, 2]),
    ("trunc", [0, 0, 0, 1]),
    ("odd", [1, 1, -1, 1]),
])
def test_tcvt_float_to_bf16_modes(mode, expected_ulps):
    ulp = 2.0**-7
    x = np.array([1 + ulp / 2, 1 + ulp / 4, -(1 + ulp / 2), 1 + 1.5 * ulp], np.float32)
    got = convert(x, DataType.BF16, mode).astype(np.float64)
    want = [1 + e * ulp if i != 2 else -(1 - e * ulp) for i, e in enumerate(expected_ulps)]
    np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(st.floats(-2.0**100, 2.0**100, allow_nan=False, width=32),
       st.sampled_from([DataType.BF16, DataType.FP16]))
def test_directed_modes_bracket_the_value(x, dtype):
    arr = np.array([x], np.float32)
    lo = convert(arr, dtype, "floor").astype(np.float64)[0]
    hi = convert(arr, dtype, "ceil").astype(np.float64)[0]
    near = convert(arr, dtype, "rint").astype(np.float64)[0]
    assert lo <= x <= hi
    assert near in (lo, hi)
    tr = convert(arr, dtype, "trunc").astype(np.float64)[0]
    assert abs(tr) <= abs(x) and tr in (lo, hi)
    rd = convert(arr, dtype, "round").astype(np.float64)[0]
    assert rd in (lo, hi) and abs(rd - x) <= abs(near - x)


@pytest.mark.parametrize("mode,expected", [
    # fp16: largest finite 65504, next would-be value 65536; halfway (65520) and beyond is
    # inf under round-to-nearest, a directed mode toward zero stays at the largest finite
    ("rint", [65504, 65504, np.inf, np.inf, -65504, -np.inf, -np.inf]),
    ("round", [65504, 65504, np.inf, np.inf, -65504, -np.inf, -np.inf]),
    ("floor", [65504, 65504, 65504, 65504, -65504, -np.inf, -np.inf]),
    ("ceil", [65504, np.inf, np.inf, np.inf, -65504, -65504, -65504]),
    ("trunc", [65504, 65504, 65504, 65504, -65504, -65504, -65504]),
])
def test_int32_to_fp16_overflow_follows_ieee_rounding(mode, expected):
    x = np.array([65504, 65519, 65520, 1 << 24, -65504, -65520, -70000], np.int32)
    np.testing.assert_array_equal(convert(x, DataType.FP16, mode).astype(np.float64), expected)


def test_unknown_mode_is_a_ptoc_error():
    with pytest.raises(NumericsError, match="rounding mode 'nearest'"):
        convert(np.zeros(2, np.float32), DataType.BF16, "nearest")
    with pytest.raises(NumericsError, match="MAD mode"):
        mad(np.zeros((1, 1), BF16), np.zeros((1, 1), BF16), mode="quick")


def test_int8_to_int32_conversion_is_exact():
    x = np.arange(-128, 128, dtype=np.int8)
    np.testing.assert_array_equal(convert(x, DataType.INT32), x.astype(np.int32))
