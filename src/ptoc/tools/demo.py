"""``ptoc demo``: the flagship matmul grids compiled with dbC off and on, under both memory
planners, run on the simulated core and checked against numpy — in one table.

Needs no input: the programs are built here from one template. The exit status is 1 if
any result differs from numpy or any run has a data race.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TEMPLATE = '''
import ptoc.language as pl

@pl.program
class Flagship_{M}x{K}x{N}_{DT}:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[{M}, {K}], pl.{DT}], b: pl.Tensor[[{K}, {N}], pl.{DT}],
               out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        lm = pl.tile.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)
        rm = pl.tile.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul(lm, rm)
        out = pl.store(c, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{M}, {K}], pl.{DT}], b: pl.Tensor[[{K}, {N}], pl.{DT}],
             out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        out = self.kernel(a, b, out)
        return out
'''

SHAPES = ((160, 64, 160, "FP32"), (448, 64, 448, "FP32"), (256, 64, 256, "BF16"))
VARIANTS = (("PYPTO", False), ("PYPTO", True), ("PTOAS", None))
TOLERANCE = {"FP32": 1e-3, "BF16": 1e-2}


@dataclass
class DemoRow:
    shape: str
    planner: str
    dbc: str
    tile: str
    acc: str
    cycles: float
    speedup: float | None
    drain: str
    max_error: float
    races: int
    ok: bool
    output_dir: Path
    trace_path: Path | None = None


def program_for(m: int, k: int, n: int, dtype: str):
    from ptoc.language import parse_program

    return parse_program(TEMPLATE.format(M=m, K=k, N=n, DT=dtype), filename="<demo>")


def chosen_tile(program) -> str:
    """The L0 tile AutoTile chose, read off the first matmul of the compiled kernel."""
    from ptoc.ir.nodes import AssignStmt, Call
    from ptoc.ir.visitor import IRVisitor

    found: list[str] = []

    class Find(IRVisitor):
        def visit_assign_stmt(self, node: AssignStmt) -> None:
            value = node.value
            if not found and isinstance(value, Call) and value.op.startswith("tile.matmul"):
                m, n = value.type.shape
                k = value.args[-1].type.shape[0] if value.op != "tile.matmul_bias" else \
                    value.args[1].type.shape[0]
                found.append(f"{m}x{n}x{k}")
            super().visit_assign_stmt(node)

    Find().visit(program)
    return found[0] if found else "-"


def run_variant(m, k, n, dtype, planner, dbc, work: Path, trace: bool) -> DemoRow:
    from ptoc.ir import compile as compile_program
    from ptoc.dtypes import MemorySpace
    from ptoc.runtime import RunConfig
    from ptoc.runtime.metrics import drain_overlap

    rng = np.random.default_rng(0)
    np_dtype = {"FP32": np.float32, "BF16": None}[dtype]
    a32 = rng.standard_normal((m, k)).astype(np.float32)
    b32 = rng.standard_normal((k, n)).astype(np.float32)
    if np_dtype is None:
        from ptoc.dtypes import DataType

        a, b = a32.astype(DataType.BF16.numpy), b32.astype(DataType.BF16.numpy)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
    else:
        a, b = a32, b32
    out = np.zeros((m, n), np.float32)
    name = f"{m}x{k}x{n}_{dtype.lower()}_{planner.lower()}_{'auto' if dbc is None else 'on' if dbc else 'off'}"
    compiled = compile_program(program_for(m, k, n, dtype), work / name, memory_planner=planner,
                               enable_pypto_l0c_double_buffer=dbc, dump_passes=False)
    result = compiled.run(a, b, out, config=RunConfig(trace=trace))
    expected = a32.astype(np.float64) @ b32.astype(np.float64)
    error = float(np.max(np.abs(out - expected)))
    tol = TOLERANCE[dtype] * (1 + float(np.max(np.abs(expected))))
    accs = sorted({a.addr for a in compiled.allocations_in(MemorySpace.Acc)}, key=lambda x: x or 0)
    overlap = drain_overlap(result.runs[0].sim)
    return DemoRow(
        shape=f"{m}x{k}x{n} {dtype}", planner=planner,
        dbc="auto" if dbc is None else "on" if dbc else "off",
        tile=chosen_tile(compiled.program),
        acc=f"{len(accs)} @ {{{', '.join(str(x) for x in accs)}}}",
        cycles=result.cycles, speedup=None,
        drain=f"{overlap.hidden:.0f}/{overlap.total:.0f} ({100 * overlap.share:.0f}%)",
        max_error=error, races=len(result.races), ok=error <= tol and not result.races,
        output_dir=compiled.output_dir, trace_path=result.trace_path)


def format_table(rows: list[DemoRow]) -> str:
    header = ("shape", "planner", "dbC", "tile m×n×k", "Acc buffers @ addr", "cycles",
              "speed-up", "drain hidden", "max error", "races", "check")
    body = [(r.shape, r.planner, r.dbc, r.tile, r.acc, f"{r.cycles:.0f}",
             "-" if r.speedup is None else f"{r.speedup:.2f}x", r.drain, f"{r.max_error:.1e}",
             str(r.races), "ok" if r.ok else "FAIL") for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(b) for b in body])


def run(args) -> int:
    work = Path(args.output_dir) if args.output_dir else Path(tempfile.mkdtemp(prefix="ptoc_demo_"))
    jobs = [(shape, variant) for shape in SHAPES for variant in VARIANTS]
    rows: list[DemoRow] = []
    started = time.perf_counter()
    for index, ((m, k, n, dtype), (planner, dbc)) in enumerate(jobs, start=1):
        label = f"{m}x{k}x{n} {dtype} {planner} dbC={'auto' if dbc is None else 'on' if dbc else 'off'}"
        print(f"[{index}/{len(jobs)}] {label} ...", file=sys.stderr, flush=True)
        trace = (m, dbc, planner) == (448, True, "PYPTO")
        rows.append(run_variant(m, k, n, dtype, planner, dbc, work, trace))
    baseline = {(r.shape, r.planner): r.cycles for r in rows if r.dbc == "off"}
    for r in rows:
        base = baseline.get((r.shape, "PYPTO"))
        if r.dbc != "off" and base:
            r.speedup = base / r.cycles
    print(format_table(rows))
    flagship = next(r for r in rows if r.shape.startswith("448") and r.dbc == "on")
    print(f"\nartifacts: {work}  ({time.perf_counter() - started:.1f} s)")
    if flagship.trace_path is not None:
        print(f"trace of 448x64x448 dbC=on (open in https://ui.perfetto.dev): {flagship.trace_path}")
    for memmap in sorted((flagship.output_dir / "report").glob("memmap_*.html")):
        print(f"memory map of 448x64x448 dbC=on: {memmap}")
    print(f"PTO and reports of each variant: {work}/<variant>/pto, .../report")
    failed = [r for r in rows if not r.ok]
    if failed:
        print(f"{len(failed)} check(s) failed", file=sys.stderr)
        return 1
    return 0


def register(sub) -> None:
    parser = sub.add_parser("demo", help="compile and simulate the flagship dbC matmul grids")
    parser.add_argument("-o", "--output-dir", help="where to write the artifacts (default: a temp dir)")
    parser.set_defaults(handler=run)
