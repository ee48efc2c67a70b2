"""The DSA_RP planner: AllocateMemoryAddr places every allocation identity by lifetime within
capacity (reference §11.2), keeps pipeline stages apart while they fit, relaxes them with
PH-DSA-001 when they do not, and never places two live tiles on the same bytes."""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc import ir
from ptoc.dtypes import MemorySpace
from ptoc.errors import AllocationError
from ptoc.passes import MemoryPlanner, PassContext
from ptoc.passes.allocate_memory_addr import allocate_memory_addr
from ptoc.passes.dsa_solver import DsaBuffer, DsaProblem, solve, validate
from ptoc.passes.init_mem_ref import init_mem_ref
from ptoc.passes.materialize_semantic_aliases import materialize_semantic_aliases

sys.path.insert(0, os.path.dirname(__file__))
from _memory_programs import Operand, buffers_named, cube_program, hints  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def dsa(prog, ctx):
    with ctx:
        return allocate_memory_addr()(materialize_semantic_aliases()(init_mem_ref()(prog)))


def right_offsets(out, names):
    return [buffers_named(out, n)[0][1] for n in names]


def test_affordable_pipeline_stages_stay_apart():
    ctx = PassContext(memory_planner=MemoryPlanner.DSA_RP)
    out = dsa(cube_program([Operand("r0", 32, 32, "0:0"), Operand("r1", 32, 32, "0:1")]), ctx)
    a, b = right_offsets(out, ["r0", "r1"])
    assert a != b
    assert hints(ctx, "PH-DSA-001") == []
    assert "pipeline_membership" not in out.as_python()


def test_stages_that_cannot_fit_apart_share_with_ph_dsa_001():
    """Two 48 KiB Right stages in 64 KiB: strict search fails, the relaxed one shares."""
    ctx = PassContext(memory_planner=MemoryPlanner.DSA_RP)
    out = dsa(cube_program([Operand("r0", 128, 192, "0:0"), Operand("r1", 128, 192, "0:1")]), ctx)
    a, b = right_offsets(out, ["r0", "r1"])
    assert a == b
    [hint] = hints(ctx, "PH-DSA-001")
    assert "1 of 1 relaxed pair(s) reuse physical storage" in hint
    assert "pipeline_membership" not in out.as_python()


def test_co_live_tiles_never_share_and_overflow_names_them():
    ctx = PassContext(memory_planner=MemoryPlanner.DSA_RP)
    ops = [Operand(f"r{i}", 80, 128, None) for i in range(4)]  # 4 x 20 KiB, all co-live
    with pytest.raises(AllocationError, match=r"Right buffers of function 'kernel' do not fit "
                                              r"65536 bytes under the DSA_RP planner: 81920 bytes"):
        dsa(cube_program(ops, colive=True), ctx)
    out = dsa(cube_program(ops[:3], colive=True), PassContext(memory_planner=MemoryPlanner.DSA_RP))
    assert len(set(right_offsets(out, ["r0", "r1", "r2"]))) == 3


@pytest.mark.parametrize("example,program", [("02_auto_tile_matmul.py", "AutoTile"),
                                             ("03_dbc_matmul.py", "Grid")])
def test_examples_fit_and_run_exactly_under_dsa_rp(tmp_path, example, program):
    """Both overflowed before (every identity bump-allocated: 262144 B of Acc for 02)."""
    prog = runpy.run_path(str(EXAMPLES / example))[program]
    compiled = ir.compile(prog, tmp_path, memory_planner=MemoryPlanner.DSA_RP, dump_passes=False)
    (m, k), (_, n) = (tuple(p.var.type.shape) for p in compiled.entry.params[:2])
    dtype = compiled.entry.params[0].var.type.dtype.numpy
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    out = np.zeros((m, n), np.float32)
    result = compiled.run(a, b, out)
    assert not result.races
    np.testing.assert_allclose(out, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3,
                               atol=1e-3)
    for space in (MemorySpace.Acc, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right):
        placed = compiled.allocations_in(space)
        assert max(x.addr + x.size for x in placed) <= 512 * 1024


@st.composite
def problems(draw):
    n = draw(st.integers(1, 12))
    sizes = [draw(st.integers(1, 8)) * 32 for _ in range(n)]
    lives = [sorted(draw(st.lists(st.integers(0, 20), min_size=2, max_size=2))) for _ in range(n)]
    hard = {frozenset((i, j)) for i in range(n) for j in range(i + 1, n)
            if lives[i][0] < lives[j][1] and lives[j][0] < lives[i][1]}
    soft = {frozenset((i, j)): 1 for i in range(n) for j in range(i + 1, n)
            if frozenset((i, j)) not in hard and draw(st.booleans())}
    buffers = [DsaBuffer(i, sizes[i], 32, lives[i][0]) for i in range(n)]
    return DsaProblem(sum(sizes), buffers, hard, soft), lives


@settings(max_examples=150, deadline=None)
@given(problems())
def test_solver_always_fits_when_stacking_fits_and_is_valid(case):
    problem, lives = case
    result = solve(problem)
    assert result.offsets is not None  # stacking every buffer fits exactly
    assert validate(problem, result.offsets) == []
    assert result.peak <= problem.capacity
