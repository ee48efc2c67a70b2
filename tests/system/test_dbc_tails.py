"""dbC grids whose tiles do not all fit the double-buffered loops: the straight-line tail
tiles alternate between the two L0C buffers (AutoTileMatmulL0 tags them as two pipeline
stages), and a loop's post-loop waits sink to the instruction that needs them, so a tail's
MAD overlaps the previous tile's drain at the loop/tail seam and along the tail strip.

Simulated (a2a3-device, cycles, flag on) before -> after: 320x320 13780 -> 11775,
448x448 20418 -> 18230, 144x144 4264 -> 4126, 160x160 4551 -> 4370; the in-loop tiles are
unchanged (256x256 7056, 384x256 9606). Still serial: the first tile of a loop that follows
a tail on the same buffer (320x320 pairs 4 and 9)."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc import ir
from ptoc.dtypes import MemorySpace
from ptoc.ir.nodes import AssignStmt, Call
from ptoc.runtime import RunConfig

import dbc_programs as dp

#: consecutive tile pairs (issue order) at a loop/tail seam or inside a tail strip
SEAMS_AND_TAILS = {(320, 320): [3, 8, 10, 11, 12, 13], (448, 448): [7, 11, 12, 13, 14],
                   (160, 160): [2]}


@pytest.mark.parametrize("M,N", list(SEAMS_AND_TAILS), ids=str)
def test_tail_drains_overlap_the_next_mad(tmp_path, M, N):
    compiled = ir.compile(dp.direct_store(M, N), tmp_path, dump_passes=False,
                          enable_pypto_l0c_double_buffer=True)
    inputs, golden = dp.direct_store_inputs(M, N)
    result = compiled.run(*inputs, config=RunConfig(sim_mode="fast"))
    sim = result.runs[0].sim
    assert sim.races == []
    np.testing.assert_allclose(result.outputs["out"], golden, rtol=1e-3, atol=1e-3)
    overlap = dp.drain_overlap(sim)
    assert [i for i in SEAMS_AND_TAILS[(M, N)] if overlap.per_pair[i] <= 0] == []
    assert len(compiled.allocations_in(MemorySpace.Acc)) == 2


def test_tail_accumulators_alternate_between_the_two_buffers(tmp_path):
    compiled = ir.compile(dp.direct_store(320, 320), tmp_path, dump_passes=False,
                          enable_pypto_l0c_double_buffer=True)
    kernel = compiled.program.get_function("kernel")
    tails = [s.var.type.memref.offset.value for s in kernel.body.stmts
             if isinstance(s, AssignStmt) and isinstance(s.value, Call)
             and s.value.op == "tile.matmul"]
    assert len(tails) == 5
    assert len(set(tails)) == 2 and all(a != b for a, b in zip(tails, tails[1:]))
