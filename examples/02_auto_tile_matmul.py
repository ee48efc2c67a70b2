"""A tensor-level matmul: the compiler picks the L0 tiling (an M/N output grid here).

Run: python examples/02_auto_tile_matmul.py
"""

import tempfile

import numpy as np

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import DataType

M, K, N = 512, 64, 512


@pl.program
class AutoTile:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, x: pl.Tensor[[M, K], pl.BF16], w: pl.Tensor[[K, N], pl.BF16],
           y: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        y[:] = pl.matmul(x, w, out_dtype=pl.FP32)
        return y


def main(output_dir=None) -> float:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((M, K)).astype(DataType.BF16.numpy)
    w = rng.standard_normal((K, N)).astype(DataType.BF16.numpy)
    y = np.zeros((M, N), np.float32)
    compiled = ir.compile(AutoTile, output_dir or tempfile.mkdtemp(prefix="ptoc_ex02_"))
    result = compiled.run(x, w, y)
    error = float(np.abs(y - x.astype(np.float32) @ w.astype(np.float32)).max())
    assert error < 1e-2 and not result.races
    print(f"max error {error:.2e}; {result.cycles:.0f} cycles; see {compiled.output_dir}/passes_dump "
          "for the tiled loops")
    return error


if __name__ == "__main__":
    main()
