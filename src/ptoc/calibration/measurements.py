"""Device measurements a profile is fitted to: what was run and what was measured.

Two input forms, told apart by their header:

* **plain CSV** (ptoc's own): one kernel run per row. Columns (case-insensitive):
  ``kernel`` (``matmul``, ``kloop`` or ``gemm``; see ``ptoc.calibration.kernels``),
  ``shape`` (``MxKxN`` of ``C[M,N] = A[M,K] @ B[K,N]``), ``tile`` (``mxnxk``, optional),
  ``dtype`` (``bf16``, ``fp16``, ``fp32``), ``cores`` (default 1), ``grid`` (``RxC`` cores
  for ``gemm``), ``staged`` (1 when the measured time includes copying the kernel's tensors
  in and out, default 0), and at least one measured value: ``us`` or ``cycles`` (the
  kernel's wall, launch included), ``busy_<pipe>`` (cycles a pipe was busy on one core:
  ``busy_cube``, ``busy_mte1``, ``busy_mte2``, ``busy_fix``, ``busy_vector``, ``busy_mte3``)
  or ``share_<pipe>`` (the same as a fraction of the measured wall). ``label`` and
  ``source`` are free text. Lines starting with ``#`` are comments.
* **Ascend profiler per-op summary** (``op_summary_*.csv`` of msprof): a row whose op is a
  matmul (``MatMul`` in its type or name) becomes a ``matmul`` measurement: shapes and
  dtypes from ``Input Shapes`` / ``Input Data Types``, cores from ``Block Dim``, the wall from
  ``Task Duration(us)`` (device time: nothing staged) and pipe busy times from
  ``aic_mac_time(us)`` (or ``aic_cube_time(us)``), ``aic_mte1_time(us)``,
  ``aic_mte2_time(us)``, ``aic_fixpipe_time(us)``, taken as one core's busy time. Other rows
  are skipped, each with the reason.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from ptoc.backend import Pipe
from ptoc.errors import PtocError

KERNELS = ("matmul", "kloop", "gemm")
DTYPES = {"bf16": "BF16", "fp16": "FP16", "f16": "FP16", "half": "FP16", "float16": "FP16",
          "bfloat16": "BF16", "fp32": "FP32", "f32": "FP32", "float": "FP32",
          "float32": "FP32"}
PIPES = {"cube": Pipe.PIPE_M, "mte1": Pipe.PIPE_MTE1, "mte2": Pipe.PIPE_MTE2,
         "fix": Pipe.PIPE_FIX, "vector": Pipe.PIPE_V, "mte3": Pipe.PIPE_MTE3}
TOTAL = "total"    # the quantity name of a measured wall (launch floor included)


class MeasurementError(PtocError, ValueError):
    """A measurements file ptoc cannot read: the file, row and column are named."""


@dataclass(frozen=True)
class Measurement:
    """One kernel run and what was measured on it.

    ``observed`` maps a quantity (``"total"`` or a ``Pipe``) to cycles; ``shape`` is
    (M, K, N), ``tile`` (m, n, k) or None.
    """

    kernel: str
    shape: tuple[int, int, int]
    dtype: str
    observed: dict
    tile: tuple[int, int, int] | None = None
    cores: int = 1
    grid: tuple[int, int] = (1, 1)
    staged: bool = False
    label: str = ""
    source: str = ""
    line: int = 0

    def name(self) -> str:
        if self.label:
            return self.label
        m, k, n = self.shape
        cores = f" {self.cores} cores" if self.cores > 1 else ""
        return f"{self.kernel} {m}x{k}x{n} {self.dtype.lower()}{cores}"


@dataclass
class MeasurementSet:
    """Rows read from one file, and the rows skipped (with why)."""

    rows: list[Measurement]
    skipped: list[str] = field(default_factory=list)
    form: str = "plain"


def read_measurements(path, *, clock_hz: float) -> MeasurementSet:
    """Read a plain or profiler CSV; microseconds become cycles at ``clock_hz``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise MeasurementError(f"cannot read measurements file {p}: {exc.strerror}",
                               hint="pass the path of a CSV file") from None
    return parse_measurements(text, clock_hz=clock_hz, filename=str(p))


def parse_measurements(text: str, *, clock_hz: float, filename: str = "<csv>") -> MeasurementSet:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise MeasurementError(f"{filename} holds no measurements",
                               hint="write a header line and one row per kernel run")
    header = [h.strip() for h in next(csv.reader([lines[0]]))]
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    rows = [({(k or "").strip(): (v or "").strip() for k, v in r.items()}, i + 2)
            for i, r in enumerate(reader)]
    if "Task Duration(us)" in header:
        return _profiler_rows(rows, clock_hz, filename)
    return MeasurementSet([_plain_row(r, line, clock_hz, filename) for r, line in rows])


# ---- plain CSV ------------------------------------------------------------------------------

