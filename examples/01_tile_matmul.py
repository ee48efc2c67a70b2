"""A tile-level matmul: explicit Mat -> Left/Right -> Acc -> DDR data path.

Run: python examples/01_tile_matmul.py
"""

import tempfile

import numpy as np

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import DataType

M, K, N = 64, 64, 64


@pl.program
class TileMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.BF16], b: pl.Tensor[[K, N], pl.BF16],
               c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        am = pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(am, target_memory=pl.Mem.Left), pl.move(bm, target_memory=pl.Mem.Right))
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.BF16], b: pl.Tensor[[K, N], pl.BF16],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.kernel(a, b, c)
        return c


def main(output_dir=None) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(DataType.BF16.numpy)
    b = rng.standard_normal((K, N)).astype(DataType.BF16.numpy)
    c = np.zeros((M, N), np.float32)
    compiled = ir.compile(TileMatmul, output_dir or tempfile.mkdtemp(prefix="ptoc_ex01_"))
    result = compiled.run(a, b, c)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    error = float(np.abs(c - expected).max())
    assert error < 1e-2 and not result.races
    print(f"max error {error:.1e}, {result.cycles:.0f} simulated cycles, artifacts in "
          f"{compiled.output_dir}")
    return error


if __name__ == "__main__":
    main()
