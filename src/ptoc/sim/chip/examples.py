"""Task graphs for tests, benchmarks and demos of the chip simulator.

``gemm_tasks``: pto-isa's reference GEMM (``ptoc.sim.examples.reference_gemm``) split over a
grid of cores as the reference kernel splits it: core (i, j) of a rows x cols grid computes
the (M/rows) x (N/cols) block of C over the whole K — one SPMD launch of rows*cols blocks,
each bound to its row block of A, column block of B and block of C.

``split_k_tasks``: the same kernel with K split over ``splits`` cores: block s multiplies
A[:, s-th K slice] by B[s-th K slice, :] and adds its tile into C with atomic-add stores —
one SPMD launch whose blocks all write all of C, correct only because the adds commute.
"""

from __future__ import annotations

import numpy as np

from ptoc.dtypes import DataType
from ptoc.pto import parse

from ptoc.sim.examples import reference_gemm
from ptoc.sim.global_memory import GlobalMemory
from ptoc.sim.task import Task

_DTYPES = {"f16": DataType.FP16, "bf16": DataType.BF16}


def gemm_tasks(M: int, N: int, K: int, *, grid: tuple[int, int] = (4, 6), m: int = 128,
               n: int = 256, k: int = 64, dtype: str = "f16", seed: int | None = 0,
               memory: GlobalMemory | None = None):
    """(tasks, (a, b, c)): C[M,N] (fp32) = A[M,K] @ B[K,N] as ``grid`` blocks.

    A and B hold seeded standard-normal values (zeros when ``seed`` is None: timing only
    needs the shapes); C starts at zero.
    """
    rows, cols = grid
    if M % rows or N % cols:
        raise ValueError(f"the {rows}x{cols} grid does not divide M={M}, N={N}")
    mc, nc = M // rows, N // cols
    module = parse(reference_gemm(mc, nc, K, m=m, n=n, k=k, dtype=dtype, ldb=N, ldc=N),
                   filename=f"gemm_block_{mc}x{nc}x{K}.pto")
    a, b, c = _operands(memory or GlobalMemory(), M, N, K, dtype, seed)
    tasks = []
    for i in range(rows):
        for j in range(cols):
            a_blk, b_blk = a.slice([i * mc, 0], [mc, K]), b.slice([0, j * nc], [K, nc])
            c_blk = c.slice([i * mc, j * nc], [mc, nc])
            index = len(tasks)
            tasks.append(Task(index, "kernel", module, (a_blk, b_blk, c_blk), (a_blk, b_blk),
                              (c_blk,), params=("a", "b", "c"), launch=0,
                              block=(index, rows * cols)))
    return tasks, (a, b, c)


def split_k_tasks(M: int, N: int, K: int, *, splits: int = 4, m: int = 128, n: int = 256,
                  k: int = 64, dtype: str = "f16", seed: int | None = 0, atomic: bool = True,
                  memory: GlobalMemory | None = None):
    """(tasks, (a, b, c)): C[M,N] (fp32, starting at zero) += A[:, Ks] @ B[Ks, :] per split
    (``atomic=False`` stores instead: the blocks then race on C)."""
    if K % splits:
        raise ValueError(f"{splits} splits do not divide K={K}")
    ks = K // splits
    module = parse(reference_gemm(M, N, ks, m=m, n=n, k=k, dtype=dtype, ldb=N, ldc=N, lda=K,
                                  atomic=atomic), filename=f"split_k_{M}x{N}x{ks}.pto")
    a, b, c = _operands(memory or GlobalMemory(), M, N, K, dtype, seed)
    tasks = []
    for s in range(splits):
        a_s, b_s = a.slice([0, s * ks], [M, ks]), b.slice([s * ks, 0], [ks, N])
        tasks.append(Task(s, "kernel", module, (a_s, b_s, c), (a_s, b_s, c), (c,),
                          params=("a", "b", "c"), launch=0, block=(s, splits)))
    return tasks, (a, b, c)


def _operands(gm: GlobalMemory, M: int, N: int, K: int, dtype: str, seed: int | None):
    """A[M,K], B[K,N] (seeded standard normal, zeros without a seed) and a zero C[M,N] fp32."""
    dt = _DTYPES[dtype]
    rng = np.random.default_rng(seed) if seed is not None else None

    def data(shape):
        return None if rng is None else rng.standard_normal(shape).astype(dt.numpy)

    return (gm.alloc("a", (M, K), dt, init=data((M, K))), gm.alloc("b", (K, N), dt,
                                                                 init=data((K, N))),
            gm.alloc("c", (M, N), DataType.FP32))
