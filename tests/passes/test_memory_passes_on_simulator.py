"""The memory plan is right where it matters: programs whose tiles share buffers compute the
numpy result on the simulated core, with no data race, at the planned addresses.

This goes through codegen, sync insertion and the simulator (other layers), so it checks
the meaning of the reuse decisions, not only their shape.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ptoc.language import parse_program

compile_mod = pytest.importorskip("ptoc.runtime.compile")

VEC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]"
VECTOR_KERNEL = f"""import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t: {VEC} = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        e: {VEC} = pl.tile.exp(t)
        u: {VEC} = pl.tile.load(y, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        s: {VEC} = pl.tile.add(e, u)
        w: {VEC} = pl.tile.mul(s, u)
        o: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(w, [0, 0], out)
        return o
"""

MATMUL_KERNEL = """import ptoc.language as pl

@pl.program
class OracleMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[{M}, {K}], pl.{D}], b: pl.Tensor[[{K}, {N}], pl.{D}], out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        lm: pl.Tile[[{M}, {K}], pl.{D}, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [{M}, {K}], [{M}, {K}], target_memory=pl.Mem.Mat)
        rm: pl.Tile[[{K}, {N}], pl.{D}, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [{K}, {N}], [{K}, {N}], target_memory=pl.Mem.Mat)
        c: pl.Tile[[{M}, {N}], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lm, rm)
        o: pl.Tensor[[{M}, {N}], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return o
"""


def _output(result):
    outs = result.outputs
    return np.asarray(list(outs.values())[-1] if isinstance(outs, dict) else outs[-1], np.float32)


def test_vector_tiles_sharing_buffers_compute_the_right_values(tmp_path):
    compiled = compile_mod.compile_ir(parse_program(VECTOR_KERNEL), tmp_path, dump_passes=False)
    rng = np.random.default_rng(0)
    x, y = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
    result = compiled.run(x, y, np.zeros((64, 64), np.float32))
    assert len(compiled.allocations) == 2            # five tiles, two buffers
    assert not result.races
    np.testing.assert_allclose(_output(result), (np.exp(x) + y) * y, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m,k,n,dtype,flag,acc", [
    (160, 64, 160, "FP32", True, [(0, 40960), (40960, 40960)]),
    (160, 64, 160, "FP32", False, [(0, 102400)]),
    (16, 2048, 64, "BF16", False, [(0, 4096)]),
    (256, 64, 256, "BF16", True, [(0, 65536), (65536, 65536)]),
])
def test_matmuls_run_race_free_at_the_planned_acc_addresses(tmp_path, m, k, n, dtype, flag, acc):
    prog = parse_program(MATMUL_KERNEL.format(M=m, K=k, N=n, D=dtype))
    compiled = compile_mod.compile_ir(prog, tmp_path, enable_pypto_l0c_double_buffer=flag,
                                      dump_passes=False)
    assert sorted((a.addr, a.size) for a in compiled.allocations if "Acc" in str(a.space)) == acc
    rng = np.random.default_rng(1)
    np_dtype = np.float32 if dtype == "FP32" else ml_dtypes.bfloat16
    a = (rng.random((m, k)) - 0.5).astype(np_dtype)
    b = (rng.random((k, n)) - 0.5).astype(np_dtype)
    result = compiled.run(a, b, np.zeros((m, n), np.float32))
    assert not result.races
    expected = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(_output(result), expected, rtol=1e-3, atol=1e-3)
