"""Vector tile ops, byte-level tile aliasing, a5-only paths, loops with carried values."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ptoc.errors import PtocError
from ptoc.sim import simulate
from ptoc.sim.examples import Writer, two_acc_matmul

BF16 = ml_dtypes.bfloat16
R, C = 16, 64


def _vec_kernel(body, *, dtype="f32", out_cols=C, extra_tiles=(), target="a2a3"):
    """x, y loaded into UB; ``body(w, x, y, z)`` emits ops into z; z stored to arg2."""
    w = Writer([("%arg0", dtype), ("%arg1", dtype), ("%arg2", dtype)])
    eb = 2 if dtype in ("bf16", "f16") else 4
    x_v = w.view("xv", "%arg0", dtype, R, C)
    y_v = w.view("yv", "%arg1", dtype, R, C)
    o_v = w.view("ov", "%arg2", dtype, R, out_cols)
    nb = R * C * eb
    x = w.alloc("x", "vec", dtype, R, C, 0)
    y = w.alloc("y", "vec", dtype, R, C, nb)
    z = w.alloc("z", "vec", dtype, R, out_cols, 2 * nb)
    extras = [w.alloc(name, "vec", dt, r, c, 3 * nb + i * nb) for i, (name, dt, r, c)
              in enumerate(extra_tiles)]
    w.op("pto.tload", [w.window(x_v, w.idx(0), w.idx(0), R, C)], [w.t(x)])
    w.op("pto.tload", [w.window(y_v, w.idx(0), w.idx(0), R, C)], [w.t(y)])
    w.sync("set_flag", "MTE2", "V", 0)
    w.sync("wait_flag", "MTE2", "V", 0)
    body(w, x, y, z, *extras)
    w.sync("set_flag", "V", "MTE3", 0)
    w.sync("wait_flag", "V", "MTE3", 0)
    w.op("pto.tstore", [w.t(z)], [w.window(o_v, w.idx(0), w.idx(0), R, out_cols)])
    return w.render().replace('"a2a3"', f'"{target}"')


def _run(text, x, y, out_cols=C, dtype=np.float32, **kw):
    t = {"arg0": x, "arg1": y, "arg2": np.zeros((R, out_cols), dtype)}
    res = simulate(text, t, **kw)
    assert res.races == []
    return res.outputs["arg2"]


@pytest.fixture
def xy():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((R, C)).astype(np.float32),
            rng.standard_normal((R, C)).astype(np.float32) + 3)


@pytest.mark.parametrize("op,fn", [("pto.tadd", np.add), ("pto.tsub", np.subtract),
                                   ("pto.tmul", np.multiply), ("pto.tdiv", np.divide),
                                   ("pto.tmax", np.maximum), ("pto.tmin", np.minimum)])
def test_binary_ops(op, fn, xy):
    x, y = xy
    text = _vec_kernel(lambda w, x_, y_, z: w.op(op, [w.t(x_), w.t(y_)], [w.t(z)]))
    np.testing.assert_array_equal(_run(text, x, y), fn(x, y))


@pytest.mark.parametrize("op,fn", [("pto.texp", np.exp), ("pto.tneg", np.negative),
                                   ("pto.trelu", lambda v: np.maximum(v, 0)),
                                   ("pto.tabs", np.abs)])
def test_unary_ops(op, fn, xy):
    x, y = xy
    text = _vec_kernel(lambda w, x_, y_, z: w.op(op, [w.t(x_)], [w.t(z)]))
    np.testing.assert_allclose(_run(text, x, y), fn(x), rtol=1e-6)


def test_scalar_ops(xy):
    x, y = xy

    def body(w, x_, y_, z):
        w.emit("%s = arith.constant 2.5 : f32")
        w.op("pto.tmuls", [w.t(x_), ("%s", "f32")], [w.t(z)])
        w.op("pto.tadds", [w.t(z), ("%s", "f32")], [w.t(z)])
    np.testing.assert_array_equal(_run(_vec_kernel(body), x, y), x * np.float32(2.5) + 2.5)


def test_row_reduce_and_expand_softmax(xy):
    """exp(x - rowmax) / rowsum: the DSL's fused softmax ops."""
    x, y = xy

    def body(w, x_, y_, z, mx, sm, tmp):
        w.op("pto.trowmax", [w.t(x_), w.t(tmp)], [w.t(mx)])
        w.op("pto.trowexpandexpdif", [w.t(x_), w.t(mx)], [w.t(z)])
        w.op("pto.trowsum", [w.t(z), w.t(tmp)], [w.t(sm)])
        w.op("pto.trowexpanddiv", [w.t(z), w.t(sm)], [w.t(z)])
    text = _vec_kernel(body, extra_tiles=[("mx", "f32", R, 1), ("sm", "f32", R, 1),
                                          ("tmp", "f32", R, C)])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(_run(text, x, y), e / e.sum(axis=1, keepdims=True), rtol=1e-6)


