"""Timing profiles: named, documented parameter sets and the cost functions the simulator uses.

Three calibrations of the same core disagree (hw-model.md §2.3), so each is shipped as its own
profile rather than averaged:

* ``a2a3-device`` (default for a2a3): fitted to the published device numbers
  (``shared/data/device/a2a3-published.json``): PyPTO's on-device fit for MAD and the
  L0C->GM drain, MTE1 rescaled to the pto-isa GEMM, a faster L0C->L1 drain, the GM bandwidth
  shared by the active cores and a launch/staging floor; pto-isa's flat table for GM/UB.
* ``a2a3-ptoisa``: the pto-isa cost model's flat table everywhere (hw-model.md §2.3 middle column).
* ``a5-sim`` (default for a5): PyPTO's a5-sim fit (hw-model.md §5.1 a5 column).

All costs are in core cycles and returned as floats (the fitted constants are fractional).
Transfers are charged on physical (padded) bytes [A] (hw-model.md §6.2 last line).
Tags on constants: [S] sourced, [D] derived (arithmetic shown), [A] assumption, [F] fitted
by least squares to the training rows of a2a3-published.json (``benchmarks/calibration.py``
prints the fit and its residuals).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtocError

from ptoc.backend.l0_cost_model import A2A3_L0_COST_MODEL, A5_L0_COST_MODEL, L0CostModel
from ptoc.backend.profile_params import is_profile_file, load_profile
from ptoc.backend.targets import TargetError, get_target


class ProfileError(PtocError, ValueError):
    """Unknown profile name, or a cost asked for a path/op the profile does not model."""


# pto-isa arch_config.hpp divides bytes by GiB (2^30) and multiplies by 1.85 GHz
# (kMainFrequencyHz), so 1 GiB/s = 2^30 / 1.85e9 = 0.5804 B/cycle [D] (hw-model.md §2.3 "Sources").
PTOISA_CLOCK_HZ = 1.85e9


def gib_per_s_to_bytes_per_cycle(gib_per_s: float) -> float:
    """Convert a pto-isa table entry in GiB/s to bytes per cycle at 1.85 GHz [D]."""
    return gib_per_s * 2**30 / PTOISA_CLOCK_HZ


def odd_part(x: int) -> int:
    """``x`` with every factor of two removed (odd(80/8=10) = 5); odd(0) = 0."""
    if x <= 0:
        return 0
    while x % 2 == 0:
        x //= 2
    return x


@dataclass(frozen=True)
class LinearTransfer:
    """A move that costs ``fixed_cycles + bytes / bytes_per_cycle``."""

    bytes_per_cycle: float
    fixed_cycles: float = 0.0
    source: str = ""

    def cycles(self, nbytes: int) -> float:
        return self.fixed_cycles + nbytes / self.bytes_per_cycle


@dataclass(frozen=True)
class RowDrain:
    """PyPTO's per-row FIXPIPE drain model (hw-model.md §2.3, pypto `DrainCycles` [S]).

    ``cycles = fixed + m * (max(row, bytes_c*n/bw) + penalty * (odd(ceil(n/N0)) - 1))`` with
    ``N0 = c0_bytes / bytes_c`` (8 for fp32).
    """

    fixed_cycles: float
    row_cycles: float
    bytes_per_cycle: float
    penalty_cycles: float
    c0_bytes: int
    source: str = ""

    def cycles(self, rows: int, cols: int, acc_bytes: int,
               link_bytes_per_cycle: float | None = None) -> float:
        """``link_bytes_per_cycle`` caps the per-row throughput (the core's share of GM)."""
        n0 = max(1, self.c0_bytes // acc_bytes)
        n1 = -(-cols // n0)
        row_bytes = acc_bytes * cols
        per_row = max(self.row_cycles, row_bytes / self.bytes_per_cycle,
                      row_bytes / link_bytes_per_cycle if link_bytes_per_cycle else 0.0)
        return self.fixed_cycles + rows * (per_row + self.penalty_cycles * (odd_part(n1) - 1))


@dataclass(frozen=True)
class FlatDrain:
    """A drain charged ``fixed + accumulator bytes / bandwidth``: the pto-isa flat table
    (no fixed part), and the L0C->L1 path, whose NZ->NZ writes have no per-row bursts."""

    bytes_per_cycle: float
    fixed_cycles: float = 0.0
    source: str = ""

    def cycles(self, rows: int, cols: int, acc_bytes: int,
               link_bytes_per_cycle: float | None = None) -> float:
        bw = min(self.bytes_per_cycle, link_bytes_per_cycle or math.inf)
        return self.fixed_cycles + rows * cols * acc_bytes / bw


@dataclass(frozen=True)
class LaunchFloor:
    """What a kernel costs outside its core's instructions, reported as its own line.

    ``cycles = fixed + block * (blocks - 1) + staged_bytes / staging_bytes_per_cycle``: the
    launch of the kernel, the dispatch of each further block (core) one after the other, and
    the staging of the tensors a run copies in and out (0 bytes when they stay on device).
    """

    fixed_cycles: float
    block_cycles: float
    staging_bytes_per_cycle: float
    source: str = ""

    def cycles(self, *, blocks: int = 1, staged_bytes: int = 0) -> float:
        if blocks < 1 or staged_bytes < 0:
            raise ProfileError(f"launch floor of {blocks} block(s) staging {staged_bytes} bytes",
                               hint="pass blocks >= 1 and staged_bytes >= 0")
        return (self.fixed_cycles + self.block_cycles * (blocks - 1)
                + staged_bytes / self.staging_bytes_per_cycle)


@dataclass(frozen=True)
class VectorCost:
    """Vector op cost ``bias + slope * rows * cols`` (pto-isa formula_params.csv form).

    ``slope_by_bytes`` maps element byte width to cycles per element.
    """

    slope_by_bytes: Mapping[int, float]
    bias_cycles: float
    source: str = ""


@dataclass(frozen=True)
class RowCost:
    """Vector op cost ``bias + bias_reg * regs + rows * (row + reg * regs)``, ``regs`` the
    256-byte vector registers one row spans (``ceil(cols * bytes / 256)``).

    Why a second form: pto-isa fits row/column reductions and broadcasts one slope per
    column count (formula_params.csv), and across those columns every fit has this one
    shape — a fixed cost per row plus one per register of the row, and a final
    cross-register step that grows with the registers (``bias_reg``).
    """

    row_cycles: float
    reg_cycles: float
    bias_cycles: float
    bias_reg_cycles: float = 0.0
    source: str = ""

    def cycles(self, rows: int, cols: int, nbytes: int) -> float:
        regs = math.ceil(cols * nbytes / VECTOR_REGISTER_BYTES)
        return float(self.bias_cycles + self.bias_reg_cycles * regs
                     + rows * (self.row_cycles + self.reg_cycles * regs))


#: vector register width [S] (pto-isa docs/execution-agents.md: 64 fp32 / 128 fp16 lanes)
VECTOR_REGISTER_BYTES = 256


@dataclass(frozen=True)
class TimingProfile:
    """A named set of cost parameters; see the module docstring for the three profiles.

    Fields:
        name, target, description: identity and a one-line summary of provenance.
        mad_head_cycles: fixed cycles per TMATMUL.
        mad_k_fractal_bytes: K fractal in bytes (kt = this / bytes of A).
        mad_fp32_passes: cube passes per K-fractal for fp32 inputs (cpr); 1 for other dtypes.
        transfers: non-Acc moves keyed by (src, dst) memory space.
        drains: Acc drains keyed by destination (DDR, Mat, Vec).
        vector_ops: fitted vector costs by op name (``tadd``, ``texp``...): a VectorCost
            (per element) or a RowCost (per row and register).
        vector_fallback_cycles / vector_fallback_bytes_per_cycle: cost of an unfitted vector op,
            ``fallback + bytes_out / bytes_per_cycle`` [A] (hw-model.md §6.2).
        mte1_head_cycles: fixed cycles per MTE1 move (0: PyPTO uses none) [A].
        issue_cycles: scalar-unit cycles to issue one instruction [S] (1 in pto-isa).
        sync_latency_cycles: extra cycles before a set flag is visible to its waiter [A] (0).
        scalar_op_cycles: cost of an arith/scalar op on the scalar unit [A] (0: issue only).
        gm_chip_bytes_per_cycle: GM bandwidth the chip's cores share (None: unlimited); one
            core gets ``gm_chip_bytes_per_cycle / active_cores`` on every GM path.
        active_cores: cores streaming GM at once (1: this core alone). A chip simulator
            replaces this static share by the real contention.
        launch: the launch/staging floor (None: the profile models none).
    """

    name: str
    target: str
    description: str
    mad_head_cycles: float
    mad_k_fractal_bytes: int
    mad_fp32_passes: int
    transfers: Mapping[tuple[MemorySpace, MemorySpace], LinearTransfer]
    drains: Mapping[MemorySpace, "RowDrain | FlatDrain"]
    vector_ops: Mapping[str, "VectorCost | RowCost"]
    vector_fallback_cycles: float = 20.0          # [A] hw-model.md §6.2 "fallback: 20 + bytes_out/256"
    vector_fallback_bytes_per_cycle: float = 256.0  # [A] same; = vector register width 256 B [S] §2.3
    mte1_head_cycles: float = 0.0                 # [A] hw-model.md §2.3 "MTE1 per extract"
    issue_cycles: float = 1.0                     # [S] hw-model.md §6.1 (pto-isa 1-cycle constant)
    sync_latency_cycles: float = 0.0              # [A] hw-model.md §6.2 "configurable sync latency"
    scalar_op_cycles: float = 0.0                 # [A] hw-model.md §6.1 "scalar arithmetic ignored"
    gm_chip_bytes_per_cycle: float | None = None
    active_cores: int = 1
    launch: LaunchFloor | None = None
    notes: tuple[str, ...] = ()
    extra: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    # -- the GM share ---------------------------------------------------------------------
    @property
    def gm_share_bytes_per_cycle(self) -> float | None:
        """The GM bandwidth this core gets while ``active_cores`` cores stream (None: no cap)."""
        if self.gm_chip_bytes_per_cycle is None:
            return None
        return self.gm_chip_bytes_per_cycle / self.active_cores

    def for_cores(self, cores: int) -> "TimingProfile":
        """This profile with ``cores`` cores sharing GM (the per-core share parameter)."""
        if not isinstance(cores, int) or cores < 1:
            raise ProfileError(f"active cores must be a positive integer, got {cores!r}",
                               hint="pass the number of cores the kernel runs on, e.g. 24")
        return dataclasses.replace(self, active_cores=cores)

    # -- launch / staging floor -----------------------------------------------------------
    def floor_cycles(self, *, blocks: int = 1, staged_bytes: int = 0) -> float:
        """The kernel's launch/staging floor (0 when the profile models none)."""
        return 0.0 if self.launch is None else self.launch.cycles(blocks=blocks,
                                                                  staged_bytes=staged_bytes)

    # -- cube --------------------------------------------------------------------------
    def mad_cycles(self, m: int, k: int, n: int, a_dtype: DataType) -> float:
        """TMATMUL cost ``head + cpr * ceil(m/16) * ceil(k/kt) * ceil(n/16)`` [S]
        (hw-model.md §2.3, pypto `MadCycles`); kt = K-fractal bytes / bytes(A); cpr is the
        fp32 pass count for fp32 inputs and 1 otherwise."""
        _check_positive("tmatmul", m=m, k=k, n=n)
        kt = max(1, self.mad_k_fractal_bytes // a_dtype.nbytes)
        cpr = self.mad_fp32_passes if a_dtype is DataType.FP32 else 1
        return float(self.mad_head_cycles
                     + cpr * math.ceil(m / 16) * math.ceil(k / kt) * math.ceil(n / 16))

    # -- FIXPIPE -------------------------------------------------------------------------
    def drain_cycles(self, dst: MemorySpace, rows: int, cols: int, acc_dtype: DataType) -> float:
        """FIXPIPE cost of draining an (rows x cols) accumulator of ``acc_dtype`` to ``dst``."""
        _check_positive("drain", rows=rows, cols=cols)
        try:
            model = self.drains[dst]
        except KeyError:
            raise ProfileError(
                f"profile {self.name} has no FIXPIPE drain to {dst.value}",
                hint=f"drain destinations: {', '.join(d.value for d in self.drains)}") from None
        link = self.gm_share_bytes_per_cycle if dst is MemorySpace.DDR else None
        return float(model.cycles(rows, cols, acc_dtype.nbytes, link))

    # -- MTE moves -----------------------------------------------------------------------
    def transfer_cycles(self, src: MemorySpace, dst: MemorySpace, nbytes: int) -> float:
        """Cost of a non-Acc move of ``nbytes`` physical bytes from ``src`` to ``dst``."""
        if nbytes < 0:
            raise ProfileError(f"transfer of {nbytes} bytes is negative", hint="pass bytes >= 0")
        try:
            model = self.transfers[(src, dst)]
        except KeyError:
            paths = ", ".join(f"{s.value}->{d.value}" for (s, d) in self.transfers)
            raise ProfileError(f"profile {self.name} has no transfer {src.value} -> {dst.value}",
                               hint=f"modelled paths: {paths}") from None
        head = self.mte1_head_cycles if src is MemorySpace.Mat and dst in _MTE1_DSTS else 0.0
        share = self.gm_share_bytes_per_cycle
        if share is not None and MemorySpace.DDR in (src, dst) and share < model.bytes_per_cycle:
            model = dataclasses.replace(model, bytes_per_cycle=share)
        return float(head + model.cycles(nbytes))

    def move_cycles(self, src: MemorySpace, dst: MemorySpace, *, rows: int, cols: int,
                    dtype: DataType, nbytes: int | None = None) -> float:
        """Cost of any move: a drain when ``src`` is Acc (``dtype`` = accumulator dtype),
        else a transfer of ``nbytes`` (default rows*cols*bytes)."""
        if src is MemorySpace.Acc:
            return self.drain_cycles(dst, rows, cols, dtype)
        return self.transfer_cycles(src, dst, rows * cols * dtype.nbytes if nbytes is None
                                    else nbytes)

    # -- vector --------------------------------------------------------------------------
    def vector_cycles(self, op: str, dtype: DataType, rows: int, cols: int,
                      out_bytes: int | None = None) -> float:
        """Cost of vector op ``op`` (``tadd`` or ``pto.tadd``) over rows x cols elements.

        A fitted op costs ``bias + slope * rows * cols`` (VectorCost) or its RowCost; an op
        without a fit, or a dtype width the fit lacks, costs ``fallback + out_bytes / 256``
        [A] where ``out_bytes`` defaults to rows*cols*bytes.
        """
        _check_positive(op, rows=rows, cols=cols)
        key = op.removeprefix("pto.")
        fit = self.vector_ops.get(key)
        if isinstance(fit, RowCost):
            return fit.cycles(rows, cols, dtype.nbytes)
        if fit is not None and dtype.nbytes in fit.slope_by_bytes:
            return float(fit.bias_cycles + fit.slope_by_bytes[dtype.nbytes] * rows * cols)
        nbytes = rows * cols * dtype.nbytes if out_bytes is None else out_bytes
        return float(self.vector_fallback_cycles + nbytes / self.vector_fallback_bytes_per_cycle)


def _check_positive(what: str, **dims: int) -> None:
    bad = {k: v for k, v in dims.items() if v <= 0}
    if bad:
        shown = ", ".join(f"{k}={v}" for k, v in bad.items())
        raise ProfileError(f"{what}: extents must be positive, got {shown}",
                           hint="pass the tile's valid extents (>= 1)")


_M, _V, _D = MemorySpace.Mat, MemorySpace.Vec, MemorySpace.DDR
_L, _R, _A, _B = MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias
_MTE1_DSTS = (_L, _R, _B)
_g = gib_per_s_to_bytes_per_cycle

# pto-isa flat table, a2a3 (include/pto/costmodel/arch_config.hpp kA2A3ArchConfig) [S->D]
# (hw-model.md §2.3 middle column; GiB/s converted at 1.85 GHz).
_PTOISA_GM_UB = {
    (_D, _M): LinearTransfer(_g(135.0), source="[S->D] pto-isa flat GM->L1 135 GiB/s = 78.4 B/cyc"),
    (_D, _V): LinearTransfer(_g(100.9), source="[S->D] pto-isa flat GM->UB 100.9 GiB/s = 58.6 B/cyc"),
    (_V, _D): LinearTransfer(_g(188.46), source="[S->D] pto-isa flat UB->GM 188.46 GiB/s = 109.4 B/cyc"),
    (_M, _D): LinearTransfer(_g(32.0), source="[S->D] pto-isa flat L1->GM 32 GiB/s = 18.6 B/cyc"),
    (_V, _V): LinearTransfer(_g(1024.0), source="[S->D] pto-isa flat UB->UB 1024 GiB/s = 594 B/cyc"),
    (_M, _B): LinearTransfer(_g(32.0), source="[S->D] pto-isa flat L1->BT 32 GiB/s = 18.6 B/cyc"),
}

# Vector fits [S] (hw-model.md §2.3 "Vector pipe", pto-isa formula_params.csv steady state):
# TADDS/TMULS fp32 0.0156 cyc/elem, fp16 0.0078; TMUL/TSUB fp32 0.0312, fp16 0.0156; TEXP
# 0.0314 cyc/elem + 30. The csv's fixed term is "typically 15-45": 30 is used where the
# reference gives no bias [A]. Ops not listed in the reference borrow the rate of the closest
# listed op [A] (marked below); every other op uses the fallback.
_SCALAR_RATE = {4: 0.0156, 2: 0.0078}   # [S] TADDS/TMULS
_BINARY_RATE = {4: 0.0312, 2: 0.0156}   # [S] TMUL/TSUB
# Ops the csv gives per column count (8-656 columns, fp32 and fp16) [F]: each row of the csv
# is one (op, dtype, cols) slope and bias; these are least-squares fits of the RowCost shape
# to all of an op's rows (median / worst deviation from the csv at 16 rows in the source).
# Per-element fits keep the csv's slope [S] with its median bias [S]. TROWMIN/TCOLMIN/TMAXS
# and TDIV are not in the csv: they take the rate of their mirror op [A].
_ROWSUM = RowCost(5.7, 1.43, 45.6, 14.9, "[F] TROWSUM: 5.7 + 1.43/reg per row, 45.6 + "
                  "14.9/reg (3.5 % / 12 %)")
_ROWMAX = RowCost(5.55, 1.49, 25.2, 18.3, "[F] TROWMAX: 5.55 + 1.49/reg per row, 25.2 + "
                  "18.3/reg (3.2 % / 13 %)")
_COLMAX = RowCost(0.0, 17.5, 16.0, 0.0, "[F] TCOLMAX: 17.5/reg per row + 16 (1.7 %; one "
                  "fp32 128-col row of the csv is 0.57x)")
_DIVS = VectorCost({4: 0.0781, 2: 0.0703}, 62.0, "[S] TDIVS slope; bias: csv median 62")
_MINS = VectorCost(_SCALAR_RATE, 23.0, "[S] TMINS slope; bias: csv median 23")
_CSV_FITS = {
    "trowsum": _ROWSUM, "trowmax": _ROWMAX,
    "trowmin": dataclasses.replace(_ROWMAX, source="[A] TROWMAX's fit"),
    "tcolsum": RowCost(17.7, 1.8, 30.0, 0.0, "[F] TCOLSUM: 17.7 + 1.8/reg per row + 30 "
                       "(1.8 % / 8 %)"),
    "tcolmax": _COLMAX, "tcolmin": dataclasses.replace(_COLMAX, source="[A] TCOLMAX's fit"),
    "trowexpand": RowCost(13.0, 1.0, 37.0, 0.0, "[F] TROWEXPAND: 13 + 1/reg per row + 37 "
                          "(0 % / 1 %)"),
    "tdivs": _DIVS, "tdiv": dataclasses.replace(_DIVS, source="[A] TDIVS's rate"),
    "tmins": _MINS, "tmaxs": dataclasses.replace(_MINS, source="[A] TMINS's rate"),
    "tsqrt": VectorCost({4: 0.0314, 2: 0.0314}, 31.1, "[S] TSQRT (any dtype) 0.0314 + 31.1"),
}
_VECTOR_OPS = MappingProxyType({
    "tadds": VectorCost(_SCALAR_RATE, 30.0, "[S] slope; [A] bias 30"),
    "tmuls": VectorCost(_SCALAR_RATE, 30.0, "[S] slope; [A] bias 30"),
    "tmul": VectorCost(_BINARY_RATE, 30.0, "[S] slope; [A] bias 30"),
    "tsub": VectorCost(_BINARY_RATE, 30.0, "[S] slope; [A] bias 30"),
    "tadd": VectorCost(_BINARY_RATE, 30.0, "[A] rate of TMUL/TSUB"),
    "tmax": VectorCost(_BINARY_RATE, 30.0, "[A] rate of TMUL/TSUB"),
    "tmin": VectorCost(_BINARY_RATE, 30.0, "[A] rate of TMUL/TSUB"),
    "tneg": VectorCost(_SCALAR_RATE, 30.0, "[A] rate of TMULS (multiply by -1)"),
    "trelu": VectorCost(_SCALAR_RATE, 30.0, "[A] rate of TMAXS-like scalar op"),
    "texp": VectorCost({4: 0.0314}, 30.0, "[S] TEXP 0.0314 cyc/elem + 30 (fp32)"),
    **_CSV_FITS,
})


def _row_drain(model: L0CostModel, source: str) -> RowDrain:
    """The per-row FIXPIPE drain of a chooser cost model (one source of truth for the numbers)."""
    return RowDrain(model.drain_fixed_cycles, model.drain_row_cycles, model.bw_drain,
                    model.drain_penalty_cycles, model.drain_c0_bytes, source)


# a2a3-device: fitted to shared/data/device/a2a3-published.json (the training set).
#
# * MAD and the L0C->GM drain keep PyPTO's a2a3 L0CostModel (ptoc.backend.l0_cost_model)
#   [S] hw-model.md §5.1: head 21 (the pto-isa GEMM measures 524-543 cycles for one
#   128x64x256 TMATMUL, the formula gives 533), drain 164 + m*(max(4.45, 4n/118) +
#   2.6*(odd(N1)-1)), fitted on single-core sweeps ("drain 0.93-1.09x of device").
# * MTE1: the pto-isa GEMM times one extract step (16 KiB L1->L0A + 32 KiB L1->L0B) at
#   410-421 cycles [S] where PyPTO's sweep bandwidths (129.7 / 85.4 B/cycle) give 510. The
#   GEMM fixes only that sum, not the split between L0A and L0B: the split keeps the sweep's
#   measured 1.52:1 ratio [S] and both bandwidths are scaled by 510.0 / 415.5 [D].
# * L0C->L1 (Mat scratch): FIXPIPE writes NZ fractals into L1, with none of the per-row ND
#   bursts of a GM drain; pto-isa's table makes that path 128/70 = 1.83x faster per byte
#   than L0C->GM [S] (arch_config). Charged 164 fixed [S] + L0C bytes at 118 * 128/70 =
#   215.8 B/cycle [D]. The published material cannot separate this fixed part from the
#   GM drain's; the FIXPIPE issue overhead is taken to be the same.
# * GM shared by the cores: with 24 cores streaming, one core gets ~78 B/cycle on TLOAD
#   (68.3-85.4 measured) and its 128x256 fp32 drain takes 1799-1875 cycles where the
#   single-core fit gives 1275: both are one GM share [F]. The chip figure is that share x
#   24; one core alone (active_cores=1) is limited by its own paths, not by GM.
# * Launch/staging floor [F]: the small kernels (64^3 2.94 us, 128^3 6.42 us, 256x64x256
#   12 us, PyPTO PR #1912, tensors staged per run) and the reference GEMM walls (24 blocks,
#   tensors resident on device). Neither set alone separates the launch from the staging:
#   the small kernels give launch + staging, the GEMM launch + block dispatch.
_A2A3 = A2A3_L0_COST_MODEL
_A2A3_DRAIN = _row_drain(_A2A3, "[S] hw-model.md §5.1 a2a3 FIXPIPE sweep (L0CostModel)")
_MTE1_SWEEP_STEP = 16384 / _A2A3.bw_l0a + 32768 / _A2A3.bw_l0b   # [D] 510.0 cycles
_MTE1_GEMM_STEP = (410 + 421) / 2                                  # [S] a2a3-published.json
_MTE1_SCALE = _MTE1_SWEEP_STEP / _MTE1_GEMM_STEP                   # [D] 1.2275
_L1_DRAIN_RATIO = 128.0 / 70.0     # [S] pto-isa flat L0C->L1 128 GiB/s vs L0C->GM 70 GiB/s
A2A3_GM_CHIP_BYTES_PER_CYCLE = 1880.0   # [F] 78.3 B/cycle per core with 24 cores streaming
A2A3_LAUNCH = LaunchFloor(
    fixed_cycles=3214.0,               # [F] launch of a kernel (1.74 us)
    block_cycles=730.0,                # [F] dispatch of each further block (0.39 us)
    staging_bytes_per_cycle=22.41,     # [F] staging of a run's tensors (41 GB/s)
    source="[F] a2a3-published.json: small kernels (PyPTO PR #1912) and the pto-isa GEMM walls")
A2A3_DEVICE = TimingProfile(
    name="a2a3-device",
    target="a2a3",
    description="fitted to published a2a3 device numbers: PyPTO MAD/GM-drain fit, MTE1 and "
                "L0C->L1 rescaled, shared GM, launch floor; pto-isa flat table for GM/UB",
    mad_head_cycles=_A2A3.mad_head_cycles,
    mad_k_fractal_bytes=_A2A3.mad_k_fractal_bytes,
    mad_fp32_passes=_A2A3.mad_fp32_passes,
    transfers=MappingProxyType({
        **_PTOISA_GM_UB,
        (_M, _L): LinearTransfer(_A2A3.bw_l0a * _MTE1_SCALE,
                                 source="[D] sweep 129.7 B/cyc x 510.0/415.5 (pto-isa GEMM step)"),
        (_M, _R): LinearTransfer(_A2A3.bw_l0b * _MTE1_SCALE,
                                 source="[D] sweep 85.4 B/cyc x 510.0/415.5 (pto-isa GEMM step)"),
    }),
    drains=MappingProxyType({
        _D: _A2A3_DRAIN,
        _M: FlatDrain(_A2A3.bw_drain * _L1_DRAIN_RATIO, _A2A3.drain_fixed_cycles,
                      "[D] 164 + L0C bytes / (118 x 128/70) B/cyc (NZ->NZ, no row bursts)"),
    }),
    vector_ops=_VECTOR_OPS,
    gm_chip_bytes_per_cycle=A2A3_GM_CHIP_BYTES_PER_CYCLE,
    launch=A2A3_LAUNCH,
    notes=(
        "MTE1: the pto-isa GEMM fixes only one extract step (16 KiB L0A + 32 KiB L0B, 410-421 "
        "cycles); the L0A/L0B split keeps the PyPTO sweep's 1.52:1 ratio",
        "L0C->L1: the fixed part cannot be separated from the L0C->GM drain's; taken equal "
        "(164 cycles)",
        "GM: TLOAD and the 24-core TSTORE fix one per-core share; the chip figure is 24 x that "
        "share, one core alone is limited by its own paths",
        "launch floor: the small kernels fix launch + staging, the GEMM launch + block "
        "dispatch; staging applies to tensors a run copies in and out",
    ),
)

A2A3_PTOISA = TimingProfile(
    name="a2a3-ptoisa",
    target="a2a3",
    description="pto-isa cost model flat bandwidth table (arch_config.hpp kA2A3ArchConfig)",
    mad_head_cycles=6,            # [S] hw-model.md §2.3 (pto-isa cce_costmodel_cube uses 6)
    mad_k_fractal_bytes=32,       # [S] §2.3 kt = 32 B / bytes_a
    mad_fp32_passes=2,            # [S] §1.5
    transfers=MappingProxyType({
        **_PTOISA_GM_UB,
        (_M, _L): LinearTransfer(_g(441.0), source="[S->D] pto-isa flat L1->L0A 441 GiB/s = 256 B/cyc"),
        (_M, _R): LinearTransfer(_g(220.5), source="[S->D] pto-isa flat L1->L0B 220.5 GiB/s = 128 B/cyc"),
    }),
    drains=MappingProxyType({
        _D: FlatDrain(_g(70.0), source="[S->D] pto-isa flat L0C->GM 70 GiB/s = 40.6 B/cyc"),
        _M: FlatDrain(_g(128.0), source="[S->D] pto-isa flat L0C->L1 128 GiB/s = 74.3 B/cyc"),
    }),
    vector_ops=_VECTOR_OPS,
)

# a5-sim reuses the chooser's a5 L0CostModel [S] hw-model.md §5.1 a5 column: bw_l0a 206.3,
# bw_l0b 223.8 (a5-sim LOAD_2Dv2 fit), drain 343.4 / 4.59 / 30 / 0.26 (~4x sim-vs-device gap),
# MAD head 25, fp32 8 passes (mmad = 25 + 8 * fractals, R^2 = 1).
_A5 = A5_L0_COST_MODEL
_A5_DRAIN = _row_drain(_A5, "[S] hw-model.md §5.1 a5-sim fit (L0CostModel)")
A5_SIM = TimingProfile(
    name="a5-sim",
    target="a5",
    description="PyPTO a5-sim fit for MTE1/MAD/drain; GM/UB paths borrow the a2a3 pto-isa table",
    mad_head_cycles=_A5.mad_head_cycles,
    mad_k_fractal_bytes=_A5.mad_k_fractal_bytes,
    mad_fp32_passes=_A5.mad_fp32_passes,
    transfers=MappingProxyType({
        # [A] no a5 GM/UB bandwidths in the reference: reuse the a2a3 pto-isa flat table.
        **_PTOISA_GM_UB,
        (_M, _L): LinearTransfer(_A5.bw_l0a, source="[S] §5.1 a5 bw_l0a (a5-sim LOAD_2Dv2 fit)"),
        (_M, _R): LinearTransfer(_A5.bw_l0b, source="[S] §5.1 a5 bw_l0b (a5-sim)"),
        # [A] UB->L1 (a5 only, MTE3) not in the reference: charged at the UB->GM rate.
        (_V, _M): LinearTransfer(_g(188.46), source="[A] UB->GM flat rate"),
    }),
    drains=MappingProxyType({
        _D: _A5_DRAIN,
        _M: _A5_DRAIN,   # [A] same per-row model as L0C->GM (as on a2a3)
        _V: _A5_DRAIN,   # [A] L0C->UB (a5 only) uses the same per-row model
    }),
    vector_ops=_VECTOR_OPS,
)

PROFILES: Mapping[str, TimingProfile] = MappingProxyType({
    p.name: p for p in (A2A3_DEVICE, A2A3_PTOISA, A5_SIM)
})


def get_profile(name: "str | TimingProfile | None" = None, target: str | None = None) -> TimingProfile:
    """A profile by name or profile-file path (``ptoc calibrate`` output); with ``name=None``
    the default profile of ``target`` (default a2a3)."""
    if isinstance(name, TimingProfile):
        return name
    if name is not None and is_profile_file(name):
        return load_profile(name, lambda base: get_profile(base, target))
    if name is None:
        try:
            name = get_target(target or "a2a3").default_profile
        except TargetError as exc:
            raise ProfileError(exc.message, hint=exc.hint) from None
    try:
        return PROFILES[str(name).strip().lower()]
    except KeyError:
        raise ProfileError(f"unknown timing profile {name!r}",
                           hint=f"use one of {', '.join(PROFILES)}") from None
