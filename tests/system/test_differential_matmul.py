"""Differential test: auto-tiled matmuls of random shapes are exact, on every path.

Operands are small integers, so every product and every partial sum is exact in the FP32
accumulator whatever the order of accumulation: the simulated result must equal numpy's
bit for bit. Shapes are random multiples of 16 (tails in M, N and K included), dtypes
FP16/BF16/FP32, with the dbC flag on and off, under the PYPTO and PTOAS planners. This runs
the chooser, the M/N grids, split-K chains, tails, the dbC pipelines, IO reordering, memory
planning and InsertSync end to end; any dropped or doubled K-step or misplaced tile shows
as a wrong integer.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import DataType
from ptoc.pto.planner import PlanCapacityError

from cases import MATMUL



L1_BUDGET = 384 * 1024  # operands stay well inside L1 (512 KiB on a2a3)


@st.composite
def problems(draw):
    dtype = draw(st.sampled_from(("FP16", "BF16", "FP32")))
    nbytes = DataType[dtype].get_byte()
    dims = st.integers(1, 24).map(lambda x: 16 * x)
    m, k, n = draw(dims), draw(dims), draw(dims)
    if (m * k + k * n) * nbytes > L1_BUDGET:
        k = max(16, (L1_BUDGET // nbytes // (m + n)) // 16 * 16)
    return m, k, n, dtype


@pytest.mark.no_roundtrip  # numerics only; round trips are pinned per pass elsewhere
@settings(derandomize=True, max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.booleans(), st.sampled_from(["PYPTO", "PTOAS"]))
def test_random_auto_tiled_matmuls_are_exact(problem, dbc, planner):
    m, k, n, dtype = problem
    program = pl.parse_program(MATMUL.format(M=m, K=k, N=n, DT=dtype), filename="mm.py")
    compiled = ir.compile(program, None, memory_planner=planner,
                          enable_pypto_l0c_double_buffer=dbc)
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    np_dtype = DataType[dtype].numpy
    a = rng.integers(-3, 4, (m, k)).astype(np_dtype)
    b = rng.integers(-3, 4, (k, n)).astype(np_dtype)
    c = np.zeros((m, n), np.float32)
    result = compiled.run(a, b, c)
    assert result.races == []
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(c, expected.astype(np.float32),
                                  err_msg=f"{m}x{k}x{n} {dtype} dbC={dbc} {planner}")


def test_ptoas_overflow_where_pypto_ptoas_overflows_is_a_clear_error(tmp_path):
    """240x128x144 FP32: the chooser takes 48x128 Left tiles (B held, dbC); the inner M loop
    has a one-tile tail, and CanonicalizeIOOrder hoists each outer stage's tail extract above
    the inner loops, so four 24 KiB Left tiles are live together. PyPTO's PTOAS path runs
    no capacity gate (MemoryReuse is skipped) and hands ptoas these lifetimes, which cannot
    fit 64 KiB: the PTOAS compile fails, naming the statement and the planner that fits it,
    and the PYPTO planner (whose gate sheds depth) runs it exactly."""
    program = pl.parse_program(MATMUL.format(M=240, K=128, N=144, DT="FP32"), filename="mm.py")
    with pytest.raises(PlanCapacityError) as info:
        ir.compile(program, tmp_path / "ptoas", memory_planner="PTOAS")
    msg = str(info.value)
    assert "Left buffer usage (98304 bytes) exceeds platform limit (65536 bytes)" in msg
    assert "all made for the statement at mm.py:11" in msg
    assert "memory_planner=PTOAS plans these lifetimes as written" in msg
    assert "(fix: " in msg and "memory_planner=PYPTO" in msg
    compiled = ir.compile(program, tmp_path / "pypto", memory_planner="PYPTO")
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (240, 128)).astype(np.float32)
    b = rng.integers(-3, 4, (128, 144)).astype(np.float32)
    c = np.zeros((240, 144), np.float32)
    assert compiled.run(a, b, c).races == []
    np.testing.assert_array_equal(c, a @ b)
