"""The L0 tile chooser's estimate vs the simulated wall vs the max-pipe bound (issue 5).

A sweep of L1-resident bf16 GEMMs (both operands loaded whole into Mat, one matmul, one
store): K = 64 grids with M = N from 128 to 2048, and the cubes 128^3 and 256^3, each
compiled with the dbC flag off and on. The chooser's pick and its ``estimated_cost_cycles``
come from the compile's ``report/decisions.json``; the wall and per-pipe busy time from the
simulator (fast mode). The estimate covers the L0 part only (MTE1 loads, MAD, drain), so
"sim - MTE2" (the wall minus the exposed GM->L1 load of the operands, which happens first)
is the comparable number. On the flag-on row, ``dbC x model/sim`` compares the chooser's
predicted dbC speed-up (estimate off / on) with the simulated one (wall off / on); ``sign``
says whether they agree on dbC winning, ``no*`` that they do not and the decisions report
flags the chooser's choice (``ptoc.runtime.dbc_check``).

Run: python benchmarks/chooser_vs_sim.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _programs import direct_store, inputs  # noqa: E402
from _table import Table  # noqa: E402

TITLE = "chooser estimated_cost_cycles vs simulated wall vs max-pipe bound (bf16, fast mode)"
SHAPES = [(128, 64, 128), (256, 64, 256), (512, 64, 512), (1024, 64, 1024), (2048, 64, 2048),
          (128, 128, 128), (256, 256, 256)]


def measure(M: int, K: int, N: int, dbc: bool) -> dict:
    import numpy as np

    from ptoc import ir
    from ptoc.errors import PtocError
    from ptoc.runtime import RunConfig

    a, b = inputs([(M, K), (K, N)], "BF16")
    with tempfile.TemporaryDirectory() as out:
        try:
            compiled = ir.compile(direct_store(M, K, N, "BF16"), out, dump_passes=False,
                                  enable_pypto_l0c_double_buffer=dbc)
        except PtocError as exc:
            return {"error": exc.message.split(";")[0][:60]}
        records = json.loads((Path(out) / "report" / "decisions.json").read_text())["decisions"]
        tile = next(r for r in records if r["kind"] == "tile_choice")
        flagged = any(r.get("model_disagrees") for r in records if r["kind"] == "dbc")
        result = compiled.run(a, b, np.zeros((M, N), np.float32),
                              config=RunConfig(sim_mode="fast"))
    busy = {getattr(p, "name", str(p)): c for p, c in result.pipe_busy.items()}
    binding = max(busy, key=busy.get)
    return {"tile": (tile["m"], tile["n"], tile["k"]), "dbc": tile["double_buffer_c"],
            "estimate": tile["estimated_cost_cycles"], "wall": result.cycles,
            "mte2": busy.get("PIPE_MTE2", 0.0), "bound": busy[binding], "binding": binding,
            "races": len(result.races), "flagged": flagged}


def run(quick: bool = False, full: bool = False) -> list[Table]:
    shapes = SHAPES[:1] if quick else SHAPES
    table = Table("chooser_vs_sim", TITLE,
                  ["M x K x N", "flag", "tile (m,n,k)", "dbC", "estimate", "sim wall",
                   "sim - MTE2", "(sim-MTE2)/est", "max-pipe bound", "binding", "wall/bound",
                   "races", "dbC x model/sim", "sign"])
    for M, K, N in shapes:
        off = None
        for flag in (False, True):
            r = measure(M, K, N, flag)
            shape = f"{M}x{K}x{N}"
            if "error" in r:
                table.add(shape, "on" if flag else "off", r["error"], *[None] * 11)
                continue
            l0 = r["wall"] - r["mte2"]
            ratio = sign = None
            if flag and off is not None:
                model, sim = off["estimate"] / r["estimate"], off["wall"] / r["wall"]
                ratio = f"{model:.2f}/{sim:.2f}"
                agree = (model > 1) == (sim > 1)
                sign = "yes" if agree else ("no*" if r["flagged"] else "NO")
            table.add(shape, "on" if flag else "off", ",".join(map(str, r["tile"])),
                      2 if r["dbc"] else 1, r["estimate"], r["wall"], l0, l0 / r["estimate"],
                      r["bound"], r["binding"].removeprefix("PIPE_"), r["wall"] / r["bound"],
                      r["races"], ratio, sign)
            off = r if not flag else off
    table.notes.append("estimate = ChooseL0Tile's estimated_cost_cycles (L0 part only); "
                       "sim - MTE2 removes the up-front GM->L1 operand load")
    return [table]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    for table in run(quick=args.quick):
        print(table.render())


if __name__ == "__main__":
    main()
