"""Compile time per pass and in total for the flagship programs, dbC off and on.

Programs: 160x64x160 and 448x64x448 FP32 direct-store grids, and the 256x64x256 BF16
Mat-scratch chain. Each compile runs with ``profiling=True`` (per-pass wall time from the
PassManager's timing instrument) and records decisions; "verify, codegen, plan, sync,
write" is the rest of ``ir.compile`` (the verifier after each pass, PTO generation,
InsertSync, reports). The compile is timed with ``check_dbc=False``; the last row is what
the dbC check adds when the chooser takes dbC=2 (a second, flag-off compile and a timing
simulation of both programs: ``ptoc.runtime.dbc_check``). Best of ``--repeat`` runs.
Milliseconds. The totals are given as wall-clock time and as this process's CPU time
(``time.process_time``): on a shared machine the wall clock also counts the time other
processes held the CPU, so the CPU total is the one to compare between runs. The L0 tile
chooser remembers its answers per matmul problem for the life of the process, so repeated
compiles of one program reuse them; the row below the CPU total clears that memo before each
compile (the cost of the first compile of a matmul shape).

Run: python benchmarks/compile_time.py [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _programs import direct_store, mat_scratch_chain  # noqa: E402
from _table import Table  # noqa: E402

TITLE = "compile time per pass (ms), flagship programs, dbC off/on"


def flagships(quick: bool):
    if quick:
        return [("64x64x64 FP32", lambda: direct_store(64, 64, 64))]
    return [("160x64x160 FP32", lambda: direct_store(160, 64, 160)),
            ("448x64x448 FP32", lambda: direct_store(448, 64, 448)),
            ("256x64x256 BF16", mat_scratch_chain)]


def measure(build, dbc: bool, repeat: int, check_dbc: bool = False, cold: bool = False
            ) -> tuple[float, dict[str, float], float]:
    """(best wall ms, that run's per-pass ms, best CPU ms) over ``repeat`` compiles.
    ``cold``: the L0 chooser's process-wide memo is cleared before each compile (as for the
    first compile of a matmul shape in a process)."""
    from ptoc import ir
    from ptoc.passes.l0_tile_chooser import clear_chooser_memo

    best, best_cpu = None, None
    for _ in range(repeat):
        program = build()
        if cold:
            clear_chooser_memo()
        with tempfile.TemporaryDirectory() as out:
            t0, c0 = time.perf_counter(), time.process_time()
            compiled = ir.compile(program, out, dump_passes=False, profiling=True,
                                  enable_pypto_l0c_double_buffer=dbc, check_dbc=check_dbc)
            total = (time.perf_counter() - t0) * 1e3
            cpu = (time.process_time() - c0) * 1e3
        passes = {p["name"]: p["ms"] for p in compiled.profile["passes"]}
        if best is None or total < best[0]:
            best = (total, passes)
        best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
    return best + (best_cpu,)


def run(quick: bool = False, full: bool = False, repeat: int | None = None) -> list[Table]:
    repeat = repeat or (1 if quick else 3)
    measure(lambda: direct_store(32, 32, 32), False, 1)  # warm-up: imports, registries, caches
    columns, results, checks, colds = [], [], [], []
    for label, build in flagships(quick):
        for dbc in (False, True):
            columns.append(f"{label} dbC{'2' if dbc else '1'}")
            results.append(measure(build, dbc, repeat))
            colds.append(measure(build, dbc, repeat, cold=True)[2])
            checks.append(max(0.0, measure(build, dbc, repeat, check_dbc=True)[0]
                              - results[-1][0]) if dbc else 0.0)
    names = list(dict.fromkeys(n for _, passes, _ in results for n in passes))
    table = Table("compile_time", TITLE, ["pass"] + columns)
    for name in names:
        table.add(name, *[passes.get(name, 0.0) for _, passes, _ in results])
    table.add("verify, codegen, plan, sync, write",
              *[total - sum(passes.values()) for total, passes, _ in results])
    table.add("total (ir.compile) without the dbC check", *[total for total, _, _ in results])
    table.add("total CPU time (process) without the dbC check",
              *[cpu for _, _, cpu in results])
    table.add("  the same, L0 chooser memo cleared before each compile", *colds)
    table.add("+ dbC check (default check_dbc=True)", *checks)
    table.notes.append(f"best of {repeat}; wall-clock milliseconds on this machine "
                       "(includes decision recording), except the CPU-time row")
    return [table]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    for table in run(quick=args.quick, repeat=args.repeat):
        print(table.render())


if __name__ == "__main__":
    main()
