"""Sync must realise the dbC overlap (issue 6, item 6, third bullet).

From the simulated timeline of each dbC program (PYPTO planner + flag): the FIX drain of
output tile i overlaps the M-pipe MAD of tile i+1 for every consecutive pair inside one run
of the double-buffered inner loop.

Both dbC schedules are evaluated: the ``M0 M1 S0 S1`` chunks CanonicalizeIOOrder emits and
the stage-major ``M0 S0 M1 S1`` ping-pong PyPTO later moved to (PR #2839), produced here by
re-ordering the lowered IR (same buffers, same addresses) before codegen. Evidence recorded
by these tests (a2a3-device profile, cycles):

    grid      emitted MMSS   stage-major MSMS   in-loop pairs overlapping
    160x160   4551           4551               1/1
    256x256   7056           7056               7/7
    448x448   20418          20418              9/9

In this simulator the two orders time identically: InsertSync gives each L0C slot its own
M->FIX and FIX->M event id, a ``wait_flag`` stalls only the waiting pipe's in-order queue,
and so the program order of a MAD and an unrelated drain on another pipe does not matter.
The emitted order overlaps, so it is kept. (The device regression PyPTO saw with
``M0 M1 S0 S1`` therefore is not a property of the order itself under correct per-slot
flags; the simulator attributes any loss to the flags, as the id-starvation tests in
``tests/pto/test_insert_sync_dbc.py`` show.)

Between two consecutive dbC loops (the next outer block's inner loop) InsertSync chains
the loops' carried FIX->M pairs (``ptoc.pto.sync_chain``): the second loop's first MAD on a
slot waits for the first loop's last drain of *that* slot only, so the seam overlaps too
(448x448: both block boundaries). Straight-line tails after a loop overlap too
(``test_dbc_tails.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from ptoc import ir
from ptoc.codegen import generate_kernels
from ptoc.passes.auto_tile_analysis import row_outer
from ptoc.runtime import RunConfig
from ptoc.sim import simulate

import dbc_programs as dp

_CACHE: dict = {}


def dbc_run(tmp_path_factory, M, N):
    if (M, N) not in _CACHE:
        out = tmp_path_factory.mktemp(f"overlap_{M}x{N}")
        compiled = ir.compile(dp.direct_store(M, N), out, dump_passes=False,
                              enable_pypto_l0c_double_buffer=True)
        inputs, golden = dp.direct_store_inputs(M, N)
        result = compiled.run(*inputs, config=RunConfig(sim_mode="fast"))
        _CACHE[(M, N)] = (compiled, result.runs[0].sim, inputs, golden)
    return _CACHE[(M, N)]


def in_loop_pairs(M, N) -> list[int]:
    """Indices i (issue order) such that tiles i and i+1 are consecutive tiles of one run of
    the double-buffered inner loop (its main part: an odd trip's last tile is a tail clone)."""
    res = dp.chooser(M, N, dbc=True)
    inner = N // res.n if row_outer(res) else M // res.m
    outer = M // res.m if row_outer(res) else N // res.n
    main = inner // 2 * 2
    return [block * inner + t for block in range(outer) for t in range(main - 1)]


def loop_exit_pairs(M, N) -> list[int]:
    """Pairs that straddle an inner-loop exit between two interior tiles."""
    res = dp.chooser(M, N, dbc=True)
    inner = N // res.n if row_outer(res) else M // res.m
    outer = M // res.m if row_outer(res) else N // res.n
    main = inner // 2 * 2
    return [block * inner + main - 1 for block in range(outer) if block * inner + main < outer * inner]


@pytest.mark.parametrize("M,N", dp.DIRECT_STORE_GRIDS, ids=[f"{m}x{n}" for m, n in dp.DIRECT_STORE_GRIDS])
def test_drain_of_tile_i_overlaps_mads_of_tile_i_plus_1(tmp_path_factory, M, N):
    compiled, sim, _, _ = dbc_run(tmp_path_factory, M, N)
    assert sim.races == []
    mads, drains = dp.tile_intervals(sim)
    res = dp.chooser(M, N, dbc=True)
    assert len(mads) == len(drains) == dp.tile_count(M, N, res.m, res.n)
    overlap = dp.drain_overlap(sim)
    pairs = in_loop_pairs(M, N)
    assert pairs
    for i in pairs:
        assert overlap.per_pair[i] > 0, (i, drains[i], mads[i + 1])
    assert overlap.hidden > 0


@pytest.mark.parametrize("M,N", [(160, 160), (256, 256), (448, 448)], ids=str)
def test_emitted_mmss_order_vs_stage_major_ping_pong(tmp_path_factory, M, N):
    """Both orders simulated on the same buffers: the emitted order overlaps every in-loop
    pair and is no slower than the stage-major one, so CanonicalizeIOOrder's order stays."""
    compiled, sim, inputs, golden = dbc_run(tmp_path_factory, M, N)
    assert "MMSS" in dp.op_order(compiled.program)
    reordered = dp.stage_major_program(compiled.program)
    assert "MMSS" not in dp.op_order(reordered) and "MSMS" in dp.op_order(reordered)
    sim2 = simulate(generate_kernels(reordered)["kernel"], list(inputs), mode="fast")
    assert sim2.races == []
    np.testing.assert_allclose(sim2.outputs["arg2"].reshape(M, N), golden, rtol=1e-3, atol=1e-3)
    emitted, stage_major = dp.drain_overlap(sim), dp.drain_overlap(sim2)
    pairs = in_loop_pairs(M, N)
    assert all(emitted.per_pair[i] > 0 for i in pairs)
    assert all(stage_major.per_pair[i] > 0 for i in pairs)
    assert sim.wall_cycles <= sim2.wall_cycles
    assert emitted.hidden >= stage_major.hidden


def test_mat_scratch_chain_drains_overlap(tmp_path):
    """Producer (tinsert into the BF16 Mat scratch) and consumer (tstore) dbC loops: each
    drain overlaps the next tile's MAD inside both loops, and so does the hand-over between
    the loops: the consumer's first tile reads only the scratch rows of the producer's first
    tile, which its loop-carried FIX->M pair already orders, so the consumer loop no longer
    waits before it starts for the producer's last drain (InsertSync, ``Walker.defer``)."""
    compiled = ir.compile(dp.mat_scratch_chain(), tmp_path, dump_passes=False,
                          enable_pypto_l0c_double_buffer=True)
    inputs, golden = dp.mat_scratch_inputs()
    result = compiled.run(*inputs, config=RunConfig(sim_mode="fast"))
    sim = result.runs[0].sim
    assert sim.races == []
    np.testing.assert_allclose(result.outputs["out"], golden, rtol=1e-3, atol=1e-3)
    overlap = dp.drain_overlap(sim)
    assert overlap.pairs == 7
    assert [p > 0 for p in overlap.per_pair] == [True] * 7


def test_overlap_survives_inner_loop_exits(tmp_path_factory):
    _, sim, _, _ = dbc_run(tmp_path_factory, 448, 448)
    overlap = dp.drain_overlap(sim)
    pairs = loop_exit_pairs(448, 448)
    assert pairs == [3, 7]
    assert all(overlap.per_pair[i] > 0 for i in pairs)
