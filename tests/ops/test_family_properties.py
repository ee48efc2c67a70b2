"""Property tests (hypothesis) for the catalog names the per-family files do not draw:
partial ops, shifts by a tile, sin/cos, selection, scalar max/min, data movement (load/store
windows, valid shapes, Vec->Vec move, Mat->Left/Right extract), creation (full, expands),
windows of tiles and tensors (slice/assemble), views (reinterpret_view, set_validshape,
transpose_view), fillpad forms and conversions between every dtype pair.

Each draws shapes, dtypes and values and compares the simulated core with a numpy model of
the op's definition, bit for bit (sin/cos: bit for bit against the FP32 recipe, and within
2e-6 of float64 for |x| <= 100).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from ptoc.passes import MemoryPlanner

from op_harness import DTYPES, bits_equal, load_lines, run_kernel
from test_matmul_family import cube

#: both memory planners: PYPTO bakes addresses (a view is a second alloc_tile at its
#: source's address), PTOAS writes pto.treshape / pto.subview and the PTO planner places them
PLANNER = st.sampled_from((MemoryPlanner.PYPTO, MemoryPlanner.PTOAS))
SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NUMERIC = ("FP32", "FP16", "BF16", "INT32", "INT16")


def _block(dtype) -> int:
    return 32 // np.dtype(dtype).itemsize


def _values(shape, dtype, rng, spread: float = 4.0):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-100, 100, shape).astype(dtype)
    return (rng.standard_normal(shape) * spread).astype(dtype)


def _tile_shape(data, dtype, max_rows=16, max_blocks=3):
    rows = data.draw(st.integers(1, max_rows), label="rows")
    return rows, _block(dtype) * data.draw(st.integers(1, max_blocks), label="blocks")


# ---- elementwise: partial ops ------------------------------------------------------------
def _max_first(a, b):
    return np.where(a < b, b, a)


def _min_first(a, b):
    return np.where(b < a, b, a)


PART = {"part_add": np.add, "part_mul": np.multiply, "part_max": _max_first,
        "part_min": _min_first}


@SETTINGS
@given(data=st.data())
def test_partial_ops_combine_where_both_are_valid(data):
    """part_x: x(a, b) where both operands are valid, the valid one's value where only one
    is, 0 elsewhere (each operand loaded with its own valid shape)."""
    name = data.draw(st.sampled_from(sorted(PART)), label="op")
    dtype = DTYPES[data.draw(st.sampled_from(("FP32", "FP16", "INT32", "INT16")), label="dt")]
    rows, cols = _tile_shape(data, dtype)
    va = (data.draw(st.integers(1, rows)), data.draw(st.integers(1, cols)))
    vb = (data.draw(st.integers(1, rows)), data.draw(st.integers(1, cols)))
    rng = np.random.default_rng(data.draw(st.integers(0, 999), label="seed"))
    a, b = _values((rows, cols), dtype, rng), _values((rows, cols), dtype, rng)
    body = f"""a_t = pl.load(a, [0, 0], [{rows}, {cols}], valid_shape=[{va[0]}, {va[1]}])
