"""Fused linear layer (GEMM + bias + GELU, bf16 -> bf16) on the simulated core group.

``examples/07_fused_linear.py`` is one mixed ``pl.at`` scope; ptoc splits it into an AIC
kernel (the tiled GEMM, L0-tiled, pipelined) and an AIV kernel run by both AIVs (bias,
GELU, bf16 cast, store; ``pl.split(UP_DOWN)`` gives each AIV half the rows). The group runs
in ``fast`` mode; each core's pipe busy time is listed, and the max-pipe bound is the
busiest (core, pipe) pair. Issue 12's target: wall within 15 % of that bound at 1024^3 —
reported here, asserted in tests/system/test_mixed_kernels.py.

Run: python benchmarks/mixed_fused_linear.py [--sizes 256 1024] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _table import Table  # noqa: E402

TITLE = "fused linear (GEMM + bias + GELU, bf16) on one core group: wall vs max-pipe bound"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "07_fused_linear.py"
PLATFORMS = ("a2a3sim", "a5sim")
PIPES = (("aic", "MTE2"), ("aic", "MTE1"), ("aic", "M"), ("aic", "FIX"),
         ("aiv0", "MTE2"), ("aiv0", "V"), ("aiv0", "MTE3"), ("aiv1", "V"))


def _example():
    spec = importlib.util.spec_from_file_location("example_07_fused_linear", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(size: int, platform: str) -> dict:
    import numpy as np

    from ptoc import ir
    from ptoc.runtime import RunConfig

    ex = _example()
    x, w, bias, y = ex.inputs(size)
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        compiled = ir.compile(ex.fused_linear(size), out, platform=platform, dump_passes=False)
        t_compile = time.perf_counter() - t0
        t0 = time.perf_counter()
        with np.errstate(over="ignore"):
            result = compiled.run(x, w, bias, y,
                                  config=RunConfig(platform=platform, sim_mode="fast"))
        t_sim = time.perf_counter() - t0
    group = result.runs[0].sim
    busy = {(unit, pipe.short): c for (unit, pipe), c in group.pipe_busy.items()}
    binding = max(busy, key=busy.get)
    want = ex.reference(x, w, bias)
    err = float(np.abs(y.astype(np.float64) - want).max() / np.abs(want).max())
    return {"wall": group.wall_cycles, "busy": busy, "binding": binding,
            "bound": busy[binding], "ratio": group.wall_cycles / busy[binding],
            "races": len(result.races), "rel_err": err, "compile_s": t_compile,
            "sim_s": t_sim}


def run(quick: bool = False, full: bool = False, sizes=None) -> list[Table]:
    sizes = sizes or ([256] if quick else [256, 1024])
    table = Table("mixed_fused_linear", TITLE,
                  ["S^3", "target", "wall"] + [f"{u}/{p}" for u, p in PIPES]
                  + ["binding", "wall/bound", "<=1.15", "races", "rel err", "compile s",
                     "sim s"])
    for size in sizes:
        for platform in PLATFORMS:
            r = measure(size, platform)
            table.add(size, platform.removesuffix("sim"), r["wall"],
                      *[r["busy"].get(key, 0.0) for key in PIPES], "/".join(r["binding"]),
                      r["ratio"], r["ratio"] <= 1.15 if size >= 1024 else None, r["races"],
                      r["rel_err"], r["compile_s"], r["sim_s"])
    table.notes.append("busy = cycles each (core, pipe) works; bound = the busiest pair; "
                       "aiv1 mirrors aiv0 (UP_DOWN halves)")
    table.notes.append("the issue-12 target wall/bound <= 1.15 applies at 1024^3; small sizes "
                       "pay the pipe's fill and drain")
    return [table]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for table in run(quick=args.quick, sizes=args.sizes):
        print(table.render())


if __name__ == "__main__":
    main()
