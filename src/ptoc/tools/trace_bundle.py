"""``ptoc trace DIR``: the Perfetto trace bundle of a compile output directory."""

from __future__ import annotations

HELP = """\
Print the path of DIR's run trace, DIR/trace/run.json: one Perfetto-loadable JSON (open it
in https://ui.perfetto.dev) with, per kernel call, the pipe tracks MTE2 -> MTE1 -> CUBE ->
VECTOR -> FIXPIPE -> MTE3, flag flows from each set_flag to the wait_flag it releases,
race markers, buffer occupancy per memory space (a 'live bytes' counter and one track per
byte range, sorted by address), and per slice its PTO line and DSL source line.

If DIR/trace/run.json exists (written by an earlier `ptoc trace`, or by a run of the
compiled program with RunConfig(trace=True)) it is reported as is. Otherwise, or with
--rerun, every kernel in DIR/pto/*.pto is simulated once, in name order, with seeded random
inputs (timing does not depend on the data) and the bundle is written there first."""


def _scalars(items):
    from ptoc.errors import PtocError

    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise PtocError(f"--scalar {item!r} is not NAME=VALUE", hint="write --scalar arg3=128")
        out[name.removeprefix("%")] = int(value) if value.lstrip("-").isdigit() else float(value)
    return out


def run(args) -> int:
    import json

    from ptoc.report.trace_bundle import run_trace_path, trace_compile_dir

    path = run_trace_path(args.dir)
    if path.exists() and not args.rerun:
        calls = json.loads(path.read_text(encoding="utf-8")).get("otherData", {}).get("calls", [])
        print(f"{path} (existing trace of {len(calls)} kernel call(s); --rerun to simulate again)")
        return 0
    path, sims = trace_compile_dir(args.dir, kernels=args.kernel, seed=args.seed,
                                   scalars=_scalars(args.scalar), profile=args.profile,
                                   mode=args.mode)
    for sim in sims:
        print(sim.summary().splitlines()[0])
    print(f"{path} (open in https://ui.perfetto.dev)")
    return 0


def register(sub) -> None:
    import argparse

    p = sub.add_parser("trace", help="write or find the Perfetto trace bundle of a compile "
                                     "output directory", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", help="output directory of a compile (holds pto/<kernel>.pto)")
    p.add_argument("--rerun", action="store_true", help="simulate again even if "
                   "DIR/trace/run.json exists")
    p.add_argument("--kernel", action="append", help="only this kernel (repeatable)")
    p.add_argument("--profile", help="timing profile (default: the target's)")
    p.add_argument("--mode", default="reference", choices=("reference", "fast", "serial"))
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--scalar", action="append", metavar="NAME=VALUE",
                   help="value of a scalar kernel parameter")
    p.set_defaults(handler=run)
