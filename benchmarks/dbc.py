"""The dbC=2 L0C double buffer, measured on the simulator: what the flag buys per grid.

For each program (the direct-store grids of PyPTO's ``test_dbc2_double_buffer.py``, its
Mat-scratch chain, and the bf16 reference shapes of hw-model.md §5.4) the program is
compiled with ``ir.compile`` under the PYPTO planner with ``enable_pypto_l0c_double_buffer``
off and on, and simulated (``fast`` numerics, timed) under the ``a2a3-device`` and the
``a2a3-ptoisa`` timing profiles. Columns:

* ``tiles``: output tiles of the dbC grid; ``tile off`` / ``tile on``: the chooser's (m, n, k)
  without and with dbC (``K`` when the chooser keeps the whole problem);
* ``acc``: L0C buffers the compiled kernel keeps, off/on;
* ``cyc off`` / ``cyc on``: simulated wall cycles; ``x``: speed-up off/on;
* ``hidden/drain``: FIX drain cycles that ran while the cube (M pipe) was busy / all drain
  cycles, with the flag on;
* ``model x``: the chooser's predicted speed-up (its estimated wall off / on);
* ``sign``: whether the model and the simulation agree on dbC winning or losing; ``no*``:
  they do not, and the compile's decisions report says so (``ptoc.runtime.dbc_check``);
* the ``ptoisa`` columns repeat cycles, speed-up and hidden/drain under ``a2a3-ptoisa``.

Numerics are checked against numpy on every run (the table is refused if one is wrong or
raced). Run: ``python benchmarks/dbc.py [--json out.json] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "system"))

import dbc_programs as dp  # noqa: E402
from ptoc import ir  # noqa: E402
from ptoc.runtime import RunConfig  # noqa: E402

PROFILES = ("a2a3-device", "a2a3-ptoisa")

def _programs(quick: bool):
    """(label, builder, inputs, tolerance, chooser problems [(M, N, K, dtype, force_os)])."""
    rows = []
    for M, N in dp.DIRECT_STORE_GRIDS:
        rows.append((f"{M}x64x{N} fp32", lambda M=M, N=N: dp.direct_store(M, N),
                     lambda M=M, N=N: dp.direct_store_inputs(M, N), 1e-3,
                     [(M, N, 64, "FP32", False)]))
    rows.append(("256x64x256 bf16 chain", dp.mat_scratch_chain, dp.mat_scratch_inputs, 1e-3,
                 [(256, 256, 64, "BF16", True), (256, 64, 256, "BF16", False)]))
    bf16 = [(256, 256, 64), (512, 512, 64)] if quick else [(256, 256, 64), (512, 512, 64),
                                                           (512, 512, 128), (768, 768, 64)]
    for M, N, K in bf16:
        rows.append((f"{M}x{K}x{N} bf16", lambda M=M, N=N, K=K: dp.direct_store(M, N, K, "BF16"),
                     lambda M=M, N=N, K=K: dp.direct_store_inputs(M, N, K, "BF16"), 1e-2,
                     [(M, N, K, "BF16", False)]))
    return rows


def _model(problems):
    """Chooser walls (off, on) summed over the program's matmuls, and the on-tiles."""
    off = on = 0
    tiles = 0
    picks = []
    for M, N, K, dtype, force_os in problems:
        r_off = dp.chooser(M, N, K, dtype, dbc=False, force_output_stationary=force_os)
        r_on = dp.chooser(M, N, K, dtype, dbc=True, force_output_stationary=force_os)
        off += r_off.estimated_cost_cycles
        on += r_on.estimated_cost_cycles
        tiles += dp.tile_count(M, N, r_on.m, r_on.n)
        picks.append((r_off, r_on))
    return off, on, tiles, picks


def _run(build, inputs_fn, tol, flag, profile, work):
    compiled = ir.compile(build(), work, dump_passes=False, enable_pypto_l0c_double_buffer=flag)
    inputs, golden = inputs_fn()
    result = compiled.run(*inputs, config=RunConfig(sim_mode="fast", profile=profile))
    if result.races:
        raise SystemExit(f"data race: {result.races[0]}")
    out = inputs[-1]
    if not np.allclose(out, golden, rtol=tol, atol=tol):
        raise SystemExit(f"wrong numerics (max err {np.abs(out - golden).max():.3g})")
    sim = result.runs[0].sim
    hidden, drain = dp.hidden_drain(sim)
    return compiled, sim.wall_cycles, hidden, drain


