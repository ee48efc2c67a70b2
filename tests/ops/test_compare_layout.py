"""Comparison/selection, layout, creation and element-access ops on the simulated core:
bit-exact against a numpy reference of their definition.

* cmp/cmps pack one bit per element (bit c%8 of byte c//8); sel/sels pick by that bit;
* tri, ci (arange), full write their constants; reshape, transpose_view, set_validshape move
  no data; transpose and concat copy; fillpad writes the pad value outside the valid region;
* read/write touch one element; tensor.dim is the static size; max/min compare scalars.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from op_harness import DTYPES, bits_equal, load_lines, run_kernel

CMP = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
       5: np.greater_equal}


def packed(pred: np.ndarray) -> np.ndarray:
    rows, cols = pred.shape
    out = np.zeros((rows, -(-cols // 8)), np.uint8)
    for c in range(cols):
        out[:, c // 8] |= (pred[:, c].astype(np.uint8) << (c % 8))
    return out


def check_cmp(dtype, shape, mode, scalar, rng):
    a = (rng.integers(-3, 3, shape)).astype(dtype)
    b = (rng.integers(-3, 3, shape)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a.reshape(-1)[0] = np.nan
    arrays = {"a": a} if scalar else {"a": a, "b": b}
    rhs = "1" if scalar and np.dtype(dtype).kind == "i" else ("1.0" if scalar else "b_t")
    body = load_lines(arrays) + f"\nm = pl.cmp(a_t, {rhs}, cmp_type={mode})\nout = pl.store(m, [0, 0], out)"
    got = run_kernel(arrays, ((shape[0], -(-shape[1] // 8)), np.uint8), body)
    other = np.asarray(1, dtype) if scalar else b
    assert np.array_equal(got, packed(CMP[mode](a, other))), (mode, got)


@pytest.mark.parametrize("mode", range(6))
@pytest.mark.parametrize("scalar", [False, True])
def test_cmp_and_cmps_pack_one_bit_per_element(mode, scalar):
    rng = np.random.default_rng(mode)
    for dt in ("FP32", "FP16", "INT32"):
        check_cmp(DTYPES[dt], (8, 64), mode, scalar, rng)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mode=st.integers(0, 5), rows=st.integers(1, 16), blocks=st.integers(1, 4),
       dt=st.sampled_from(("FP32", "FP16", "INT32")), scalar=st.booleans(),
       seed=st.integers(0, 999))
def test_cmp_property(mode, rows, blocks, dt, scalar, seed):
    dtype = DTYPES[dt]
    cols = 64 * blocks // np.dtype(dtype).itemsize
    check_cmp(dtype, (rows, cols), mode, scalar, np.random.default_rng(seed))


def test_sel_and_sels_pick_by_the_mask_bit():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((16, 64)).astype(np.float32), rng.standard_normal((16, 64)).astype(np.float32)
    body = load_lines({"a": a, "b": b}) + """
