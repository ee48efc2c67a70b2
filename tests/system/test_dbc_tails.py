"""dbC grids whose tiles do not all fit the double-buffered loops: the straight-line tail
tiles alternate between the two L0C buffers (AutoTileMatmulL0 tags them as two pipeline
stages), and a loop's post-loop waits sink to the instruction that needs them, so a tail's
MAD overlaps the previous tile's drain at the loop/tail seam and along the tail strip.

Every dbC accumulator of such a grid takes the other L0C buffer than the accumulator before
it in program order (``ptoc.passes.dbc_parity``), across outer-loop clones and remainder
tiles too. A loop's first tile after a remainder tile (320x320 pair 4) overlaps the
remainder's drain: InsertSync issues the loop's pre-loop set for the other buffer ahead of
that drain (``SyncPlan.pre_set_gap``) and orders the drain before the loop's MAD on the same
buffer with that buffer's carried pair instead of a wait before the loop (``Walker.defer``).
Simulated (a2a3-device, cycles, flag on) first wave -> tails/waits -> parity -> seeded
pre-loop sets: 320x320 13780 -> 11775 -> 11498 -> 11152, 448x448 20418 -> 18230 -> 18230 ->
18230, 144x144 4264 -> 4126 -> 4057 -> 4057, 160x160 4551 -> 4370 -> 4370 -> 4370; the
in-loop tiles are unchanged (256x256 7056, 384x256 9606)."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc import ir
from ptoc.dtypes import MemorySpace
from ptoc.ir.nodes import AssignStmt, Call
from ptoc.runtime import RunConfig

import dbc_programs as dp

#: consecutive tile pairs (issue order) at a loop/tail seam or inside a tail strip
SEAMS_AND_TAILS = {(320, 320): [3, 4, 8, 9, 10, 11, 12, 13], (448, 448): [7, 11, 12, 13, 14],
                   (160, 160): [2], (144, 144): [1, 2, 3, 4]}


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


@pytest.mark.parametrize("spread", [True, False])
def test_accumulators_alternate_in_program_order(tmp_path, spread):
    """320x320: per outer stage a 2-stage loop and a remainder, then 5 tails. With the ptoc
    refinement every accumulator (walked in program order, each loop body once) is on the
    other buffer than the one before; PyPTO's output (spread_dbc_tails=False) is untouched:
    both outer stages' inner loops start on the same buffer as their remainders."""
    from ptoc.ir.nodes import ForStmt, SeqStmts
    from ptoc.passes import PassContext, PassManager
    from ptoc.passes.auto_tile_matmul_l0 import auto_tile_matmul_l0

    with PassContext(enable_pypto_l0c_double_buffer=True):
        manager = PassManager.get_strategy()
        passes = [auto_tile_matmul_l0(spread_dbc_tails=spread) if p.name == "AutoTileMatmulL0"
                  else p for p in manager.passes]
        program = dp.direct_store(320, 320)
        for p in passes:
            program = p(program)
    order = []

    def walk(stmts):
        for s in stmts:
            if isinstance(s, ForStmt):
                walk(s.body.stmts)
            elif isinstance(s, SeqStmts):
                walk(s.stmts)
            elif isinstance(s, AssignStmt) and isinstance(s.value, Call) \
                    and s.value.op == "tile.matmul":
                order.append(s.var.type.memref.offset.value)

    walk(program.get_function("kernel").body.stmts)
    assert len(order) == 11 and len(set(order)) == 2
    alternating = all(a != b for a, b in zip(order, order[1:]))
    assert alternating is spread
