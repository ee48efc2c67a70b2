"""Calibrating timing profiles against device measurements (``ptoc calibrate``).

Read measurements (plain CSV or the Ascend profiler's per-op summary), build each measured
kernel once as an instruction stream, and fit a profile's constants by least squares
(scipy, the ``calibrate`` extra); print per-constant values and per-row residuals and write
a profile file that ``RunConfig(profile=PATH)`` and ``--profile PATH`` load.

``TRAINING_SET`` is the published a2a3 training set the shipped ``a2a3-device`` profile was
fitted to, in the plain CSV form (every row names its source).

Public API:
    read_measurements(path, clock_hz=...) -> MeasurementSet
    build_rows(measurements, target) -> [Row];  predictions(rows, profile)
    fit_profile(measurements, base, names=None) -> Fit
    fit_report(fit, clock_hz=...), accuracy_table({heading: predictions}, clock_hz=...)
"""

from pathlib import Path

from ptoc.calibration.fit import (
    CalibrationError, Fit, Row, build_rows, fit_profile, predictions, screen,
)
from ptoc.calibration.measurements import (
    KERNELS, PIPES, TOTAL, Measurement, MeasurementError, MeasurementSet, parse_measurements,
    read_measurements,
)
from ptoc.calibration.report import accuracy_table, fit_report

TRAINING_SET = Path(__file__).with_name("a2a3_published.csv")

__all__ = [
    "KERNELS", "PIPES", "TOTAL", "TRAINING_SET", "CalibrationError", "Fit", "Measurement",
    "MeasurementError", "MeasurementSet", "Row", "accuracy_table", "build_rows", "fit_profile",
    "fit_report", "parse_measurements", "predictions", "read_measurements", "screen",
]
