"""Reductions and broadcasts on the simulated core equal a numpy reference of their
definition, bit for bit: row sums left to right (fp32 accumulator for fp16/bf16), column
sums top to bottom rounded to the dtype each step, max/min keeping the first extreme, argmax
the first index; broadcasts fused with arithmetic round once. Tile level (explicit scratch)
and tensor level (no scratch) both run; hypothesis varies shapes, dtypes and values.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from op_harness import DTYPES, FLOATS, bits_equal, load_lines, name_of, run_kernel, ulps


def row_sum(x):
    acc = np.float32 if x.dtype.itemsize < 4 and x.dtype.kind != "i" else x.dtype
    out = np.zeros((x.shape[0], 1), acc)
    for j in range(x.shape[1]):
        out[:, 0] += x[:, j].astype(acc)
    return out.astype(x.dtype)


def col_sum(x):
    out = np.zeros((1, x.shape[1]), x.dtype)
    for i in range(x.shape[0]):
        out[0] = out[0] + x[i]
    return out


def prod(x, axis):
    y = x if axis == 1 else x.T
    out = np.ones(y.shape[0], x.dtype)
    for j in range(y.shape[1]):
        out = out * y[:, j]
    return out.reshape(-1, 1) if axis == 1 else out.reshape(1, -1)


def extreme(x, axis, greater: bool, index: bool = False):
    y = x if axis == 1 else x.T
    best, idx = y[:, 0].copy(), np.zeros(y.shape[0], np.int32)
    for j in range(1, y.shape[1]):
        take = (y[:, j] > best) if greater else (y[:, j] < best)
        best, idx = np.where(take, y[:, j], best), np.where(take, j, idx)
    out = idx if index else best
    return out.reshape(-1, 1) if axis == 1 else out.reshape(1, -1)


REDUCTIONS = {
    "row_sum": (lambda x: row_sum(x), 1), "col_sum": (col_sum, 0),
    "row_max": (lambda x: extreme(x, 1, True), 1), "row_min": (lambda x: extreme(x, 1, False), 1),
    "col_max": (lambda x: extreme(x, 0, True), 0), "col_min": (lambda x: extreme(x, 0, False), 0),
    "row_prod": (lambda x: prod(x, 1), 1), "col_prod": (lambda x: prod(x, 0), 0),
    "row_argmax": (lambda x: extreme(x, 1, True, True), 1),
    "row_argmin": (lambda x: extreme(x, 1, False, True), 1),
    "col_argmax": (lambda x: extreme(x, 0, True, True), 0),
    "col_argmin": (lambda x: extreme(x, 0, False, True), 0),
}
NEEDS_TMP = {"row_sum", "row_max", "row_min", "row_prod", "row_argmax", "row_argmin",
             "col_argmax", "col_argmin"}


def _values(shape, dtype, rng):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-50, 50, shape).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(dtype)


def check_reduction(name, dtype, shape, rng, level):
    ref, axis = REDUCTIONS[name]
    x = _values(shape, dtype, rng)
    if name.endswith("prod"):
        x = (np.sign(x.astype(np.float64)) * 0.5 + x.astype(np.float64) * 0.1 + 0.5).astype(dtype) \
            if np.dtype(dtype).kind != "i" else np.clip(x, -2, 2).astype(dtype)
    want = ref(x)
    out_dtype = np.int32 if "arg" in name else dtype
    if level == "tile":
        tmp = (f"tmp = pl.create_tile([{shape[0]}, {shape[1]}], dtype=pl.{name_of(dtype)}, "
               "target_memory=pl.Mem.Vec)\n") if name in NEEDS_TMP else ""
        call = f"pl.{name}(x_t, tmp)" if name in NEEDS_TMP else f"pl.{name}(x_t)"
        body = load_lines({"x": x}) + "\n" + tmp + f"r = {call}\nout = pl.store(r, [0, 0], out)"
    else:
        body = f"r = pl.{name}(x)\nout = pl.assemble(out, r, [0, 0])"
    got = run_kernel({"x": x}, (want.shape, out_dtype), body)
    assert bits_equal(got, np.asarray(want).astype(out_dtype)), f"{name} {level}\n{got}\n{want}"


@pytest.mark.parametrize("level", ["tile", "tensor"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_every_reduction(name, level):
    rng = np.random.default_rng(5)
    for dt in ("FP32", "FP16", "INT32") if "sum" in name or "arg" in name or "max" in name \
            or "min" in name else ("FP32", "FP16"):
        check_reduction(name, DTYPES[dt], (8, 64 // np.dtype(DTYPES[dt]).itemsize), rng, level)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_reduction_property(data):
    name = data.draw(st.sampled_from(sorted(REDUCTIONS)), label="op")
    dt = data.draw(st.sampled_from(("FP32", "FP16", "BF16")), label="dtype")
    dtype = DTYPES[dt]
    rows = data.draw(st.integers(2, 16), label="rows")
    cols = 32 // np.dtype(dtype).itemsize * data.draw(st.integers(1, 3), label="blocks")
    level = data.draw(st.sampled_from(("tile", "tensor")), label="level")
    check_reduction(name, dtype, (rows, cols), np.random.default_rng(
        data.draw(st.integers(0, 999))), level)


FUSED = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
         "max": lambda a, b: np.where(a < b, b, a), "min": lambda a, b: np.where(b < a, b, a)}


def check_expand(kind, op, dtype, shape, rng, level):
    x = _values(shape, dtype, rng)
    vshape = (shape[0], 1) if kind == "row" else (1, shape[1])
    v = _values(vshape, dtype, rng)
    if op == "div":
        v = np.where(v == 0, 1, v).astype(dtype)
    name = f"{kind}_expand" + (f"_{op}" if op else "")
    if level == "tile":
        body = load_lines({"x": x, "v": v}) + f"\nr = pl.{name}(x_t, v_t)\nout = pl.store(r, [0, 0], out)"
    else:
        body = f"r = pl.{name}(x, v)\nout = pl.assemble(out, r, [0, 0])"
    got = run_kernel({"x": x, "v": v}, (shape, dtype), body)
    with np.errstate(all="ignore"):
        if op is None:
            assert bits_equal(got, np.broadcast_to(v, shape))
        elif op == "expdif":
            d = (x - v).astype(np.float64)
            assert ulps(got, np.exp(d)) <= 1.0
        else:
            assert bits_equal(got, FUSED[op](x, v).astype(dtype)), name


@pytest.mark.parametrize("level", ["tile", "tensor"])
@pytest.mark.parametrize("kind", ["row", "col"])
@pytest.mark.parametrize("op", [None, "add", "sub", "mul", "div", "max", "min", "expdif"])
def test_every_broadcast(kind, op, level):
    rng = np.random.default_rng(9)
    for dt in FLOATS:
        dtype = DTYPES[dt]
        check_expand(kind, op, dtype, (8, 64 // np.dtype(dtype).itemsize), rng, level)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_broadcast_property(data):
    kind = data.draw(st.sampled_from(("row", "col")))
    op = data.draw(st.sampled_from((None, "add", "sub", "mul", "div", "max", "min", "expdif")))
    dtype = DTYPES[data.draw(st.sampled_from(("FP32", "FP16", "BF16", "INT32")))]
    if op == "expdif" and np.dtype(dtype).kind == "i":
        dtype = np.float32
    rows = data.draw(st.integers(1, 16))
    cols = 32 // np.dtype(dtype).itemsize * data.draw(st.integers(1, 3))
    check_expand(kind, op, dtype, (rows, cols), np.random.default_rng(data.draw(
        st.integers(0, 999))), data.draw(st.sampled_from(("tile", "tensor"))))


def test_expands_fills_target_shape():
    x = np.zeros((4, 16), np.float16)
    got = run_kernel({"x": x}, ((4, 16), np.float16),
                     load_lines({"x": x}) + "\nr = pl.expands(x_t, 0.1)\nout = pl.store(r, [0, 0], out)")
    assert bits_equal(got, np.full((4, 16), np.float16(0.1)))


def test_row_sum_accumulates_fp16_in_fp32():
    # 2048 + 1 + 1 ... in fp16 would stall at 2048; the fp32 accumulator does not.
    x = np.concatenate([np.full((1, 1), 2048), np.ones((1, 15))], axis=1).astype(np.float16)
    tmp = "tmp = pl.create_tile([1, 16], dtype=pl.FP16, target_memory=pl.Mem.Vec)\n"
    got = run_kernel({"x": x}, ((1, 1), np.float16),
                     load_lines({"x": x}) + "\n" + tmp + "r = pl.row_sum(x_t, tmp)\nout = pl.store(r, [0, 0], out)")
    assert float(got[0, 0]) == 2064.0
    assert ml_dtypes  # the bf16 dtype table is imported for the property tests


def test_optional_scratch_forms():
    """col_sum with a scratch (binary-tree flag), rsqrt with a scratch (high-precision form)
    and row_expand_add with a scratch compute what the plain forms compute."""
    rng = np.random.default_rng(12)
    x = (rng.standard_normal((8, 16)) * 3).astype(np.float32)
    v = rng.standard_normal((8, 1)).astype(np.float32)
    tmp = "tmp = pl.create_tile([8, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)\n"
    got = run_kernel({"x": x}, ((1, 16), np.float32),
                     load_lines({"x": x}) + "\n" + tmp + "r = pl.col_sum(x_t, tmp)\nout = pl.store(r, [0, 0], out)")
    assert bits_equal(got, col_sum(x))
    pos = np.abs(x) + 0.5
    got = run_kernel({"x": pos}, ((8, 16), np.float32),
                     load_lines({"x": pos}) + "\n" + tmp + "r = pl.tile.rsqrt(x_t, tmp)\nout = pl.store(r, [0, 0], out)")
    assert ulps(got, 1.0 / np.sqrt(pos.astype(np.float64))) <= 1.0
    got = run_kernel({"x": x, "v": v}, ((8, 16), np.float32),
                     load_lines({"x": x, "v": v}) + "\n" + tmp
                     + "r = pl.row_expand_add(x_t, v_t, tmp)\nout = pl.store(r, [0, 0], out)")
    assert bits_equal(got, x + v)


@pytest.mark.parametrize("vcols", [3, 9, 16])
def test_valid_shape_flows_through_ops_into_reductions(vcols):
    """A partially valid load stays partially valid through elementwise ops, so a row sum
    reads only the valid columns (PyPTO propagates the valid shape the same way); the
    columns past the valid region never reach the result."""
    x = (np.arange(8 * 16, dtype=np.float32).reshape(8, 16) - 50) / 10
    body = f"""t = pl.load(x, [0, 0], [8, 16], valid_shape=[8, {vcols}])
e = pl.exp(pl.muls(t, 0.5))
tmp = pl.create_tile([8, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)
s = pl.row_sum(e, tmp)
out = pl.store(s, [0, 0], out)"""
    got = run_kernel({"x": x}, ((8, 1), np.float32), body)
    e = np.exp((x[:, :vcols] * np.float32(0.5)).astype(np.float64)).astype(np.float32)
    assert bits_equal(got, row_sum(e))