m = pl.cmp(a_t, b_t, cmp_type=4)
tmp = pl.create_tile([1, 32], dtype=pl.UINT8, target_memory=pl.Mem.Vec)
r = pl.sel(m, a_t, b_t, tmp)
r2 = pl.sels(m, r, tmp, -1.5)
out = pl.store(r2, [0, 0], out)"""
    got = run_kernel({"a": a, "b": b}, ((16, 64), np.float32), body)
    assert bits_equal(got, np.where(a > b, a, np.float32(-1.5)))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("diagonal", [-2, 0, 3])
def test_tri_writes_the_triangle(upper, diagonal):
    x = np.zeros((16, 16), np.float32)
    body = (f"t = pl.tri({diagonal}, [16, 16], dtype=pl.FP32, upper={upper})\n"
            "out = pl.store(t, [0, 0], out)")
    got = run_kernel({"x": x}, ((16, 16), np.float32), body)
    r, c = np.indices((16, 16))
    want = (c >= r + diagonal) if upper else (c <= r + diagonal)
    assert bits_equal(got, want.astype(np.float32))


def test_arange_and_full():
    x = np.zeros((1, 64), np.int32)
    got = run_kernel({"x": x}, ((1, 64), np.int32),
                     "t = pl.tile.ci(5, [1, 64], dtype=pl.INT32, descending=True)\nout = pl.store(t, [0, 0], out)")
    assert np.array_equal(got[0], 5 - np.arange(64))
    got = run_kernel({"x": x}, ((1, 64), np.int32),
                     "t = pl.arange(7, [1, 64])\nout = pl.assemble(out, t, [0, 0])")
    assert np.array_equal(got[0], 7 + np.arange(64))
    y = np.zeros((4, 8), np.float32)
    got = run_kernel({"y": y}, ((4, 8), np.float32),
                     "t = pl.full([4, 8], dtype=pl.FP32, value=2.5)\nout = pl.assemble(out, t, [0, 0])")
    assert bits_equal(got, np.full((4, 8), 2.5, np.float32))


def test_reshape_column_to_row_is_zero_copy():
    x = np.arange(32, dtype=np.float32).reshape(32, 1)
    body = """t = pl.load(x, [0, 0], [32, 1])
r = pl.reshape(t, [1, 32])
r2 = pl.mul(r, 2.0)
c = pl.reshape(r2, [32, 1])
out = pl.store(c, [0, 0], out)"""
    got = run_kernel({"x": x}, ((32, 1), np.float32), body)
    assert bits_equal(got, x * 2)


def test_transpose_and_concat_copy():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    body = load_lines({"a": a, "b": b}) + "\nr = pl.concat(a_t, b_t)\nout = pl.store(r, [0, 0], out)"
    got = run_kernel({"a": a, "b": b}, ((16, 24), np.float32), body)
    assert bits_equal(got, np.concatenate([a, b], axis=1))
    sq = rng.standard_normal((16, 16)).astype(np.float32)
    got = run_kernel({"s": sq}, ((16, 16), np.float32),
                     load_lines({"s": sq}) + "\nr = pl.transpose(s_t, 0, 1)\nout = pl.store(r, [0, 0], out)")
    assert bits_equal(got, sq.T)
    got = run_kernel({"s": sq}, ((16, 16), np.float32),
                     "r = pl.transpose(s, 0, 1)\nout = pl.assemble(out, r, [0, 0])")
    assert bits_equal(got, sq.T)


@pytest.mark.parametrize("pad,fill", [("zero", 0.0), ("max", np.inf), ("min", -np.inf)])
def test_fillpad_fills_outside_the_valid_region(pad, fill):
    x = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    body = f"""t = pl.load(x, [0, 0], [16, 16], valid_shape=[5, 9])
