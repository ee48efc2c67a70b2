"""Validating dbC=2 without a device: the same matmul with the L0C double buffer off and on.

Run: python examples/03_dbc_matmul.py
"""

import tempfile

import numpy as np

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import MemorySpace
from ptoc.runtime.metrics import drain_overlap

M, K, N = 448, 64, 448


@pl.program
class Grid:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        lm = pl.tile.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
        rm = pl.tile.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat)
        out = pl.store(pl.tile.matmul(lm, rm), [0, 0], out)
        return out


def main(output_dir=None) -> dict:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    cycles = {}
    for flag in (False, True):
        out = np.zeros((M, N), np.float32)
        compiled = ir.compile(Grid, output_dir or tempfile.mkdtemp(prefix="ptoc_ex03_"),
                              enable_pypto_l0c_double_buffer=flag, dump_passes=False)
        result = compiled.run(a, b, out)
        assert np.allclose(out, a @ b, rtol=1e-3, atol=1e-3) and not result.races
        accs = [(x.addr, x.size) for x in compiled.allocations_in(MemorySpace.Acc)]
        overlap = drain_overlap(result.runs[0].sim)
        cycles[flag] = result.cycles
        print(f"dbC={'on ' if flag else 'off'}: Acc buffers {accs}; {result.cycles:.0f} cycles; "
              f"drain hidden {overlap.hidden:.0f} of {overlap.total:.0f} cycles")
    print(f"speed-up {cycles[False] / cycles[True]:.2f}x")
    return cycles


if __name__ == "__main__":
    main()
