"""A row softmax on the vector unit: reductions with a scratch tile and row-expand ops.

Run: python examples/04_softmax.py
"""

import tempfile

import numpy as np

import ptoc.language as pl
from ptoc import ir

R, C = 64, 128


@pl.program
class Softmax:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        t = pl.load(x, [0, 0], [R, C])
        scratch = pl.create_tile([R, C], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        e = pl.row_expand_expdif(t, pl.row_max(t, scratch))
        y = pl.store(pl.row_expand_div(e, pl.row_sum(e, scratch)), [0, 0], y)
        return y


def main(output_dir=None) -> float:
    x = np.random.default_rng(3).standard_normal((R, C)).astype(np.float32)
    y = np.zeros_like(x)
    result = ir.compile(Softmax, output_dir or tempfile.mkdtemp(prefix="ptoc_ex04_")).run(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    error = float(np.abs(y - e / e.sum(axis=1, keepdims=True)).max())
    assert error < 1e-5 and not result.races
    print(f"max error {error:.2e}, {result.cycles:.0f} cycles")
    return error


if __name__ == "__main__":
    main()
