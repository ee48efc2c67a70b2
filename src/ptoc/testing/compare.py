"""Golden comparison with ``isclose`` semantics; NaN in the golden means "don't care"."""

from __future__ import annotations

import numpy as np

MAX_REPORTED = 20


def mismatches(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> list[str]:
    """Human-readable lines for the first mismatching elements (empty when all match)."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    ok = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True) | np.isnan(e)
    bad = np.argwhere(~ok)
    lines = []
    for index in bad[:MAX_REPORTED]:
        idx = tuple(int(i) for i in index)
        diff = abs(a[idx] - e[idx])
        lines.append(f"  at {list(idx)}: actual {float(a[idx])!r}, expected {float(e[idx])!r} "
                     f"(|diff| {diff:.3g})")
    if len(bad) > MAX_REPORTED:
        lines.append(f"  ... and {len(bad) - MAX_REPORTED} more")
    return lines


def max_error(actual: np.ndarray, expected: np.ndarray) -> float:
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    mask = ~np.isnan(e)
    return float(np.max(np.abs(a[mask] - e[mask]))) if mask.any() else 0.0
