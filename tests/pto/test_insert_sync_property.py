"""InsertSync's guarantee, checked with the simulator on many Level-2 programs: the Level-3
output has no data race under the happens-before checker, never deadlocks (the simulator
raises on a deadlock or an unbalanced flag), and computes exactly what a serial run of the
same Level-2 program computes.

Programs: the PyPTO oracle ``kernel.pto`` dumps, the hand-written Level-3 examples of
``ptoc.sim.examples`` with their sync stripped, the ``ptoc.pto.sync_examples`` generators
(dbC matmuls in both drain orders, K loop, vector chunks with static and dynamic trip
counts) and random programs over every pipe, with and without loops and branches.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptoc.pto import parse, print_module, verify
from ptoc.pto.insert_sync import insert_sync, strip_sync
from ptoc.pto import sync_examples as ex
from ptoc.sim import examples as sim_examples
from ptoc.sim import simulate
from oracle_data import ORACLE_ROOT

ORACLE = (ORACLE_ROOT / "dumps")
BF16 = ml_dtypes.bfloat16


def check(level2, tensors):
    """insert_sync + simulate: the output round-trips and verifies, has zero races, does not
    deadlock, and its outputs equal the serial run's."""
    module = parse(level2) if isinstance(level2, str) else level2
    result = insert_sync(module)
    assert parse(print_module(result.module)) == result.module
    verify(result.module)
    timed = simulate(result.module, tensors)
    serial = simulate(module, tensors, mode="serial")
    assert timed.races == [], "\n".join(map(str, timed.races))
    assert not timed.serial
    for name, value in serial.outputs.items():
        np.testing.assert_array_equal(timed.outputs[name], value, err_msg=name)
    return result, timed, serial


def matmul_tensors(M, K, N, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return {"arg0": rng.standard_normal((M, K)).astype(dtype),
            "arg1": rng.standard_normal((K, N)).astype(dtype),
            "arg2": np.zeros((M, N), np.float32)}


# ---------------------------------------------------------------------------------------------
# PyPTO oracle kernels
# ---------------------------------------------------------------------------------------------

ORACLE_CASES = sorted(p.parent.name for p in ORACLE.glob("*/kernel.pto"))


@pytest.mark.skipif(not ORACLE.exists(), reason="oracle dumps not available")
@pytest.mark.parametrize("case", ORACLE_CASES)
def test_oracle_kernels(case):
    module = parse((ORACLE / case / "kernel.pto").read_text())
    dims = case.split("_")[1]
    M, K, N = map(int, dims.split("x"))
    dtype = np.float32 if "fp32" in case else BF16
    tensors = matmul_tensors(M, K, N, dtype)
    if "ptoas" in case:
        # no addresses (ptoas plans them). Unplanned, every tile of a space aliases the
        # others: conservative but still correct once the planner places the tiles
        from ptoc.pto.planner import plan_memory
        planned = plan_memory(module, "a2a3")
        blind = simulate(plan_memory(insert_sync(module).module, "a2a3"), tensors)
        assert blind.races == []
        module = planned
    result, timed, serial = check(module, tensors)
    assert result.fallbacks == []
    assert timed.wall_cycles < serial.wall_cycles


# ---------------------------------------------------------------------------------------------
# hand-written Level-3 kernels, re-synchronised
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [dict(M=128, N=256, K=256, k=64),
                                   dict(M=128, N=256, K=256, k=64, m=64, n=128),
                                   dict(M=64, N=64, K=512, k=64)])
def test_stripped_double_buffered_kloop_is_at_least_as_fast_as_hand_sync(shape):
    hand_text = sim_examples.dbuf_matmul(**shape)
    tensors = matmul_tensors(shape["M"], shape["K"], shape["N"], BF16)
    result, timed, _ = check(strip_sync(parse(hand_text)), tensors)
    hand = simulate(hand_text, tensors)
    assert result.fallbacks == []
    assert timed.wall_cycles <= hand.wall_cycles * 1.01


