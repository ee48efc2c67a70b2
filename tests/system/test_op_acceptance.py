"""Issue 11 acceptance: normalizations, activations and softmaxes written at tensor level and
at tile level, on shapes that do not fit Vec in one piece, run race-free and match numpy.

Tensor level: the whole [R, H] computation is written once; ConvertTensorToTileOps chunks it
into row blocks (column blocks for element-wise rows wider than Vec). Tile level: the kernel
walks row blocks itself with loads at a loop offset.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.passes import MemoryPlanner
from ptoc.runtime import compile_program

R, H = 256, 512           # 512 KiB of FP32: four times the Vec buffer
RB = 16                   # tile-level row block (three [16, 512] FP32 tiles fit Vec)
F32 = "pl.FP32"


def program(params: str, body: str, out_shape=(R, H)) -> str:
    ret = f"pl.Tensor[[{out_shape[0]}, {out_shape[1]}], {F32}]"
    lines = "\n".join("        " + ln for ln in body.strip("\n").splitlines())
    return ("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def k(self, {params}, out: pl.Out[{ret}]) -> {ret}:\n{lines}\n        return out\n")


def run(src: str, *arrays, **options) -> np.ndarray:
    with tempfile.TemporaryDirectory() as work:
        result = compile_program(pl.parse_program(src), work, **options).run(*arrays)
    assert not result.races, result.races
    return result.outputs["out"]


X = f"x: pl.Tensor[[{R}, {H}], {F32}]"
G = f"g: pl.Tensor[[1, {H}], {F32}]"
B = f"b: pl.Tensor[[1, {H}], {F32}]"
rng = np.random.default_rng(2026)
x_in = rng.standard_normal((R, H)).astype(np.float32)
g_in = rng.standard_normal((1, H)).astype(np.float32)
b_in = rng.standard_normal((1, H)).astype(np.float32)
x64 = x_in.astype(np.float64)


# ---- references (float64) ----------------------------------------------------------------
def rms_ref():
    return x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + 1e-5) * g_in


def layer_ref():
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    return (x64 - mean) / np.sqrt(var + 1e-5) * g_in + b_in


def softmax_ref(scores):
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def causal_ref():
    masked = np.where(np.tril(np.ones((R, H), bool)), x64, -np.inf)
    return softmax_ref(masked)


ACTIVATIONS = {
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "silu": lambda v: v / (1 + np.exp(-v)),
    "gelu": lambda v: 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3))),
    "softplus": lambda v: np.log1p(np.exp(v)),
}


# ---- tensor level ------------------------------------------------------------------------
TENSOR_NORMS = {
    "rmsnorm": (X + ", " + G, f"""
sq = pl.row_sum(pl.mul(x, x))
ms = pl.adds(pl.muls(sq, {1 / H}), 1e-5)
inv = pl.rsqrt(ms)
y = pl.col_expand_mul(pl.row_expand_mul(x, inv), g)
out = pl.assemble(out, y, [0, 0])""", (x_in, g_in), rms_ref),
    "layernorm": (X + ", " + G + ", " + B, f"""
mean = pl.muls(pl.row_sum(x), {1 / H})
c = pl.row_expand_sub(x, mean)
var = pl.adds(pl.muls(pl.row_sum(pl.mul(c, c)), {1 / H}), 1e-5)
nrm = pl.row_expand_div(c, pl.sqrt(var))
y = pl.col_expand_add(pl.col_expand_mul(nrm, g), b)
out = pl.assemble(out, y, [0, 0])""", (x_in, g_in, b_in), layer_ref),
}

#: activations on the value ``{v}`` (x at tensor level, the loaded block at tile level)
ACTIVATION_BODIES = {
    "sigmoid": "y = pl.recip(pl.adds(pl.exp(pl.neg({v})), 1.0))",
    "silu": "y = pl.mul({v}, pl.recip(pl.adds(pl.exp(pl.neg({v})), 1.0)))",
    "gelu": """u = pl.muls(pl.add({v}, pl.muls(pl.mul(pl.mul({v}, {v}), {v}), 0.044715)), 0.7978845608028654)
