"""The kernels a measurement can name, built as instruction streams ptoc can re-time.

* ``matmul``: ``C[M,N] = A[M,K] @ B[K,N]`` with both operands loaded whole into L1, one
  ``pl.matmul`` and one store, compiled by ptoc (the L0 tile is the chooser's: a ``tile``
  given in the measurement must be the one the chooser picks, else the row names the
  ``kloop`` kernel). This is the kernel PyPTO's single-kernel device numbers were taken on.
* ``kloop``: the hand-written double-buffered K loop of ``ptoc.sim.examples.dbuf_matmul``
  (GM -> L1 per k-step, one accumulator) at the measurement's tile (m x n x k).
* ``gemm``: one core's share of pto-isa's reference GEMM (``reference_gemm``): the
  problem is split over the core grid (rows x cols), each core computing
  (M/rows) x (N/cols) x K with the measurement's tile (default 128x256x64).
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import numpy as np

from ptoc.calibration.measurements import Measurement, MeasurementError
from ptoc.dtypes import DataType
from ptoc.sim.retime import Stream, build_stream

_PTO_DTYPE = {"BF16": "bf16", "FP16": "f16", "FP32": "f32"}

_MATMUL = """\
import ptoc.language as pl

@pl.program
class CalibrationMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[{M}, {K}], pl.{dt}], b: pl.Tensor[[{K}, {N}], pl.{dt}],
               out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        am = pl.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)
        c = pl.matmul(am, bm)
        out = pl.store(c, [0, 0], out)
        return out
"""


def matmul_program(M: int, K: int, N: int, dtype: str = "BF16", *, filename: str = "<matmul>"):
    """The ``matmul`` kernel as a DSL program: ``out = a @ b``, operands loaded whole into L1."""
    from ptoc.language import parse_program

    return parse_program(_MATMUL.format(M=M, K=K, N=N, dt=dtype), filename)


def _zeros(shape, dtype: str) -> np.ndarray:
    return np.zeros(shape, DataType[dtype].numpy)


def kernel_stream(row: Measurement, target: str = "a2a3") -> Stream:
    """The instruction stream of the kernel ``row`` measured (one core's share)."""
    m_, k_, n_ = row.shape
    build = {"matmul": _matmul, "kloop": _kloop, "gemm": _gemm}[row.kernel]
    return build(row, m_, k_, n_, target)


def _error(row: Measurement, message: str, hint: str) -> MeasurementError:
    return MeasurementError(f"{row.source or 'measurements'} line {row.line} ({row.name()}): "
                            f"{message}", hint=hint)


def _matmul(row, M, K, N, target) -> Stream:
    from ptoc import ir
    from ptoc.errors import PtocError

    with tempfile.TemporaryDirectory(prefix="ptoc_calibrate_") as out:
        try:
            # the compile's "N perf hints, see DIR" line would name a directory about to go
            with contextlib.redirect_stderr(io.StringIO()):
                compiled = ir.compile(matmul_program(M, K, N, row.dtype), out,
                                      platform=f"{target}sim", dump_passes=False)
        except PtocError as exc:
            raise _error(row, f"ptoc cannot compile this matmul: {exc.message}",
                         "measure a shape whose operands fit L1, or use kernel=gemm") from None
        picks = json.loads((Path(out) / "report" / "decisions.json").read_text())["decisions"]
    chosen = [(d["m"], d["n"], d["k"]) for d in picks if d["kind"] == "tile_choice"]
    if row.tile is not None and chosen and row.tile != chosen[0]:
        raise _error(row, f"ptoc's chooser tiles this matmul {'x'.join(map(str, chosen[0]))}, "
                     f"not {'x'.join(map(str, row.tile))}",
                     "leave the tile empty, or use kernel=kloop to time a given tile")
    tensors = [_zeros((M, K), row.dtype), _zeros((K, N), row.dtype), _zeros((M, N), "FP32")]
    return build_stream(compiled.pto_module("kernel"), tensors, target=target)


def _kloop(row, M, K, N, target) -> Stream:
    from ptoc.sim.examples import dbuf_matmul

    if row.tile is None:
        raise _error(row, "kernel=kloop needs a tile", "give the tile as mxnxk, e.g. 128x256x64")
    m, n, k = row.tile
    try:
        text = dbuf_matmul(M, N, K, k, m=m, n=n, dtype=_PTO_DTYPE[row.dtype])
    except ValueError as exc:
        raise _error(row, str(exc), "pick a tile that divides the shape") from None
    tensors = [_zeros((M, K), row.dtype), _zeros((K, N), row.dtype), _zeros((M, N), "FP32")]
    return build_stream(text, tensors, target=target)


def _gemm(row, M, K, N, target) -> Stream:
    from ptoc.sim.examples import reference_gemm

    rows, cols = row.grid
    if M % rows or N % cols:
        raise _error(row, f"the {rows}x{cols} core grid does not divide M={M}, N={N}",
                     "give a grid whose rows divide M and columns divide N")
    m, n, k = row.tile or (128, 256, 64)
    mc, nc = M // rows, N // cols
    if row.dtype == "FP32":
        raise _error(row, "the reference GEMM kernel is written for 2-byte inputs",
                     "use bf16 or fp16")
    try:
        text = reference_gemm(mc, nc, K, m=m, n=n, k=k, dtype=_PTO_DTYPE[row.dtype])
    except ValueError as exc:
        raise _error(row, f"one core's share {mc}x{K}x{nc}: {exc}",
                     "pick a shape and tile the reference schedule divides") from None
    tensors = [_zeros((mc, K), row.dtype), _zeros((K, nc), row.dtype), _zeros((mc, nc), "FP32")]
    return build_stream(text, tensors, target=target)
