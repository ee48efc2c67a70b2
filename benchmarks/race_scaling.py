"""Race checker scaling: seconds of ``find_races`` on the K-loop kernel, 2^14..2^18 trips.

Workload: ``ptoc.sim.examples.k_loop_sum`` — a K loop on MTE2 and V (load a tile, add it
into an accumulator, flags both ways) with one final MTE3 store, so MTE3 idles until the
end. That is the shape that made the earlier checker quadratic (issue 16 point 5): it could
only forget an access once every pipe with work left had synchronised past it.

Each row times only the race checker (the simulation around it is not counted), reports
the time per instruction and the growth from the previous row next to the n log n growth;
O(n log n) shows as a "growth / n log n" column near 1.

Run: python benchmarks/race_scaling.py [--exponents 14 15 16 17 18] [--quick]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import ptoc.sim.api as sim_api
from ptoc.sim import simulate
from ptoc.sim.examples import k_loop_sum

from _table import Table

TITLE = "race checker: seconds on the K-loop kernel (one final store) by trip count"


def race_check_seconds(trips: int) -> tuple[int, float, int]:
    """(instructions, seconds in find_races, races) of one simulated run."""
    spent = []
    real = sim_api.find_races

    def timed(instrs, sch):
        t0 = time.perf_counter()
        races = real(instrs, sch)
        spent.append(time.perf_counter() - t0)
        return races

    x = np.ones((16, 16), np.float32)
    sim_api.find_races = timed
    try:
        result = simulate(k_loop_sum(trips), [x, np.zeros_like(x)], mode="fast")
    finally:
        sim_api.find_races = real
    return len(result.instructions), sum(spent), len(result.races)


def run(quick: bool = False, full: bool = False, exponents=None) -> list[Table]:
    exponents = exponents or ([8, 9] if quick else [14, 15, 16, 17, 18])
    table = Table("race_scaling", TITLE,
                  ["trips", "instructions", "find_races s", "us/instr", "growth",
                   "n log n growth", "growth / n log n", "races"])
    prev = None
    for e in exponents:
        n, seconds, races = race_check_seconds(2 ** e)
        growth = nlogn = ratio = None
        if prev is not None:
            growth = seconds / prev[1]
            nlogn = (n * math.log2(n)) / (prev[0] * math.log2(prev[0]))
            ratio = growth / nlogn
        table.add(2 ** e, n, seconds, 1e6 * seconds / n, growth, nlogn, ratio, races)
        prev = (n, seconds)
    table.notes.append("growth = time / previous row's time; quadratic would show growth ~4 "
                       "per doubling, n log n ~2.1")
    return [table]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exponents", type=int, nargs="*")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    for table in run(quick=args.quick, exponents=args.exponents):
        print(table.render())


if __name__ == "__main__":
    main()
