"""Hardware targets: buffer capacities, alignments, legal data paths and MAD shapes.

A ``Target`` is a frozen description of one AI Core class. Every number here cites its
source in ``reference/hw-model.md`` (section) or ``reference/pypto-passes.md``; tags
follow hw-model.md: [S] sourced, [D] derived, [A] assumption.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtocError

from ptoc.backend.pipes import Pipe

KIB = 1024


class TargetError(PtocError, ValueError):
    """An unknown target name, an illegal move, or an unsupported dtype pair for a target."""


def align_up(value: int, alignment: int) -> int:
    """Smallest multiple of ``alignment`` that is >= ``value``."""
    return -(-value // alignment) * alignment


@dataclass(frozen=True)
class MadShape:
    """One cube MAD fractal for an (A dtype, B dtype) pair (hw-model.md §1.5 [S]).

    ``m0 x k0 x n0`` is the fractal the cube multiplies per pass; ``passes`` is the number of
    cube passes per K-fractal (2 for fp32 on a2a3, 8 on a5; 1 otherwise); ``acc`` is the
    accumulator dtype the MAD writes.
    """

    a: DataType
    b: DataType
    acc: DataType
    m0: int
    k0: int
    n0: int
    passes: int

    @property
    def macs_per_cycle(self) -> float:
        """Peak multiply-accumulates per cycle [D] = m0*k0*n0 / passes."""
        return self.m0 * self.k0 * self.n0 / self.passes


@dataclass(frozen=True)
class Target:
    """An AI Core class (``a2a3`` = Ascend 910B/910_93, ``a5`` = Ascend 950).

    Fields:
        name: canonical target name.
        platforms: other names accepted by ``get_target`` (the ``*sim`` platforms).
        capacities: usable bytes per on-chip memory space (DDR is absent: unbounded).
        physical_vec_bytes: physical UB size; the top part above ``capacities[Vec]`` is
            reserved because tiles placed there are silently corrupted.
        address_alignment: required byte alignment of every tile base address.
        fractal_alignment: m/n/k grid of cube tiles.
        data_paths: legal (src, dst) memory-space moves.
        mad_shapes: MAD fractal per (A dtype, B dtype).
        int32_acc_row_alignment: physical L0C row padding for INT32 accumulators.
        acc_row_alignment: physical L0C row padding for every other accumulator dtype.
        default_profile: the timing profile used when none is named.
        move_pipes: the pipe carrying each legal move.
        clock_hz: core clock for converting cycles to time (None when the reference has none).
        requires_low_precision_mat_scratch: an Acc drained into an L1 (Mat) scratch for a
            chained matmul must be narrowed to bf16/fp16 on the way (910B: FIXPIPE writes Mat
            only in the cube's input formats) [S] pypto-passes.md §3.4.
        l2_cache_line_bytes: L2 cache line; GM rows narrower than it waste part of a line.
        atomic_add_dtypes: GM element types an atomic-add store combines (``pl.store(...,
            atomic=pl.AtomicType.Add)``) [S] pypto tile_ops/memory.cpp (hardware atomic-add
            dtypes fp32/bf16/fp16/int32/int16/int8) and verify_atomic_add_dtype.cpp (bf16 only
            on the A2/A3 store pipe, ``set_atomic_bf16``).
        recommended_innermost_dim_bytes: a tile.load/tile.store row below this many bytes
            gets perf hint PH001 (910B 512 = the GM access granularity, 950 128) [S]
            pypto backend_handler.h ``GetRecommendedInnermostDimBytes``.
    """

    name: str
    platforms: tuple[str, ...]
    capacities: Mapping[MemorySpace, int]
    physical_vec_bytes: int
    address_alignment: int
    fractal_alignment: int
    data_paths: frozenset[tuple[MemorySpace, MemorySpace]]
    mad_shapes: Mapping[tuple[DataType, DataType], MadShape]
    int32_acc_row_alignment: int
    acc_row_alignment: int
    default_profile: str
    move_pipes: Mapping[tuple[MemorySpace, MemorySpace], Pipe] = field(repr=False)
    clock_hz: float | None = None
    requires_low_precision_mat_scratch: bool = False
    row_major_left_view: bool = False
    l2_cache_line_bytes: int = 512
    recommended_innermost_dim_bytes: int = 512
    atomic_add_dtypes: frozenset = frozenset()

    # -- capacities and alignment ------------------------------------------------------
    def capacity(self, space: MemorySpace) -> int:
        """Usable bytes of ``space``; raise TargetError for DDR (it has no on-chip capacity)."""
        try:
            return self.capacities[space]
        except KeyError:
            raise TargetError(
                f"memory space {space.value} has no on-chip capacity on target {self.name}",
                hint="only Mat, Left, Right, Acc, Vec and Bias are on-chip buffers") from None

    def is_aligned(self, address: int) -> bool:
        """True when ``address`` meets the tile base-address alignment (32 B)."""
        return address % self.address_alignment == 0

    def acc_row_alignment_for(self, dtype: DataType) -> int:
        """Physical L0C M-row alignment of an accumulator of ``dtype``."""
        return self.int32_acc_row_alignment if dtype is DataType.INT32 else self.acc_row_alignment

    def acc_physical_bytes(self, rows: int, cols: int, dtype: DataType) -> int:
        """Bytes an (rows x cols) accumulator occupies in L0C.

        ``AlignUp(rows, acc_row_alignment_for(dtype)) * cols * bytes`` [S] (pypto-passes.md §1.2,
        pypto l0c_footprint.h ``L0cPhysicalElements``). Example: INT32 [16,128] is 16384 B on
        a2a3 and 8192 B on a5.
        """
        if rows <= 0 or cols <= 0:
            raise TargetError(f"accumulator shape {rows}x{cols} must be positive",
                              hint="give rows and cols >= 1")
        return align_up(rows, self.acc_row_alignment_for(dtype)) * cols * dtype.nbytes

    def tile_bytes(self, space: MemorySpace, rows: int, cols: int, dtype: DataType) -> int:
        """Physical bytes of a (rows x cols) tile buffer in ``space``.

        Acc uses the padded L0C footprint; every other space is rows*cols*bytes [S]
        (pypto-passes.md §1.2 ``StaticPhysicalAllocationBytes``).
        """
        if space is MemorySpace.Acc:
            return self.acc_physical_bytes(rows, cols, dtype)
        return rows * cols * dtype.nbytes

    # -- data paths and pipes ----------------------------------------------------------
    def can_move(self, src: MemorySpace, dst: MemorySpace) -> bool:
        """True when data may move directly from ``src`` to ``dst`` on this target."""
        return (src, dst) in self.data_paths

    def move_pipe(self, src: MemorySpace, dst: MemorySpace) -> Pipe:
        """The pipe that performs a ``src -> dst`` move (hw-model.md §2.2).

        Raises TargetError naming the legal destinations when the move is not a data path.
        """
        if not self.can_move(src, dst):
            legal = sorted(d.value for (s, d) in self.data_paths if s is src)
            raise TargetError(
                f"target {self.name} has no data path {src.value} -> {dst.value}",
                hint=(f"from {src.value} you can move to {', '.join(legal)}" if legal
                      else f"{src.value} is not a source of any move"))
        return self.move_pipes[(src, dst)]

    # -- cube ----------------------------------------------------------------------------
    def mad_shape(self, a: DataType, b: DataType) -> MadShape:
        """The MAD fractal for A/B dtypes; TargetError listing the supported pairs otherwise."""
        try:
            return self.mad_shapes[(a, b)]
        except KeyError:
            pairs = ", ".join(f"{x.pto_name} x {y.pto_name}" for (x, y) in self.mad_shapes)
            raise TargetError(
                f"target {self.name} has no cube MAD for {a.pto_name} x {b.pto_name}",
                hint=f"supported input pairs: {pairs}") from None

    @property
    def l0_cost_model(self):
        """The chooser's ``L0CostModel`` for this target (``ptoc.backend.l0_cost_model``)."""
        from ptoc.backend.l0_cost_model import l0_cost_model_for  # noqa: PLC0415 - no cycle

        return l0_cost_model_for(self.name)


_M, _V, _D = MemorySpace.Mat, MemorySpace.Vec, MemorySpace.DDR
_L, _R, _A, _B = MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias

# Legal data paths [S] (hw-model.md §1.2 "Legal data paths", pypto soc.cpp) with the pipe that
# carries each one [S] (hw-model.md §2.2 op->pipe table; pypto-passes.md "Backend::InferPipe").
_A2A3_MOVES: dict[tuple[MemorySpace, MemorySpace], Pipe] = {
    (_D, _V): Pipe.PIPE_MTE2,   # GM -> UB (tload)
    (_D, _M): Pipe.PIPE_MTE2,   # GM -> L1 (tload, ND->NZ repack)
    (_V, _D): Pipe.PIPE_MTE3,   # UB -> GM (tstore)
    (_M, _L): Pipe.PIPE_MTE1,   # L1 -> L0A (textract / tmov)
    (_M, _R): Pipe.PIPE_MTE1,   # L1 -> L0B
    (_M, _B): Pipe.PIPE_MTE1,   # L1 -> Bias table (tmov)
    (_A, _M): Pipe.PIPE_FIX,    # L0C -> L1 (tinsert / tmov / textract)
    (_A, _D): Pipe.PIPE_FIX,    # L0C -> GM (tstore)
    # Same-space UB move runs on the vector pipe [S] (pypto-passes.md: "same-space tile.move -> V").
    (_V, _V): Pipe.PIPE_V,
}
_A5_MOVES = {
    **_A2A3_MOVES,
    (_V, _M): Pipe.PIPE_MTE3,   # UB -> L1, a5 only [S] (pypto-passes.md "A5 Vec->Mat MTE3")
    (_A, _V): Pipe.PIPE_FIX,    # L0C -> UB, a5 only [S] (hw-model.md §2.2 `mte_l0c_ub`)
}


def _mad_shapes(fp32_passes: int) -> dict[tuple[DataType, DataType], MadShape]:
    # hw-model.md §1.5 [S]: fp16/bf16 16x16x16 (kt = 32 B / 2 B), int8 16x32x16 -> int32,
    # fp32 16x8x16 in `fp32_passes` passes (pypto L0CostModel `mad_fp32_passes`).
    f16, bf16, f32, i8, i32 = (DataType.FP16, DataType.BF16, DataType.FP32, DataType.INT8,
                               DataType.INT32)
    return {
        (f16, f16): MadShape(f16, f16, f32, 16, 16, 16, 1),
        (bf16, bf16): MadShape(bf16, bf16, f32, 16, 16, 16, 1),
        (i8, i8): MadShape(i8, i8, i32, 16, 32, 16, 1),
        (f32, f32): MadShape(f32, f32, f32, 16, 8, 16, fp32_passes),
    }


A2A3 = Target(
    name="a2a3",
    platforms=("a2a3sim", "910b", "ascend910b"),
    capacities=MappingProxyType({
        _M: 512 * KIB,   # L1 512 KiB [S] hw-model.md §1.2 (buffer_limits.hpp; pypto soc.cpp)
        _L: 64 * KIB,    # L0A 64 KiB [S] §1.2
        _R: 64 * KIB,    # L0B 64 KiB [S] §1.2
        _A: 128 * KIB,   # L0C 128 KiB [S] §1.2
        _V: 188416,      # UB usable 184 KiB of 192 [S] §1.2; pypto-passes.md §1.1 (188416)
        _B: 1 * KIB,     # Bias table 1 KiB [S] §1.2
    }),
    physical_vec_bytes=192 * KIB,    # [S] hw-model.md §1.2
    address_alignment=32,            # [S] hw-model.md §1.3 (buffer_limits.hpp *_ALIGN_BYTES)
    fractal_alignment=16,            # [S] hw-model.md §1.3 (GetL0FractalAlignment)
    data_paths=frozenset(_A2A3_MOVES),
    mad_shapes=MappingProxyType(_mad_shapes(fp32_passes=2)),  # fp32 2 passes [S] §1.5
    int32_acc_row_alignment=32,      # [S] hw-model.md §1.3 (backend_910b_handler GetL0cMAlignment)
    acc_row_alignment=16,            # [S] pypto-passes.md §1.1
    default_profile="a2a3-device",
    move_pipes=MappingProxyType(_A2A3_MOVES),
    clock_hz=1.85e9,                 # [S] hw-model.md §1.1 (pto-isa arch_config kMainFrequencyHz)
    requires_low_precision_mat_scratch=True,  # [S] pypto-passes.md §3.4 (910B)
    row_major_left_view=True,        # [S] oracle dumps 16_after_AutoTileMatmulL0 (910B)
    l2_cache_line_bytes=512,                  # [S] pypto backend_handler (910B)
    recommended_innermost_dim_bytes=512,      # [S] pypto 92-diagnostics.md (910B)
    atomic_add_dtypes=frozenset({DataType.FP32, DataType.BF16, DataType.FP16, DataType.INT32,
                                 DataType.INT16, DataType.INT8}),  # [S] see the field doc
)

A5 = Target(
    name="a5",
    platforms=("a5sim", "950", "ascend950"),
    capacities=MappingProxyType({
        _M: 512 * KIB,   # L1 512 KiB [S] hw-model.md §1.2
        _L: 64 * KIB,    # L0A [S] §1.2
        _R: 64 * KIB,    # L0B [S] §1.2
        _A: 256 * KIB,   # L0C 256 KiB, 2x a2a3 [S] §1.2
        _V: 245760,      # UB usable 240 KiB [S] §1.2; pypto-passes.md §1.1 (245760)
        _B: 4 * KIB,     # Bias 4 KiB [S] §1.2
    }),
    physical_vec_bytes=248 * KIB,    # [S] hw-model.md §1.2 (pypto soc.cpp; 256 per buffer_limits)
    address_alignment=32,            # [S] hw-model.md §1.3
    fractal_alignment=16,            # [S] hw-model.md §1.3
    data_paths=frozenset(_A5_MOVES),
    mad_shapes=MappingProxyType(_mad_shapes(fp32_passes=8)),  # fp32 8 passes [S] §1.5 (a5-sim)
    int32_acc_row_alignment=16,      # [S] pypto-passes.md §1.1 (950: default 16)
    acc_row_alignment=16,            # [S] pypto-passes.md §1.1
    default_profile="a5-sim",
    move_pipes=MappingProxyType(_A5_MOVES),
    clock_hz=None,                   # [A] a5 clock not in the sources (hw-model.md §1.1)
    l2_cache_line_bytes=512,         # [S] pypto backend_handler (950)
    recommended_innermost_dim_bytes=128,  # [S] pypto 92-diagnostics.md (950)
    atomic_add_dtypes=frozenset({DataType.FP32, DataType.FP16, DataType.INT32, DataType.INT16,
                                 DataType.INT8}),  # [S] no bf16 on the 950 store pipe
)

TARGETS: Mapping[str, Target] = MappingProxyType({"a2a3": A2A3, "a5": A5})


class BackendType(enum.Enum):
    """PyPTO's name for a chip's code-generation backend; the value is the ptoc target."""

    Ascend910B = "a2a3"
    Ascend950 = "a5"


def get_target(name: "str | Target") -> Target:
    """Look a target up by name (``a2a3``, ``a5``), platform (``a2a3sim``, ``a5sim``) or
    PyPTO ``BackendType``."""
    if isinstance(name, Target):
        return name
    if isinstance(name, BackendType):
        return TARGETS[name.value]
    key = str(name).strip().lower()
    for target in TARGETS.values():
        if key == target.name or key in target.platforms:
            return target
    valid = ", ".join(n for t in TARGETS.values() for n in (t.name, *t.platforms))
    raise TargetError(f"unknown target {name!r}", hint=f"use one of {valid}")