b_t = pl.load(b, [0, 0], [{rows}, {cols}], valid_shape=[{vb[0]}, {vb[1]}])
r = pl.{name}(a_t, b_t)
out = pl.store(r, [0, 0], out)"""
    got = run_kernel({"a": a, "b": b}, ((rows, cols), dtype), body)
    in_a = np.zeros((rows, cols), bool)
    in_a[:va[0], :va[1]] = True
    in_b = np.zeros((rows, cols), bool)
    in_b[:vb[0], :vb[1]] = True
    with np.errstate(all="ignore"):
        both = PART[name](a, b).astype(dtype)
    want = np.where(in_a & in_b, both, np.where(in_a, a, np.where(in_b, b, np.zeros_like(a))))
    # the result's valid region is the union's bounding box; outside it the output stays 0
    assert bits_equal(got, want.astype(dtype)), name


# ---- shifts by a tile --------------------------------------------------------------------
@SETTINGS
@given(left=st.booleans(), dt=st.sampled_from(("INT32", "INT16")), data=st.data())
def test_shift_by_a_tile_of_counts(left, dt, data):
    dtype = DTYPES[dt]
    rows, cols = _tile_shape(data, dtype)
    rng = np.random.default_rng(data.draw(st.integers(0, 999), label="seed"))
    a = rng.integers(-1000, 1000, (rows, cols)).astype(dtype)
    n = rng.integers(0, 8 * np.dtype(dtype).itemsize, (rows, cols)).astype(dtype)
    op = "shl" if left else "shr"
    body = load_lines({"a": a, "n": n}) + f"\nr = pl.{op}(a_t, n_t)\nout = pl.store(r, [0, 0], out)"
    got = run_kernel({"a": a, "n": n}, ((rows, cols), dtype), body)
    want = np.left_shift(a, n) if left else np.right_shift(a, n)   # wraps; >> is arithmetic
    assert np.array_equal(got, want.astype(dtype)), op


# ---- math: sin / cos ---------------------------------------------------------------------
def trig_model(x: np.ndarray, cos: bool) -> np.ndarray:
    """The FP32 recipe step by step in numpy (each step one IEEE fp32 rounding)."""
    from ptoc.ops.trig import HALF_PI, PI_INV, PI_PARTS, POLY

    f = np.float32
    scaled = x * f(PI_INV)
    if cos:
        k = np.rint(scaled + f(0.5)).astype(np.int32)
    else:
        k = (np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)).astype(np.int32)
    k = k.astype(f)
    t = x - k * f(PI_PARTS[0])
    t = t - k * f(PI_PARTS[1])
    if cos:
        t = t + f(HALF_PI[0])
    for part in PI_PARTS[2:]:
        t = t - k * f(part)
    if cos:
        t = t + f(HALF_PI[1])
    sign = (np.floor(k * f(0.5)).astype(np.int32).astype(f) * f(4.0) + k * f(-2.0)) + f(1.0)
    t2 = t * t
    p = t2 * f(POLY[0])
    for coef in POLY[1:]:
        p = (p + f(coef)) * t2
    p = p + f(1.0)
    return sign * (t * p)


@SETTINGS
@given(fn=st.sampled_from(("sin", "cos")), level=st.sampled_from(("tile", "tensor")),
       span=st.sampled_from((1.0, 10.0, 100.0)), data=st.data())
def test_sin_cos_follow_the_fp32_recipe(fn, level, span, data):
    rows, cols = _tile_shape(data, np.float32)
    rng = np.random.default_rng(data.draw(st.integers(0, 999), label="seed"))
    x = rng.uniform(-span, span, (rows, cols)).astype(np.float32)
    body = (load_lines({"x": x}) + f"\nr = pl.{fn}(x_t)\nout = pl.store(r, [0, 0], out)"
            if level == "tile" else f"r = pl.{fn}(x)\nout = pl.assemble(out, r, [0, 0])")
    got = run_kernel({"x": x}, ((rows, cols), np.float32), body)
    assert bits_equal(got, trig_model(x, fn == "cos"))
    assert np.max(np.abs(got - getattr(np, fn)(x.astype(np.float64)))) < 2e-6


# ---- comparison and selection ------------------------------------------------------------
@SETTINGS
@given(dt=st.sampled_from(("FP32", "FP16", "INT32", "INT16")), mode=st.integers(0, 5),
       data=st.data())
def test_sel_and_sels_pick_by_a_random_mask(dt, mode, data):
    dtype = DTYPES[dt]
    rows, cols = _tile_shape(data, dtype)
    rng = np.random.default_rng(data.draw(st.integers(0, 999), label="seed"))
    a = rng.integers(-3, 3, (rows, cols)).astype(dtype)
    b = rng.integers(-3, 3, (rows, cols)).astype(dtype)
    scalar = "-7" if np.dtype(dtype).kind == "i" else "-7.5"
    body = load_lines({"a": a, "b": b}) + f"""
