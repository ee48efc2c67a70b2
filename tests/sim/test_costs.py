"""Every instruction costs exactly its formula (hw-model.md §2.3, §5.1, §6.2), per profile.

The expected values are written out here from the reference numbers, independently of
``ptoc.backend.profiles``, so a wrong constant or a wrong formula in either place fails.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from ptoc.sim import simulate
from ptoc.sim.examples import Writer

GIB = 2**30 / 1.85e9          # B/cycle per GiB/s (pto-isa table at 1.85 GHz)
# a2a3-device MTE1: PyPTO's sweep bandwidths scaled so one pto-isa GEMM extract step
# (16 KiB L0A + 32 KiB L0B) takes the measured 415.5 cycles (a2a3-published.json).
MTE1_SCALE = (16384 / 129.7 + 32768 / 85.4) / 415.5


def odd(x):
    while x and x % 2 == 0:
        x //= 2
    return x


PROFILES = {
    "a2a3-device": dict(target="a2a3", gm_l1=135 * GIB, gm_ub=100.9 * GIB, ub_gm=188.46 * GIB,
                        l0a=129.7 * MTE1_SCALE, l0b=85.4 * MTE1_SCALE, head=21, fp32_passes=2,
                        drain=("row", 164.0, 4.45, 118.0, 2.6)),
    "a2a3-ptoisa": dict(target="a2a3", gm_l1=135 * GIB, gm_ub=100.9 * GIB, ub_gm=188.46 * GIB,
                        l0a=441 * GIB, l0b=220.5 * GIB, head=6, fp32_passes=2,
                        drain=("flat", 70 * GIB)),
    "a5-sim": dict(target="a5", gm_l1=135 * GIB, gm_ub=100.9 * GIB, ub_gm=188.46 * GIB,
                   l0a=206.3, l0b=223.8, head=25, fp32_passes=8,
                   drain=("row", 343.4, 4.59, 30.0, 0.26)),
}


def expected_drain(p, m, n):
    d = p["drain"]
    if d[0] == "flat":
        return m * n * 4 / d[1]
    _, fixed, row, bw, pen = d
    return fixed + m * (max(row, 4 * n / bw) + pen * (odd(math.ceil(n / 8)) - 1))


def cube_kernel(m, k, n, dtype):
    w = Writer([("%arg0", dtype), ("%arg1", dtype), ("%arg2", "f32")])
    a_v = w.view("av", "%arg0", dtype, m, k)
    b_v = w.view("bv", "%arg1", dtype, k, n)
    c_v = w.view("cv", "%arg2", "f32", m, n)
    eb = 4 if dtype == "f32" else 2
    a1 = w.alloc("a1", "mat", dtype, m, k, 0)
    b1 = w.alloc("b1", "mat", dtype, k, n, -(-m * k * eb // 32) * 32)
    a0 = w.alloc("a0", "left", dtype, m, k, 0)
    b0 = w.alloc("b0", "right", dtype, k, n, 0)
    c = w.alloc("c", "acc", "f32", m, n, 0)
    zero = (w.idx(0), "index")
    w.op("pto.tload", [w.window(a_v, w.idx(0), w.idx(0), m, k)], [w.t(a1)])
    w.op("pto.tload", [w.window(b_v, w.idx(0), w.idx(0), k, n)], [w.t(b1)])
    w.op("pto.textract", [w.t(a1), zero, zero], [w.t(a0)])
    w.op("pto.textract", [w.t(b1), zero, zero], [w.t(b0)])
    w.op("pto.tmatmul", [w.t(a0), w.t(b0)], [w.t(c)])
    w.op("pto.tstore", [w.t(c)], [w.window(c_v, w.idx(0), w.idx(0), m, n)])
    return w.render()


def _durations(res):
    return {r.name + ("#" + str(i) if r.name in ("pto.tload", "pto.textract") else ""): r.duration
            for i, r in enumerate(x for x in res.instructions if x.kind == "work")}


@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("m,k,n,dtype", [(16, 16, 16, "bf16"), (128, 64, 256, "bf16"),
                                         (64, 128, 80, "bf16"), (48, 32, 144, "f16"),
                                         (32, 64, 64, "f32")])
def test_cube_path_costs_equal_formulas(profile, m, k, n, dtype):
    p = PROFILES[profile]
    eb = 4 if dtype == "f32" else 2
    npdt = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32}[dtype]
    t = {"arg0": np.ones((m, k), npdt), "arg1": np.ones((k, n), npdt),
         "arg2": np.zeros((m, n), np.float32)}
    res = simulate(cube_kernel(m, k, n, dtype), t, target=p["target"], profile=profile)
    work = [r for r in res.instructions if r.kind == "work"]
    assert [r.name for r in work] == ["pto.tload", "pto.tload", "pto.textract", "pto.textract",
                                      "pto.tmatmul", "pto.tstore"]
    kt = 32 // eb
    cpr = p["fp32_passes"] if dtype == "f32" else 1
    want = [m * k * eb / p["gm_l1"], k * n * eb / p["gm_l1"], m * k * eb / p["l0a"],
            k * n * eb / p["l0b"],
            p["head"] + cpr * math.ceil(m / 16) * math.ceil(k / kt) * math.ceil(n / 16),
            expected_drain(p, m, n)]
    assert [r.duration for r in work] == pytest.approx(want, rel=1e-12)
    np.testing.assert_array_equal(res.outputs["arg2"], np.full((m, n), k, np.float32))


def test_reference_examples_of_the_hw_model():
    """Worked numbers of hw-model.md §2.3 on the default profile."""
    t = {"arg0": np.ones((128, 64), ml_dtypes.bfloat16),
         "arg1": np.ones((64, 256), ml_dtypes.bfloat16), "arg2": np.zeros((128, 256), np.float32)}
    res = simulate(cube_kernel(128, 64, 256, "bf16"), t)
    mad = res.on_pipe("M")[0]
    drain = res.on_pipe("FIX")[0]
    assert mad.duration == pytest.approx(533, abs=1e-9)  # 21 + 8*4*16
    assert drain.duration == pytest.approx(164 + 128 * 1024 / 118)   # ~1275
    t80 = {"arg0": np.ones((128, 64), ml_dtypes.bfloat16),
           "arg1": np.ones((64, 80), ml_dtypes.bfloat16), "arg2": np.zeros((128, 80), np.float32)}
    res80 = simulate(cube_kernel(128, 64, 80, "bf16"), t80)
    assert res80.on_pipe("FIX")[0].duration == pytest.approx(164 + 128 * (4.45 + 2.6 * 4))  # ~2065, the misaligned-N cliff


def vector_kernel(r, c):
    w = Writer([("%arg0", "f32"), ("%arg1", "f32"), ("%arg2", "f32")])
    x_v = w.view("xv", "%arg0", "f32", r, c)
    y_v = w.view("yv", "%arg1", "f32", r, c)
    o_v = w.view("ov", "%arg2", "f32", r, c)
    nb = r * c * 4
    x = w.alloc("x", "vec", "f32", r, c, 0)
    y = w.alloc("y", "vec", "f32", r, c, nb)
    z = w.alloc("z", "vec", "f32", r, c, 2 * nb)
    w.op("pto.tload", [w.window(x_v, w.idx(0), w.idx(0), r, c)], [w.t(x)])
    w.op("pto.tload", [w.window(y_v, w.idx(0), w.idx(0), r, c)], [w.t(y)])
    w.op("pto.tadd", [w.t(x), w.t(y)], [w.t(z)])
    w.op("pto.texp", [w.t(z)], [w.t(z)])
    w.op("pto.tstore", [w.t(z)], [w.window(o_v, w.idx(0), w.idx(0), r, c)])
    return w.render()


@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("r,c", [(16, 64), (64, 128), (8, 24)])
def test_vector_path_costs_equal_formulas(profile, r, c):
    p = PROFILES[profile]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((r, c)).astype(np.float32)
    y = rng.standard_normal((r, c)).astype(np.float32)
    res = simulate(vector_kernel(r, c), {"arg0": x, "arg1": y, "arg2": np.zeros((r, c), np.float32)},
                   target=p["target"], profile=profile)
    work = [rec for rec in res.instructions if rec.kind == "work"]
    nb = r * c * 4
    want = [nb / p["gm_ub"], nb / p["gm_ub"], 30 + 0.0312 * r * c, 30 + 0.0314 * r * c,
            nb / p["ub_gm"]]
    assert [rec.duration for rec in work] == pytest.approx(want, rel=1e-12)
    assert [rec.pipe.short for rec in work] == ["MTE2", "MTE2", "V", "V", "MTE3"]
    np.testing.assert_allclose(res.outputs["arg2"], np.exp(x + y), rtol=1e-6)