def test_tcvt_honours_its_rounding_mode():
    x = np.full((R, C), 2.5, np.float32)
    x[1] = -2.5

    def body(mode):
        def emit(w, x_, y_, z, iz):
            w.emit(f"pto.tcvt ins({x_} : {w.types[x_]}) outs({iz} : {w.types[iz]}) "
                   f"{{rmode = #pto.round_mode<{mode}>}}")
            w.emit(f"pto.tcvt ins({iz} : {w.types[iz]}) outs({z} : {w.types[z]}) "
                   f"{{rmode = #pto.round_mode<rint>}}")
        return emit
    for mode, want in (("round", (3, -3)), ("rint", (2, -2)), ("floor", (2, -3)),
                       ("trunc", (2, -2))):
        text = _vec_kernel(body(mode), extra_tiles=[("iz", "i32", R, C)])
        out = _run(text, x, x)
        assert (out[0, 0], out[1, 0]) == want, mode


def test_overlapping_tiles_share_bytes(xy):
    """A tile declared over the second half of x's bytes sees x's rows 8..15."""
    x, y = xy

    def body(w, x_, y_, z):
        half = w.alloc("xhalf", "vec", "f32", R // 2, C, R // 2 * C * 4)
        w.op("pto.tadd", [w.t(half), w.t(half)], [w.t(half)])   # doubles rows 8..15 of x
        w.op("pto.tmuls", [w.t(x_), ("%one", "f32")], [w.t(z)])
    text = _vec_kernel(body).replace("  %xhalf", "  %one = arith.constant 1.0 : f32\n  %xhalf", 1)
    want = x.copy()
    want[R // 2:] *= 2
    np.testing.assert_array_equal(_run(text, x, y), want)


def test_unsynchronised_overlapping_tiles_race(xy):
    x, y = xy

    def body(w, x_, y_, z):
        w.op("pto.tadd", [w.t(x_), w.t(y_)], [w.t(z)])
    text = _vec_kernel(body).replace("  pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n", "")
    text = text.replace("  pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n", "")
    res = simulate(text, {"arg0": x, "arg1": y, "arg2": np.zeros((R, C), np.float32)})
    assert {r.kind for r in res.races} == {"RAW"} and {r.buffer for r in res.races} == {"Vec"}
    assert not np.array_equal(res.outputs["arg2"], x + y)     # read UB before the loads landed


def test_bf16_vector_op_rounds_once_to_bf16():
    x = np.full((R, C), 1.0, BF16)
    y = np.full((R, C), 2.0**-8, BF16)       # 1 + 2^-8 is a bf16 tie: rounds to even (1.0)
    text = _vec_kernel(lambda w, x_, y_, z: w.op("pto.tadd", [w.t(x_), w.t(y_)], [w.t(z)]),
                       dtype="bf16")
    out = _run(text, x, y, dtype=BF16)
    assert out.dtype == BF16 and np.all(out.astype(np.float32) == 1.0)


def test_a5_only_paths_are_rejected_on_a2a3():
    def body(w, x_, y_, z):
        m = w.alloc("m", "mat", "f32", R, C, 0)
        w.op("pto.tmov", [w.t(x_)], [w.t(m)])
    with pytest.raises(PtocError, match="no data path Vec -> Mat") as info:
        _run(_vec_kernel(body), *[np.zeros((R, C), np.float32)] * 2)
    assert info.value.loc.line > 0
    # the same move is legal on a5 (it runs on MTE3)
    res = simulate(_vec_kernel(body, target="a5"),
                   {"arg0": np.zeros((R, C), np.float32), "arg1": np.zeros((R, C), np.float32),
                    "arg2": np.zeros((R, C), np.float32)}, target="a5")
    assert any(r.name == "pto.tmov" and r.pipe.short == "MTE3" for r in res.instructions)


def test_dynamic_event_ids_and_loops_with_iter_args():
    """Event ids chosen at run time from the slot index, and an iter_args carried counter."""
    text = two_acc_matmul(tiles=4)
    rng = np.random.default_rng(0)
    t = {"arg0": rng.standard_normal((128, 64)).astype(BF16),
         "arg1": rng.standard_normal((64, 512)).astype(BF16),
         "arg2": np.zeros((128, 512), np.float32)}
    static = simulate(text, t)
    # replace the literal ids of the per-slot FIX<->M flags by SSA index values
    dyn = text.replace("<EVENT_ID1>]", "%ev1]").replace(
        "  %a_view", "  %ev1 = arith.constant 1 : index\n  %a_view", 1)
    res = simulate(dyn, t)
    assert res.races == [] and res.wall_cycles == static.wall_cycles
    np.testing.assert_array_equal(res.outputs["arg2"], static.outputs["arg2"])
