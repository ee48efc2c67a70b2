"""Fitting profile constants to measurements by least squares (scipy, an optional extra).

Each measurement's kernel is built once as an instruction stream; a candidate profile is
judged by re-timing every stream (``ptoc.sim.retime``) and comparing the predicted walls and
pipe busy times with the measured ones. Residuals are log ratios (predicted / measured), so
every row weighs the same whatever its size and a 5 % miss counts the same up or down.

Before fitting, the constants are screened on the measurements themselves: one that moves
no prediction is *not informed* and keeps its profile value; of two that move the
predictions the same way (the data cannot tell them apart) the weaker is *not separable*
and keeps its value too. Both lists are part of the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ptoc.backend import TimingProfile
from ptoc.backend.profile_params import profile_constants, with_constants
from ptoc.calibration.kernels import kernel_stream
from ptoc.calibration.measurements import TOTAL, Measurement
from ptoc.errors import PtocError
from ptoc.sim.retime import Stream, StreamTiming, retime

#: A constant whose 1 % change moves no prediction by more than this (relative) is not informed.
_INFORMED = 1e-4
#: A constant whose effect on the predictions lies this close to what the constants already
#: kept can do (fraction of its sensitivity outside their span) cannot be separated from them.
_SEPARABLE = 0.1


class CalibrationError(PtocError, ValueError):
    """A fit ptoc cannot run (no scipy, nothing to fit, a constant the profile lacks)."""


@dataclass
class Row:
    """A measurement with its kernel's stream."""

    measurement: Measurement
    stream: Stream


def build_rows(measurements: list[Measurement], target: str) -> list[Row]:
    """One stream per distinct kernel (rows that ran the same kernel share it)."""
    cache: dict[tuple, Stream] = {}
    rows = []
    for m in measurements:
        key = (m.kernel, m.shape, m.tile, m.dtype, m.grid)
        if key not in cache:
            cache[key] = kernel_stream(m, target)
        rows.append(Row(m, cache[key]))
    return rows


def time_row(row: Row, profile: TimingProfile) -> StreamTiming:
    m = row.measurement
    return retime(row.stream, profile.for_cores(m.cores), blocks=m.cores, staged=m.staged)


def predictions(rows: list[Row], profile: TimingProfile) -> list[tuple[Row, object, float, float]]:
    """(row, quantity, measured, predicted) for every measured quantity, in row order."""
    out, timed = [], {}
    for row in rows:
        m = row.measurement
        key = (id(row.stream), m.cores, m.staged)     # repeated runs of a kernel: time it once
        t = timed.get(key)
        if t is None:
            t = timed[key] = time_row(row, profile)
        for quantity, measured in row.measurement.observed.items():
            predicted = t.total_cycles if quantity == TOTAL else t.pipe_busy.get(quantity, 0.0)
            out.append((row, quantity, measured, predicted))
    return out


def _residuals(rows, profile) -> np.ndarray:
    return np.array([math.log(max(p, 1e-9) / m) for _, _, m, p in predictions(rows, profile)])


@dataclass
class Fit:
    """What ``fit_profile`` found."""

    base: TimingProfile
    profile: TimingProfile
    fitted: dict[str, tuple[float, float, float]]   # name -> (before, after, rel. 1-sigma)
    not_informed: list[str] = field(default_factory=list)
    not_separable: list[tuple[str, str]] = field(default_factory=list)   # (kept, because of)
    before: list = field(default_factory=list)     # predictions under the base profile
    after: list = field(default_factory=list)      # predictions under the fitted profile


def _scales(values: dict[str, float]) -> dict[str, float]:
    return {k: v if v > 0 else 1.0 for k, v in values.items()}


def _profile_at(base, names, scales, x, name=None):
    return with_constants(base, {n: float(scales[n] * xi) for n, xi in zip(names, x)}, name=name)


