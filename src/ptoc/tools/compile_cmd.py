"""``ptoc compile FILE.py``: compile a user's program, write the artifacts, print a summary.

The summary names the kernels, the Acc (L0C) buffers with their addresses, the number of
diagnostics and decisions, and where everything went. ``--what-if dbc`` also compiles the
dbC alternative the compile did not take and simulates both (``ptoc.tools.what_if``).
"""

from __future__ import annotations

from pathlib import Path

FILE_CONVENTIONS = """\
FILE.py conventions: a module-level @pl.program class, or a @pl.jit function plus
example_inputs() returning its arguments (arrays, outputs included, in parameter order).
Use --program NAME when the file defines several. The file is executed as Python.
"""
MAX_DBC_LINES = 4


def add_compile_options(p) -> None:
    """Options shared by ``compile`` and ``run``."""
    p.add_argument("file", help="Python file defining a @pl.program or a @pl.jit function")
    p.add_argument("-o", "--output-dir", help="artifact directory (default: "
                   "$PTOC_BUILD_DIR or build_output, under <program>_<timestamp>)")
    p.add_argument("--program", help="which program when the file defines several")
    p.add_argument("--planner", choices=("pypto", "ptoas"), default="pypto",
                   help="memory planner (default: pypto)")
    p.add_argument("--dbc", action="store_true",
                   help="opt into the L0C double buffer (dbC=2) under the PYPTO planner")
    from ptoc.tools.commands import platform_names

    names = platform_names()
    p.add_argument("--platform", default="a2a3sim", choices=names, metavar="PLATFORM",
                   help=f"target platform: {' or '.join(names[:2])} (default a2a3sim); also "
                        f"accepted: {', '.join(names[2:])}")
    p.add_argument("--no-dump", action="store_true", help="do not write passes_dump/")


def compile_loaded(loaded, args, output_dir=None, *, dbc: bool | None = None):
    """Compile a loaded file's program with the command-line options."""
    from ptoc import ir

    return ir.compile(loaded.program, output_dir if output_dir is not None else args.output_dir,
                      platform=args.platform, memory_planner=args.planner.upper(),
                      enable_pypto_l0c_double_buffer=args.dbc if dbc is None else dbc,
                      dump_passes=not args.no_dump)


def summary_lines(compiled) -> list[str]:
    """The short human summary of one compile."""
    from ptoc.dtypes import MemorySpace

    out = Path(compiled.output_dir)
    acc = compiled.allocations_in(MemorySpace.Acc)
    planner = getattr(compiled.memory_planner, "name", compiled.memory_planner)
    flag = ("dbC automatic" if planner != "PYPTO" else
            f"dbC flag {'on' if compiled.enable_pypto_l0c_double_buffer else 'off'}")
    lines = [f"compiled {compiled.source_program.name} for {compiled.target} "
             f"(planner {planner}, {flag})",
             f"  kernels:      {', '.join(sorted(compiled.pto_text)) or '(none)'}"]
    if acc:
        where = ", ".join(f"{a.function}:{a.addr if a.addr is not None else '?'}+{a.size}"
                          for a in acc)
        lines.append(f"  Acc buffers:  {len(acc)} ({where})")
    else:
        lines.append("  Acc buffers:  0")
    lines.append(f"  diagnostics:  {len(compiled.diagnostics)} (report/perf_hints.log)")
    decisions = _decisions(out)
    if decisions is not None:
        counts = decisions.get("counts", {})
        text = ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "none"
        lines.append(f"  decisions:    {text} (report/decisions.md)")
        for d in [d for d in decisions["decisions"] if d["kind"] == "dbc"][:MAX_DBC_LINES]:
            lines.append(f"    dbC {'accepted' if d['accepted'] else 'rejected'} "
                         f"({d['gate']} gate): {d['reason']}")
    lines.append(f"  PTO:          {out / 'pto'}/<kernel>.pto")
    lines.append(f"  reports:      {out / 'report'}/")
    if (out / "passes_dump").is_dir():
        lines.append(f"  pass dumps:   {out / 'passes_dump'}/")
    return lines


def _decisions(out: Path) -> dict | None:
    import json

    path = out / "report" / "decisions.json"
    return json.loads(path.read_text()) if path.is_file() else None


def run(args) -> int:
    from ptoc.tools.loader import find_program

    if args.what_if and args.planner != "pypto":  # before compiling: one line, no warnings
        from ptoc.tools.what_if import WhatIfError

        raise WhatIfError(f"--what-if dbc needs the PYPTO planner; under {args.planner.upper()} "
                          "dbC is decided automatically", hint=f"drop --planner {args.planner}")
    loaded = find_program(args.file, args.program)
    compiled = compile_loaded(loaded, args)
    for line in summary_lines(compiled):
        print(line)
    if args.what_if:
        from ptoc.tools.what_if import what_if_dbc

        report = what_if_dbc(loaded, args, compiled)
        for line in report.lines():
            print(line)
        if report.races:
            return 1
    return 0


def register(sub) -> None:
    import argparse

    p = sub.add_parser(
        "compile", help="compile a @pl.program / @pl.jit file to PTO and write its report",
        description="Compile FILE.py through the pass pipeline; write pto/<kernel>.pto, "
                    "report/perf_hints.log, report/decisions.{json,md} and passes_dump/; "
                    "print a short summary.",
        epilog=FILE_CONVENTIONS + "\n--what-if dbc compiles the dbC alternative this compile "
               "did not take (flag off -> on, on -> off), simulates both with the same seeded "
               "inputs and prints the cycle delta (exit 1 if either run has data races).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_compile_options(p)
    p.add_argument("--what-if", choices=("dbc",), help="simulate the rejected alternative too")
    p.add_argument("--seed", type=int, default=0, help="seed of the --what-if inputs")
    p.add_argument("--sim-mode", default="reference", choices=("reference", "fast", "serial"),
                   help="simulator mode of --what-if (fast: same timing, BLAS numerics)")
    p.set_defaults(handler=run)
