"""``ptoc calibrate MEASUREMENTS``: fit a timing profile to device measurements.

Reads a plain CSV or the Ascend profiler's per-op summary (``ptoc.calibration``), fits the
profile's constants by least squares (scipy, the ``calibrate`` extra), prints each constant
before and after and every row's residual, and writes a profile file that
``RunConfig(profile=PATH)`` and ``--profile PATH`` load.
"""

from __future__ import annotations


def run(args) -> int:
    from ptoc.backend import get_profile, get_target
    from ptoc.backend.profile_params import save_profile
    from ptoc.calibration import fit_profile, fit_report, read_measurements
    from ptoc.calibration.fit import CalibrationError

    base = get_profile(args.profile, target=args.target)
    clock = get_target(base.target).clock_hz
    if clock is None:
        raise CalibrationError(f"target {base.target} has no known clock to turn microseconds "
                               "into cycles", hint="calibrate an a2a3 profile")
    found = read_measurements(args.measurements, clock_hz=clock)
    for reason in found.skipped:
        print(f"skipped: {reason}")
    if not found.rows:
        raise CalibrationError(f"{args.measurements} has no row ptoc can model",
                               hint="see the skipped rows above")
    names = [n.strip() for n in args.fit.split(",") if n.strip()] if args.fit else None
    fit = fit_profile(found.rows, base, names=names, name=args.name)
    print(f"{len(found.rows)} measurement row(s) from {args.measurements} ({found.form} CSV)")
    print(fit_report(fit, clock_hz=clock))
    if args.output:
        notes = [f"fitted by ptoc calibrate to {args.measurements} ({len(found.rows)} rows)"]
        notes += [f"not informed by the measurements: {n}" for n in fit.not_informed]
        notes += [f"{n} cannot be separated from {t} by the measurements; kept"
                  for n, t in fit.not_separable]
        fitted = {n: {"before": b, "after": a} for n, (b, a, _) in fit.fitted.items()}
        path = save_profile(args.output, fit.profile, base.name, notes=notes,
                            fit={"measurements": str(args.measurements), "constants": fitted})
        print(f"\nprofile written to {path} (use RunConfig(profile={str(path)!r}) or "
              f"--profile {path})")
    return 0


def register(sub) -> None:
    p = sub.add_parser("calibrate", help="fit a timing profile to device measurements",
                       description="Fit a timing profile's constants to measured kernels "
                                   "(plain CSV or the Ascend profiler's op_summary CSV) by "
                                   "least squares; needs scipy (pip install 'ptoc[calibrate]').")
    p.add_argument("measurements", help="CSV of measured kernel runs")
    p.add_argument("--profile", help="profile to start from (default: the target's)")
    p.add_argument("--target", help="a2a3 (default) or a5")
    p.add_argument("--fit", metavar="NAME,NAME",
                   help="constants to fit (default: every nonzero constant the data inform)")
    p.add_argument("--name", help="name of the fitted profile (default: BASE-fit)")
    p.add_argument("--output", "-o", metavar="FILE.json", help="write the fitted profile here")
    p.set_defaults(handler=run)
