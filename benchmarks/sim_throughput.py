"""Simulator throughput: simulated instructions per second, fast and reference modes.

Workload (as ``sim_speed.py``): an S x S x S bf16 -> fp32 matmul written by hand in Level-3
PTO (``ptoc.sim.examples.dbuf_matmul``: 128 x 256 output tiles, K steps of 64, double
buffered), plus the per-tile numpy loop doing the same float64 tile arithmetic as the
baseline of the overhead ratio. Reference mode (pto-isa MAD order) runs on the smallest
size only. Best of ``--repeat``.

Run: python benchmarks/sim_throughput.py [--sizes 256 512 1024] [--quick]
(default sizes 256 and 512; ``--full`` (ptoc bench --full) adds 1024 and 2048)
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sim_speed import best_of, numpy_tiles  # noqa: E402  (sets single-thread BLAS)

from _table import Table  # noqa: E402

TITLE = "simulator throughput (hand-written double-buffered bf16 matmul)"


def measure(S: int, mode: str, repeat: int) -> dict:
    import ml_dtypes
    import numpy as np

    from ptoc.pto import parse
    from ptoc.sim import simulate
    from ptoc.sim.examples import dbuf_matmul

    m, n, k = min(128, S), min(256, S), 64
    rng = np.random.default_rng(0)
    a = rng.standard_normal((S, S)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((S, S)).astype(ml_dtypes.bfloat16)
    tensors = {"arg0": a, "arg1": b, "arg2": np.zeros((S, S), np.float32)}
    module = parse(dbuf_matmul(S, S, S, k, m=m, n=n))
    t_sim, res = best_of(lambda: simulate(module, tensors, mode=mode), repeat)
    t_np, _ = best_of(lambda: numpy_tiles(a, b, m, n, k), repeat)
    count = len(res.instructions)
    return {"size": S, "mode": mode, "instructions": count, "sim_s": t_sim,
            "ins_per_s": count / t_sim, "numpy_s": t_np, "ratio": t_sim / t_np,
            "cycles": res.wall_cycles, "races": len(res.races)}


def run(quick: bool = False, full: bool = False, sizes=None, repeat: int | None = None):
    sizes = sizes or ([128] if quick else [256, 512] + ([1024, 2048] if full else []))
    repeat = repeat or (1 if quick else 2)
    table = Table("sim_throughput", TITLE,
                  ["S^3", "mode", "instructions", "sim s", "instr/s", "numpy tiles s",
                   "x numpy", "sim cycles", "races"])
    plan = [(s, "fast") for s in sizes] + [(sizes[0], "reference")]
    for S, mode in plan:
        r = measure(S, mode, repeat)
        table.add(f"{S}", mode, r["instructions"], r["sim_s"], r["ins_per_s"], r["numpy_s"],
                  r["ratio"], r["cycles"], r["races"])
    table.notes.append(f"best of {repeat}; x numpy = simulator wall / numpy tile loop wall "
                       "(sim_speed.py's target: <= 3 in fast mode)")
    return [table]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*")
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    for table in run(quick=args.quick, sizes=args.sizes, repeat=args.repeat):
        print(table.render())


if __name__ == "__main__":
    main()
