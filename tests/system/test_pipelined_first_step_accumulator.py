"""A K loop that starts its accumulator with ``pl.matmul`` on the first step and adds with
``pl.matmul_acc`` after (PyPTO's qwen3 projection), pipelined: one L0C buffer carries the sum
through every stage, so the result is the full product (was a CodegenError: the second
stage's copy of the first-step accumulator sat in another Acc buffer)."""

import ml_dtypes
import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.runtime import RunConfig


def projection(k_total: int, kc: int, stage: int):
    m, n = 16, 256

    @pl.program
    class Proj:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[m, k_total], pl.BF16], w: pl.Tensor[[k_total, n], pl.BF16],
                 out: pl.Out[pl.Tensor[[m, n], pl.FP32]]) -> pl.Tensor[[m, n], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
                acc = pl.create_tensor([m, n], dtype=pl.FP32)
                for kb in pl.pipeline(0, k_total // kc, stage=stage):
                    k0 = kb * kc
                    if k0 == 0:
                        acc = pl.matmul(a[:, k0:k0 + kc], w[k0:k0 + kc, :], out_dtype=pl.FP32)
                    else:
                        acc = pl.matmul_acc(acc, a[:, k0:k0 + kc], w[k0:k0 + kc, :])
                out = pl.assemble(out, acc, [0, 0])
            return out
    return Proj


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("steps,stage", [(2, 2), (3, 2), (4, 2), (5, 3)])
def test_first_step_matmul_then_matmul_acc_in_a_pipeline(tmp_path, platform, steps, stage):
    kc = 128
    rng = np.random.default_rng(steps)
    a = rng.standard_normal((16, steps * kc)).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((steps * kc, 256)).astype(ml_dtypes.bfloat16)
    compiled = ir.compile(projection(steps * kc, kc, stage), tmp_path, dump_passes=False,
                          platform=platform)
    out = np.zeros((16, 256), np.float32)
    compiled(a, w, out, config=RunConfig(platform=platform))
    golden = a.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(out, golden, rtol=1e-4, atol=1e-3)
