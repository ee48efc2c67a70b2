"""InsertSync on dbC grids of every size: race-free and exact, on a2a3 and a5, flag on and off.

The seam decisions of InsertSync (pre-loop sets issued ahead of unrelated drains,
``SyncPlan.pre_set_gap``; hazards into a loop left to its carried pairs, ``Walker.defer``)
apply wherever a double-buffered loop follows straight-line tiles: remainder tiles, tail
strips and outer-loop clones, whose number and buffers depend on the grid. Operands are
small integers, so the FP32 result is exact whatever the accumulation order: the simulated
output must equal numpy's bit for bit, with zero races under the happens-before checker
(``test_dbc.py`` runs the same grids on a2a3; the a5 runs are here).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from ptoc import ir
from ptoc.runtime import RunConfig

import dbc_programs as dp

PLATFORMS = ("a2a3sim", "a5sim")


def check_exact(M: int, N: int, K: int, dbc: bool, platform: str) -> None:
    compiled = ir.compile(dp.direct_store(M, N, K), None, dump_passes=False,
                          enable_pypto_l0c_double_buffer=dbc, platform=platform)
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    a = rng.integers(-3, 4, (M, K)).astype(np.float32)
    b = rng.integers(-3, 4, (K, N)).astype(np.float32)
    out = np.zeros((M, N), np.float32)
    result = compiled.run(a, b, out, config=RunConfig(sim_mode="fast"))
    assert result.races == [], f"{M}x{K}x{N} dbC={dbc} {platform}"
    np.testing.assert_array_equal(out, a @ b, err_msg=f"{M}x{K}x{N} dbC={dbc} {platform}")


@pytest.mark.no_roundtrip  # numerics and races only
@pytest.mark.parametrize("M,N", dp.DIRECT_STORE_GRIDS, ids=[f"{m}x{n}" for m, n in
                                                            dp.DIRECT_STORE_GRIDS])
def test_the_dbc_grids_on_a5(M, N):
    check_exact(M, N, 64, True, "a5sim")


@pytest.mark.no_roundtrip
@settings(derandomize=True, max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 32).map(lambda x: 16 * x), st.integers(1, 32).map(lambda x: 16 * x),
       st.sampled_from((32, 64, 128)), st.booleans(), st.sampled_from(PLATFORMS))
@example(320, 320, 64, True, "a2a3sim")
@example(320, 320, 64, True, "a5sim")
@example(448, 448, 128, True, "a2a3sim")
@example(512, 512, 32, True, "a5sim")
def test_random_grids_are_race_free_and_exact(M, N, K, dbc, platform):
    check_exact(M, N, K, dbc, platform)


@pytest.mark.no_roundtrip
@pytest.mark.parametrize("M,N,K,platform,tile", [(304, 448, 64, "a2a3sim", (80, 128, 64)),
                                                 (432, 480, 32, "a5sim", (144, 160, 32))])
def test_outer_stage_tails_that_overflow_l0a_serialise_only_the_outer_loop(tmp_path, M, N, K,
                                                                           platform, tile):
    """FP32 dbC grids whose outer pipeline's two clones each hoist their inner remainder
    extract above the inner loops: four A tiles co-live overflow L0A (304x64x448 a2a3:
    81920 B; 432x32x480 a5: 73728 > 65536 B). MemoryReuse sequences the outer loop's clones
    alone, so the inner double-buffered loop keeps its overlap; serialising every
    overflowing group at once overflowed L0C (a5: AllocationError) or needed PyPTO's
    accumulator stages back (a2a3, 19520 -> 14460 simulated cycles now). The chooser's
    answer is the compile's tile."""
    import json

    check_exact(M, N, K, True, platform)
    ir.compile(dp.direct_store(M, N, K), tmp_path, dump_passes=False, platform=platform,
               enable_pypto_l0c_double_buffer=True, check_dbc=False)
    decisions = json.loads((tmp_path / "report" / "decisions.json").read_text())["decisions"]
    [choice] = [d for d in decisions if d["kind"] == "tile_choice"]
    assert (choice["m"], choice["n"], choice["k"], choice["double_buffer_c"]) == (*tile, True)
    [serialised] = [d for d in decisions if d["kind"] == "capacity_serialise"]
    assert serialised["depth"] == 1 and serialised["requested"] == 2