m = pl.cmp(a_t, b_t, cmp_type={mode})
tmp = pl.create_tile([1, 32], dtype=pl.UINT8, target_memory=pl.Mem.Vec)
r = pl.sel(m, a_t, b_t, tmp)
r2 = pl.sels(m, r, tmp, {scalar})
out = pl.store(r2, [0, 0], out)"""
    got = run_kernel({"a": a, "b": b}, ((rows, cols), dtype), body)
    pick = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal][mode]
    keep = pick(a, b)
    want = np.where(keep, np.where(keep, a, b), np.asarray(float(scalar)).astype(dtype))
    assert bits_equal(got, want.astype(dtype))


@SETTINGS
@given(dt=st.sampled_from(("FP32", "INT32")), data=st.data())
def test_scalar_max_min_of_two_elements(dt, data):
    """pl.max/pl.min of two scalars read from a tile and from GM; tensor.dim places one."""
    dtype = DTYPES[dt]
    rows, cols = _tile_shape(data, dtype)
    pick = st.tuples(st.integers(0, rows - 1), st.integers(0, cols - 1))
    (i, j), (p, q) = data.draw(pick), data.draw(pick)
    x = _values((rows, cols), dtype, np.random.default_rng(data.draw(st.integers(0, 999))))
    body = f"""t = pl.load(x, [0, 0], [{rows}, {cols}])
u = pl.read(t, [{i}, {j}])
v = pl.read(x, [{p}, {q}])
t2 = pl.write(t, [0, 0], pl.max(u, v))
t3 = pl.write(t2, [pl.tensor.dim(x, 0) - 1, {cols - 1}], pl.min(u, v))
out = pl.store(t3, [0, 0], out)"""
    want = x.copy()
    want[0, 0] = max(x[i, j], x[p, q])
    want[rows - 1, cols - 1] = min(x[i, j], x[p, q])
    assert bits_equal(run_kernel({"x": x}, ((rows, cols), dtype), body), want)


# ---- data movement -----------------------------------------------------------------------
@SETTINGS
@given(dt=st.sampled_from(NUMERIC), move=st.booleans(), data=st.data())
def test_load_store_windows_and_valid_shapes(dt, move, data):
    """A window of the input (row offset any, column offset a whole number of 32-byte
    blocks), optionally partially valid and moved Vec->Vec, stored at another window: only
    the valid part arrives, the rest of the output keeps its zeros."""
    dtype = DTYPES[dt]
    blk = _block(dtype)
    R, C = data.draw(st.integers(2, 24)), blk * data.draw(st.integers(2, 4))
    h, w = data.draw(st.integers(1, R)), blk * data.draw(st.integers(1, C // blk))
    r0, c0 = data.draw(st.integers(0, R - h)), blk * data.draw(st.integers(0, (C - w) // blk))
    r1, c1 = data.draw(st.integers(0, R - h)), blk * data.draw(st.integers(0, (C - w) // blk))
    vh, vw = data.draw(st.integers(1, h)), data.draw(st.integers(1, w))
    x = _values((R, C), dtype, np.random.default_rng(data.draw(st.integers(0, 999))))
    body = f"t = pl.load(x, [{r0}, {c0}], [{h}, {w}], valid_shape=[{vh}, {vw}])\n"
    body += "t = pl.move(t, target_memory=pl.Mem.Vec)\n" if move else ""
    body += f"out = pl.store(t, [{r1}, {c1}], out)"
    want = np.zeros((R, C), dtype)
    want[r1:r1 + vh, c1:c1 + vw] = x[r0:r0 + vh, c0:c0 + vw]
    assert bits_equal(run_kernel({"x": x}, ((R, C), dtype), body), want)


@SETTINGS
@given(dt=st.sampled_from(("FP16", "BF16", "INT8")), data=st.data())
def test_extract_windows_feed_the_cube(dt, data):
    """Mat->Left/Right windows (extract at row/column fractal offsets) multiply as the same
    windows of the arrays do (small integers: every product and sum is exact)."""
    dtype = DTYPES[dt]
    kb = 32 if dt == "INT8" else 16
    m, n, k = 16 * data.draw(st.integers(1, 2)), 16 * data.draw(st.integers(1, 2)), 2 * kb
    mo, ko, no = 16 * data.draw(st.integers(0, 1)), kb * data.draw(st.integers(0, 1)), \
        16 * data.draw(st.integers(0, 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 999)))
    a = rng.integers(-4, 4, (m + 16, 2 * k)).astype(dtype)
    b = rng.integers(-4, 4, (2 * k, n + 16)).astype(dtype)
    acc = np.int32 if dt == "INT8" else np.float32
    body = f"""a_m = pl.load(a, [0, 0], [{m + 16}, {2 * k}], target_memory=pl.Mem.Mat)
