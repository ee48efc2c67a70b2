"""Targets: capacities, alignment, L0C footprint, data paths, MAD shapes, pipes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptoc.backend import A2A3, A5, Pipe, PipeError, TargetError, get_target
from ptoc.backend.pipes import QUEUE_PIPES, TRACE_LANE_ORDER
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtocError

M, V, D, L, R, A, B = (MemorySpace.Mat, MemorySpace.Vec, MemorySpace.DDR, MemorySpace.Left,
                       MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias)


@pytest.mark.parametrize("name,expected", [("a2a3", A2A3), ("a2a3sim", A2A3), ("A2A3", A2A3),
                                           ("a5", A5), ("a5sim", A5), (A5, A5)])
def test_lookup_by_name_or_platform(name, expected):
    assert get_target(name) is expected


def test_unknown_target_lists_valid_names():
    with pytest.raises(TargetError) as info:
        get_target("910c")
    assert isinstance(info.value, PtocError)
    for name in ("a2a3", "a2a3sim", "a5", "a5sim"):
        assert name in str(info.value)


def test_capacities():
    assert {s: A2A3.capacity(s) for s in (M, L, R, A, V, B)} == {
        M: 512 * 1024, L: 64 * 1024, R: 64 * 1024, A: 128 * 1024, V: 188416, B: 1024}
    assert {s: A5.capacity(s) for s in (M, L, R, A, V, B)} == {
        M: 512 * 1024, L: 64 * 1024, R: 64 * 1024, A: 256 * 1024, V: 245760, B: 4096}
    with pytest.raises(TargetError, match="DDR"):
        A2A3.capacity(D)


def test_alignment():
    assert A2A3.address_alignment == A5.address_alignment == 32
    assert A2A3.is_aligned(0) and A2A3.is_aligned(8192) and not A2A3.is_aligned(100)


@pytest.mark.parametrize("target,rows,cols,dtype,expected", [
    (A2A3, 16, 128, DataType.INT32, 32 * 128 * 4),   # INT32 rows pad to 32 on a2a3
    (A5, 16, 128, DataType.INT32, 16 * 128 * 4),
    (A2A3, 16, 128, DataType.FP32, 16 * 128 * 4),
    (A2A3, 17, 64, DataType.FP32, 32 * 64 * 4),
    (A2A3, 33, 16, DataType.INT32, 64 * 16 * 4),
    (A5, 1, 16, DataType.FP32, 16 * 16 * 4),
])
def test_acc_physical_bytes(target, rows, cols, dtype, expected):
    assert target.acc_physical_bytes(rows, cols, dtype) == expected
    assert target.tile_bytes(A, rows, cols, dtype) == expected


@given(st.sampled_from([A2A3, A5]), st.integers(1, 512), st.integers(1, 512),
       st.sampled_from([DataType.FP32, DataType.INT32, DataType.FP16]))
def test_acc_physical_bytes_properties(target, rows, cols, dtype):
    nbytes = target.acc_physical_bytes(rows, cols, dtype)
    align = target.acc_row_alignment_for(dtype)
    padded_rows = nbytes // (cols * dtype.nbytes)
    assert nbytes % (cols * dtype.nbytes) == 0
    assert padded_rows % align == 0 and rows <= padded_rows < rows + align


def test_acc_shape_must_be_positive():
    with pytest.raises(TargetError, match="positive"):
        A2A3.acc_physical_bytes(0, 16, DataType.FP32)


def test_row_alignment():
    assert A2A3.acc_row_alignment_for(DataType.INT32) == 32
    assert A2A3.acc_row_alignment_for(DataType.FP32) == 16
    assert A5.acc_row_alignment_for(DataType.INT32) == 16


A2A3_PATHS = {(D, V), (D, M), (V, D), (M, L), (M, R), (M, B), (A, M), (A, D), (V, V)}


def test_data_paths():
    assert set(A2A3.data_paths) == A2A3_PATHS
    assert set(A5.data_paths) == A2A3_PATHS | {(V, M), (A, V)}
    assert A5.can_move(A, V) and not A2A3.can_move(A, V)
    assert A5.can_move(V, M) and not A2A3.can_move(V, M)
    assert not A2A3.can_move(M, D) and not A2A3.can_move(L, A) and not A2A3.can_move(D, L)


@pytest.mark.parametrize("src,dst,pipe", [
    (D, M, Pipe.PIPE_MTE2), (D, V, Pipe.PIPE_MTE2), (V, D, Pipe.PIPE_MTE3),
    (M, L, Pipe.PIPE_MTE1), (M, R, Pipe.PIPE_MTE1), (M, B, Pipe.PIPE_MTE1),
    (A, M, Pipe.PIPE_FIX), (A, D, Pipe.PIPE_FIX), (V, V, Pipe.PIPE_V),
])
def test_move_pipes(src, dst, pipe):
    assert A2A3.move_pipe(src, dst) is pipe
    assert A5.move_pipe(src, dst) is pipe


def test_illegal_move_names_legal_destinations():
    with pytest.raises(TargetError) as info:
        A2A3.move_pipe(A, V)
    assert "Acc -> Vec" in str(info.value) and "Mat" in str(info.value) and "DDR" in str(info.value)


@pytest.mark.parametrize("a,acc,k0,passes_a2a3,passes_a5", [
    (DataType.FP16, DataType.FP32, 16, 1, 1),
    (DataType.BF16, DataType.FP32, 16, 1, 1),
    (DataType.INT8, DataType.INT32, 32, 1, 1),
    (DataType.FP32, DataType.FP32, 8, 2, 8),
])
def test_mad_shapes(a, acc, k0, passes_a2a3, passes_a5):
    s2, s5 = A2A3.mad_shape(a, a), A5.mad_shape(a, a)
    assert (s2.acc, s2.m0, s2.k0, s2.n0, s2.passes) == (acc, 16, k0, 16, passes_a2a3)
    assert (s5.acc, s5.k0, s5.passes) == (acc, k0, passes_a5)
    assert s2.macs_per_cycle == 16 * k0 * 16 / passes_a2a3


def test_unsupported_mad_pair():
    with pytest.raises(TargetError, match="f16 x bf16"):
        A2A3.mad_shape(DataType.FP16, DataType.BF16)


def test_pipe_ids_and_names():
    assert [(p.name, int(p)) for p in Pipe] == [
        ("PIPE_S", 0), ("PIPE_V", 1), ("PIPE_MTE1", 2), ("PIPE_MTE2", 3), ("PIPE_MTE3", 4),
        ("PIPE_M", 5), ("PIPE_ALL", 6), ("PIPE_FIX", 7)]
    assert Pipe.parse("PIPE_FIX") is Pipe.PIPE_FIX and Pipe.parse("mte2") is Pipe.PIPE_MTE2
    assert Pipe.PIPE_M.lane == "CUBE" and Pipe.PIPE_FIX.short == "FIX"
    assert [p.lane for p in TRACE_LANE_ORDER] == ["MTE2", "MTE1", "CUBE", "VECTOR", "FIXPIPE", "MTE3"]
    assert set(QUEUE_PIPES) == set(TRACE_LANE_ORDER)
    with pipe_error():
        Pipe.parse("PIPE_X")


def pipe_error():
    return pytest.raises(PipeError, match="unknown pipe")


def test_default_profiles():
    assert A2A3.default_profile == "a2a3-device" and A5.default_profile == "a5-sim"


def test_clock():
    assert A2A3.clock_hz == 1.85e9 and A5.clock_hz is None
