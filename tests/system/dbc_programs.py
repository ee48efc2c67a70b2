"""Programs and timeline helpers shared by the dbC=2 system tests and ``benchmarks/dbc.py``.

Builders return ``@pl.program`` classes (one InCore kernel plus an orchestration) for the
shapes of PyPTO's ``test_dbc2_double_buffer.py``: FP32 direct-store grids with K = 64 and the
BF16 Mat-scratch chain 256x64x256. The helpers read what a test needs from a
``CompiledProgram`` (the Acc placements) and from a simulated timeline (matmul/drain
intervals, the drain/MAD overlap), and build the stage-major ``M0 S0 M1 S1`` variant of a
lowered program so that both dbC schedules can be simulated side by side.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import ml_dtypes
import numpy as np

import ptoc.language as pl
from ptoc.backend import get_target
from ptoc.dtypes import MemorySpace
from ptoc.ir.nodes import AssignStmt, ForStmt, IfStmt, SeqStmts, Var
from ptoc.passes import L0TileConfig, choose_l0_tile

BF16 = ml_dtypes.bfloat16

# (M, N) of the direct-store system grids; K = 64, FP32 (tiles: 4, 6, 8, 16, 12, 2, 2, tail).
DIRECT_STORE_GRIDS = [(160, 160), (144, 144), (256, 256), (448, 448), (384, 256), (16, 256),
                      (256, 16), (320, 320)]

_PL_DTYPE = {"FP32": pl.FP32, "BF16": pl.BF16, "FP16": pl.FP16}
NP_DTYPE = {"FP32": np.float32, "BF16": BF16, "FP16": np.float16}


# ---- programs --------------------------------------------------------------------------------

def direct_store(M: int, N: int, K: int = 64, dtype: str = "FP32"):
    """``out[M, N] = a[M, K] @ b[K, N]`` (FP32 accumulate), Mat loads and one direct store."""
    dt = _PL_DTYPE[dtype]

    @pl.program
    class DirectStore:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[M, K], dt], b: pl.Tensor[[K, N], dt],
                   out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
            lm = pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
            rm = pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat)
            c = pl.matmul(lm, rm)
            out = pl.store(c, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[M, K], dt], b: pl.Tensor[[K, N], dt],
                 out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
            out = self.kernel(a, b, out)
            return out
    return DirectStore


def mat_scratch_chain():
    """BF16 ``(a @ b)`` -> rint cast -> ``@ e``, assembled into ``out`` (256x64x256, then K=256)."""
    @pl.program
    class MatScratch:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[256, 64], pl.BF16], b: pl.Tensor[[64, 256], pl.BF16],
                   e: pl.Tensor[[256, 64], pl.BF16],
                   out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
            c = pl.matmul(a, b, out_dtype=pl.FP32)
            cb = pl.cast(c, pl.BF16, mode="rint")
            d = pl.matmul(cb, e, out_dtype=pl.FP32)
            out = pl.assemble(out, d, [0, 0])
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[256, 64], pl.BF16], b: pl.Tensor[[64, 256], pl.BF16],
                 e: pl.Tensor[[256, 64], pl.BF16],
                 out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
            out = self.kernel(a, b, e, out)
            return out
    return MatScratch


def direct_store_inputs(M: int, N: int, K: int = 64, dtype: str = "FP32", seed: int = 0):
    """Random ``a``, ``b``, a zero ``out`` and the float64 golden."""
    rng = np.random.default_rng(seed + 1000 * M + N)
    a = rng.standard_normal((M, K)).astype(NP_DTYPE[dtype])
    b = rng.standard_normal((K, N)).astype(NP_DTYPE[dtype])
    golden = a.astype(np.float64) @ b.astype(np.float64)
    return (a, b, np.zeros((M, N), np.float32)), golden


def mat_scratch_inputs(seed: int = 7):
    """Scaled BF16 inputs (PyPTO's ST scales b by 1/sqrt(64), e by 1/sqrt(256)) and the golden:
    the intermediate is rounded to BF16 exactly as the FIXPIPE rint cast does."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((256, 64)).astype(BF16)
    b = (rng.standard_normal((64, 256)) / 8).astype(BF16)
    e = (rng.standard_normal((256, 64)) / 16).astype(BF16)
    c = (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16).astype(np.float64)
    return (a, b, e, np.zeros((256, 64), np.float32)), c @ e.astype(np.float64)


# ---- the chooser -----------------------------------------------------------------------------

def chooser(M: int, N: int, K: int = 64, dtype: str = "FP32", *, dbc: bool, target="a2a3",
            force_output_stationary: bool = False):
    """``choose_l0_tile`` with AutoTileMatmulL0's gates for a plain full matmul (§3.2); a
    Mat-scratch producer under PYPTO is re-chosen output-stationary (§3.4)."""
    tgt = get_target(target)
    nbytes = np.dtype(NP_DTYPE[dtype]).itemsize
    stationary = not force_output_stationary
    cfg = L0TileConfig.for_target(tgt, M=M, N=N, K=K, bytes_a=nbytes, bytes_b=nbytes, bytes_c=4,
                                  allow_a_stationary=stationary, allow_b_stationary=stationary,
                                  allow_double_buffer_c=dbc, allow_k_boundary=True)
    return choose_l0_tile(cfg)


def tile_count(M: int, N: int, m: int, n: int) -> int:
    return -(-M // m) * -(-N // n)


# ---- allocations -----------------------------------------------------------------------------

def acc_buffers(compiled) -> list[tuple[int, int]]:
    """Distinct ``(address, size)`` of the kernel's Acc (L0C) buffers, by address."""
    return sorted({(a.addr, a.size) for a in compiled.allocations_in(MemorySpace.Acc)})


def align32(x: int) -> int:
    return (x + 31) // 32 * 32


# ---- the simulated timeline ------------------------------------------------------------------

MATMUL_OPS = ("pto.tmatmul", "pto.tmatmul.acc", "pto.tmatmul.bias")
DRAIN_OPS = ("pto.tstore", "pto.tinsert", "pto.tmov")


@dataclass(frozen=True)
class Overlap:
    """Drain (FIX) of tile i against the MADs (M) of tile i+1, in simulated cycles."""

    pairs: int                     # consecutive tile pairs examined
    overlapping: int               # pairs whose intervals intersect
    hidden: float                  # drain cycles that ran under the next tile's MADs
    drain_total: float             # all drain cycles (FIX work of the examined tiles)
    per_pair: tuple[float, ...]    # overlap cycles of each pair


def _intersect(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def tile_intervals(sim) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """``(mad, drain)`` interval per output tile, in issue order.

    Each tile of a full-K grid is one ``tmatmul`` and one FIX drain (``tstore`` to GM, or a
    ``tinsert``/``tmov`` into a Mat scratch); FIX work that is not a drain is ignored.
    """
    mads = [(r.start, r.end) for r in sim.on_pipe("M") if r.name in MATMUL_OPS]
    drains = [(r.start, r.end) for r in sim.on_pipe("FIX") if r.name in DRAIN_OPS]
    return mads, drains


def drain_overlap(sim, first: int = 0, count: int | None = None) -> Overlap:
    """How the drain of tile i overlaps the MADs of tile i+1, for tiles [first, first+count)."""
    mads, drains = tile_intervals(sim)
    assert len(mads) == len(drains), (len(mads), len(drains))
    stop = len(mads) if count is None else first + count
    per = tuple(_intersect(drains[i], mads[i + 1]) for i in range(first, stop - 1))
    hidden = sum(_intersect(drains[i], mad) for i in range(first, stop) for mad in mads[first:stop])
    total = sum(d[1] - d[0] for d in drains[first:stop])
    return Overlap(len(per), sum(1 for p in per if p > 0), hidden, total, per)


def hidden_drain(sim) -> tuple[float, float]:
    """``(hidden, total)`` FIX drain cycles; hidden = run while the cube (M pipe) was busy.

    Works for any grid (split-K tiles have several MADs per drain); M-pipe work never
    overlaps itself, so the per-drain sum counts each hidden cycle once.
    """
    mads = [(r.start, r.end) for r in sim.on_pipe("M")]
    drains = [(r.start, r.end) for r in sim.on_pipe("FIX") if r.name in DRAIN_OPS]
    hidden = sum(_intersect(d, m) for d in drains for m in mads)
    return hidden, sum(d[1] - d[0] for d in drains)


# ---- the stage-major schedule ----------------------------------------------------------------

def _reads(value) -> set[int]:
    out: set[int] = set()
    for arg in getattr(value, "args", ()):
        if isinstance(arg, Var):
            out.add(id(arg))
    return out


def _is_call(stmt, prefix: str) -> bool:
    return (isinstance(stmt, AssignStmt) and getattr(stmt.value, "op", "").startswith(prefix))


def _stage_major(seq: SeqStmts) -> SeqStmts:
    """``... M0 M1 S0 S1 ...`` -> ``... M0 S0 M1 S1 ...``: each drain of an Acc matmul moves up
    to just after the matmul it drains (its other inputs are all defined before)."""
    stmts = [_stage_major_stmt(s) for s in seq.stmts]
    matmuls = {id(s.var): i for i, s in enumerate(stmts) if _is_call(s, "tile.matmul")}
    drains = [s for s in stmts if isinstance(s, AssignStmt)
              and getattr(s.value, "op", "") in ("tile.store", "tile.assemble")
              and _reads(s.value) & set(matmuls)]
    if len(matmuls) < 2 or not drains:
        return dataclasses.replace(seq, stmts=tuple(stmts))
    moved = {id(s) for s in drains}
    out = [s for s in stmts if id(s) not in moved]
    for drain in drains:
        source = next(v for v in _reads(drain.value) if v in matmuls)
        anchor = next(i for i, s in enumerate(out) if isinstance(s, AssignStmt)
                      and id(s.var) == source)
        # Keep the drain chain in order: after the previous drain if that came later.
        later = [i for i, s in enumerate(out) if id(s) in moved]
        out.insert(max([anchor] + later) + 1, drain)
    return dataclasses.replace(seq, stmts=tuple(out))


def _stage_major_stmt(stmt):
    if isinstance(stmt, ForStmt):
        return dataclasses.replace(stmt, body=_stage_major(stmt.body))
    if isinstance(stmt, IfStmt):
        return dataclasses.replace(
            stmt, then_body=_stage_major(stmt.then_body),
            else_body=_stage_major(stmt.else_body) if stmt.else_body is not None else None)
    return stmt


def stage_major_program(program):
    """The lowered ``program`` with every matmul/drain chunk re-ordered stage-major (the
    later PyPTO ``M0 S0 M1 S1`` ping-pong); buffers and addresses are unchanged."""
    functions = tuple(dataclasses.replace(fn, body=_stage_major(fn.body))
                      if fn.func_type.is_kernel else fn for fn in program.functions)
    return dataclasses.replace(program, functions=functions)


def op_order(program, kernel: str = "kernel") -> str:
    """``M``/``S`` letters of the Acc matmuls and drains of a kernel, in statement order."""
    letters: list[str] = []

    def walk(seq):
        for s in seq.stmts:
            if isinstance(s, ForStmt):
                walk(s.body)
            elif isinstance(s, IfStmt):
                walk(s.then_body)
                if s.else_body is not None:
                    walk(s.else_body)
            elif _is_call(s, "tile.matmul"):
                letters.append("M")
            elif _is_call(s, "tile.store") or _is_call(s, "tile.assemble"):
                letters.append("S")
    walk(program.get_function(kernel).body)
    return "".join(letters)