p = pl.fillpad(t, pad_value=pl.PadValue.{pad})
out = pl.store(p, [0, 0], out)"""
    got = run_kernel({"x": x}, ((16, 16), np.float32), body)
    want = np.full((16, 16), fill, np.float32)
    want[:5, :9] = x[:5, :9]
    assert bits_equal(got, want)


def test_set_validshape_narrows_a_reduction():
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    body = """t = pl.load(x, [0, 0], [8, 16])
v = pl.set_validshape(t, 8, 4)
p = pl.fillpad(v, pad_value=pl.PadValue.zero)
tmp = pl.create_tile([8, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)
s = pl.row_sum(p, tmp)
out = pl.store(s, [0, 0], out)"""
    got = run_kernel({"x": x}, ((8, 1), np.float32), body)
    assert bits_equal(got, x[:, :4].sum(axis=1, keepdims=True))


def test_read_write_and_scalar_min_max():
    x = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)
    body = """t = pl.load(x, [0, 0], [8, 8])
a = pl.read(t, [2, 3])
b = pl.read(x, [5, 1])
m = pl.max(a, b)
n = pl.min(a, b)
t2 = pl.write(t, [0, 0], m)
t3 = pl.write(t2, [7, 7], n)
d = pl.tensor.dim(x, 0)
t4 = pl.write(t3, [d - 1, 0], 99.0)
out = pl.store(t4, [0, 0], out)"""
    got = run_kernel({"x": x}, ((8, 8), np.float32), body)
    want = x.copy()
    want[0, 0], want[7, 7] = max(x[2, 3], x[5, 1]), min(x[2, 3], x[5, 1])
    want[7, 0] = 99.0
    assert bits_equal(got, want)


def test_transpose_view_feeds_a_transposed_matmul():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((16, 32)).astype(np.float32)       # used as b^T
    body = """a_m = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
b_m = pl.load(b, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
b_t = pl.tile.transpose_view(b_m)
a_l = pl.move(a_m, target_memory=pl.Mem.Left)
b_r = pl.move(b_t, target_memory=pl.Mem.Right)
c = pl.matmul(a_l, b_r)
out = pl.store(c, [0, 0], out)"""
    got = run_kernel({"a": a, "b": b}, ((16, 16), np.float32), body)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.T.astype(np.float64), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("form", ["gemv", "gemv_acc", "gemv_bias"])
def test_gemv_forms(form):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 64)).astype(np.float16)
    w = rng.standard_normal((64, 32)).astype(np.float16)
    bias = rng.standard_normal((1, 32)).astype(np.float32)
    loads = """x_m = pl.load(x, [0, 0], [1, 64], target_memory=pl.Mem.Mat)
w_m = pl.load(w, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
x_l = pl.move(x_m, target_memory=pl.Mem.Left)
w_r = pl.move(w_m, target_memory=pl.Mem.Right)
"""
    body = {"gemv": "c = pl.gemv(x_l, w_r)",
            "gemv_acc": "c0 = pl.gemv(x_l, w_r)\nc = pl.gemv_acc(c0, x_l, w_r)",
            "gemv_bias": "b_m = pl.load(bias, [0, 0], [1, 32], target_memory=pl.Mem.Mat)\n"
                         "b_b = pl.move(b_m, target_memory=pl.Mem.Bias)\n"
                         "c = pl.gemv_bias(x_l, w_r, b_b)"}[form]
    got = run_kernel({"x": x, "w": w, "bias": bias}, ((1, 32), np.float32),
                     loads + body + "\nout = pl.store(c, [0, 0], out)")
    want = np.zeros((1, 32), np.float32)
    for k in range(64):
        want += x[:, k:k + 1].astype(np.float32) * w[k:k + 1, :].astype(np.float32)
    if form == "gemv_acc":
        want = want + want
    if form == "gemv_bias":
        want = want + bias
    assert bits_equal(got, want)


def test_a_scalar_read_from_an_input_bounds_a_loop():
    """pl.read of an input tensor is known when the kernel starts, so it may be a loop bound
    (the ragged-tail idiom of paged attention); pl.cast converts the scalar."""
    cfg = np.array([[3, 0, 0, 0, 0, 0, 0, 0]], np.int32)
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    body = """n = pl.cast(pl.read(cfg, [0, 0]), pl.INDEX)
acc0 = pl.tile.full([8, 16], pl.FP32, 0.0)
for i, (acc,) in pl.range(n, init_values=(acc0,)):
    t = pl.load(x, [0, 0], [8, 16])
    acc2 = pl.add(acc, t)
    r = pl.yield_(acc2)
out = pl.store(r, [0, 0], out)"""
    got = run_kernel({"cfg": cfg, "x": x}, ((8, 16), np.float32), body)
    assert bits_equal(got, x * 3)


def test_a_tile_element_cannot_bound_a_loop():
    from ptoc.errors import PtocError

    x = np.ones((8, 16), np.int32)
    body = """t = pl.load(x, [0, 0], [8, 16])
n = pl.cast(pl.read(t, [0, 0]), pl.INDEX)
for i in pl.range(n):
    out = pl.store(t, [0, 0], out)"""
    with pytest.raises(PtocError, match="depends on tile data read while the kernel runs"):
        run_kernel({"x": x}, ((8, 16), np.int32), body)
