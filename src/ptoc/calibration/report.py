"""Plain-text reports of a fit and of a profile's accuracy on measurements.

One formatter for both ``ptoc calibrate`` and ``benchmarks/calibration.py``, so the
accuracy table in the simulator docs is exactly what the tools print.
"""

from __future__ import annotations

from ptoc.backend import Pipe
from ptoc.calibration.fit import Fit
from ptoc.calibration.measurements import TOTAL

_QUANTITY = {TOTAL: "wall", Pipe.PIPE_M: "CUBE busy", Pipe.PIPE_MTE1: "MTE1 busy",
             Pipe.PIPE_MTE2: "MTE2 busy", Pipe.PIPE_FIX: "FIX busy", Pipe.PIPE_V: "VECTOR busy",
             Pipe.PIPE_MTE3: "MTE3 busy"}


def quantity_name(quantity) -> str:
    return _QUANTITY[quantity]


def error_percent(measured: float, predicted: float) -> float:
    return 100.0 * (predicted - measured) / measured


def accuracy_table(columns: dict[str, list], *, clock_hz: float) -> str:
    """A markdown table: one line per measured quantity, device vs each named prediction set.

    ``columns`` maps a heading (a profile name) to ``predictions(...)`` output; every list
    holds the same rows in the same order. Walls are shown in microseconds, busy times in
    cycles.
    """
    heads = list(columns)
    first = columns[heads[0]]
    out = ["| row | quantity | device | " + " | ".join(f"{h} | err %" for h in heads) + " |",
           "| --- | --- | ---: | " + " | ".join("---: | ---:" for _ in heads) + " |"]
    for i, (row, quantity, measured, _) in enumerate(first):
        cells = []
        for h in heads:
            predicted = columns[h][i][3]
            cells.append(f"{_value(quantity, predicted, clock_hz)} | "
                         f"{error_percent(measured, predicted):+.1f}")
        out.append(f"| {row.measurement.name()} | {quantity_name(quantity)} | "
                   f"{_value(quantity, measured, clock_hz)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _value(quantity, cycles: float, clock_hz: float) -> str:
    if quantity == TOTAL:
        return f"{cycles / clock_hz * 1e6:,.2f} us"
    return f"{cycles:,.0f}"


def fit_report(fit: Fit, *, clock_hz: float) -> str:
    """Per-constant values and the per-row residuals, before and after."""
    lines = [f"fitted {len(fit.fitted)} constant(s) of {fit.base.name} -> {fit.profile.name}", "",
             "| constant | before | after | change | 1-sigma |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for name, (before, after, sigma) in fit.fitted.items():
        change = f"{100 * (after - before) / before:+.1f} %" if before else "new"
        spread = "-" if sigma != sigma else f"{100 * sigma:.1f} %"
        lines.append(f"| {name} | {before:.4g} | {after:.4g} | {change} | {spread} |")
    if fit.not_informed:
        lines += ["", "not informed by these measurements (kept): " + ", ".join(fit.not_informed)]
    for name, twin in fit.not_separable:
        lines.append(f"cannot be separated from {twin} by these measurements (kept): {name}")
    lines += ["", "residuals per row:", "",
              accuracy_table({"before": fit.before, "after": fit.after}, clock_hz=clock_hz),
              "", f"rms error: before {_rms(fit.before):.1f} %, after {_rms(fit.after):.1f} %"]
    return "\n".join(lines)


def _rms(preds) -> float:
    errs = [error_percent(m, p) for _, _, m, p in preds]
    return (sum(e * e for e in errs) / len(errs)) ** 0.5 if errs else 0.0