b_m = pl.load(b, [0, 0], [{2 * k}, {n + 16}], target_memory=pl.Mem.Mat)
a_l = pl.extract(a_m, {mo}, {ko}, [{m}, {k}], target_memory=pl.Mem.Left)
b_r = pl.extract(b_m, {ko}, {no}, [{k}, {n}], target_memory=pl.Mem.Right)
c = pl.matmul(a_l, b_r)
out = pl.store(c, [0, 0], out)"""
    got = run_kernel({"a": a, "b": b}, ((m, n), acc), body)
    want = a[mo:mo + m, ko:ko + k].astype(np.int64) @ b[ko:ko + k, no:no + n].astype(np.int64)
    assert np.array_equal(got, want.astype(acc))


@SETTINGS
@given(m=st.sampled_from((1, 16, 32)), n=st.sampled_from((16, 32)),
       dt=st.sampled_from(("FP16", "BF16", "FP32", "INT8")), seed=st.integers(0, 999))
def test_matmul_acc_and_gemv_acc_continue_the_sum(m, n, dt, seed):
    """c = A[:, :h] B[:h]; c += A[:, h:] B[h:] (extracted halves): each product is the cube's
    fresh fp32 partial sum in increasing k, and the accumulate adds the old accumulator once,
    after the new product (one fp32 rounding; int8 exact in int32)."""
    dtype = DTYPES[dt]
    h = 32 if dt == "INT8" else 16
    rng = np.random.default_rng(seed)
    a = (rng.integers(-8, 8, (m, 2 * h)) if dt == "INT8"
         else rng.standard_normal((m, 2 * h))).astype(dtype)
    b = (rng.integers(-8, 8, (2 * h, n)) if dt == "INT8"
         else rng.standard_normal((2 * h, n))).astype(dtype)
    op = "gemv" if m == 1 else "matmul"
    body = f"""a_m = pl.load(a, [0, 0], [{m}, {2 * h}], target_memory=pl.Mem.Mat)
