"""A Mat tile stored to GM, or moved to Vec, in a pl.at kernel (issue 10 difference 4, PyPTO's
examples/intermediate/05_assemble.py): the tile stays in Mat, InferTileMemorySpace (or the
author) moves it to Vec, and ExpandMixedKernel makes that move a cube -> vector pipe whose
AIC side pushes the L1 tile. a2a3's pipe runs through GM and is fed from L1 by the L1 -> GM
store; a5's ring is in UB, which L1 cannot reach, so a5 refuses it at compile time.
"""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PassError
from ptoc.runtime import RunConfig


@pl.program
class MatStore:
    @pl.function
    def main(self, x: pl.Tensor[[32, 64], pl.BF16], y: pl.Out[pl.Tensor[[32, 64], pl.BF16]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="mat_store"):
            t = pl.load(x, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
            pl.store(t, [0, 0], y)
        return y


@pl.program
class AssembleAccIntoMat:
    @pl.function
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], a: pl.Tensor[[32, 16], pl.FP32],
             b: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="assemble"):
            target = pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            am = pl.load(a, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
            c = pl.matmul(pl.move(am, target_memory=pl.MemorySpace.Left),
                          pl.move(bm, target_memory=pl.MemorySpace.Right))
            merged = pl.tile.assemble(target, c, [0, 16])
            pl.store(pl.move(merged, target_memory=pl.MemorySpace.Vec), [0, 0], y)
        return y


def _cases(seed=0):
    rng = np.random.default_rng(seed)
    x16 = rng.standard_normal((32, 64)).astype(np.float32).astype(pl.BF16.numpy)
    x, a, b = (rng.standard_normal(s).astype(np.float32) for s in ((32, 32), (32, 16), (16, 16)))
    want = x.copy()
    want[:, 16:] = a.astype(np.float64) @ b.astype(np.float64)
    return [(MatStore, "mat_store", (x16,), np.zeros_like(x16), x16),
            (AssembleAccIntoMat, "assemble", (x, a, b), np.zeros_like(x), want)]


@pytest.mark.parametrize("case", range(2))
def test_a_mat_tile_reaches_gm_through_the_cube_to_vector_pipe_on_a2a3(case, tmp_path):
    program, group, inputs, out, want = _cases()[case]
    compiled = ir.compile(program, tmp_path, platform="a2a3sim")
    aic = [line for line in compiled.pto_text[group].splitlines() if "pto.tpush_to_aiv" in line]
    assert len(aic) == 1 and "loc=mat" in aic[0]        # the AIC pushes the L1 tile itself
    result = compiled.run(*inputs, out, config=RunConfig(platform="a2a3sim"))
    assert result.races == []
    np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64), rtol=1e-6,
                               atol=1e-6)


@pytest.mark.parametrize("case", range(2))
def test_a5_refuses_a_mat_tile_for_its_cube_to_vector_pipe(case, tmp_path):
    program = _cases()[case][0]
    with pytest.raises(PassError, match="no data path Mat -> Vec") as info:
        ir.compile(program, tmp_path, platform="a5sim")
    assert "carries Acc tiles only" in info.value.hint