def screen(rows, base: TimingProfile, names: list[str]) -> tuple[list[str], list[str],
                                                                  list[tuple[str, str]]]:
    """(fittable, not informed, not separable as (name, the name it moves with))."""
    values = profile_constants(base)
    scales = _scales(values)
    r0 = _residuals(rows, base)
    cols = {}
    for n in names:
        bumped = with_constants(base, {n: values[n] + 0.01 * scales[n]})
        cols[n] = (_residuals(rows, bumped) - r0) / 0.01
    informed = [n for n in names if np.max(np.abs(cols[n])) > _INFORMED]
    not_informed = [n for n in names if n not in informed]
    keep: list[str] = []
    basis: list[np.ndarray] = []            # orthonormal span of the kept columns
    tied: list[tuple[str, str]] = []
    for n in sorted(informed, key=lambda n: -np.linalg.norm(cols[n])):
        v = cols[n] / np.linalg.norm(cols[n])
        rest = v - sum((float(b @ v) * b for b in basis), np.zeros_like(v))
        if np.linalg.norm(rest) > _SEPARABLE:
            keep.append(n)
            basis.append(rest / np.linalg.norm(rest))
        else:
            twin = max(keep, key=lambda k: abs(float(v @ cols[k])) / np.linalg.norm(cols[k]))
            tied.append((n, twin))
    return [n for n in names if n in keep], not_informed, tied


def fit_profile(measurements: list[Measurement], base: TimingProfile, *,
                names: list[str] | None = None, name: str | None = None,
                rows: list[Row] | None = None) -> Fit:
    """Least-squares fit of ``names`` (default: every nonzero constant of ``base``)."""
    try:
        from scipy.optimize import least_squares
    except ImportError:
        raise CalibrationError("fitting needs scipy, which is not installed",
                               hint="pip install 'ptoc[calibrate]' (or pip install scipy)") from None
    values = profile_constants(base)
    if names is None:
        names = [n for n, v in values.items() if v > 0]
    missing = [n for n in names if n not in values]
    if missing:
        raise CalibrationError(f"profile {base.name} has no constant {', '.join(missing)}",
                               hint=f"its constants: {', '.join(values)}")
    rows = rows if rows is not None else build_rows(measurements, base.target)
    fittable, not_informed, tied = screen(rows, base, names)
    if not fittable:
        raise CalibrationError("none of the constants moves a prediction of these measurements",
                               hint="measure kernels that exercise them, or pass --fit")
    scales = _scales(values)

    def fun(x):
        return _residuals(rows, _profile_at(base, fittable, scales, x))

    x0 = np.array([values[n] / scales[n] for n in fittable])
    lower = [0.0 if values[n] == 0 else 1e-6 for n in fittable]
    sol = least_squares(fun, x0, bounds=(lower, np.inf), x_scale="jac", diff_step=1e-3,
                        xtol=1e-10, ftol=1e-10)
    fitted_profile = _profile_at(base, fittable, scales, sol.x, name=name or f"{base.name}-fit")
    sigma = _relative_sigma(sol)
    fitted = {n: (values[n], scales[n] * sol.x[i], sigma[i]) for i, n in enumerate(fittable)}
    return Fit(base, fitted_profile, fitted, not_informed, tied,
               predictions(rows, base), predictions(rows, fitted_profile))


def _relative_sigma(sol) -> list[float]:
    """1-sigma of each fitted value, relative to it (Gauss-Newton covariance); NaN for a
    constant the fit left where it moves nothing (its column of the Jacobian is zero)."""
    jac, res = sol.jac, sol.fun
    dof = max(1, len(res) - len(sol.x))
    s2 = float(res @ res) / dof
    cov = np.linalg.pinv(jac.T @ jac) * s2
    flat = np.linalg.norm(jac, axis=0) < 1e-12
    return [math.nan if flat[i] or not sol.x[i] else math.sqrt(max(cov[i, i], 0.0)) / abs(sol.x[i])
            for i in range(len(sol.x))]