b_m = pl.load(b, [0, 0], [{2 * h}, {n}], target_memory=pl.Mem.Mat)
a0 = pl.extract(a_m, 0, 0, [{m}, {h}], target_memory=pl.Mem.Left)
b0 = pl.extract(b_m, 0, 0, [{h}, {n}], target_memory=pl.Mem.Right)
c = pl.{op}(a0, b0)
a1 = pl.extract(a_m, 0, {h}, [{m}, {h}], target_memory=pl.Mem.Left)
b1 = pl.extract(b_m, {h}, 0, [{h}, {n}], target_memory=pl.Mem.Right)
c2 = pl.{op}_acc(c, a1, b1)
out = pl.store(c2, [0, 0], out)"""
    acc = np.int32 if dt == "INT8" else np.float32
    got = run_kernel({"a": a, "b": b}, ((m, n), acc), body)
    want = cube(a[:, h:], b[h:]) + cube(a[:, :h], b[:h])   # fp32 + fp32: one rounding
    assert bits_equal(got, want), op


# ---- creation ----------------------------------------------------------------------------
@SETTINGS
@given(dt=st.sampled_from(NUMERIC), level=st.sampled_from(("tile", "tensor", "expands")),
       value=st.floats(-1e4, 1e4, allow_nan=False), data=st.data())
def test_full_and_expands_write_the_converted_value(dt, level, value, data):
    dtype = DTYPES[dt]
    rows, cols = _tile_shape(data, dtype)
    text = repr(int(value)) if np.dtype(dtype).kind == "i" else repr(value)
    x = np.zeros((rows, cols), dtype)
    if level == "tile":
        body = (f"t = pl.tile.full([{rows}, {cols}], dtype=pl.{dt}, value={text})\n"
                "out = pl.store(t, [0, 0], out)")
    elif level == "tensor":
        body = (f"t = pl.full([{rows}, {cols}], dtype=pl.{dt}, value={text})\n"
                "out = pl.assemble(out, t, [0, 0])")
    else:
        body = load_lines({"x": x}) + f"\nt = pl.expands(x_t, {text})\nout = pl.store(t, [0, 0], out)"
    got = run_kernel({"x": x}, ((rows, cols), dtype), body)
    want = np.full((rows, cols), np.asarray(float(text)).astype(dtype))
    assert bits_equal(got, want), (level, text)


# ---- windows: slice / assemble -----------------------------------------------------------
@SETTINGS
@given(dt=st.sampled_from(NUMERIC), level=st.sampled_from(("tile", "tensor")), planner=PLANNER,
       data=st.data())
def test_slice_then_assemble_moves_one_window(dt, level, planner, data):
    """A window sliced out of x at (r0, c0) and assembled into a zero [R, C] at (r1, c1).
    Any [h, w] window, column offsets whole 32-byte blocks (a tile's address is 32-byte
    aligned). Tile level: a slice or assemble is an alias of its parent's bytes; a column
    window of several rows keeps its parent's row stride."""
    dtype = DTYPES[dt]
    blk = _block(dtype)
    R, C = data.draw(st.integers(2, 16)), blk * data.draw(st.integers(2, 3))
    h, w = data.draw(st.integers(1, R)), blk * data.draw(st.integers(1, C // blk))
    r0, c0 = data.draw(st.integers(0, R - h)), blk * data.draw(st.integers(0, (C - w) // blk))
    r1 = data.draw(st.integers(0, R - h))
    wide = C
    c1 = blk * data.draw(st.integers(0, (wide - w) // blk))
    x = _values((R, C), dtype, np.random.default_rng(data.draw(st.integers(0, 999))))
    if level == "tile":
        body = f"""t = pl.load(x, [0, 0], [{R}, {C}])
s = pl.slice(t, [{h}, {w}], [{r0}, {c0}])
z = pl.tile.full([{R}, {wide}], dtype=pl.{dt}, value=0)
z2 = pl.assemble(z, s, [{r1}, {c1}])
out = pl.store(z2, [0, 0], out)"""
    else:
        body = f"""s = pl.slice(x, [{h}, {w}], [{r0}, {c0}])
out = pl.assemble(out, pl.muls(s, 1), [{r1}, {c1}])"""
    want = np.zeros((R, wide), dtype)
    want[r1:r1 + h, c1:c1 + w] = x[r0:r0 + h, c0:c0 + w]
    got = run_kernel({"x": x}, ((R, wide), dtype), body, memory_planner=planner)
    assert bits_equal(got, want)


@SETTINGS
@given(dt=st.sampled_from(("FP32", "FP16", "INT16")), planner=PLANNER, data=st.data())
def test_column_windows_at_loop_offsets_touch_only_their_columns(dt, planner, data):
    """Tile-level column windows of several rows at loop-variable offsets: trip k slices the
    [h, w] window at (r0 + k*dr, c0 + k*dc) of x, adds 2 and assembles it at
    (r1 + k*dr, k*w) of a zero tile, carried through the loop. Every other element must
    stay 0: a window read or written as a dense tile (its rows not the parent's row length
    apart) takes neighbouring columns and fails the exact comparison."""
    dtype = DTYPES[dt]
    blk = _block(dtype)
    R, C = data.draw(st.integers(2, 12), label="rows"), \
        blk * data.draw(st.integers(2, 6), label="blocks")
    trips = data.draw(st.integers(1, C // blk), label="trips")
    w = blk * data.draw(st.integers(1, C // blk // trips), label="width blocks")
    h = data.draw(st.integers(2, R), label="window rows")
    dr = data.draw(st.integers(0, (R - h) // trips), label="row step")
    r0 = data.draw(st.integers(0, R - h - dr * (trips - 1)), label="row offset")
    r1 = data.draw(st.integers(0, R - h - dr * (trips - 1)), label="target row")
    dc = blk * data.draw(st.integers(0, (C - w) // blk // max(trips - 1, 1)), label="col step")
    c0 = blk * data.draw(st.integers(0, (C - w - dc * (trips - 1)) // blk), label="col offset")
    x = _values((R, C), dtype, np.random.default_rng(data.draw(st.integers(0, 999))))
    body = f"""t = pl.load(x, [0, 0], [{R}, {C}])
z0 = pl.tile.full([{R}, {C}], dtype=pl.{dt}, value=0)
for k, (z,) in pl.range({trips}, init_values=(z0,)):
    s = pl.slice(t, [{h}, {w}], [{r0} + k * {dr}, {c0} + k * {dc}])
    e = pl.tile.adds(s, 2)
    z2 = pl.tile.assemble(z, e, [{r1} + k * {dr}, k * {w}])
    r = pl.yield_(z2)
out = pl.store(r, [0, 0], out)"""
    want = np.zeros((R, C), dtype)
    for k in range(trips):
        win = x[r0 + k * dr:r0 + k * dr + h, c0 + k * dc:c0 + k * dc + w]
        want[r1 + k * dr:r1 + k * dr + h, k * w:(k + 1) * w] = win + np.asarray(2, dtype)
    got = run_kernel({"x": x}, ((R, C), dtype), body, memory_planner=planner)
    assert bits_equal(got, want)


# ---- views -------------------------------------------------------------------------------
_SAME_WIDTH = {"FP32": "INT32", "INT32": "FP32", "FP16": "INT16", "INT16": "BF16",
               "BF16": "FP16"}


@SETTINGS
@given(src=st.sampled_from(sorted(_SAME_WIDTH)), planner=PLANNER, data=st.data())
def test_reinterpret_view_reads_the_same_bytes(src, planner, data):
    dtype, dst = DTYPES[src], DTYPES[_SAME_WIDTH[src]]
    rows, cols = _tile_shape(data, dtype)
    x = _values((rows, cols), dtype, np.random.default_rng(data.draw(st.integers(0, 999))))
    body = load_lines({"x": x}) + (f"\nv = pl.tile.reinterpret_view(x_t, pl.{_SAME_WIDTH[src]})"
                                   "\nout = pl.store(v, [0, 0], out)")
    got = run_kernel({"x": x}, ((rows, cols), dst), body, memory_planner=planner)
    assert np.array_equal(np.asarray(got).view(np.uint8), x.view(np.uint8))


@SETTINGS
@given(dt=st.sampled_from(NUMERIC), pad=st.sampled_from(("zero", "max", "min")),
       form=st.sampled_from(("fillpad", "fillpad_inplace", "fillpad_expand")), planner=PLANNER,
       data=st.data())
def test_set_validshape_then_fillpad(dt, pad, form, planner, data):
    """set_validshape narrows a full tile to (vr, vc) without moving data; each fillpad form
    keeps the valid values and writes the pad value elsewhere (fillpad_expand into a larger
    tile)."""
    dtype = DTYPES[dt]
    rows, cols = _tile_shape(data, dtype)
    vr, vc = data.draw(st.integers(1, rows)), data.draw(st.integers(1, cols))
    x = _values((rows, cols), dtype, np.random.default_rng(data.draw(st.integers(0, 999))))
    out_rows = rows + (data.draw(st.integers(0, 4)) if form == "fillpad_expand" else 0)
    call = (f"pl.tile.fillpad_expand(v, [{out_rows}, {cols}], pad_value=pl.PadValue.{pad})"
            if form == "fillpad_expand" else f"pl.tile.{form}(v, pad_value=pl.PadValue.{pad})")
    body = load_lines({"x": x}) + f"""
v = pl.tile.set_validshape(x_t, {vr}, {vc})
f = {call}
out = pl.store(f, [0, 0], out)"""
    got = run_kernel({"x": x}, ((out_rows, cols), dtype), body, memory_planner=planner)
    if pad == "zero":
        fill = 0
    elif np.dtype(dtype).kind == "i":
        fill = np.iinfo(dtype).max if pad == "max" else np.iinfo(dtype).min
    else:
        fill = np.inf if pad == "max" else -np.inf
    want = np.full((out_rows, cols), np.asarray(fill).astype(dtype))
    want[:vr, :vc] = x[:vr, :vc]
    assert bits_equal(got, want), form


@SETTINGS
@given(m=st.sampled_from((16, 32)), k=st.sampled_from((16, 32)), n=st.sampled_from((16, 32)),
       planner=PLANNER, seed=st.integers(0, 999))
def test_transpose_view_of_a_mat_tile_multiplies_as_its_transpose(m, k, n, planner, seed):
    """b is stored [n, k]; its Mat tile re-viewed by transpose_view is the [k, n] right
    operand (small integers in FP16: exact)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 4, (m, k)).astype(np.float16)
    b = rng.integers(-4, 4, (n, k)).astype(np.float16)
    body = f"""a_m = pl.load(a, [0, 0], [{m}, {k}], target_memory=pl.Mem.Mat)
b_m = pl.load(b, [0, 0], [{n}, {k}], target_memory=pl.Mem.Mat)
bt = pl.tile.transpose_view(b_m)
a_l = pl.move(a_m, target_memory=pl.Mem.Left)
b_r = pl.move(bt, target_memory=pl.Mem.Right)
c = pl.matmul(a_l, b_r)
out = pl.store(c, [0, 0], out)"""
    got = run_kernel({"a": a, "b": b}, ((m, n), np.float32), body, memory_planner=planner)
    assert np.array_equal(got, (a.astype(np.float64) @ b.T.astype(np.float64)).astype(np.float32))


# ---- conversions -------------------------------------------------------------------------
_BITS = {2: np.uint16, 4: np.uint32}


def _neighbour(y: np.ndarray, up: bool) -> np.ndarray:
    """The next representable value of y's dtype toward +inf (up) or -inf (finite y)."""
    bits = y.view(_BITS[y.dtype.itemsize]).astype(np.int64)
    sign = np.signbit(y.astype(np.float64))
    zero = y.astype(np.float64) == 0
    step = np.where(sign ^ up, 1, -1)
    moved = np.where(zero, 1, bits + step).astype(_BITS[y.dtype.itemsize]).view(y.dtype)
    return np.where(zero & ~up, -moved, moved).astype(y.dtype)


def float_round(x: np.ndarray, dtype, mode: str) -> np.ndarray:
    """x (float64, exact) rounded to the float ``dtype`` by ``mode``, from the two
    representable neighbours (independent of the simulator's own rounding code)."""
    near = x.astype(dtype)           # numpy/ml_dtypes round half to even from float64
    n64 = near.astype(np.float64)
    exact = n64 == x
    lo = np.where(n64 <= x, near, _neighbour(near, False))
    hi = np.where(n64 >= x, near, _neighbour(near, True))
    lo64, hi64 = lo.astype(np.float64), hi.astype(np.float64)
    if mode in ("rint", "none"):
        pick = near
    elif mode == "floor":
        pick = lo
    elif mode == "ceil":
        pick = hi
    elif mode == "trunc":
        pick = np.where(x >= 0, lo, hi)
    elif mode == "round":
        tie = (x - lo64) == (hi64 - x)
        pick = np.where(tie, np.where(x >= 0, hi, lo), near)
    else:   # odd: the neighbour whose last mantissa bit is 1
        lo_odd = (lo.view(_BITS[lo.dtype.itemsize]) & 1) == 1
        pick = np.where(lo_odd, lo, hi)
    return np.where(exact, near, pick).astype(dtype)


@SETTINGS
@given(src=st.sampled_from(("FP32", "FP16", "BF16", "INT32", "INT16", "INT8")),
       dst=st.sampled_from(("FP32", "FP16", "BF16", "INT32", "INT16", "INT8")),
       mode=st.sampled_from(("rint", "round", "floor", "ceil", "trunc", "odd")),
       rows=st.integers(1, 8), seed=st.integers(0, 999))
def test_cast_between_every_dtype_pair(src, dst, mode, rows, seed):
    """Float targets: the mode picks between the two neighbours of the exact value (odd:
    the one with an odd last bit); integer targets from floats round by the mode and
    saturate; integer -> integer wraps."""
    s_dt, d_dt = DTYPES[src], DTYPES[dst]
    cols = 32
    rng = np.random.default_rng(seed)
    if np.dtype(s_dt).kind == "i":
        info = np.iinfo(s_dt)
        x = rng.integers(info.min, info.max, (rows, cols), endpoint=True).astype(s_dt)
    else:
        x = (rng.standard_normal((rows, cols)) * 300).astype(s_dt)
    body = (load_lines({"x": x}) + f"\nr = pl.cast(x_t, pl.{dst}, mode=\"{mode}\")"
            "\nout = pl.store(r, [0, 0], out)")
    got = run_kernel({"x": x}, ((rows, cols), d_dt), body)
    x64 = x.astype(np.float64)
    if np.dtype(d_dt).kind != "i":
        want = float_round(x64, d_dt, mode)
    elif np.dtype(s_dt).kind == "i":
        want = x.astype(np.int64).astype(d_dt)
    else:
        r = {"rint": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
             "round": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}.get(mode)
        if r is None:   # odd to an integer: an inexact value goes to the odd neighbour
            lo = np.floor(x64)
            r = lambda v: np.where(lo == v, v, np.where(np.mod(lo, 2) == 1, lo, lo + 1))
        info = np.iinfo(d_dt)
        want = np.clip(r(x64), info.min, info.max).astype(d_dt)
    assert bits_equal(got, want), (src, dst, mode)

