"""Property tests (hypothesis) for the layout, valid-shape, creation, element-access and
conversion families: random shapes, dtypes and parameters, bit-exact against numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from op_harness import DTYPES, FLOATS, bits_equal, load_lines, name_of, run_kernel

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DTYPE = st.sampled_from(("FP32", "FP16", "BF16", "INT32", "INT16"))


def _block(dtype) -> int:
    return 32 // np.dtype(dtype).itemsize


def _values(shape, dtype, rng):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-100, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@SETTINGS
@given(dt=DTYPE, rows=st.integers(1, 16), blocks=st.integers(1, 4), split=st.integers(1, 3),
       seed=st.integers(0, 999))
def test_concat_and_reshape(dt, rows, blocks, split, seed):
    dtype = DTYPES[dt]
    rng = np.random.default_rng(seed)
    c0 = _block(dtype) * min(split, blocks)
    c1 = _block(dtype) * blocks
    a, b = _values((rows, c0), dtype, rng), _values((rows, c1), dtype, rng)
    total = c0 + c1
    body = load_lines({"a": a, "b": b}) + f"""
j = pl.concat(a_t, b_t)
flat = pl.reshape(j, [1, {rows * total}])
back = pl.reshape(flat, [{rows}, {total}])
out = pl.store(back, [0, 0], out)"""
    got = run_kernel({"a": a, "b": b}, ((rows, total), dtype), body)
    assert bits_equal(got, np.concatenate([a, b], axis=1))


@SETTINGS
@given(dt=st.sampled_from(("FP32", "INT32", "FP16")), r_blocks=st.integers(1, 3),
       c_blocks=st.integers(1, 3), level=st.sampled_from(("tile", "tensor")),
       seed=st.integers(0, 999))
def test_transpose(dt, r_blocks, c_blocks, level, seed):
    dtype = DTYPES[dt]
    rows, cols = _block(dtype) * r_blocks, _block(dtype) * c_blocks
    x = _values((rows, cols), dtype, np.random.default_rng(seed))
    body = (load_lines({"x": x}) + "\nr = pl.transpose(x_t, 0, 1)\nout = pl.store(r, [0, 0], out)"
            if level == "tile" else "r = pl.transpose(x, 0, 1)\nout = pl.assemble(out, r, [0, 0])")
    assert bits_equal(run_kernel({"x": x}, ((cols, rows), dtype), body), x.T)


@SETTINGS
@given(dt=DTYPE, rows=st.integers(2, 16), blocks=st.integers(1, 3), seed=st.integers(0, 999),
       pad=st.sampled_from(("zero", "max", "min")), data=st.data())
def test_fillpad_over_random_valid_regions(dt, rows, blocks, seed, pad, data):
    dtype = DTYPES[dt]
    cols = _block(dtype) * blocks
    vr = data.draw(st.integers(1, rows))
    vc = data.draw(st.integers(1, cols))
    x = _values((rows, cols), dtype, np.random.default_rng(seed))
    body = f"""t = pl.load(x, [0, 0], [{rows}, {cols}], valid_shape=[{vr}, {vc}])
p = pl.fillpad(t, pad_value=pl.PadValue.{pad})
out = pl.store(p, [0, 0], out)"""
    got = run_kernel({"x": x}, ((rows, cols), dtype), body)
    if np.dtype(dtype).kind == "i":
        info = np.iinfo(dtype)
        fill = {"zero": 0, "max": info.max, "min": info.min}[pad]
    else:
        fill = {"zero": 0.0, "max": np.inf, "min": -np.inf}[pad]
    want = np.full((rows, cols), fill).astype(dtype)
    want[:vr, :vc] = x[:vr, :vc]
    assert bits_equal(got, want)


@SETTINGS
@given(rows=st.integers(1, 16), blocks=st.integers(1, 3), diagonal=st.integers(-20, 20),
       upper=st.booleans(), dt=st.sampled_from(("FP32", "FP16", "INT32")))
def test_tri(rows, blocks, diagonal, upper, dt):
    dtype = DTYPES[dt]
    cols = _block(dtype) * blocks
    x = np.zeros((rows, cols), dtype)
    body = (f"t = pl.tri({diagonal}, [{rows}, {cols}], dtype=pl.{dt}, upper={upper})\n"
            "out = pl.store(t, [0, 0], out)")
    r, c = np.indices((rows, cols))
    want = (c >= r + diagonal) if upper else (c <= r + diagonal)
    assert bits_equal(run_kernel({"x": x}, ((rows, cols), dtype), body), want.astype(dtype))


@SETTINGS
@given(start=st.integers(-1000, 1000), blocks=st.integers(1, 4), desc=st.booleans())
def test_arange(start, blocks, desc):
    n = 8 * blocks
    x = np.zeros((1, n), np.int32)
    body = f"t = pl.arange({start}, [1, {n}], descending={desc})\nout = pl.assemble(out, t, [0, 0])"
    want = (start - np.arange(n)) if desc else (start + np.arange(n))
    assert np.array_equal(run_kernel({"x": x}, ((1, n), np.int32), body)[0], want)


@SETTINGS
@given(dt=DTYPE, rows=st.integers(1, 16), blocks=st.integers(1, 3), seed=st.integers(0, 999),
       data=st.data())
def test_read_write_one_element(dt, rows, blocks, seed, data):
    dtype = DTYPES[dt]
    cols = _block(dtype) * blocks
    i, j = data.draw(st.integers(0, rows - 1)), data.draw(st.integers(0, cols - 1))
    p, q = data.draw(st.integers(0, rows - 1)), data.draw(st.integers(0, cols - 1))
    x = _values((rows, cols), dtype, np.random.default_rng(seed))
    body = f"""t = pl.load(x, [0, 0], [{rows}, {cols}])
v = pl.read(t, [{i}, {j}])
t2 = pl.write(t, [{p}, {q}], v)
out = pl.store(t2, [0, 0], out)"""
    want = x.copy()
    want[p, q] = x[i, j]
    assert bits_equal(run_kernel({"x": x}, ((rows, cols), dtype), body), want)


def _round_ref(x: np.ndarray, mode: str) -> np.ndarray:
    if mode == "rint":
        return np.rint(x)
    if mode == "round":
        return np.sign(x) * np.floor(np.abs(x) + 0.5)
    return {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}[mode](x)


@SETTINGS
@given(src=st.sampled_from(FLOATS), dst=st.sampled_from(("INT32", "INT16", "INT8")),
       mode=st.sampled_from(("rint", "round", "floor", "ceil", "trunc")),
       rows=st.integers(1, 8), seed=st.integers(0, 999))
def test_float_to_int_cast_rounds_and_saturates(src, dst, mode, rows, seed):
    dtype = DTYPES[src]
    cols = 32
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * 200 + np.tile([0.5, -0.5, 2.5, -2.5], cols // 4)
         ).astype(dtype)
    body = load_lines({"x": x}) + f"\nr = pl.cast(x_t, pl.{dst}, mode=\"{mode}\")\nout = pl.store(r, [0, 0], out)"
    got = run_kernel({"x": x}, ((rows, cols), DTYPES[dst]), body)
    info = np.iinfo(DTYPES[dst])
    want = np.clip(_round_ref(x.astype(np.float64), mode), info.min, info.max).astype(DTYPES[dst])
    assert np.array_equal(got, want), (src, dst, mode)