th = pl.adds(pl.muls(pl.recip(pl.adds(pl.exp(pl.muls(u, 2.0)), 1.0)), -2.0), 1.0)
y = pl.mul(pl.muls({v}, 0.5), pl.adds(th, 1.0))""",
    "softplus": "y = pl.log(pl.adds(pl.exp({v}), 1.0))",
}


@pytest.mark.parametrize("name", sorted(TENSOR_NORMS))
def test_tensor_level_norms(name):
    params, body, arrays, ref = TENSOR_NORMS[name]
    got = run(program(params, body), *arrays)
    np.testing.assert_allclose(got, ref(), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", sorted(ACTIVATION_BODIES))
def test_tensor_level_activations(name):
    body = ACTIVATION_BODIES[name].format(v="x") + "\nout = pl.assemble(out, y, [0, 0])"
    got = run(program(X, body), x_in)
    np.testing.assert_allclose(got, ACTIVATIONS[name](x64), rtol=2e-5, atol=2e-6)


WIDE = (2, 49152)          # one FP32 row is 192 KiB: more than the whole Vec buffer


@pytest.mark.parametrize("name", sorted(ACTIVATION_BODIES))
def test_tensor_level_activations_on_rows_wider_than_vec(name):
    """Element-wise chains whose single rows overflow Vec are computed in column blocks."""
    x = np.random.default_rng(7).standard_normal(WIDE).astype(np.float32)
    t = f"x: pl.Tensor[[{WIDE[0]}, {WIDE[1]}], {F32}]"
    body = ACTIVATION_BODIES[name].format(v="x") + "\nout = pl.assemble(out, y, [0, 0])"
    got = run(program(t, body, WIDE), x)
    np.testing.assert_allclose(got, ACTIVATIONS[name](x.astype(np.float64)), rtol=2e-5,
                               atol=2e-6)


def test_tensor_level_row_softmax():
    body = """m = pl.row_max(x)
e = pl.row_expand_expdif(x, m)
y = pl.row_expand_div(e, pl.row_sum(e))
out = pl.assemble(out, y, [0, 0])"""
    np.testing.assert_allclose(run(program(X, body), x_in), softmax_ref(x64), rtol=2e-5, atol=1e-9)


def test_tensor_level_causal_softmax():
    """PyPTO has no tensor-level tri/sel: the mask is built from arange with tensor ops (a
    penalty of -1e30 where col > row), then the row softmax."""
    body = f"""cols = pl.cast(pl.arange(0, [1, {H}]), pl.FP32)
rows = pl.reshape(pl.cast(pl.arange(0, [1, {R}]), pl.FP32), [{R}, 1])
diff = pl.col_expand_sub(pl.row_expand(x, rows), cols)
pen = pl.muls(pl.minimum(pl.relu(pl.neg(diff)), 1.0), -1e30)
s = pl.add(x, pen)
m = pl.row_max(s)
e = pl.row_expand_expdif(s, m)
y = pl.row_expand_div(e, pl.row_sum(e))
out = pl.assemble(out, y, [0, 0])"""
    np.testing.assert_allclose(run(program(X, body), x_in), causal_ref(), rtol=2e-5, atol=1e-9)


# ---- tile level (row blocks by hand) -----------------------------------------------------
def tile_loop(body: str, loads: str = "") -> str:
    inner = "\n".join("    " + ln for ln in body.strip("\n").splitlines())
    return (f"{loads}\nfor r0 in pl.range(0, {R}, {RB}):\n"
            f"    xt = pl.load(x, [r0, 0], [{RB}, {H}])\n"
            f"    tmp = pl.create_tile([{RB}, {H}], dtype=pl.FP32, target_memory=pl.Mem.Vec)\n"
            f"{inner}\n    out = pl.store(y, [r0, 0], out)")


GT = f"gt = pl.load(g, [0, 0], [1, {H}])\nbt = pl.load(b, [0, 0], [1, {H}])"


TILE_NORMS = {
    # the [RB, 1] row statistics are reshaped to a [1, RB] row for the scalar-rate ops and
    # back (pl.reshape: a view of the same bytes)
    "rmsnorm": (X + ", " + G, f"""ss: pl.Tile[[{RB}, 1], pl.FP32] = pl.row_sum(pl.mul(xt, xt), tmp)