def _plain_row(raw: dict, line: int, clock_hz: float, filename: str) -> Measurement:
    row = {k.lower(): v for k, v in raw.items()}

    def bad(column: str, message: str, hint: str) -> MeasurementError:
        return MeasurementError(f"{filename} line {line}, column {column!r}: {message}",
                                hint=hint)

    kernel = row.get("kernel", "").lower()
    if kernel not in KERNELS:
        raise bad("kernel", f"unknown kernel {kernel!r}", f"use one of {', '.join(KERNELS)}")
    shape = _dims(row.get("shape", ""), 3)
    if shape is None:
        raise bad("shape", f"{row.get('shape', '')!r} is not MxKxN",
                  "write the matmul's M, K and N, e.g. 256x64x256")
    tile = None
    if row.get("tile"):
        tile = _dims(row["tile"], 3)
        if tile is None:
            raise bad("tile", f"{row['tile']!r} is not mxnxk", "write e.g. 128x256x64")
    dtype = DTYPES.get(row.get("dtype", "").lower())
    if dtype is None:
        raise bad("dtype", f"unknown dtype {row.get('dtype', '')!r}", "use bf16, fp16 or fp32")
    cores = _positive_int(row.get("cores") or "1")
    if cores is None:
        raise bad("cores", f"{row.get('cores')!r} is not a positive integer", "e.g. 1 or 24")
    grid = _grid(row.get("grid", ""), cores)
    if grid is None:
        raise bad("grid", f"no core grid for {cores} cores ({row.get('grid', '')!r})",
                  "write the cores as RxC, e.g. 4x6 for 24 cores")
    staged = row.get("staged", "0").lower() in ("1", "true", "yes")
    observed = _observations(row, clock_hz, bad)
    return Measurement(kernel, shape, dtype, observed, tile, cores, grid, staged,
                       row.get("label", ""), row.get("source", ""), line)


def _observations(row: dict, clock_hz: float, bad) -> dict:
    observed: dict = {}

    def number(column: str) -> float | None:
        text = row.get(column, "")
        if not text:
            return None
        try:
            value = float(text)
        except ValueError:
            raise bad(column, f"{text!r} is not a number", "write a plain decimal") from None
        if not value > 0:
            raise bad(column, f"{value} is not positive", "measured times are > 0")
        return value

    us, cycles = number("us"), number("cycles")
    if us is not None:
        observed[TOTAL] = us * clock_hz / 1e6
    if cycles is not None:
        observed[TOTAL] = cycles
    for name, pipe in PIPES.items():
        busy, share = number(f"busy_{name}"), number(f"share_{name}")
        if busy is not None:
            observed[pipe] = busy
        if share is not None:
            if TOTAL not in observed:
                raise bad(f"share_{name}", "a share needs the measured wall in 'us' or "
                          "'cycles'", "add the wall, or give busy_<pipe> in cycles")
            observed[pipe] = share * observed[TOTAL]
    if not observed:
        raise bad("us", "the row measures nothing",
                  "give us, cycles, busy_<pipe> or share_<pipe> "
                  f"(pipes: {', '.join(PIPES)})")
    return observed


def _dims(text: str, count: int) -> tuple[int, ...] | None:
    parts = [p for p in re.split(r"[x×*,; ]+", text.strip().lower()) if p]
    if len(parts) != count or not all(p.isdigit() and int(p) > 0 for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _positive_int(text: str) -> int | None:
    return int(text) if text.isdigit() and int(text) > 0 else None


#: The reference GEMM's stated grid for 24 cores (pto-isa gemm_performance README).
_DEFAULT_GRIDS = {1: (1, 1), 24: (4, 6)}


def _grid(text: str, cores: int) -> tuple[int, int] | None:
    if not text:
        return _DEFAULT_GRIDS.get(cores)
    dims = _dims(text, 2)
    return dims if dims and dims[0] * dims[1] == cores else None


# ---- Ascend profiler op_summary ---------------------------------------------------------------

_PROFILER_PIPES = {Pipe.PIPE_M: ("aic_mac_time(us)", "aic_cube_time(us)"),
                   Pipe.PIPE_MTE1: ("aic_mte1_time(us)",),
                   Pipe.PIPE_MTE2: ("aic_mte2_time(us)",),
                   Pipe.PIPE_FIX: ("aic_fixpipe_time(us)",)}


def _profiler_rows(rows, clock_hz: float, filename: str) -> MeasurementSet:
    out, skipped = [], []
    for raw, line in rows:
        op = raw.get("Op Name", "") or raw.get("OP Type", "")
        kind = f"{raw.get('OP Type', '')} {raw.get('Op Name', '')}".lower()
        where = f"{filename} line {line} ({op or '?'})"
        if "matmul" not in kind:
            skipped.append(f"{where}: not a matmul; ptoc builds only its matmul kernels")
            continue
        shapes = [_dims(s, 2) for s in raw.get("Input Shapes", "").strip('"').split(";")
                  if s.strip()]
        if len(shapes) < 2 or None in shapes[:2] or shapes[0][1] != shapes[1][0]:
            skipped.append(f"{where}: Input Shapes {raw.get('Input Shapes', '')!r} are not "
                           "[M,K];[K,N]")
            continue
        types = [t.strip().lower().removeprefix("dt_")
                 for t in raw.get("Input Data Types", "").split(";") if t.strip()]
        dtype = DTYPES.get(types[0]) if types else None
        if dtype is None:
            skipped.append(f"{where}: input dtype {types[:1]} is not bf16, fp16 or fp32")
            continue
        blocks = _positive_int(raw.get("Block Dim", "1") or "1") or 1
        if blocks != 1:
            skipped.append(f"{where}: Block Dim {blocks}; ptoc's matmul kernel runs on one core")
            continue
        observed = {}
        try:
            observed[TOTAL] = float(raw["Task Duration(us)"]) * clock_hz / 1e6
            for pipe, columns in _PROFILER_PIPES.items():
                for column in columns:
                    if raw.get(column) not in (None, "", "N/A"):
                        if float(raw[column]) > 0:     # an idle pipe constrains nothing
                            observed[pipe] = float(raw[column]) * clock_hz / 1e6
                        break
        except (KeyError, ValueError):
            skipped.append(f"{where}: Task Duration or a pipe time is not a number")
            continue
        (m, k), (_, n) = shapes[0], shapes[1]
        out.append(Measurement("matmul", (m, k, n), dtype, observed, label=op, line=line,
                               source=filename))
    return MeasurementSet(out, skipped, "profiler")
