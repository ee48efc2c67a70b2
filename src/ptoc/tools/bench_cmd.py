"""``ptoc bench [NAME...]``: run the benchmark scripts of ``benchmarks/`` and print their tables.

The scripts live in the checkout (``benchmarks/``, found next to the package's source tree,
in the current directory, or at ``--dir``/``$PTOC_BENCH_DIR``); ``benchmarks/run_all.py``
knows them and their tiny ``--quick`` configurations. Numbers are measurements, never
assertions: the exit status is 0 unless the runner could not start (2).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ptoc.errors import PtocError


class BenchError(PtocError):
    """The benchmark directory or a benchmark name could not be found."""


def find_bench_dir(explicit: str | None = None) -> Path:
    """``--dir``, ``$PTOC_BENCH_DIR``, ``./benchmarks`` or the one beside the package sources
    (an editable install): the first that holds ``run_all.py``."""
    if explicit:
        if not (Path(explicit) / "run_all.py").is_file():
            raise BenchError(f"--dir {explicit} holds no run_all.py",
                             hint="give the benchmarks/ directory of a ptoc source checkout")
        return Path(explicit)
    import ptoc

    candidates = [os.environ.get("PTOC_BENCH_DIR"), Path.cwd() / "benchmarks",
                  Path(ptoc.__file__).resolve().parents[2] / "benchmarks"]
    for c in candidates:
        if c and (Path(c) / "run_all.py").is_file():
            return Path(c)
    raise BenchError("cannot find the benchmarks/ directory: the benchmark scripts live in "
                     "the ptoc source checkout, not in the installed package",
                     hint="run `ptoc bench` from a clone of the ptoc repository (its top "
                          "folder), or point to its benchmarks/ with --dir DIR or "
                          "PTOC_BENCH_DIR=DIR")


def load_runner(bench_dir: Path):
    spec = importlib.util.spec_from_file_location("ptoc_bench_run_all", bench_dir / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(args) -> int:
    bench_dir = find_bench_dir(args.dir)
    runner = load_runner(bench_dir)
    available = runner.available(bench_dir)
    if args.list:
        for name, title in available.items():
            print(f"{name:<16} {title}")
        return 0
    unknown = [n for n in args.names if n not in available]
    if unknown:
        raise BenchError(f"unknown benchmark(s) {', '.join(unknown)}",
                         hint="choose from " + ", ".join(available))
    results = runner.run(args.names or list(available), bench_dir, quick=args.quick,
                         full=args.full, json_out=args.json, stream=print)
    if args.json:
        print(f"results written to {args.json}")
    return 0 if results is not None else 1


def register(sub) -> None:
    from ptoc.tools.commands import doc_paragraph

    p = sub.add_parser("bench", help="run the benchmarks (compile time, simulator, GEMM bounds, "
                       "chooser vs simulator, dbC) and print their tables",
                       description=doc_paragraph(__doc__))
    p.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    p.add_argument("--json", metavar="OUT", help="also write every table as JSON here")
    p.add_argument("--quick", action="store_true", help="tiny configurations (smoke test)")
    p.add_argument("--full", action="store_true",
                   help="the largest configurations too (e.g. 2048^3 GEMMs; slow)")
    p.add_argument("--list", action="store_true", help="list the benchmarks")
    p.add_argument("--dir", help="the benchmarks/ directory")
    p.set_defaults(handler=run)
