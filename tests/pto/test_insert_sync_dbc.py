"""Sync must realise the dbC overlap (issue 6 item 6; hw-model.md §3.3).

With two L0C accumulators used alternately, InsertSync gives each slot its own M->FIX and
FIX->M event ids, so the FIX drain of tile i runs while the cube computes tile i+1. With one
accumulator the FIX->M dependence forces MAD(i+1) to wait for the drain of tile i. Both
drain orders are evaluated: ``M0 S0 M1 S1`` (stage-major ping-pong) and ``M0 M1 S0 S1``
(CanonicalizeIOOrder's chunks). In the simulator's in-order per-pipe queues the two orders
give the same schedule once the flags are per slot, so both overlap; the tests pin that,
and the cycle counts of both orders.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptoc.pto import parse
from ptoc.pto.insert_sync import insert_sync
from ptoc.pto.sync_examples import dbc_matmul
from ptoc.sim import simulate
from oracle_data import ORACLE_ROOT

ORACLE = (ORACLE_ROOT / "dumps")


def overlaps(a, b) -> bool:
    return a.start < b.end and b.start < a.end


def run_dbc(order: str, accumulators: int, *, loop: bool = False, M=64, n=64, K=64, tiles=8):
    rng = np.random.default_rng(7)
    tensors = {"arg0": rng.standard_normal((M, K)).astype(np.float32),
               "arg1": rng.standard_normal((K, n * tiles)).astype(np.float32),
               "arg2": np.zeros((M, n * tiles), np.float32)}
    text = dbc_matmul(M, n, K, tiles, order=order, accumulators=accumulators, loop=loop)
    result = insert_sync(parse(text))
    timed = simulate(result.module, tensors)
    assert timed.races == []
    golden = tensors["arg0"].astype(np.float64) @ tensors["arg1"].astype(np.float64)
    np.testing.assert_allclose(timed.outputs["arg2"], golden, rtol=1e-4, atol=1e-4)
    mads, drains = timed.on_pipe("M"), timed.on_pipe("FIX")
    assert len(mads) == len(drains) == tiles
    return timed, mads, drains


@pytest.mark.parametrize("loop", [False, True])
@pytest.mark.parametrize("order", ["MSMS", "MMSS"])
def test_two_accumulators_drain_of_tile_i_overlaps_mad_of_tile_i_plus_1(order, loop):
    _, mads, drains = run_dbc(order, 2, loop=loop)
    for i in range(len(mads) - 1):
        assert overlaps(drains[i], mads[i + 1]), (i, drains[i], mads[i + 1])


@pytest.mark.parametrize("loop", [False, True])
def test_one_accumulator_drain_and_next_mad_never_overlap(loop):
    # (only M0 S0 M1 S1 is a valid order with one accumulator)
    _, mads, drains = run_dbc("MSMS", 1, loop=loop)
    for i in range(len(mads) - 1):
        assert drains[i].end <= mads[i + 1].start
        assert not overlaps(drains[i], mads[i + 1])


@pytest.mark.parametrize("shape", [dict(M=64, n=64, K=64), dict(M=128, n=128, K=64)])
def test_dbc_is_faster_and_both_orders_cost_the_same(shape):
    one = run_dbc("MSMS", 1, **shape)[0].wall_cycles
    msms = run_dbc("MSMS", 2, **shape)[0].wall_cycles
    mmss = run_dbc("MMSS", 2, **shape)[0].wall_cycles
    assert msms == mmss < one
    assert one - msms > 0.2 * one           # most of the drain is hidden


def test_recorded_cycles_of_both_orders():
    """Pins the simulated cycles (a2a3 default profile, 64x64 f32 tiles, K=64, 8 tiles) so a
    change in sync placement that loses or gains overlap shows up."""
    cycles = {name: round(run_dbc(order, accs)[0].wall_cycles, 1)
              for name, order, accs in (("M0 S0 M1 S1", "MSMS", 2), ("M0 M1 S0 S1", "MMSS", 2),
                                        ("one accumulator", "MSMS", 1))}
    assert cycles == {"M0 S0 M1 S1": 5906.6, "M0 M1 S0 S1": 5906.6, "one accumulator": 7845.6}


@pytest.mark.skipif(not (ORACLE / "matmul_256x64x256_bf16_dbc_on").exists(),
                    reason="oracle dumps not available")
def test_pypto_dbc_kernel_overlaps_after_insert_sync():
    module = parse((ORACLE / "matmul_256x64x256_bf16_dbc_on" / "kernel.pto").read_text())
    rng = np.random.default_rng(3)
    bf16 = ml_dtypes.bfloat16
    tensors = {"arg0": rng.standard_normal((256, 64)).astype(bf16),
               "arg1": rng.standard_normal((64, 256)).astype(bf16),
               "arg2": np.zeros((256, 256), np.float32)}
    timed = simulate(insert_sync(module).module, tensors)
    assert timed.races == []
    mads, drains = timed.on_pipe("M"), timed.on_pipe("FIX")
    assert len(mads) == len(drains) == 4
    # chunks of M0 M1 S0 S1: the drain of tile 0 runs while the cube computes tile 1 or 2
    assert overlaps(drains[0], mads[1]) or overlaps(drains[0], mads[2])
    assert any(overlaps(d, m) for d in drains for m in mads)


@pytest.mark.parametrize("order", ["MSMS", "MMSS"])
def test_one_event_id_per_pipe_pair_costs_cycles_but_stays_correct(order):
    """hw-model.md §3.3: with one id for both slots, pairs fall back to PIPE_ALL barriers;
    results stay correct and the kernel gets slower. M0 S0 M1 S1 then loses drain/MAD
    overlap; M0 M1 S0 S1 keeps it (both MADs of a chunk are issued before the barrier that
    precedes the second drain) but still pays for the barriers."""
    rng = np.random.default_rng(7)
    tensors = {"arg0": rng.standard_normal((64, 64)).astype(np.float32),
               "arg1": rng.standard_normal((64, 512)).astype(np.float32),
               "arg2": np.zeros((64, 512), np.float32)}
    module = parse(dbc_matmul(64, 64, 64, 8, order=order, accumulators=2))
    starved = insert_sync(module, event_ids=1)
    assert starved.fallbacks and all(n.kind == "pipe_all_fallback" for n in starved.fallbacks)
    timed = simulate(starved.module, tensors)
    serial = simulate(module, tensors, mode="serial")
    assert timed.races == []
    np.testing.assert_array_equal(timed.outputs["arg2"], serial.outputs["arg2"])
    full = simulate(insert_sync(module).module, tensors)
    assert timed.wall_cycles > full.wall_cycles

    def overlapping(res) -> int:
        mads, drains = res.on_pipe("M"), res.on_pipe("FIX")
        return sum(overlaps(drains[i], mads[i + 1]) for i in range(len(mads) - 1))
    assert overlapping(full) == 7
    assert overlapping(timed) < 7 if order == "MSMS" else overlapping(timed) == 7


def test_event_id_pool_is_checked():
    from ptoc.pto.insert_sync import SyncInsertionError
    with pytest.raises(SyncInsertionError, match="event_ids=9"):
        insert_sync(dbc_matmul(), event_ids=9)


def test_id_starvation_on_a_long_program_still_converges_and_is_correct():
    module = parse(dbc_matmul(64, 32, 64, 32, order="MMSS", accumulators=2))
    starved = insert_sync(module, event_ids=1)
    assert starved.stats["kernel"]["max_ids_per_pipe_pair"] == 1
    assert starved.stats["kernel"]["barrier_all"] > 0
    rng = np.random.default_rng(1)
    tensors = {"arg0": rng.standard_normal((64, 64)).astype(np.float32),
               "arg1": rng.standard_normal((64, 1024)).astype(np.float32),
               "arg2": np.zeros((64, 1024), np.float32)}
    timed = simulate(starved.module, tensors)
    assert timed.races == []
    np.testing.assert_array_equal(timed.outputs["arg2"],
                                  simulate(module, tensors, mode="serial").outputs["arg2"])
