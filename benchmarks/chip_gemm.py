"""Chip GEMM: pto-isa's reference GEMM over 24 cores, simulated next to the published walls.

Workload: ``ptoc.sim.chip.examples.gemm_tasks`` — the hand-written reference kernel
(fp16 -> fp32, base tile 128x256x64, L1 panels of 4 k-steps, double-buffered L1/L0A/L0B,
one L0C) split over a 4x6 grid of AIC cores as one SPMD launch, each core computing
(M/4) x (N/6) x K; timed on the simulated a2a3 chip (``ptoc.sim.chip``: device dispatch,
shared L2 and HBM) under the default profile. The published rows are the training set's
(``ptoc.calibration.TRAINING_SET``: pto-isa gemm_performance README, A3 24 cores).

Two tables: the four published sizes timed only (identical blocks are issued once and their
record re-timed on each block's GM regions), and a smaller size run with numerics too, to
show the timing-only run times it exactly as the full run does and what numerics cost.

Run: python benchmarks/chip_gemm.py [--quick]
"""

from __future__ import annotations

import os
import time

# One BLAS thread: the numerics run does many small matmuls, which a multi-threaded BLAS on
# a loaded machine slows down by orders of magnitude.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

from ptoc.backend import Pipe, get_target
from ptoc.calibration import TOTAL, TRAINING_SET, read_measurements
from ptoc.sim.chip import simulate_chip
from ptoc.sim.chip.examples import gemm_tasks

from _table import Table, cli

TITLE = "chip: reference GEMM on 24 cores, simulated vs published (a2a3)"
_PIPES = (("M", Pipe.PIPE_M), ("MTE1", Pipe.PIPE_MTE1), ("MTE2", Pipe.PIPE_MTE2),
          ("FIX", Pipe.PIPE_FIX))


def published() -> dict[int, dict]:
    """{m=k=n: observed cycles (TOTAL and per pipe, one core's busy)} of the GEMM rows."""
    clock = get_target("a2a3").clock_hz
    rows = read_measurements(TRAINING_SET, clock_hz=clock).rows
    return {row.shape[0]: row.observed for row in rows if row.kernel == "gemm"}


def simulate(size: int, *, numerics: bool):
    """(ChipResult, seconds, tensors) of the size^3 GEMM on the 4x6 grid."""
    t0 = time.perf_counter()
    tasks, tensors = gemm_tasks(size, size, size, grid=(4, 6), seed=0 if numerics else None)
    result = simulate_chip(tasks, mode="fast", numerics=numerics)
    return result, time.perf_counter() - t0, tensors


def run(quick: bool = False, full: bool = False) -> list[Table]:
    clock = get_target("a2a3").clock_hz
    pub = published()
    sizes = [1536] if quick else sorted(pub)
    rows = Table("chip_gemm", TITLE,
                 ["m=k=n", "published us", "simulated us", "error %", "M pub/sim",
                  "MTE1 pub/sim", "MTE2 pub/sim", "FIX pub/sim", "L2 hits %", "sim s"])
    for size in sizes:
        res, seconds, _ = simulate(size, numerics=False)
        wall = res.wall_cycles
        seen = pub[size]
        cores = len(res.used_cores())
        shares = [f"{seen[p] / seen[TOTAL]:.3f}/{res.pipe_busy[p] / cores / wall:.3f}"
                  for _, p in _PIPES]
        rows.add(size, 1e6 * seen[TOTAL] / clock, 1e6 * wall / clock,
                 100 * (wall / seen[TOTAL] - 1), *shares, 100 * res.memory.l2_hit_rate, seconds)
    rows.notes.append("shares: each pipe's busy time (one core's mean) / the wall; wall from "
                      "the run's launch, with one dispatch per block (the launch floor)")
    check = Table("chip_gemm", "chip: timing only vs numerics (fast mode), same GEMM",
                  ["m=k=n", "run", "wall cycles", "sim s", "max |err| vs numpy"])
    size = 1536
    for numerics in (True, False):
        res, seconds, (a, b, c) = simulate(size, numerics=numerics)
        err = None
        if numerics:
            want = a.array().astype(np.float64) @ b.array().astype(np.float64)
            err = float(np.abs(c.array() - want).max())
        check.add(size, "numerics" if numerics else "timing only", res.wall_cycles, seconds,
                  err)
    check.notes.append("the timing-only run issues one block and re-times its record on the "
                       "other 23 blocks' regions; its wall equals the numerics run's")
    return [rows, check]


if __name__ == "__main__":
    cli(run, __doc__)