def _flagged(work) -> bool:
    """Whether the decisions report marks the chooser's dbC choice as wrong."""
    records = json.loads((Path(work) / "report" / "decisions.json").read_text())["decisions"]
    return any(r.get("model_disagrees") for r in records if r["kind"] == "dbc")


def measure(quick: bool = False) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="ptoc_dbc_bench_") as tmp:
        for index, (label, build, inputs_fn, tol, problems) in enumerate(_programs(quick)):
            m_off, m_on, tiles, picks = _model(problems)
            row = {"program": label, "tiles": tiles,
                   "tile_off": [f"{a.m}x{a.n}x{a.k}" for a, _ in picks],
                   "tile_on": [f"{b.m}x{b.n}x{b.k}" + ("" if b.double_buffer_c else " (no dbC)")
                               for _, b in picks],
                   "model_off": m_off, "model_on": m_on, "model_speedup": m_off / m_on}
            for profile in PROFILES:
                per = {}
                for flag in (False, True):
                    work = Path(tmp) / f"{index}_{profile}_{int(flag)}"
                    compiled, cycles, hidden, drain = _run(build, inputs_fn, tol, flag, profile,
                                                           work)
                    per[flag] = (len(dp.acc_buffers(compiled)), cycles, hidden, drain)
                    if flag and profile == PROFILES[0]:
                        row["flagged"] = _flagged(work)
                row[profile] = {"acc_off": per[False][0], "acc_on": per[True][0],
                                "cycles_off": round(per[False][1], 1),
                                "cycles_on": round(per[True][1], 1),
                                "speedup": per[False][1] / per[True][1],
                                "hidden_off": round(per[False][2], 1),
                                "drain_off": round(per[False][3], 1),
                                "hidden_on": round(per[True][2], 1),
                                "drain_on": round(per[True][3], 1)}
            rows.append(row)
    return rows


def _sign(row: dict) -> str:
    agree = (row["model_speedup"] > 1) == (row["a2a3-device"]["speedup"] > 1)
    return "yes" if agree else ("no*" if row.get("flagged") else "NO")


def format_table(rows: list[dict]) -> str:
    head = (f"{'program':<22} {'tiles':>5} {'tile off':>16} {'tile on':>16} {'acc':>5} "
            f"{'cyc off':>9} {'cyc on':>9} {'x':>5} {'hidden/drain':>13} {'model x':>7} "
            f"{'sign':>4} | "
            f"{'ptoisa off':>10} {'ptoisa on':>10} {'x':>5} {'hidden/drain':>13}")
    lines = [head, "-" * len(head)]
    for r in rows:
        d, p = r["a2a3-device"], r["a2a3-ptoisa"]
        lines.append(
            f"{r['program']:<22} {r['tiles']:>5} {'+'.join(r['tile_off']):>16} "
            f"{'+'.join(t.replace(' (no dbC)', '*') for t in r['tile_on']):>16} "
            f"{d['acc_off']}/{d['acc_on']:<3} {d['cycles_off']:>9.0f} {d['cycles_on']:>9.0f} "
            f"{d['speedup']:>5.2f} {d['hidden_on']:>6.0f}/{d['drain_on']:<6.0f} "
            f"{r['model_speedup']:>7.2f} {_sign(r):>4} | {p['cycles_off']:>10.0f} "
            f"{p['cycles_on']:>10.0f} "
            f"{p['speedup']:>5.2f} {p['hidden_on']:>6.0f}/{p['drain_on']:<6.0f}")
    lines.append("tile on marked * : the chooser declined dbC for that matmul.")
    lines.append("sign: model and a2a3-device simulation agree on dbC winning (yes) or not "
                 "(no* : the decisions report flags the chooser's choice as wrong).")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None,
                        help="also write the table as JSON to this file")
    parser.add_argument("--quick", action="store_true", help="fewer bf16 reference shapes")
    args = parser.parse_args(argv)
    rows = measure(args.quick)
    print(format_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
