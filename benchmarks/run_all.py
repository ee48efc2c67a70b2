"""The benchmark runner behind ``ptoc bench``: run benchmarks, print tables, write JSON.

Each benchmark module here exposes ``run(quick=False, full=False) -> list[Table]`` and
``TITLE``. A script without that interface (for instance another team's ``dbc.py``) is run
as ``python SCRIPT [--quick]`` and its standard output is kept verbatim; it runs in the
directory of ``--json`` (else a scratch directory), so files it writes land there. ``--quick`` is the
tiny smoke configuration; ``--full`` adds the largest shapes (minutes).

Run directly: python benchmarks/run_all.py [NAME...] [--json OUT] [--quick] [--full]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import io
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

#: name -> file, in the order ``ptoc bench`` runs them
BENCHMARKS = {
    "compile_time": "compile_time.py",
    "sim_throughput": "sim_throughput.py",
    "gemm_bound": "gemm_bound.py",
    "chooser_vs_sim": "chooser_vs_sim.py",
    "race_scaling": "race_scaling.py",
    "fuzz_robustness": "fuzz_robustness.py",
    "chip_gemm": "chip_gemm.py",
    "chip_tasks": "chip_tasks.py",
    "dbc": "dbc.py",
    "calibration": "calibration.py",
    "mixed_fused_linear": "mixed_fused_linear.py",
}
SCRIPT_TIMEOUT_S = 1800


def _here(bench_dir=None) -> Path:
    return Path(bench_dir) if bench_dir else Path(__file__).resolve().parent


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"ptoc_bench_{path.stem}", path)
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # for dataclasses
    spec.loader.exec_module(module)
    return module


def _title(path: Path) -> str:
    """The first docstring line, read without importing the script."""
    import ast

    try:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    except SyntaxError:
        doc = ""
    return doc.splitlines()[0] if doc else path.name


def available(bench_dir=None) -> dict[str, str]:
    """The benchmarks whose script exists, with their titles."""
    here = _here(bench_dir)
    return {name: _title(here / f) for name, f in BENCHMARKS.items() if (here / f).is_file()}


def _run_one(name: str, here: Path, quick: bool, full: bool, workdir: Path) -> dict:
    path = here / BENCHMARKS[name]
    t0 = time.perf_counter()
    if "def run(" in path.read_text() and "_table" in path.read_text():
        sys.path.insert(0, str(here))
        with contextlib.redirect_stderr(io.StringIO()):  # per-compile summary lines
            tables = _module(path).run(quick=quick, full=full)
        result = {"name": name, "tables": [t.to_json() for t in tables],
                  "text": "\n\n".join(t.render() for t in tables)}
    else:
        argv = [sys.executable, str(path)] + (["--quick"] if quick else [])
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=SCRIPT_TIMEOUT_S,
                              cwd=workdir)  # files a script writes land next to --json
        text = proc.stdout.rstrip()
        if proc.returncode != 0:
            text += f"\n({path.name} exited with status {proc.returncode}: " \
                    f"{(proc.stderr.strip().splitlines() or ['?'])[-1]})"
        result = {"name": name, "tables": [], "text": text, "returncode": proc.returncode}
    result["seconds"] = time.perf_counter() - t0
    return result


def run(names, bench_dir=None, *, quick: bool = False, full: bool = False, json_out=None,
        stream=print) -> list[dict]:
    """Run ``names`` in order, print each table as it finishes, optionally write JSON."""
    import tempfile

    here = _here(bench_dir)
    results = []
    scratch = tempfile.TemporaryDirectory(prefix="ptoc_bench_")
    workdir = Path(json_out).resolve().parent if json_out else Path(scratch.name)
    workdir.mkdir(parents=True, exist_ok=True)
    for name in names:
        stream(f"== {name} ==")
        result = _run_one(name, here, quick, full, workdir)
        stream(result["text"])
        stream(f"({name}: {result['seconds']:.1f} s)\n")
        results.append(result)
    if json_out:
        doc = {"version": 1, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
               "python": platform.python_version(), "machine": platform.machine(),
               "cpus": os.cpu_count(), "quick": quick, "full": full, "results": results}
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(json_out).write_text(json.dumps(doc, indent=2) + "\n")
    scratch.cleanup()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--full", action="store_true")
    args = ap.parse_args()
    names = args.names or list(available())
    run(names, quick=args.quick, full=args.full, json_out=args.json)


if __name__ == "__main__":
    main()
