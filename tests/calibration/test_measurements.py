"""Reading measurements: the plain CSV, the profiler's op_summary, and every bad input named."""

from __future__ import annotations

import pytest

from ptoc.backend import Pipe
from ptoc.calibration import (
    TOTAL, TRAINING_SET, MeasurementError, parse_measurements, read_measurements,
)

CLOCK = 1.85e9


def parse(text):
    return parse_measurements(text, clock_hz=CLOCK, filename="m.csv")


def test_plain_rows_convert_microseconds_and_shares_to_cycles():
    found = parse("# a comment\n"
                  "kernel,shape,tile,dtype,cores,grid,staged,us,share_cube,busy_fix,label\n"
                  "gemm,1536x1536x1536,128x256x64,fp16,24,4x6,0,38.8,0.5,5000,g\n"
                  "matmul,64x64x64,,bf16,,,1,2.94,,,\n")
    gemm, small = found.rows
    assert found.form == "plain" and found.skipped == []
    assert gemm.kernel == "gemm" and gemm.shape == (1536, 1536, 1536) and gemm.tile == (128, 256, 64)
    assert gemm.cores == 24 and gemm.grid == (4, 6) and not gemm.staged and gemm.name() == "g"
    assert gemm.observed[TOTAL] == pytest.approx(38.8 * 1850)
    assert gemm.observed[Pipe.PIPE_M] == pytest.approx(0.5 * 38.8 * 1850)
    assert gemm.observed[Pipe.PIPE_FIX] == 5000
    assert small.cores == 1 and small.grid == (1, 1) and small.staged and small.tile is None
    assert small.dtype == "BF16" and small.name() == "matmul 64x64x64 bf16"


@pytest.mark.parametrize("row,column,message", [
    ("conv,64x64x64,,bf16,1,2.0", "kernel", "unknown kernel 'conv'"),
    ("matmul,64x64,,bf16,1,2.0", "shape", "is not MxKxN"),
    ("matmul,64x64x64,12,bf16,1,2.0", "tile", "is not mxnxk"),
    ("matmul,64x64x64,,int4,1,2.0", "dtype", "unknown dtype"),
    ("matmul,64x64x64,,bf16,0,2.0", "cores", "not a positive integer"),
    ("matmul,64x64x64,,bf16,5,2.0", "grid", "no core grid for 5 cores"),
    ("matmul,64x64x64,,bf16,1,fast", "us", "is not a number"),
    ("matmul,64x64x64,,bf16,1,-1", "us", "is not positive"),
    ("matmul,64x64x64,,bf16,1,", "us", "the row measures nothing"),
])
def test_bad_plain_rows_name_line_and_column(row, column, message):
    with pytest.raises(MeasurementError) as info:
        parse("kernel,shape,tile,dtype,cores,us\n" + row + "\n")
    text = str(info.value)
    assert f"m.csv line 2, column {column!r}" in text and message in text and "(fix:" in text


def test_a_share_needs_the_wall():
    with pytest.raises(MeasurementError, match="a share needs the measured wall"):
        parse("kernel,shape,dtype,share_cube\nmatmul,64x64x64,bf16,0.5\n")


def test_empty_and_missing_files():
    with pytest.raises(MeasurementError, match="holds no measurements"):
        parse("# nothing\n\n")
    with pytest.raises(MeasurementError, match="cannot read measurements file"):
        read_measurements("/nonexistent/m.csv", clock_hz=CLOCK)


PROFILER = (
    "Device_id,Op Name,OP Type,Task Type,Task Duration(us),Block Dim,Input Shapes,"
    "Input Data Types,aic_mac_time(us),aic_mte1_time(us),aic_mte2_time(us),aic_fixpipe_time(us)\n"
    '0,kernel_mm,MatMulV2,AI_CORE,2.5,1,"128,64;64,256",DT_BF16;DT_BF16,0.3,0.2,0.9,0.7\n'
    '0,add_1,Add,AI_VECTOR_CORE,1.0,1,"64,64;64,64",FLOAT;FLOAT,N/A,N/A,N/A,N/A\n'
    '0,mm_big,MatMul,AI_CORE,90.0,24,"4096,4096;4096,4096",DT_FLOAT16;DT_FLOAT16,1,1,1,1\n'
    '0,mm_bad,MatMul,AI_CORE,9.0,1,"128,64;32,256",DT_BF16;DT_BF16,1,1,1,1\n')


def test_profiler_op_summary_matmuls_become_matmul_measurements():
    found = parse(PROFILER)
    assert found.form == "profiler"
    (row,) = found.rows
    assert row.kernel == "matmul" and row.shape == (128, 64, 256) and row.dtype == "BF16"
    assert row.label == "kernel_mm" and row.cores == 1 and not row.staged
    assert row.observed[TOTAL] == pytest.approx(2.5 * 1850)
    assert row.observed[Pipe.PIPE_M] == pytest.approx(0.3 * 1850)
    assert row.observed[Pipe.PIPE_FIX] == pytest.approx(0.7 * 1850)
    reasons = "\n".join(found.skipped)
    assert "line 3 (add_1): not a matmul" in reasons
    assert "line 4 (mm_big): Block Dim 24" in reasons
    assert "line 5 (mm_bad): Input Shapes" in reasons


def test_the_training_set_reads_and_cites_its_sources():
    found = read_measurements(TRAINING_SET, clock_hz=CLOCK)
    assert len(found.rows) == 7 and not found.skipped
    assert all(r.source for r in found.rows)
    assert {r.kernel for r in found.rows} == {"gemm", "matmul"}
