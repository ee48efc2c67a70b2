"""Simulator speed: simulated instructions per second, and the overhead over numpy.

Workload: a 1024 x 1024 x 1024 bf16 -> fp32 matmul as a hand-written Level-3 kernel
(``ptoc.sim.examples.dbuf_matmul``: 128 x 256 output tiles, K-steps of 64, double-buffered
L1/L0A/L0B, pto-isa flag protocol), simulated in ``fast`` mode (float64 BLAS MAD).

Baseline ("numpy doing the same tile arithmetic"): the same loop nest in plain numpy —
per output tile and K-step, slice the bf16 A/B tiles, widen to float64, multiply, add
to the fp32 accumulator and round once, then store — i.e. exactly the arithmetic the
simulator performs, without timing, flags, race checking or byte buffers.

Run: python benchmarks/sim_speed.py [--size 1024] [--repeat 3] [--reference]
"""

from __future__ import annotations

import argparse
import os
import time

# One BLAS thread by default: the ratio compares Python overhead against the same BLAS calls,
# and a multi-threaded BLAS on a loaded machine makes both sides noisy. Override by setting
# OPENBLAS_NUM_THREADS / OMP_NUM_THREADS yourself.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import ml_dtypes
import numpy as np

from ptoc.pto import parse
from ptoc.sim import simulate
from ptoc.sim.examples import dbuf_matmul


def numpy_tiles(a, b, m, n, k):
    M, K = a.shape
    N = b.shape[1]
    out = np.zeros((M, N), np.float32)
    for i in range(0, M, m):
        for j in range(0, N, n):
            acc = None
            for k0 in range(0, K, k):
                prod = a[i:i + m, k0:k0 + k].astype(np.float64) @ \
                    b[k0:k0 + k, j:j + n].astype(np.float64)
                acc = prod.astype(np.float32) if acc is None else \
                    (acc.astype(np.float64) + prod).astype(np.float32)
            out[i:i + m, j:j + n] = acc
    return out


def best_of(fn, repeat):
    times, value = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reference", action="store_true",
                    help="also time reference mode (pto-isa MAD order; much slower)")
    args = ap.parse_args()
    S, m, n, k = args.size, 128, 256, 64
    rng = np.random.default_rng(0)
    a = rng.standard_normal((S, S)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((S, S)).astype(ml_dtypes.bfloat16)
    tensors = {"arg0": a, "arg1": b, "arg2": np.zeros((S, S), np.float32)}
    text = dbuf_matmul(S, S, S, k, m=m, n=n)
    t_parse, module = best_of(lambda: parse(text), args.repeat)
    t_sim, res = best_of(lambda: simulate(module, tensors, mode="fast"), args.repeat)
    t_np, golden = best_of(lambda: numpy_tiles(a, b, m, n, k), args.repeat)
    t_blas, _ = best_of(lambda: a.astype(np.float32) @ b.astype(np.float32), args.repeat)
    assert np.array_equal(res.outputs["arg2"], golden), "fast mode must equal the numpy tiles"
    assert not res.races
    n_ins = len(res.instructions)
    print(f"workload: {S}x{S}x{S} bf16, tiles {m}x{n}x{k}, {n_ins} simulated instructions")
    print(f"simulated wall: {res.wall_cycles:,.0f} cycles, binding pipe {res.binding_pipe.short}")
    print(f"parse:            {t_parse * 1e3:8.1f} ms")
    print(f"simulate (fast):  {t_sim * 1e3:8.1f} ms  -> {n_ins / t_sim:,.0f} instructions/s")
    print(f"numpy tiles:      {t_np * 1e3:8.1f} ms  (same float64 tile arithmetic)")
    print(f"overhead ratio:   {t_sim / t_np:8.2f} x numpy tiles (target <= 3)")
    print(f"one fp32 matmul:  {t_blas * 1e3:8.1f} ms  (context only)")
    if args.reference:
        t_ref, _ = best_of(lambda: simulate(module, tensors, mode="reference"), 1)
        print(f"simulate (reference): {t_ref * 1e3:8.1f} ms -> {n_ins / t_ref:,.0f} instructions/s")


if __name__ == "__main__":
    main()