ss_t = pl.reshape(ss, [1, {RB}])
inv_t = pl.rsqrt(pl.adds(pl.muls(ss_t, {1 / H}), 1e-5))
y = pl.col_expand_mul(pl.row_expand_mul(xt, pl.reshape(inv_t, [{RB}, 1])), gt)""",
                f"gt = pl.load(g, [0, 0], [1, {H}])", (x_in, g_in), rms_ref),
    "layernorm": (X + ", " + G + ", " + B, f"""mean = pl.reshape(pl.muls(pl.reshape(pl.row_sum(xt, tmp), [1, {RB}]), {1 / H}), [{RB}, 1])
c = pl.row_expand_sub(xt, mean)
var = pl.reshape(pl.adds(pl.muls(pl.reshape(pl.row_sum(pl.mul(c, c), tmp), [1, {RB}]), {1 / H}), 1e-5), [{RB}, 1])
y = pl.col_expand_add(pl.col_expand_mul(pl.row_expand_div(c, pl.sqrt(var)), gt), bt)""",
                  GT, (x_in, g_in, b_in), layer_ref),
}


@pytest.mark.parametrize("name", sorted(TILE_NORMS))
def test_tile_level_norms(name):
    params, body, loads, arrays, ref = TILE_NORMS[name]
    got = run(program(params, tile_loop(body, loads)), *arrays)
    np.testing.assert_allclose(got, ref(), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", sorted(TILE_NORMS))
def test_tile_level_norms_under_the_ptoas_planner(name):
    """The reshapes are pto.treshape views there (placed by the PTO planner at their
    source's bytes): the same bits as under the PYPTO planner, race-free."""
    params, body, loads, arrays, _ = TILE_NORMS[name]
    src = program(params, tile_loop(body, loads))
    got = run(src, *arrays, memory_planner=MemoryPlanner.PTOAS)
    np.testing.assert_array_equal(got, run(src, *arrays))


@pytest.mark.parametrize("name", sorted(ACTIVATION_BODIES))
def test_tile_level_activations(name):
    got = run(program(X, tile_loop(ACTIVATION_BODIES[name].format(v="xt"))), x_in)
    np.testing.assert_allclose(got, ACTIVATIONS[name](x64), rtol=2e-5, atol=2e-6)


def test_tile_level_row_softmax():
    body = """m = pl.row_max(xt, tmp)
e = pl.row_expand_expdif(xt, m)
y = pl.row_expand_div(e, pl.row_sum(e, tmp))"""
    np.testing.assert_allclose(run(program(X, tile_loop(body)), x_in), softmax_ref(x64),
                               rtol=2e-5, atol=1e-9)


def test_tile_level_causal_softmax_with_tri_and_select():
    """tri(r0) marks col <= row of this block; cmps turns it into a mask; sel keeps the scores
    there and a -inf tile elsewhere."""
    body = f"""keep = pl.tri(r0, [{RB}, {H}], dtype=pl.FP32)
mask = pl.cmps(keep, 0.5, cmp_type=4)
sel_tmp = pl.create_tile([1, 32], dtype=pl.UINT8, target_memory=pl.Mem.Vec)
s = pl.sels(mask, xt, sel_tmp, -1e30)
m = pl.row_max(s, tmp)
e = pl.row_expand_expdif(s, m)
y = pl.row_expand_div(e, pl.row_sum(e, tmp))"""
    np.testing.assert_allclose(run(program(X, tile_loop(body)), x_in), causal_ref(),
                               rtol=2e-5, atol=1e-9)