@pytest.mark.parametrize("same_address", [False, True])
def test_stripped_two_accumulator_kernel(same_address):
    hand_text = sim_examples.two_acc_matmul(128, 128, 64, 4, same_address=same_address)
    tensors = matmul_tensors(128, 64, 512, BF16)
    result, timed, _ = check(strip_sync(parse(hand_text)), tensors)
    assert timed.wall_cycles <= simulate(hand_text, tensors).wall_cycles


# ---------------------------------------------------------------------------------------------
# generated programs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("order,accumulators", [("MSMS", 1), ("MSMS", 2), ("MMSS", 2)])
@pytest.mark.parametrize("loop", [False, True])
def test_dbc_matmuls(order, accumulators, loop):
    text = ex.dbc_matmul(64, 64, 64, 6, order=order, accumulators=accumulators, loop=loop)
    result, _, _ = check(text, matmul_tensors(64, 64, 384, np.float32))
    assert result.fallbacks == []


@pytest.mark.parametrize("K,k", [(128, 64), (256, 64), (512, 128)])
def test_kloop_matmul(K, k):
    result, _, _ = check(ex.kloop_matmul(64, 64, K, k), matmul_tensors(64, K, 64, BF16))
    assert result.fallbacks == []


def _vec_tensors(rows=64, cols=64, seed=0):
    rng = np.random.default_rng(seed)
    return {"arg0": rng.standard_normal((rows, cols)).astype(np.float32),
            "arg1": rng.standard_normal((rows, cols)).astype(np.float32),
            "arg2": np.zeros((rows, cols), np.float32)}


@pytest.mark.parametrize("slots", [1, 2, 4])
def test_vector_chunks(slots):
    result, _, _ = check(ex.vector_chunks(64, 64, 16, slots=slots), _vec_tensors())
    assert result.fallbacks == []


@pytest.mark.parametrize("rows", [0, 32, 64])
def test_vector_chunks_with_a_dynamic_trip_count(rows):
    check(ex.vector_chunks(64, 64, 16, slots=2, trips="%n"), {**_vec_tensors(), "n": rows})


def _random_tensors(seed):
    rng = np.random.default_rng(seed)
    shape = (ex.RANDOM_ROWS, 4 * ex.RANDOM_COLS)
    return {"arg0": rng.standard_normal(shape).astype(np.float32),
            "arg1": rng.standard_normal(shape).astype(np.float32), "n": seed % 4}


@pytest.mark.parametrize("seed", range(120))
def test_random_straight_line_programs(seed):
    result, _, _ = check(ex.random_program(seed, ops=30, control=False), _random_tensors(seed))
    assert result.fallbacks == []       # straight-line code never needs PIPE_ALL here


@pytest.mark.parametrize("seed", range(1000, 1160))
def test_random_programs_with_loops_and_branches(seed):
    result, _, _ = check(ex.random_program(seed, ops=30, control=True), _random_tensors(seed))
    assert result.fallbacks == []       # rendezvous pairs, not PIPE_ALL, keep flags bits


@pytest.mark.parametrize("seed", [s for s in range(2000, 2200)
                                  if "%n step" in ex.random_program(s, ops=30)][:40])
def test_one_synchronised_program_is_correct_for_every_run_time_trip_count(seed):
    module = parse(ex.random_program(seed, ops=30))
    synced = insert_sync(module).module
    for n in range(4):
        tensors = {**_random_tensors(seed), "n": n}
        timed = simulate(synced, tensors)
        serial = simulate(module, tensors, mode="serial")
        assert timed.races == []
        np.testing.assert_array_equal(timed.outputs["arg1"], serial.outputs["arg1"])


@pytest.mark.parametrize("seed", range(3000, 3030))
def test_random_programs_nested_three_deep(seed):
    text = ex.random_program(seed, ops=45, depth=3)
    for n in (0, 3, 5):
        check(text, {**_random_tensors(seed), "n": n})
