"""DSL programs the benchmarks compile: the flagship grids and an L1-tiled bf16 GEMM.

Programs are built from source text with ``pl.parse_program`` so that the benchmark scripts
need nothing from ``tests/``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ptoc.language import parse_program

NP = {"FP32": np.float32, "BF16": ml_dtypes.bfloat16, "FP16": np.float16}

_HEAD = """\
import ptoc.language as pl

@pl.program
class {name}:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, {params}) -> pl.Tensor[[{M}, {N}], pl.FP32]:
{body}
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {params}) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        out = self.kernel({args})
        return out
"""

_DIRECT = """\
        am = pl.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)
        c = pl.matmul(am, bm)
        out = pl.store(c, [0, 0], out)
        return out
"""

_CHAIN = """\
        am = pl.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [{K}, {M}], target_memory=pl.Mem.Mat)
        em = pl.load(e, [0, 0], [{M}, {N}], target_memory=pl.Mem.Mat)
        c = pl.matmul(am, bm)
        cb: pl.Tile[[{M}, {M}], pl.BF16] = pl.cast(c, pl.BF16, mode="rint")
        d = pl.matmul(cb, em)
        out = pl.store(d, [0, 0], out)
        return out
"""

# One [BM, BN] output block per (i, j); a stage-2 pipelined K loop of [BM, BK] x [BK, BN]
# Mat tiles accumulating in L0C; AutoTileMatmulL0 picks the L0 tile inside.
_TILED = """\
        for i, (o0,) in pl.range(0, {MB}, 1, init_values=(out,)):
            for j, (o1,) in pl.range(0, {NB}, 1, init_values=(o0,)):
                acc0 = pl.tile.create([{BM}, {BN}], dtype=pl.FP32, target_memory=pl.Mem.Acc)
                for kb, (acc,) in pl.pipeline(0, {KB}, 1, stage=2, init_values=(acc0,)):
                    am = pl.load(a, [i * {BM}, kb * {BK}], [{BM}, {BK}], target_memory=pl.Mem.Mat)
                    bm = pl.load(b, [kb * {BK}, j * {BN}], [{BK}, {BN}], target_memory=pl.Mem.Mat)
                    if kb == 0:
                        r = pl.matmul(am, bm)
                        acc2 = pl.yield_(r)
                    else:
                        r2 = pl.matmul_acc(acc, am, bm)
                        acc2 = pl.yield_(r2)
                    acc3 = pl.yield_(acc2)
                o2 = pl.store(acc3, [i * {BM}, j * {BN}], o1)
                o3 = pl.yield_(o2)
            o4 = pl.yield_(o3)
        return o4
"""


def _program(name, body, M, N, params, args):
    return parse_program(_HEAD.format(name=name, params=params, M=M, N=N, body=body, args=args),
                         f"<bench {name}>")


def direct_store(M: int, K: int, N: int, dtype: str = "FP32"):
    """``out = a @ b`` loaded whole into Mat, one matmul, one store (the dbC grids)."""
    params = (f"a: pl.Tensor[[{M}, {K}], pl.{dtype}], b: pl.Tensor[[{K}, {N}], pl.{dtype}], "
              f"out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]")
    return _program(f"Gemm{M}x{K}x{N}{dtype}", _DIRECT.format(M=M, K=K, N=N), M, N, params,
                    "a, b, out")


def mat_scratch_chain(M: int = 256, K: int = 64, N: int = 64):
    """BF16 ``(a @ b)`` -> rint cast -> ``@ e`` (the 256x64x256 Mat-scratch flagship)."""
    params = (f"a: pl.Tensor[[{M}, {K}], pl.BF16], b: pl.Tensor[[{K}, {M}], pl.BF16], "
              f"e: pl.Tensor[[{M}, {N}], pl.BF16], out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]")
    return _program("MatScratchChain", _CHAIN.format(M=M, K=K, N=N), M, N, params, "a, b, e, out")


def tiled_gemm(S: int, BM: int = 128, BN: int = 256, BK: int = 128, dtype: str = "BF16"):
    """An S x S x S GEMM as an L1-tiled kernel (works beyond what fits Mat at once)."""
    BM, BN, BK = min(BM, S), min(BN, S), min(BK, S)
    params = (f"a: pl.Tensor[[{S}, {S}], pl.{dtype}], b: pl.Tensor[[{S}, {S}], pl.{dtype}], "
              f"out: pl.Out[pl.Tensor[[{S}, {S}], pl.FP32]]")
    body = _TILED.format(MB=S // BM, NB=S // BN, KB=S // BK, BM=BM, BN=BN, BK=BK)
    return _program(f"TiledGemm{S}", body, S, S, params, "a, b, out")


def inputs(shapes: list[tuple[int, int]], dtype: str, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(NP[dtype]) for s in shapes]
