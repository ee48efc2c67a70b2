"""Timing accuracy: every published a2a3 training row, device vs ptoc, per profile.

The training set is ``ptoc.calibration.TRAINING_SET`` (the pto-isa reference GEMM on 24 cores,
1536^3 to 7680^3, and PyPTO's single-kernel device times, each row with its source). For
every profile of the a2a3 target the script times each row's kernel (``ptoc.sim.retime``:
the same streams the simulator runs, without the numerics) and prints

* the per-instruction figures the GEMM implies (one TMATMUL, one extract step, TLOAD bytes
  per cycle, one 128x256 drain with 24 cores storing) against the published ranges;
* every kernel row: the wall (launch floor included) and each pipe's busy time;
* the acceptance summary: per-instruction figures and the 3072^3-7680^3 walls within 10 %,
  1536^3 and the small kernels within 20 %.

``--write-docs`` puts the same text between the ``calibration`` markers of
docs/en/simulator.md and docs/zh-cn/simulator.md (tests/docs checks that the pages hold this
format); ``--fit`` also re-runs the least-squares fit the [F] constants of a2a3-device came
from and prints it.

Run: python benchmarks/calibration.py [--write-docs] [--fit] [--quick]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ptoc.backend import PROFILES, get_profile, get_target
from ptoc.calibration import (
    TOTAL, TRAINING_SET, accuracy_table, build_rows, fit_profile, fit_report, predictions,
    read_measurements,
)
from ptoc.calibration.report import error_percent
from ptoc.dtypes import DataType, MemorySpace

TARGET = "a2a3"
BEGIN, END = "<!-- calibration:begin -->", "<!-- calibration:end -->"
DOCS = [Path(__file__).resolve().parents[1] / "docs" / lang / "simulator.md"
        for lang in ("en", "zh-cn")]
#: The constants of a2a3-device tagged [F] (fitted to the training set).
FITTED = ["gm.chip_bytes_per_cycle", "launch.fixed_cycles", "launch.block_cycles",
          "launch.staging_bytes_per_cycle"]

#: Per-instruction figures of the reference GEMM (a2a3-published.json,
#: "derived_per_instruction_cycles": share x wall / instruction count, 24 cores), as ranges
#: over the four sizes: (label, low, high, unit).
INSTRUCTIONS = [
    ("TMATMUL 128x64x256 fp16", 524.0, 543.0, "cycles"),
    ("extract step: 16 KiB L1->L0A + 32 KiB L1->L0B", 410.0, 421.0, "cycles"),
    ("TLOAD GM->L1, per core (24 streaming)", 68.3, 85.4, "B/cycle"),
    ("TSTORE 128x256 fp32 L0C->GM (24 storing)", 1799.0, 1875.0, "cycles"),
]


def profiles() -> list[str]:
    return [name for name, p in PROFILES.items() if p.target == TARGET]


def instruction_figures(profile) -> list[float]:
    """The profile's value of each INSTRUCTIONS figure (24 cores share GM)."""
    p = get_profile(profile).for_cores(24)
    mat, ddr = MemorySpace.Mat, MemorySpace.DDR
    return [p.mad_cycles(128, 64, 256, DataType.FP16),
            p.transfer_cycles(mat, MemorySpace.Left, 16384)
            + p.transfer_cycles(mat, MemorySpace.Right, 32768),
            65536 / p.transfer_cycles(ddr, mat, 65536),
            p.drain_cycles(ddr, 128, 256, DataType.FP32)]


def range_error(low: float, high: float, value: float) -> float:
    """Signed % error against a published range: 0 inside it, else from its nearest end."""
    if value < low:
        return error_percent(low, value)
    if value > high:
        return error_percent(high, value)
    return 0.0


def instruction_table(names: list[str]) -> str:
    values = {n: instruction_figures(n) for n in names}
    out = ["| figure | device | " + " | ".join(f"{n} | err %" for n in names) + " |",
           "| --- | ---: | " + " | ".join("---: | ---:" for _ in names) + " |"]
    for i, (label, low, high, unit) in enumerate(INSTRUCTIONS):
        cells = " | ".join(f"{values[n][i]:,.1f} | {range_error(low, high, values[n][i]):+.1f}"
                           for n in names)
        out.append(f"| {label} | {low:,.1f}-{high:,.1f} {unit} | {cells} |")
    return "\n".join(out)


def _strict(row, quantity) -> bool:
    """Rows held to 10 %: the 3072^3-7680^3 GEMM (its walls and pipe times)."""
    m = row.measurement
    return m.kernel == "gemm" and m.shape[0] >= 3072


def summary(names: list[str], columns: dict) -> str:
    lines = []
    for n in names:
        instr = max(abs(range_error(lo, hi, v))
                    for (_, lo, hi, _), v in zip(INSTRUCTIONS, instruction_figures(n)))
        walls = [abs(error_percent(m, p)) for row, q, m, p in columns[n]
                 if q == TOTAL and _strict(row, q)]
        busy = [abs(error_percent(m, p)) for row, q, m, p in columns[n]
                if q != TOTAL and _strict(row, q)]
        loose = [abs(error_percent(m, p)) for row, q, m, p in columns[n]
                 if q == TOTAL and not _strict(row, q)]
        lines.append(f"- {n}: per-instruction figures max {instr:.1f} % (limit 10 %); "
                     f"3072^3-7680^3 walls max {max(walls):.1f} % (limit 10 %), their pipe "
                     f"times max {max(busy):.1f} %; 1536^3 and small-kernel walls max "
                     f"{max(loose):.1f} % (limit 20 %)")
    return "\n".join(lines)


def report(quick: bool = False) -> str:
    """The text placed in the docs: both tables and the summary."""
    clock = get_target(TARGET).clock_hz
    found = read_measurements(TRAINING_SET, clock_hz=clock)
    rows = [r for r in found.rows if not quick or r.kernel != "gemm" or r.shape[0] <= 1536]
    streams = build_rows(rows, TARGET)
    names = profiles()
    columns = {n: predictions(streams, get_profile(n)) for n in names}
    return "\n".join([
        "Per-instruction figures of the reference GEMM (published ranges over its four sizes):",
        "", instruction_table(names), "",
        "Every training row (walls include the launch/staging floor; busy times are one "
        "core's cycles):", "", accuracy_table(columns, clock_hz=clock), "",
        summary(names, columns)])


def write_docs(text: str) -> None:
    for page in DOCS:
        content = page.read_text(encoding="utf-8")
        block = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
        if not block.search(content):
            raise SystemExit(f"{page} has no {BEGIN} ... {END} block")
        page.write_text(block.sub(lambda _: f"{BEGIN}\n{text}\n{END}", content),
                        encoding="utf-8")
        print(f"updated {page}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-docs", action="store_true", help="update the simulator pages")
    ap.add_argument("--fit", action="store_true", help="re-run the fit of the [F] constants")
    ap.add_argument("--quick", action="store_true", help="skip the large GEMM rows")
    args = ap.parse_args(argv)
    text = report(quick=args.quick)
    print(text)
    if args.write_docs:
        if args.quick:
            raise SystemExit("--write-docs needs every row: drop --quick")
        write_docs(text)
    if args.fit:
        clock = get_target(TARGET).clock_hz
        found = read_measurements(TRAINING_SET, clock_hz=clock)
        fit = fit_profile(found.rows, get_profile("a2a3-device"), names=FITTED)
        print("\n" + fit_report(fit, clock_hz=clock))


if __name__ == "__main__":
    sys.exit(main())
