"""``ptoc run FILE.py``: compile, run on the simulated core with seeded inputs, check a golden.

Inputs: the ``@pl.jit`` file's ``example_inputs()`` when it has one, else seeded standard
normal data for every input parameter (outputs start as zeros).

The golden, first match wins: the file's
``golden(inputs) -> outputs``, which must cover every output; numpy's ``a @ b`` when the
program is a plain matmul; otherwise no golden exists and the same program run with every
pipe serialised is compared instead (that proves the synchronisation, not the arithmetic,
and the output says so).

Exit 1 when an output differs from the golden, the run has data races or it reads GM that
nothing wrote (on a device: garbage).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: (rtol, atol) by the narrowest input float dtype
TOLERANCES = {"FP32": (1e-4, 1e-4), "FP16": (1e-2, 1e-2), "BF16": (2e-2, 2e-2)}


def entry_tensors(compiled, seed: int = 0, given: dict | None = None) -> dict:
    """A value per entry parameter, in order: ``given[name]`` (a jit file's example inputs)
    where present, else seeded data (standard normal inputs, zero outputs)."""
    from ptoc.dtypes import Direction
    from ptoc.ir.types import TensorType
    from ptoc.testing.specs import TensorSpec
    from ptoc.tools.loader import LoadError

    given = given or {}
    rng = np.random.default_rng(seed)
    values = {}
    for p in compiled.entry.params:
        name = p.var.name
        if name in given:
            values[name] = np.array(given[name]) if isinstance(p.var.type, TensorType) \
                else given[name]
        elif isinstance(p.var.type, TensorType):
            values[name] = TensorSpec(name, tuple(p.var.type.shape), p.var.type.dtype,
                                      is_output=p.direction is Direction.Out).create(rng)
        else:
            raise LoadError(f"the entry has a scalar parameter '{name}' and no value for it",
                            hint="write the program as @pl.jit and give the value in "
                                 "example_inputs()")
    return values


def output_names(compiled) -> list[str]:
    from ptoc.dtypes import Direction
    from ptoc.ir.types import TensorType

    return [p.var.name for p in compiled.entry.params
            if isinstance(p.var.type, TensorType) and p.direction is not Direction.In]


def tolerances(compiled) -> tuple[float, float]:
    from ptoc.ir.types import TensorType

    names = {p.var.type.dtype.name for p in compiled.entry.params
             if isinstance(p.var.type, TensorType)}
    for key in ("BF16", "FP16", "FP32"):
        if key in names:
            return TOLERANCES[key]
    return (0.0, 0.0)


@dataclass
class RunReport:
    """What ``ptoc run`` found: cycles, busy time, races, the golden used and its verdict."""

    cycles: float
    floor_cycles: float
    pipe_busy: dict
    races: list
    golden_kind: str
    independent: bool = True
    max_errors: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    trace_path: object = None
    chip: object = None             # the ChipResult of a --chip run
    unwritten: list = field(default_factory=list)   # reads of GM nothing wrote

    @property
    def ok(self) -> bool:
        return not self.problems and not self.races and not self.unwritten


def run_and_check(loaded, compiled, *, seed: int = 0, sim_mode: str = "reference",
                  trace: bool = False, chip: bool = False,
                  clusters: int | None = None) -> RunReport:
    """Run ``compiled`` on the simulator and compare with the golden (see the module doc)."""
    from ptoc.runtime import RunConfig
    from ptoc.runtime.limits import check_run, entry_tensor_bytes, out_of_memory_as_error
    from ptoc.testing.compare import max_error, mismatches
    from ptoc.tools.goldens import choose_golden, copy_value

    check_run(compiled)         # before the inputs are made: a too-large problem fails fast
    with out_of_memory_as_error("making the inputs", 2 * entry_tensor_bytes(compiled)):
        tensors = entry_tensors(compiled, seed, loaded.example_args)
        inputs = {k: copy_value(v) for k, v in tensors.items()}
    rtol, atol = tolerances(compiled)
    config = RunConfig(platform=compiled.target, rtol=rtol, atol=atol, sim_mode=sim_mode,
                       trace=trace, chip=chip, chip_clusters=clusters)
    result = compiled.run(*tensors.values(), config=config)
    outs = output_names(compiled)
    shapes = {name: tuple(np.shape(tensors[name])) for name in outs}
    golden = choose_golden(loaded, compiled, inputs, outs, shapes, config)
    report = RunReport(result.cycles, result.floor_cycles, result.pipe_busy, result.races,
                       golden.description,
                       golden.independent, problems=list(golden.problems))
    report.trace_path = result.trace_path
    report.chip = result.chip
    report.unwritten = list(result.unwritten)
    for name in outs:
        if name not in golden.expected:
            continue
        actual = result.outputs[name]
        report.max_errors[name] = max_error(actual, golden.expected[name])
        bad = mismatches(actual, golden.expected[name], rtol, atol)
        if bad:
            report.problems.append(f"output '{name}' differs from the {golden.kind} golden "
                                   f"(rtol={rtol}, atol={atol}): {bad[0].strip()}"
                                   + (f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""))
    return report


def _pipe_label(key) -> str:
    """``MTE2`` for a core's pipe; ``aiv0/MTE2`` for a core group's (unit, pipe) key."""
    if isinstance(key, tuple):
        unit, pipe = key
        return f"{unit}/{_pipe_label(pipe)}"
    return getattr(key, "name", str(key)).removeprefix("PIPE_")


def run(args) -> int:
    from ptoc.tools.compile_cmd import compile_loaded
    from ptoc.tools.loader import find_program

    loaded = find_program(args.file, args.program)
    compiled = compile_loaded(loaded, args)
    if args.clusters is not None and not args.chip:
        from ptoc.tools.loader import LoadError

        raise LoadError("--clusters applies to --chip runs", hint="add --chip")
    report = run_and_check(loaded, compiled, seed=args.seed, sim_mode=args.sim_mode,
                           trace=args.trace, chip=args.chip, clusters=args.clusters)
    groups = any(isinstance(p, tuple) for p in report.pipe_busy)
    where = "chip" if args.chip else ("core group" if groups else "core")
    print(f"ran {compiled.source_program.name} on the simulated {compiled.target} {where} "
          f"({args.sim_mode} mode, seed {args.seed}); artifacts in {compiled.output_dir}")
    print(f"  cycles:     {report.cycles:.0f}")
    if report.floor_cycles:
        print(f"  launch/staging floor: {report.floor_cycles:.0f} (outside the core; with it "
              f"{report.cycles + report.floor_cycles:.0f})")
    busy = ", ".join(f"{_pipe_label(p)} {c:.0f}" for p, c in report.pipe_busy.items() if c)
    print(f"  pipe busy:  {busy or '(none)'}")
    if report.chip is not None:
        for line in report.chip.overview() + report.chip.utilisation_table():
            print("  " + line)
    print(f"  races:      {len(report.races)}")
    for kernel, race in report.races[:5]:
        print(f"    {kernel}: {race}")
    if report.unwritten:
        from ptoc.sim.unwritten import FIX

        print(f"  unwritten reads: {len(report.unwritten)} (a device reads garbage there)")
        for read in report.unwritten[:5]:
            print(f"    {read}")
        print(f"    fix: {FIX}")
    errs = ", ".join(f"{k} {v:.3g}" for k, v in report.max_errors.items())
    print(f"  golden:     {report.golden_kind}; max |error| {errs or 'n/a'}")
    if getattr(report, "trace_path", None):
        print(f"  trace:      {report.trace_path}")
    for problem in report.problems:
        print(f"  FAIL: {problem}")
    if not report.ok:
        print("FAILED")
    elif report.independent:
        print("OK")
    else:
        print("OK (synchronisation only: the arithmetic was not compared with an independent "
              "reference; add golden(inputs) to the file to check it)")
    return 0 if report.ok else 1


def register(sub) -> None:
    import argparse

    from ptoc.tools.commands import doc_paragraph
    from ptoc.tools.compile_cmd import FILE_CONVENTIONS, add_compile_options

    p = sub.add_parser(
        "run", help="compile FILE.py, run it on the simulated core and check a golden",
        description=doc_paragraph(__doc__, 1, join_lines=False) + "\n\n"
        + doc_paragraph(__doc__, 2, join_lines=False),
        epilog=FILE_CONVENTIONS + "golden(inputs) gets {parameter name: array} and returns "
               "{output name: array} (or one array).\nExit status: 0 ok, 1 golden mismatch, "
               "data races or reads of never-written GM, 2 user error.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_compile_options(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--sim-mode", default="reference", choices=("reference", "fast", "serial"),
                   help="simulator mode (fast: same timing, BLAS numerics; for big shapes)")
    p.add_argument("--trace", action="store_true", help="write a Perfetto trace of the run")
    p.add_argument("--chip", action="store_true",
                   help="run the task graph on the simulated chip (many core groups, shared "
                        "GM); prints per-core utilisation")
    p.add_argument("--clusters", type=int, help="core groups of the --chip run "
                                                "(default: all of the target's)")
    p.set_defaults(handler=run)
