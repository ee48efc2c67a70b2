"""System tests of the tiling issue: auto-tiled matmuls, pipelines, cast fold, bias — each
compiled, simulated with zero races and compared with numpy."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.dtypes import DataType as D
from ptoc.language import parse_program
from ptoc.testing import DataType, PTOTestCase, TensorSpec

from cases import MATMUL

BF16 = D.BF16.numpy


def f64(x):
    return np.asarray(x, dtype=np.float64)


class AutoTiledMatmul(PTOTestCase):
    def __init__(self, m, k, n, dtype):
        self.m, self.k, self.n, self.dtype = m, k, n, dtype

    def get_name(self):
        return f"matmul_{self.m}x{self.k}x{self.n}_{self.dtype.lower()}"

    def get_rtol(self):
        return 1e-3 if self.dtype == "FP32" else 1e-2

    get_atol = get_rtol

    def get_sim_mode(self):
        return "fast"

    def define_tensors(self):
        dt = getattr(DataType, self.dtype)
        return [TensorSpec("a", [self.m, self.k], dt), TensorSpec("b", [self.k, self.n], dt),
                TensorSpec("c", [self.m, self.n], DataType.FP32, is_output=True)]

    def get_program(self):
        return parse_program(MATMUL.format(M=self.m, K=self.k, N=self.n, DT=self.dtype))

    def compute_expected(self, t, params=None):
        t["c"][:] = f64(t["a"]) @ f64(t["b"])


class MatmulBiasKTail(PTOTestCase):
    """64x272x64 BF16 + bias: K = 272 is not a multiple of the chosen k, so a tail is peeled."""

    def get_rtol(self):
        return 1e-2

    get_atol = get_rtol

    def define_tensors(self):
        return [TensorSpec("a", [64, 272], DataType.BF16), TensorSpec("b", [272, 64], DataType.BF16),
                TensorSpec("bias", [1, 64], DataType.FP32),
                TensorSpec("c", [64, 64], DataType.FP32, is_output=True)]

    def get_program(self):
        @pl.program
        class Bias:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 272], pl.BF16], b: pl.Tensor[[272, 64], pl.BF16],
                  bias: pl.Tensor[[1, 64], pl.FP32],
                  c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                am = pl.load(a, [0, 0], [64, 272], target_memory=pl.Mem.Mat)
                bm = pl.load(b, [0, 0], [272, 64], target_memory=pl.Mem.Mat)
                zm = pl.load(bias, [0, 0], [1, 64], target_memory=pl.Mem.Mat)
                c = pl.store(pl.matmul_bias(am, bm, zm), [0, 0], c)
                return c
        return Bias

    def compute_expected(self, t, params=None):
        t["c"][:] = f64(t["a"]) @ f64(t["b"]) + t["bias"]


class ChainedCastFold(PTOTestCase):
    """(a @ b) -> cast(BF16, rint) -> @ e: the cast folds into the FIXPIPE Acc -> Mat write."""

    def get_rtol(self):
        return 2e-2

    get_atol = get_rtol

    def define_tensors(self):
        return [TensorSpec("a", [128, 64], DataType.BF16), TensorSpec("b", [64, 128], DataType.BF16),
                TensorSpec("e", [128, 64], DataType.BF16),
                TensorSpec("d", [128, 64], DataType.FP32, is_output=True)]

    def get_program(self):
        @pl.program
        class Chain:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[128, 64], pl.BF16], b: pl.Tensor[[64, 128], pl.BF16],
                  e: pl.Tensor[[128, 64], pl.BF16],
                  d: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
                am = pl.load(a, [0, 0], [128, 64], target_memory=pl.Mem.Mat)
                bm = pl.load(b, [0, 0], [64, 128], target_memory=pl.Mem.Mat)
                em = pl.load(e, [0, 0], [128, 64], target_memory=pl.Mem.Mat)
                c = pl.tile.matmul(am, bm)
                cb = pl.cast(c, pl.BF16, mode="rint")
                d = pl.store(pl.tile.matmul(cb, em), [0, 0], d)
                return d
        return Chain

    def compute_expected(self, t, params=None):
        c = (f64(t["a"]) @ f64(t["b"])).astype(np.float32).astype(BF16)
        t["d"][:] = f64(c) @ f64(t["e"])


class PipelinedExp(PTOTestCase):
    """exp over 8 row blocks of [64, 128] with pl.pipeline(stage=2)."""

    def get_rtol(self):
        return 1e-5

    def define_tensors(self):
        return [TensorSpec("x", [512, 128], DataType.FP32),
                TensorSpec("y", [512, 128], DataType.FP32, is_output=True)]

    def get_program(self):
        @pl.program
        class PipeExp:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[512, 128], pl.FP32],
                  y: pl.Out[pl.Tensor[[512, 128], pl.FP32]]) -> pl.Tensor[[512, 128], pl.FP32]:
                for i in pl.pipeline(0, 8, 1, stage=2):
                    t = pl.load(x, [i * 64, 0], [64, 128])
                    y = pl.store(pl.exp(t), [i * 64, 0], y)
                return y
        return PipeExp

    def compute_expected(self, t, params=None):
        t["y"][:] = np.exp(f64(t["x"]))


class PipelinedUserKLoop(PTOTestCase):
    """M16, K = 8 x 192, N128 BF16: pl.pipeline(stage=2) with if kb == 0: matmul else matmul_acc."""

    def get_rtol(self):
        return 1e-2

    get_atol = get_rtol

    def define_tensors(self):
        return [TensorSpec("a", [16, 1536], DataType.BF16), TensorSpec("b", [1536, 128], DataType.BF16),
                TensorSpec("c", [16, 128], DataType.FP32, is_output=True)]

    def get_program(self):
        @pl.program
        class UserK:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[16, 1536], pl.BF16], b: pl.Tensor[[1536, 128], pl.BF16],
                  c: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
                acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.Mem.Acc)
                for kb in pl.pipeline(0, 8, 1, stage=2):
                    at = pl.load(a, [0, kb * 192], [16, 192], target_memory=pl.Mem.Mat)
                    bt = pl.load(b, [kb * 192, 0], [192, 128], target_memory=pl.Mem.Mat)
                    if kb == 0:
                        acc = pl.matmul(at, bt)
                    else:
                        acc = pl.matmul_acc(acc, at, bt)
                c = pl.store(acc, [0, 0], c)
                return c
        return UserK

    def compute_expected(self, t, params=None):
        t["c"][:] = f64(t["a"]) @ f64(t["b"])


CASES = [
    AutoTiledMatmul(512, 64, 512, "BF16"),    # 2x4 grid of (256,128,64)
    AutoTiledMatmul(320, 64, 320, "BF16"),    # full-K with a tail
    AutoTiledMatmul(16, 2048, 64, "BF16"),    # skinny K-loop
    AutoTiledMatmul(128, 192, 128, "BF16"),
    AutoTiledMatmul(256, 128, 256, "FP32"),   # split-K grid
    AutoTiledMatmul(256, 32, 256, "FP32"),    # full-K grid
    MatmulBiasKTail(), ChainedCastFold(), PipelinedExp(), PipelinedUserKLoop(),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.get_name())
def test_tiling_system(case, tmp_path):
    outcome = case.run(tmp_path)
    assert outcome.result.races == []
