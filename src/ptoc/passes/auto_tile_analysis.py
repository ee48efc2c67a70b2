"""AutoTileMatmulL0, part 1: which matmuls the pass may tile, and the chooser's answer for them.

Follows pypto-passes.md §3.2 ("AnalyzeMatmul"): the filters run in the reference's order and
each silent skip or perf hint happens exactly where PyPTO's does. The result is a
``MatmulSite`` (the statement, its operands, the problem dims) plus the ``L0TileResult``.
Hints are collected in a ``HintLog`` and reported once per program (§3.1 step 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.backend.targets import Target
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PassError, PtocError, SourceLoc
from ptoc.ir.nodes import AssignStmt, Call, Var
from ptoc.ir.types import TileType, static_shape
from ptoc.ops.cast import is_accumulator_cast
from ptoc.passes.context import MemoryPlanner, PassContext
from ptoc.passes.diagnostics import report_diagnostic
from ptoc.passes.l0_tile_chooser import L0TileConfig, L0TileResult, Stationarity, choose_l0_tile

Mem = MemorySpace
MATMUL_OPS = ("tile.matmul", "tile.matmul_acc", "tile.matmul_bias")
FOLDABLE_CAST_DTYPES = (DataType.BF16, DataType.FP16)


class L0OperandTooLargeError(PassError):
    """A user placed a matmul operand in L0A/L0B by hand, and it is bigger than the buffer."""


# --- hints ----------------------------------------------------------------------------------

@dataclass
class HintLog:
    """PH-AT findings of one program, reported together at the end of the pass (§3.1 step 4)."""

    items: list[tuple[str, str, SourceLoc | None]] = field(default_factory=list)

    def add(self, code: str, message: str, loc: SourceLoc | None) -> None:
        self.items.append((code, message, loc))

    def emit(self, ctx: PassContext) -> None:
        for code, message, loc in self.items:
            report_diagnostic(code, message, location=loc, pass_name="AutoTileMatmulL0", ctx=ctx)


# --- the site -------------------------------------------------------------------------------

@dataclass
class MatmulSite:
    """One matmul-family AssignStmt the pass may rewrite, with its operands unpacked."""

    stmt: AssignStmt
    op: str
    lhs: Var
    rhs: Var
    acc: Var | None    # tile.matmul_acc's caller accumulator
    bias: Var | None   # tile.matmul_bias's bias row
    M: int
    N: int
    K: int

    @property
    def result(self) -> Var:
        return self.stmt.var

    @property
    def call(self) -> Call:
        return self.stmt.value

    @property
    def loc(self) -> SourceLoc | None:
        return self.stmt.loc or self.call.loc

    @property
    def out_dtype(self) -> DataType:
        return self.result.type.dtype

    @property
    def lhs_space(self) -> MemorySpace | None:
        return self.lhs.type.memory_space

    def describe(self) -> str:
        return (f"{self.op} '{self.result.name}' ([{self.M}, {self.K}] x [{self.K}, {self.N}] "
                f"{self.lhs.type.dtype.value} -> {self.out_dtype.value})")


def _tile_var(x) -> bool:
    return isinstance(x, Var) and isinstance(x.type, TileType)


def _static_2d(ty: TileType) -> tuple[int, int] | None:
    dims = static_shape(tuple(ty.shape))
    return dims if dims is not None and len(dims) == 2 else None


def _is_sub_byte(dtype: DataType) -> bool:
    return dtype.bits < 8 and dtype is not DataType.BOOL


def _check_explicit_l0(name: str, var: Var, space: MemorySpace, target: Target, op: str) -> None:
    """Manual L0 operands are respected, unless one alone overflows its whole buffer (§3.2)."""
    ty: TileType = var.type
    if ty.memory_space is not space:
        return
    dims = _static_2d(ty)
    if dims is None:
        return
    need = dims[0] * dims[1] * ty.dtype.nbytes
    have = target.capacity(space)
    if need > have:
        buf = "L0A" if space is Mem.Left else "L0B"
        raise L0OperandTooLargeError(
            f"{op} operand {name} '{var.name}' is already in pl.Mem.{space.value} with shape "
            f"{list(dims)} {ty.dtype.value}, which needs {need} bytes, but {buf} holds only {have} "
            f"bytes on target {target.name}", var.loc,
            hint=f"keep '{var.name}' in pl.Mem.Mat so AutoTileMatmulL0 can tile it, or "
                 f"pl.tile.extract a smaller tile of at most {have} bytes into pl.Mem.{space.value}")


def match_matmul(stmt, target: Target, hints: HintLog) -> MatmulSite | None:
    """The residency and dtype filters of §3.2; None means "leave this statement alone"."""
    if not isinstance(stmt, AssignStmt) or not isinstance(stmt.value, Call):
        return None
    call = stmt.value
    if call.op not in MATMUL_OPS or call.is_function:
        return None
    args = call.args
    acc = bias = None
    if call.op == "tile.matmul_acc":
        if len(args) < 3:
            return None
        acc, lhs, rhs = args[0], args[1], args[2]
        if not _tile_var(acc) or _static_2d(acc.type) is None or \
                acc.type.memory_space not in (Mem.Acc, Mem.Vec):
            return None
    elif call.op == "tile.matmul_bias":
        if len(args) < 3:
            return None
        lhs, rhs, bias = args[0], args[1], args[2]
        if not _tile_var(bias):
            return None
    else:
        if len(args) < 2:
            return None
        lhs, rhs = args[0], args[1]
    if not (_tile_var(lhs) and _tile_var(rhs)) or not isinstance(stmt.var.type, TileType):
        return None
    _check_explicit_l0("lhs", lhs, Mem.Left, target, call.op)
    _check_explicit_l0("rhs", rhs, Mem.Right, target, call.op)
    if is_accumulator_cast(lhs.type):
        return None  # an unfolded cast of an accumulator is not a vector-computed operand
    a_dims, b_dims = _static_2d(lhs.type), _static_2d(rhs.type)
    if a_dims is None or b_dims is None or lhs.type.memory_space not in (Mem.Mat, Mem.Vec) \
            or rhs.type.memory_space is not Mem.Mat or a_dims[1] != b_dims[0]:
        return None
    site = MatmulSite(stmt, call.op, lhs, rhs, acc, bias, a_dims[0], b_dims[1], a_dims[1])
    if bias is not None and lhs.type.memory_space is not Mem.Mat:
        hints.add("PH-AT-011", f"{site.describe()}: a biased matmul needs its lhs in Mat to form "
                  f"a Bias window, but '{lhs.name}' is in {lhs.type.memory_space.value}; left "
                  "untiled", site.loc)
        return None
    if bias is not None and bias.type.memory_space is Mem.Bias:
        need = site.N * site.out_dtype.nbytes
        if need > target.capacity(Mem.Bias):
            hints.add("PH-AT-011", f"{site.describe()}: the Bias-resident bias '{bias.name}' "
                      f"needs {need} bytes but the Bias table holds {target.capacity(Mem.Bias)}; "
                      "keep the bias in Mat so the pass can window it; left untiled", site.loc)
            return None
    dtypes = [lhs.type.dtype, rhs.type.dtype, site.out_dtype]
    if any(_is_sub_byte(d) for d in dtypes):
        hints.add("PH-AT-003", f"{site.describe()} has a sub-byte dtype; left untiled", site.loc)
        return None
    return site


# --- the chooser ------------------------------------------------------------------------------

def allow_double_buffer_c(ctx: PassContext) -> bool:
    """The dbC gate (§3.2): automatic off the PYPTO planner, opt-in under it."""
    planner = ctx.memory_planner
    return planner is not MemoryPlanner.PYPTO or ctx.enable_pypto_l0c_double_buffer


def chooser_config(site: MatmulSite, target: Target, ctx: PassContext, *,
                   force_output_stationary: bool = False,
                   double_buffer_c: bool | None = None) -> L0TileConfig:
    """The chooser inputs of §3.2 for one matmul."""
    bytes_c = site.out_dtype.nbytes
    caps = {}
    if site.bias is not None:
        max_n = target.capacity(Mem.Bias) // bytes_c
        caps["max_n"] = max_n
        if site.bias.type.memory_space is Mem.Mat:
            caps["max_n_pipelined"] = max_n // 2
            caps["max_n_nested_pipelined"] = max_n // 4
    dbc = allow_double_buffer_c(ctx) if double_buffer_c is None else double_buffer_c
    return L0TileConfig.for_target(
        target, M=site.M, N=site.N, K=site.K,
        bytes_a=site.lhs.type.dtype.nbytes, bytes_b=site.rhs.type.dtype.nbytes, bytes_c=bytes_c,
        l0c_align_m=target.acc_row_alignment_for(site.out_dtype),
        allow_a_stationary=not force_output_stationary,
        allow_b_stationary=not force_output_stationary,
        allow_double_buffer_c=dbc, c_read=site.op == "tile.matmul_acc",
        allow_padding=False, allow_k_boundary=True, **caps)


def choose(site: MatmulSite, target: Target, ctx: PassContext, hints: HintLog, *,
           force_output_stationary: bool = False,
           double_buffer_c: bool | None = None) -> L0TileResult | None:
    """Run the chooser with the K and error filters of §3.2; None means skip (hint given)."""
    if site.K % target.fractal_alignment != 0:
        hints.add("PH-AT-007", f"{site.describe()}: K={site.K} is not a multiple of "
                  f"{target.fractal_alignment}; left untiled", site.loc)
        return None
    cfg = chooser_config(site, target, ctx, force_output_stationary=force_output_stationary,
                         double_buffer_c=double_buffer_c)
    try:
        result = choose_l0_tile(cfg)
    except PtocError as exc:
        hints.add("PH-AT-005", f"{site.describe()}: ChooseL0Tile rejected the configuration: "
                  f"{exc.message}", site.loc)
        return None
    if result.perf_hint:
        hints.add("PH-AT-008", f"{site.describe()}: {result.perf_hint}", site.loc)
    if result.double_buffer_c and result.k != site.K:  # §3.2 invariant, never clamped
        raise PassError(f"AutoTileMatmulL0: the chooser returned double_buffer_c with k={result.k} "
                        f"< K={site.K} for {site.describe()}",
                        hint="this is a ptoc bug in ChooseL0Tile; please report it")
    return result


def row_outer(result: L0TileResult) -> bool:
    """Full-K orientation (§3.4): A-stationary holds rows; OS follows ``os_holds_a``."""
    if result.stationarity is Stationarity.OutputStationary:
        return result.os_holds_a
    return result.stationarity is Stationarity.AStationary


def acc_fits_l0c(shape: tuple[int, int], dtype: DataType, target: Target) -> bool:
    """Whether a [rows, cols] accumulator fits L0C by its physical footprint (§1.2)."""
    return target.acc_physical_bytes(shape[0], shape[1], dtype) <= target.capacity(Mem.Acc)


def cast_mode_is_rint(call: Call) -> bool:
    """``mode == rint`` (1); a missing mode is PyPTO's default ``round`` (2)."""
    mode = call.kwarg("mode", "round")
    return mode in ("rint", 1)


def cast_foldable_to_fixpipe(src: TileType, call: Call) -> bool:
    """FIXPIPE can convert f32 -> bf16/f16 with rint while writing to Mat (§3.5)."""
    return (src.dtype is DataType.FP32 and _cast_dst(call) in FOLDABLE_CAST_DTYPES
            and cast_mode_is_rint(call))


def _cast_dst(call: Call) -> DataType | None:
    return call.type.dtype if isinstance(call.type, TileType) else None
