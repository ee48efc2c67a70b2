"""``ptoc run FILE.py``: compile, run on the simulated core with seeded inputs, check a golden.

Inputs: the ``@pl.jit`` file's ``example_inputs()`` when it has one, else seeded standard
normal data for every input parameter (outputs start as zeros).

The golden, first match wins:

1. the file's ``golden(inputs) -> outputs``;
2. for a plain matmul entry (two inputs ``a[M, K]``, ``b[K, N]`` and one output
   ``[M, N]``) numpy's ``a @ b`` in float64;
3. otherwise the same program run with every pipe serialised (``sim_mode="serial"``): it
   proves the synchronisation, not the semantics, and the output says so.

Exit 1 when an output differs from the golden or the run has data races.
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


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


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


def matmul_golden(compiled, tensors: dict) -> dict | None:
    """``a @ b`` for an entry shaped exactly like ``(a[M, K], b[K, N], out[M, N])``."""
    from ptoc.dtypes import Direction

    params = compiled.entry.params
    ins = [p for p in params if p.direction is Direction.In]
    outs = [p for p in params if p.direction is not Direction.In]
    if len(ins) != 2 or len(outs) != 1 or len(params) != 3:
        return None
    a, b, o = (tensors.get(p.var.name) for p in (ins[0], ins[1], outs[0]))
    if not all(isinstance(x, np.ndarray) for x in (a, b, o)) or a.ndim != 2 or b.ndim != 2 \
            or a.shape[1] != b.shape[0] or o.shape != (a.shape[0], b.shape[1]):
        return None
    return {outs[0].var.name: a.astype(np.float64) @ b.astype(np.float64)}


@dataclass
class RunReport:
    """What ``ptoc run`` found: cycles, busy time, races, the golden used and its verdict."""

    cycles: float
    pipe_busy: dict
    races: list
    golden_kind: str
    max_errors: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    trace_path: object = None

    @property
    def ok(self) -> bool:
        return not self.problems and not self.races


def run_and_check(loaded, compiled, *, seed: int = 0, sim_mode: str = "reference",
                  trace: bool = False) -> RunReport:
    """Run ``compiled`` on the simulator and compare with the golden (see the module doc)."""
    from ptoc.runtime import RunConfig
    from ptoc.testing.compare import max_error, mismatches

    tensors = entry_tensors(compiled, seed, loaded.example_args)
    inputs = {k: _copy(v) for k, v in tensors.items()}
    rtol, atol = tolerances(compiled)
    config = RunConfig(platform=compiled.target, rtol=rtol, atol=atol, sim_mode=sim_mode,
                       trace=trace)
    result = compiled.run(*tensors.values(), config=config)
    outs = output_names(compiled)
    expected, kind = _golden(loaded, compiled, inputs, outs, config)
    report = RunReport(result.cycles, result.pipe_busy, result.races, kind)
    report.trace_path = result.trace_path
    for name in outs:
        if name not in expected:
            continue
        actual = result.outputs[name]
        report.max_errors[name] = max_error(actual, expected[name])
        bad = mismatches(actual, expected[name], rtol, atol)
        if bad:
            report.problems.append(f"output '{name}' differs from the {kind} golden "
                                   f"(rtol={rtol}, atol={atol}): {bad[0].strip()}"
                                   + (f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""))
    return report


def _golden(loaded, compiled, inputs: dict, outs: list[str], config):
    from ptoc.errors import PtocError

    if loaded.golden is not None:
        try:
            value = loaded.golden({k: _copy(v) for k, v in inputs.items()})
        except PtocError:
            raise
        except Exception as exc:
            from ptoc.tools.loader import LoadError

            raise LoadError(f"{loaded.path}: golden() raised {type(exc).__name__}: {exc}",
                            hint="golden(inputs) gets a dict of arrays and returns the outputs") \
                from exc
        if not isinstance(value, dict):
            if len(outs) != 1:
                from ptoc.tools.loader import LoadError

                raise LoadError(f"{loaded.path}: golden() returned one array but the program "
                                f"has {len(outs)} outputs ({', '.join(outs)})",
                                hint="return a dict {output name: array}")
            value = {outs[0]: value}
        return {k: np.asarray(v) for k, v in value.items()}, "file"
    derived = matmul_golden(compiled, inputs)
    if derived is not None:
        return derived, "numpy matmul"
    import dataclasses

    serial = compiled.run(*[_copy(v) for v in inputs.values()],
                          config=dataclasses.replace(config, sim_mode="serial", trace=False))
    return dict(serial.outputs), "serialised-run"


def run(args) -> int:
    from ptoc.tools.compile_cmd import compile_loaded
    from ptoc.tools.loader import find_program

    loaded = find_program(args.file, args.program)
    compiled = compile_loaded(loaded, args)
    report = run_and_check(loaded, compiled, seed=args.seed, sim_mode=args.sim_mode,
                           trace=args.trace)
    print(f"ran {compiled.source_program.name} on the simulated {compiled.target} core "
          f"({args.sim_mode} mode, seed {args.seed}); artifacts in {compiled.output_dir}")
    print(f"  cycles:     {report.cycles:.0f}")
    busy = ", ".join(f"{getattr(p, 'name', p).removeprefix('PIPE_')} {c:.0f}"
                     for p, c in report.pipe_busy.items() if c)
    print(f"  pipe busy:  {busy or '(none)'}")
    print(f"  races:      {len(report.races)}")
    for kernel, race in report.races[:5]:
        print(f"    {kernel}: {race}")
    errs = ", ".join(f"{k} {v:.3g}" for k, v in report.max_errors.items())
    print(f"  golden:     {report.golden_kind}; max |error| {errs or 'n/a'}")
    if getattr(report, "trace_path", None):
        print(f"  trace:      {report.trace_path}")
    for problem in report.problems:
        print(f"  FAIL: {problem}")
    print("OK" if report.ok else "FAILED")
    return 0 if report.ok else 1


def register(sub) -> None:
    import argparse

    from ptoc.tools.compile_cmd import FILE_CONVENTIONS, add_compile_options

    p = sub.add_parser(
        "run", help="compile FILE.py, run it on the simulated core and check a golden",
        description=__doc__.split("\n\n", 1)[1].split("Exit 1")[0].strip(),
        epilog=FILE_CONVENTIONS + "golden(inputs) gets {parameter name: array} and returns "
               "{output name: array} (or one array).\nExit status: 0 ok, 1 golden mismatch or "
               "data races, 2 user error.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_compile_options(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--sim-mode", default="reference", choices=("reference", "fast", "serial"),
                   help="simulator mode (fast: same timing, BLAS numerics; for big shapes)")
    p.add_argument("--trace", action="store_true", help="write a Perfetto trace of the run")
    p.set_defaults(handler=run)
