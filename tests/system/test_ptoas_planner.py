"""The PTOAS planner path end to end (issue 6 items 4 and 6): tensor-level matmuls compiled
with ``memory_planner=PTOAS`` (codegen without addresses, ``ptoc.pto.planner`` places the
tiles, InsertSync adds the flags), run on the simulator: numpy-equal, race-free, and the
chooser's automatic dbC survives as two distinct L0C placements."""

import copy

import ml_dtypes
import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import MemorySpace
from ptoc.passes import MemoryPlanner
from ptoc.pto import parse
from ptoc.pto.planner import kernel_lifetimes, tile_addresses

from cases import END_TO_END
from dbc_programs import direct_store, mat_scratch_chain

BF16 = ml_dtypes.bfloat16


def compile_ptoas(program, tmp_path):
    return ir.compile(program, output_dir=tmp_path, memory_planner=MemoryPlanner.PTOAS,
                      dump_passes=False)


def acc_addresses(compiled):
    return {a.addr for a in compiled.allocations if a.space is MemorySpace.Acc}


def acc_lives(compiled):
    module = parse(compiled.pto_text["kernel"])
    return [t for t in kernel_lifetimes(module.kernel("kernel"), compiled.target)
            if t.space is MemorySpace.Acc]


def acc_tiles_fit_together(compiled):
    """Whether all L0C tiles fit at once: PTOAS then gives each its own bytes (no reuse)."""
    return sum(-(-t.nbytes // 32) * 32 for t in acc_lives(compiled)) <= 128 * 1024


def max_co_live_acc(compiled):
    """Largest number of L0C tiles live at one point of the planned kernel."""
    module = parse(compiled.pto_text["kernel"])
    lives = [t for t in kernel_lifetimes(module.kernel("kernel"), compiled.target)
             if t.space is MemorySpace.Acc]
    return max(sum(1 for t in lives if t.start <= p <= t.end) for p in {t.start for t in lives})


# (M, N): 160x160, 144x144, 256x256, 448x448 (4/6/8/16 tiles), 384x256 (12 tiles),
# 16x256 and 256x16 (1-D grids), 320x320 (non-divisible tail); FP32, K = 64.
GRIDS = [(160, 160), (144, 144), (256, 256), (448, 448), (384, 256), (16, 256), (256, 16),
         (320, 320)]


@pytest.mark.parametrize("M,N", GRIDS, ids=[f"{m}x{n}" for m, n in GRIDS])
def test_direct_store_dbc_under_ptoas(M, N, tmp_path):
    compiled = compile_ptoas(direct_store(M, N), tmp_path)
    assert compiled.memory_planner is MemoryPlanner.PTOAS
    # Codegen left the addresses to the planner; the final PTO has one on every tile.
    assert all(a.addr is not None for a in compiled.allocations)
    # The chooser's dbC pair: two co-live accumulators at two distinct L0C placements. When
    # all accumulators fit L0C together each has its own (PTOAS plans without reuse then);
    # otherwise tail tiles reuse the pair's buffers.
    fit = acc_tiles_fit_together(compiled)
    assert len(acc_addresses(compiled)) == (len(acc_lives(compiled)) if fit else 2)
    assert max_co_live_acc(compiled) == 2
    rng = np.random.default_rng(M * 1000 + N)
    a = rng.standard_normal((M, 64)).astype(np.float32)
    b = rng.standard_normal((64, N)).astype(np.float32)
    result = compiled.run(a, b, np.zeros((M, N), np.float32))
    assert result.races == []
    np.testing.assert_allclose(result.outputs["out"], a @ b, rtol=1e-3, atol=1e-3)


def test_mat_scratch_chain_256x64x256_bf16_under_ptoas(tmp_path):
    compiled = compile_ptoas(mat_scratch_chain(), tmp_path)
    # Producer (64x256 tiles) and consumer (64x64 tiles) each keep a dbC pair; the four do not
    # fit L0C together, so the consumer's pair reuses the producer's two buffers: two Acc
    # buffers of the producer's size.
    assert not acc_tiles_fit_together(compiled)
    acc = [a for a in compiled.allocations if a.space is MemorySpace.Acc]
    assert sorted(a.size for a in acc) == [64 * 256 * 4] * 2
    assert len(acc_addresses(compiled)) == 2
    assert max_co_live_acc(compiled) == 2
    rng = np.random.default_rng(7)
    a = rng.standard_normal((256, 64)).astype(BF16)
    b = (rng.standard_normal((64, 256)) / 8).astype(BF16)
    e = (rng.standard_normal((256, 64)) / 16).astype(BF16)
    result = compiled.run(a, b, e, np.zeros((256, 64), np.float32))
    assert result.races == []
    c = (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16).astype(np.float32)
    np.testing.assert_allclose(result.outputs["out"], c @ e.astype(np.float32),
                               rtol=2e-2, atol=2e-2)


# Grids whose accumulators do not all fit L0C at once (448x448: ten 56 KiB tiles; 320x320:
# eleven, the tails included) and the Mat-scratch chain (four).
PACKED = [(448, 448), (320, 320), "chain"]


@pytest.mark.parametrize("case", PACKED, ids=lambda c: "x".join(map(str, c))
                         if isinstance(c, tuple) else c)
def test_packed_acc_placements_match_the_pypto_planner_with_the_flag(case, tmp_path):
    """When the accumulators do not fit L0C together, PlanMemory reuses by lifetime and finds
    the same L0C addresses as PyPTO's MemoryReuse + AllocateMemoryAddr with
    enable_pypto_l0c_double_buffer=True: {0, align32(Acc bytes)}."""
    program = (lambda: mat_scratch_chain()) if case == "chain" else (lambda: direct_store(*case))
    ptoas = compile_ptoas(program(), tmp_path / "ptoas")
    assert not acc_tiles_fit_together(ptoas)
    pypto = ir.compile(program(), output_dir=tmp_path / "pypto", dump_passes=False,
                       memory_planner=MemoryPlanner.PYPTO, enable_pypto_l0c_double_buffer=True)
    assert acc_addresses(ptoas) == acc_addresses(pypto)
    assert len(acc_addresses(ptoas)) == 2


FITTING = [g for g in GRIDS if g not in PACKED]


@pytest.mark.parametrize("M,N", FITTING, ids=[f"{m}x{n}" for m, n in FITTING])
def test_accumulators_that_fit_together_get_bytes_of_their_own(M, N, tmp_path):
    """PTOAS plans a space without reuse when all its buffers fit: every L0C tile its own
    byte range, pairwise disjoint (tail tiles never wait for the loop's drains)."""
    compiled = compile_ptoas(direct_store(M, N), tmp_path)
    lives = acc_lives(compiled)
    assert acc_tiles_fit_together(compiled)
    placed = tile_addresses(parse(compiled.pto_text["kernel"]))["kernel"]
    ranges = sorted((placed[t.name], placed[t.name] + t.nbytes) for t in lives)
    assert all(hi <= lo for (_, hi), (lo, _) in zip(ranges, ranges[1:]))


def test_planned_addresses_are_the_reported_allocations(tmp_path):
    compiled = compile_ptoas(direct_store(256, 256), tmp_path)
    planned = tile_addresses(parse(compiled.pto_text["kernel"]))["kernel"]
    reported = {(a.name, a.addr) for a in compiled.allocations}
    assert reported <= set(planned.items())
    assert all(addr % 32 == 0 for addr in planned.values())


@pytest.mark.parametrize("case", END_TO_END, ids=lambda c: c.get_name())
def test_end_to_end_cases_under_ptoas(case, tmp_path):
    """The end-to-end system programs (vector, cube, mixed) also compile and run correctly
    when the PTO planner, not MemoryReuse + AllocateMemoryAddr, places their tiles."""
    ptoas = copy.copy(case)
    ptoas.get_memory_planner = lambda: MemoryPlanner.PTOAS
    outcome = ptoas.run(tmp_path)
    assert outcome.compiled.memory_planner is MemoryPlanner.PTOAS
    assert outcome.result.races == []


OVERFLOW_SIG = ("x: pl.Tensor[[128, 128], pl.FP32], y: pl.Out[pl.Tensor[[128, 128], pl.FP32]]"
                ") -> pl.Tensor[[128, 128], pl.FP32]")


def test_co_live_tiles_beyond_ub_fail_with_the_tiles_named(tmp_path):
    src = f"""

@pl.program
class TooBig:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, {OVERFLOW_SIG}:
        a = pl.load(x, [0, 0], [128, 128], target_memory=pl.Mem.Vec)
        b = pl.exp(a)
        c = pl.add(a, b)
        d = pl.add(c, a)
        e = pl.add(d, b)
        y = pl.store(e, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {OVERFLOW_SIG}:
        y = self.k(x, y)
        return y
"""
    from ptoc.errors import AllocationError
    from ptoc.pto.planner import PlanMemoryError
    with pytest.raises(PlanMemoryError) as info:
        compile_ptoas(pl.parse_program(src), tmp_path)
    assert isinstance(info.value, AllocationError)
    msg = str(info.value)
    # a, b and c (64 KiB each) are live together; UB holds 184 KiB. Same verdict as PYPTO.
    assert "Vec buffer usage (196608 bytes) exceeds platform limit (188416 bytes)" in msg
    assert all(f"%{t} (65536 bytes" in msg for t in "abc")


def test_ptoas_compilation_is_deterministic(tmp_path):
    first = compile_ptoas(direct_store(320, 320), tmp_path / "one")
    second = compile_ptoas(direct_store(320, 320), tmp_path / "two")
    assert first.pto_text == second.pto_text
