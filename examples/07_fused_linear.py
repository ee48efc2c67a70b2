"""A fused linear layer, y = GELU(x @ w + bias) in bf16, written as ONE mixed scope.

The scope tiles the output by hand ([TM, TN] blocks, a stage-2 pipelined K loop of
``matmul_acc`` over [TM, TK] x [TK, TN] L1 tiles); ptoc still picks the L0 tiles, pipelines
and double-buffers the cube part, splits the scope into an AIC kernel (the GEMM, pushing
each accumulator block) and an AIV kernel (bias, GELU as ``z * sigmoid(1.702 z)``, bf16
cast, store), each AIV taking half of every block's rows.

Run: python examples/07_fused_linear.py [size]   (default 256; the acceptance size is 1024)
"""

import sys
import tempfile

import ml_dtypes
import numpy as np

import ptoc.language as pl
from ptoc import ir

TM, TN, TK = 64, 128, 128
BF16 = ml_dtypes.bfloat16


def fused_linear(size: int):
    """The program for size x size x size (a multiple of 128)."""
    M = N = K = size

    @pl.program
    class FusedLinear:
        @pl.function
        def main(self, x: pl.Tensor[[M, K], pl.BF16], w: pl.Tensor[[K, N], pl.BF16],
                 bias: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.BF16]]):
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)],
                       name_hint="fused_linear"):
                for mb in pl.range(M // TM):
                    for nb in pl.range(N // TN):
                        r = mb * TM
                        c = nb * TN
                        acc = pl.create_tile([TM, TN], dtype=pl.FP32, target_memory=pl.Mem.Acc)
                        for kb in pl.pipeline(K // TK, stage=2):
                            k = kb * TK
                            a = pl.load(x, [r, k], [TM, TK], target_memory=pl.Mem.Mat)
                            b = pl.load(w, [k, c], [TK, TN], target_memory=pl.Mem.Mat)
                            acc = pl.matmul_acc(acc, a, b, kb == 0)
                        z = pl.add(pl.move(acc, target_memory=pl.Mem.Vec),
                                   pl.load(bias, [r, c], [TM, TN]))
                        g = pl.div(z, pl.adds(pl.exp(pl.muls(z, -1.702)), 1.0))
                        y = pl.store(pl.cast(g, pl.BF16, mode="rint"), [r, c], y)
            return y

    return FusedLinear


#: the 256^3 layer, for `ptoc run examples/07_fused_linear.py`
SIZE = 256
FusedLinear = fused_linear(SIZE)


def inputs(size: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((size, size)) * 0.1).astype(BF16)
    w = (rng.standard_normal((size, size)) * 0.1).astype(BF16)
    bias = rng.standard_normal((size, size)).astype(np.float32)
    return x, w, bias, np.zeros((size, size), BF16)


def reference(x, w, bias):
    z = x.astype(np.float64) @ w.astype(np.float64) + bias
    return z / (1 + np.exp(-1.702 * z))


def example_inputs():
    """Inputs of `FusedLinear` for `ptoc run` (the output y included, in order)."""
    return inputs(SIZE)


def golden(named):
    """The reference `ptoc run` compares against (bf16 output: one rounding)."""
    return {"y": reference(named["x"], named["w"], named["bias"]).astype(np.float32).astype(BF16)}


def main(output_dir=None, size: int = 256, platform: str = "a2a3sim") -> float:
    from ptoc.runtime import RunConfig

    x, w, bias, y = inputs(size)
    compiled = ir.compile(fused_linear(size), output_dir or tempfile.mkdtemp(prefix="ptoc_ex07_"),
                          platform=platform)
    result = compiled.run(x, w, bias, y, config=RunConfig(platform=platform))
    want = reference(x, w, bias)
    error = float(np.abs(y.astype(np.float64) - want).max() / np.abs(want).max())
    assert error < 1e-2 and not result.races
    group = result.runs[0].sim
    unit, pipe = group.binding
    print(f"{size}^3 on {platform}: relative error {error:.1e}; wall {group.wall_cycles:.0f} "
          f"cycles, max pipe {unit}/{pipe.short} {group.pipe_busy[(unit, pipe)]:.0f}")
    return error


if __name__ == "__main__":
    main(size=int(sys.argv[1]) if len(sys.argv) > 1 else 256)
