"""Timing profiles: every cost function equals its documented formula (hw-model.md §2.3, §5, §6.2)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend import PROFILES, ProfileError, RowCost, get_profile
from ptoc.backend.profiles import gib_per_s_to_bytes_per_cycle, odd_part
from ptoc.dtypes import DataType, MemorySpace

M, V, D, L, R, A, B = (MemorySpace.Mat, MemorySpace.Vec, MemorySpace.DDR, MemorySpace.Left,
                       MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias)
BF16, FP16, FP32, INT8 = DataType.BF16, DataType.FP16, DataType.FP32, DataType.INT8

# The numbers as the reference states them (hw-model.md §5.1 / §2.3), independent of the code.
MAD = {"a2a3-device": (21, 2), "a2a3-ptoisa": (6, 2), "a5-sim": (25, 8)}   # head, fp32 passes
ROW_DRAIN = {"a2a3-device": (164.0, 4.45, 118.0, 2.6), "a5-sim": (343.4, 4.59, 30.0, 0.26)}
# a2a3-device: PyPTO's sweep (129.7 / 85.4) scaled so that one pto-isa GEMM extract step
# (16 KiB L0A + 32 KiB L0B) takes the measured 415.5 cycles (a2a3-published.json).
_SCALE = (16384 / 129.7 + 32768 / 85.4) / 415.5
MTE1 = {"a2a3-device": (129.7 * _SCALE, 85.4 * _SCALE), "a2a3-ptoisa": (256.0, 128.0),
        "a5-sim": (206.3, 223.8)}
FLAT_GM = {(D, M): 78.4, (D, V): 58.6, (V, D): 109.4, (M, B): 18.6, (V, V): 594.0}


def mad_formula(head, fp32_passes, m, k, n, dtype):
    kt = 32 // dtype.nbytes
    cpr = fp32_passes if dtype is FP32 else 1
    return head + cpr * math.ceil(m / 16) * math.ceil(k / kt) * math.ceil(n / 16)


def drain_formula(fixed, row, bw, penalty, m, n, bc=4):
    n1 = math.ceil(n / (32 // bc))
    odd = n1
    while odd % 2 == 0:
        odd //= 2
    return fixed + m * (max(row, bc * n / bw) + penalty * (odd - 1))


def test_profile_names_and_defaults():
    assert set(PROFILES) == {"a2a3-device", "a2a3-ptoisa", "a5-sim"}
    assert get_profile().name == "a2a3-device"
    assert get_profile(target="a5").name == "a5-sim"
    assert get_profile(target="a2a3sim").name == "a2a3-device"
    assert get_profile("A2A3-PTOISA").name == "a2a3-ptoisa"
    with pytest.raises(ProfileError, match="a2a3-device"):
        get_profile("fast")
    with pytest.raises(ProfileError, match="unknown target"):
        get_profile(None, target="zz")


@pytest.mark.parametrize("name", sorted(MAD))
@pytest.mark.parametrize("m,k,n,dtype", [
    (128, 64, 256, BF16), (16, 16, 16, FP16), (17, 33, 15, BF16), (160, 32, 160, FP32),
    (64, 64, 64, INT8), (80, 64, 128, FP32), (1, 1, 1, BF16), (256, 256, 256, FP16),
])
def test_mad_cycles_match_formula(name, m, k, n, dtype):
    head, passes = MAD[name]
    assert get_profile(name).mad_cycles(m, k, n, dtype) == mad_formula(head, passes, m, k, n, dtype)


@given(st.sampled_from(sorted(MAD)), st.integers(1, 4095), st.integers(1, 4095),
       st.integers(1, 4095), st.sampled_from([BF16, FP16, FP32, INT8]))
def test_mad_cycles_property(name, m, k, n, dtype):
    head, passes = MAD[name]
    assert get_profile(name).mad_cycles(m, k, n, dtype) == mad_formula(head, passes, m, k, n, dtype)


def test_mad_reference_example():
    # hw-model.md §2.3: 128x64x256 bf16 on a2a3 = 21 + 8*4*16 = 533 cycles.
    assert get_profile("a2a3-device").mad_cycles(128, 64, 256, BF16) == 533


def test_mad_rejects_empty_shapes():
    with pytest.raises(ProfileError, match="k=0"):
        get_profile().mad_cycles(16, 0, 16, BF16)


@pytest.mark.parametrize("m,n,expected", [(128, 256, 1274.78), (128, 128, 733.6), (128, 80, 2064.8)])
def test_drain_reference_examples(m, n, expected):
    # hw-model.md §2.3 examples: 1275, 734 and 2065 cycles (the misaligned-N cliff).
    got = get_profile("a2a3-device").drain_cycles(D, m, n, FP32)
    assert got == pytest.approx(expected, abs=0.01)


ROW_DRAINS = [("a2a3-device", D), ("a5-sim", D), ("a5-sim", M)]
DRAIN_SHAPES = [(16, 16), (16, 64), (64, 80), (128, 256), (80, 128), (160, 160), (48, 24),
                (256, 512)]


@pytest.mark.parametrize("name,dst", ROW_DRAINS)
@pytest.mark.parametrize("m,n", DRAIN_SHAPES)
def test_row_drain_matches_formula(name, dst, m, n):
    got = get_profile(name).drain_cycles(dst, m, n, FP32)
    assert got == pytest.approx(drain_formula(*ROW_DRAIN[name], m, n))


@pytest.mark.parametrize("m,n", DRAIN_SHAPES)
def test_a2a3_l0c_to_l1_drain_is_fractal_wise(m, n):
    # 164 fixed + L0C bytes at 118 x 128/70 B/cycle (pto-isa: L0C->L1 is 128/70 times faster
    # per byte than L0C->GM), no per-row floor or misalignment penalty.
    got = get_profile("a2a3-device").drain_cycles(M, m, n, FP32)
    assert got == pytest.approx(164 + m * n * 4 / (118 * 128 / 70))
    assert got < get_profile("a2a3-device").drain_cycles(D, m, n, FP32)


def test_gm_share_of_active_cores():
    # One core alone: its own paths bind (PyPTO's single-core drain fit, pto-isa GM->L1).
    p = get_profile("a2a3-device")
    assert p.active_cores == 1
    assert p.drain_cycles(D, 128, 256, FP32) == pytest.approx(drain_formula(164, 4.45, 118, 2.6,
                                                                            128, 256))
    # 24 cores share GM: 1880 / 24 = 78.3 B/cycle on every GM path, so the 128x256 drain
    # lands in the measured 1799-1875 cycles.
    p24 = p.for_cores(24)
    share = 1880.0 / 24
    assert p24.gm_share_bytes_per_cycle == pytest.approx(share)
    assert p24.drain_cycles(D, 128, 256, FP32) == pytest.approx(164 + 128 * 1024 / share)
    assert 1799 <= p24.drain_cycles(D, 128, 256, FP32) <= 1875
    assert p24.transfer_cycles(D, M, 65536) == pytest.approx(65536 / share)
    assert p24.transfer_cycles(M, L, 4096) == p.transfer_cycles(M, L, 4096)   # on-chip: no GM
    assert p24.drain_cycles(M, 64, 64, FP32) == p.drain_cycles(M, 64, 64, FP32)
    with pytest.raises(ProfileError, match="positive integer"):
        p.for_cores(0)


def test_launch_floor():
    # fixed launch + each further block + staged bytes at the staging bandwidth
    p = get_profile("a2a3-device")
    assert p.floor_cycles() == pytest.approx(3214.0)
    assert p.floor_cycles(blocks=24) == pytest.approx(3214.0 + 23 * 730.0)
    assert p.floor_cycles(staged_bytes=32768) == pytest.approx(3214.0 + 32768 / 22.41)
    assert get_profile("a2a3-ptoisa").floor_cycles(blocks=24, staged_bytes=1 << 20) == 0.0
    with pytest.raises(ProfileError, match="block"):
        p.floor_cycles(blocks=0)


@given(st.integers(1, 512), st.integers(1, 1024))
def test_row_drain_property(m, n):
    assert get_profile("a2a3-device").drain_cycles(D, m, n, FP32) == pytest.approx(
        drain_formula(*ROW_DRAIN["a2a3-device"], m, n))
    assert get_profile("a5-sim").drain_cycles(V, m, n, FP32) == pytest.approx(
        drain_formula(*ROW_DRAIN["a5-sim"], m, n))


@pytest.mark.parametrize("dst,gib", [(D, 70.0), (M, 128.0)])
@pytest.mark.parametrize("m,n", [(16, 16), (128, 256), (80, 128)])
def test_ptoisa_flat_drain(dst, gib, m, n):
    bw = gib * 2**30 / 1.85e9
    assert get_profile("a2a3-ptoisa").drain_cycles(dst, m, n, FP32) == pytest.approx(m * n * 4 / bw)


def test_drain_to_vec_only_on_a5():
    with pytest.raises(ProfileError, match="no FIXPIPE drain to Vec"):
        get_profile("a2a3-device").drain_cycles(V, 16, 16, FP32)


@pytest.mark.parametrize("name", sorted(MTE1))
@pytest.mark.parametrize("nbytes", [512, 8192, 16384, 32768, 65536])
def test_mte1_transfers(name, nbytes):
    bw_a, bw_b = MTE1[name]
    p = get_profile(name)
    assert p.transfer_cycles(M, L, nbytes) == pytest.approx(nbytes / bw_a, rel=1e-3)
    assert p.transfer_cycles(M, R, nbytes) == pytest.approx(nbytes / bw_b, rel=1e-3)


@pytest.mark.parametrize("name", sorted(MAD))
@pytest.mark.parametrize("path", sorted(FLAT_GM, key=str))
@pytest.mark.parametrize("nbytes", [32, 4096, 65536, 524288])
def test_gm_and_ub_paths_use_the_flat_table(name, path, nbytes):
    # hw-model.md §2.3: the pto-isa flat table (GiB/s at 1.85 GHz), rounded to 0.1 B/cycle there.
    got = get_profile(name).transfer_cycles(*path, nbytes)
    assert got == pytest.approx(nbytes / FLAT_GM[path], rel=2e-3)


def test_move_cycles_dispatches_on_source():
    p = get_profile("a2a3-device")
    assert p.move_cycles(A, D, rows=128, cols=256, dtype=FP32) == p.drain_cycles(D, 128, 256, FP32)
    assert p.move_cycles(M, L, rows=128, cols=64, dtype=BF16) == p.transfer_cycles(M, L, 128 * 64 * 2)
    assert p.move_cycles(M, L, rows=128, cols=64, dtype=BF16, nbytes=100) == p.transfer_cycles(M, L, 100)


def test_unknown_transfer_path():
    with pytest.raises(ProfileError, match="no transfer Left -> Right"):
        get_profile().transfer_cycles(L, R, 64)
    with pytest.raises(ProfileError, match="negative"):
        get_profile().transfer_cycles(D, M, -1)


@pytest.mark.parametrize("op,dtype,slope,bias", [
    ("tadds", FP32, 0.0156, 30.0), ("pto.tmuls", FP16, 0.0078, 30.0), ("tmul", FP32, 0.0312, 30.0),
    ("tsub", FP16, 0.0156, 30.0), ("texp", FP32, 0.0314, 30.0),
])
@pytest.mark.parametrize("rows,cols", [(16, 64), (128, 128), (1, 8)])
def test_fitted_vector_costs(op, dtype, slope, bias, rows, cols):
    for name in PROFILES:
        assert get_profile(name).vector_cycles(op, dtype, rows, cols) == pytest.approx(
            bias + slope * rows * cols)


#: rows of pto-isa's formula_params.csv (op, bytes, cols, slope, bias) the RowCost fits
#: must stay close to: cycles = slope * rows * cols + bias
CSV_ROWS = [("trowsum", FP32, 128, 0.0625, 61.5), ("trowsum", FP16, 432, 0.0255, 103),
            ("trowmax", FP32, 304, 0.0434, 110), ("tcolsum", FP16, 336, 0.069, 30),
            ("tcolsum", FP32, 64, 0.3047, 15), ("tcolmax", FP16, 96, 0.1836, 19),
            ("trowexpand", FP32, 64, 0.2187, 37)]


@pytest.mark.parametrize("op,dtype,cols,slope,bias", CSV_ROWS)
@pytest.mark.parametrize("rows", [16, 64])
def test_row_cost_fits_follow_the_pto_isa_table(op, dtype, cols, slope, bias, rows):
    for name in PROFILES:
        got = get_profile(name).vector_cycles(op, dtype, rows, cols)
        assert got == pytest.approx(slope * rows * cols + bias, rel=0.15), (name, op, cols)


def test_row_cost_counts_registers_per_row():
    cost = RowCost(2.0, 3.0, 10.0, 1.0, "[A] test")
    # 72 fp32 columns span two 256-byte registers: 10 + 1*2 + 4 * (2 + 3*2)
    assert cost.cycles(4, 72, 4) == 44.0
    assert get_profile().vector_cycles("trowmin", FP32, 8, 64) == \
        get_profile().vector_cycles("trowmax", FP32, 8, 64)


@pytest.mark.parametrize("op,dtype", [("trowprod", FP32), ("tcvt", BF16), ("texp", FP16),
                                      ("tcolexpand", FP32)])
def test_unfitted_vector_ops_use_the_fallback(op, dtype):
    p = get_profile()
    assert p.vector_cycles(op, dtype, 16, 64) == pytest.approx(20 + 16 * 64 * dtype.nbytes / 256)
    assert p.vector_cycles(op, dtype, 16, 64, out_bytes=64) == pytest.approx(20 + 64 / 256)


def test_issue_and_sync_parameters():
    for p in PROFILES.values():
        assert p.issue_cycles == 1 and p.sync_latency_cycles == 0 and p.mte1_head_cycles == 0


def test_every_path_cites_a_source():
    for p in PROFILES.values():
        assert p.description
        for model in (*p.transfers.values(), *p.drains.values(), *p.vector_ops.values(),
                      *([p.launch] if p.launch else [])):
            assert model.source.startswith("[")
    # where the published numbers cannot separate two constants, the profile says so
    assert any("cannot be separated" in n or "fixes only" in n
               for n in PROFILES["a2a3-device"].notes)


def test_helpers():
    assert odd_part(10) == 5 and odd_part(16) == 1 and odd_part(0) == 0 and odd_part(7) == 7
    assert gib_per_s_to_bytes_per_cycle(135) == pytest.approx(78.4, abs=0.05)


def test_device_profiles_share_the_chooser_constants():
    """The chooser keeps PyPTO's constants (its answers must stay PyPTO's); the device
    profiles share its MAD and L0C->GM drain, a5-sim its MTE1 too (a2a3-device rescales MTE1
    to the pto-isa GEMM)."""
    from ptoc.backend import get_target

    for target_name, profile_name in (("a2a3", "a2a3-device"), ("a5", "a5-sim")):
        model = get_target(target_name).l0_cost_model
        p = get_profile(profile_name)
        assert p.mad_head_cycles == model.mad_head_cycles
        assert p.mad_fp32_passes == model.mad_fp32_passes
        scale = _SCALE if profile_name == "a2a3-device" else 1.0
        assert p.transfers[(M, L)].bytes_per_cycle == pytest.approx(model.bw_l0a * scale)
        assert p.transfers[(M, R)].bytes_per_cycle == pytest.approx(model.bw_l0b * scale)
        drain = p.drains[D]
        assert (drain.fixed_cycles, drain.row_cycles, drain.bytes_per_cycle, drain.penalty_cycles) == (
            model.drain_fixed_cycles, model.drain_row_cycles, model.bw_drain, model.drain_penalty_cycles)
