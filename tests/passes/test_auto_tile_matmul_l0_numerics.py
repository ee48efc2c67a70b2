"""Every AutoTileMatmulL0 rewrite form compiled through the default pipeline and simulated:
numerics against numpy and zero data races (the IR-level tests pin the structure; these pin
that the structure computes the product)."""

import ml_dtypes
import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.runtime import RunConfig

BF16 = ml_dtypes.bfloat16
NP = {"FP32": np.float32, "BF16": BF16}

BODIES = {
    "plain": """\
        am = pl.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)
        c = pl.matmul(am, bm)
        out = pl.store(c, [0, 0], out)
        return out
""",
    "bias": """\
        am = pl.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)
        bb = pl.load(bias, [0, 0], [1, {N}], target_memory=pl.Mem.Mat)
        c = pl.matmul_bias(am, bm, bb)
        out = pl.store(c, [0, 0], out)
        return out
""",
    "splitk": """\
        acc0 = pl.tile.create([{M}, {N}], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for kb, (acc,) in pl.pipeline(0, {KB}, 1, stage=2, init_values=(acc0,)):
            am = pl.load(a, [0, kb * 64], [{M}, 64], target_memory=pl.Mem.Mat)
            bm = pl.load(b, [kb * 64, 0], [64, {N}], target_memory=pl.Mem.Mat)
            if kb == 0:
                r = pl.matmul(am, bm)
                acc2 = pl.yield_(r)
            else:
                r2 = pl.matmul_acc(acc, am, bm)
                acc2 = pl.yield_(r2)
            acc3 = pl.yield_(acc2)
        out = pl.store(acc3, [0, 0], out)
        return out
""",
}

PROGRAM = """\
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, {params}) -> pl.Tensor[[{M}, {N}], pl.FP32]:
{body}
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {params}) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        out = self.kernel({args})
        return out
"""


def build(M, K, N, dt, kind):
    params = f"a: pl.Tensor[[{M}, {K}], pl.{dt}], b: pl.Tensor[[{K}, {N}], pl.{dt}], "
    args = "a, b, "
    if kind == "bias":
        params += f"bias: pl.Tensor[[1, {N}], pl.FP32], "
        args += "bias, "
    params += f"out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]"
    body = BODIES[kind].format(M=M, K=K, N=N, KB=K // 64)
    return pl.parse_program(PROGRAM.format(M=M, N=N, params=params, args=args + "out", body=body))


CASES = [
    pytest.param(128, 272, 128, "BF16", "plain", {}, id="k_tail"),
    pytest.param(16, 2048, 64, "BF16", "plain", {}, id="skinny_k_loop"),
    pytest.param(256, 128, 256, "FP32", "plain", {}, id="split_k_grid"),
    pytest.param(512, 128, 128, "BF16", "plain", {}, id="a_stationary"),
    pytest.param(320, 64, 320, "BF16", "plain", {}, id="rows_outer_right_tail"),
    pytest.param(320, 64, 320, "BF16", "plain", {"enable_pypto_l0c_double_buffer": True},
                 id="dbc_cols_outer_bottom_and_right_tails"),
    pytest.param(256, 256, 256, "BF16", "plain", {"memory_planner": "PTOAS"},
                 id="b_stationary_dbc_ptoas"),
    pytest.param(64, 272, 64, "FP32", "bias", {}, id="bias_k_tail"),
    pytest.param(128, 64, 512, "FP32", "bias", {}, id="bias_windows_per_tile"),
    pytest.param(256, 256, 256, "BF16", "splitk", {}, id="split_k_accumulator_pre_phase"),
]


@pytest.mark.parametrize("M,K,N,dt,kind,options", CASES)
def test_rewrite_form_computes_the_product(tmp_path, M, K, N, dt, kind, options):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(NP[dt])
    b = rng.standard_normal((K, N)).astype(NP[dt])
    want = a.astype(np.float32) @ b.astype(np.float32)
    tensors = [a, b]
    if kind == "bias":
        bias = rng.standard_normal((1, N)).astype(np.float32)
        tensors.append(bias)
        want = want + bias
    out = np.zeros((M, N), np.float32)
    tensors.append(out)
    compiled = ir.compile(build(M, K, N, dt, kind), tmp_path, dump_passes=False, **options)
    result = compiled.run(*tensors, config=RunConfig(rtol=1e-3, atol=1e-3))
    assert not result.races
    np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-3)


CHAIN = """\
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, {p}) -> pl.Tensor[[{M}, 64], pl.FP32]:
        am = pl.load(a, [0, 0], [{M}, 64], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [64, {N}], target_memory=pl.Mem.Mat)
        em = pl.load(e, [0, 0], [{N}, 64], target_memory=pl.Mem.Mat)
        c = pl.matmul(am, bm)
        cb: pl.Tile[[{M}, {N}], pl.BF16] = pl.cast(c, pl.BF16, mode="rint")
        d = pl.matmul(cb, em)
        out = pl.store(d, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {p}) -> pl.Tensor[[{M}, 64], pl.FP32]:
        out = self.kernel(a, b, e, out)
        return out
"""


@pytest.mark.parametrize("M,N", [(128, 128), (256, 256)], ids=["cast_fold_fits_l0c",
                                                               "mat_scratch_grid"])
def test_chained_matmul_through_a_bf16_mat_scratch(tmp_path, M, N):
    """(a@b) -> cast(rint) -> @e: the fits-L0C fold (one FIXPIPE write to Mat) and the
    oversized Mat-scratch grid both give bf16-rounded intermediates."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((M, 64)).astype(BF16)
    b = rng.standard_normal((64, N)).astype(BF16)
    e = rng.standard_normal((N, 64)).astype(BF16)
    out = np.zeros((M, 64), np.float32)
    c = (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16).astype(np.float32)
    want = c @ e.astype(np.float32)
    p = (f"a: pl.Tensor[[{M}, 64], pl.BF16], b: pl.Tensor[[64, {N}], pl.BF16], "
         f"e: pl.Tensor[[{N}, 64], pl.BF16], out: pl.Out[pl.Tensor[[{M}, 64], pl.FP32]]")
    compiled = ir.compile(pl.parse_program(CHAIN.format(M=M, N=N, p=p)), tmp_path,
                          dump_passes=False)
    result = compiled.run(a, b, e, out, config=RunConfig(rtol=1e-2, atol=1e-2))
    assert not result.races
    np.testing.assert_allclose(out, want, rtol=2e-3, atol=0.1)
