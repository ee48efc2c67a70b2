"""PTOAS is never slower than PYPTO on a user-written pipeline (issue 14 item 4).

The kernel: ``q[16, 128]`` held in Left, an outer ``pl.pipeline(stage=2)`` over 4 stacks
loading ``b`` panels into Mat, an inner pipeline of 4 trips extracting Right panels,
multiplying and storing (bf16). PTOAS' PlanMemory gives every accumulator its own L0C bytes
while they fit (no reuse), and InsertSync keeps the slots of the lowered outer pipeline
apart, so the PTOAS program overlaps at least as much as PYPTO's replicated stages.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import MemorySpace
from ptoc.passes import MemoryPlanner
from ptoc.runtime import RunConfig

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "passes"))
from test_auto_tile_matmul_l0_pipeline_dbc import pipeline_kernel  # noqa: E402

VARIANTS = [dict(), dict(tile_n=64, width=256), dict(tile_m=32),
            dict(stage=4, tile_n=32, width=512), dict(outer_stage=1)]


def run(planner, tmp_path, **kw):
    tm, width = kw.get("tile_m", 16), kw.get("width", 512)
    with contextlib.redirect_stderr(io.StringIO()):
        compiled = ir.compile(pl.parse_program(pipeline_kernel(**kw)), tmp_path / planner.name,
                              memory_planner=planner, dump_passes=False)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((tm, 128)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((512, width)).astype(ml_dtypes.bfloat16)
    out = np.zeros((4 * tm, width), np.float32)
    result = compiled.run(q, b, out, config=RunConfig(sim_mode="fast"))
    assert result.races == []
    golden = np.vstack([q.astype(np.float32) @ b[j * 128:(j + 1) * 128].astype(np.float32)
                        for j in range(4)])
    np.testing.assert_allclose(out, golden, rtol=1e-3, atol=1e-3)
    return compiled, result.cycles


@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items())
                         or "16x128-4x4")
def test_ptoas_is_not_slower_than_pypto(kw, tmp_path):
    _, pypto = run(MemoryPlanner.PYPTO, tmp_path, **kw)
    ptoas_compiled, ptoas = run(MemoryPlanner.PTOAS, tmp_path, **kw)
    assert ptoas <= pypto * (1 + 1e-9), (ptoas, pypto)


def test_every_accumulator_keeps_its_own_bytes_under_ptoas(tmp_path):
    compiled, _ = run(MemoryPlanner.PTOAS, tmp_path)
    acc = {a.addr for a in compiled.allocations if a.space is MemorySpace.Acc}
    assert len(acc) == 4          # two clones per inner body, one body per outer slot
