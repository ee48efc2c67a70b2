"""InsertSync at the seam between a straight-line tile and a double-buffered loop.

The remainder tile drains accumulator 0 (FIX reads it) right before a dbC loop whose first
MAD writes accumulator 1 and whose second MAD writes accumulator 0 again. Two decisions
let the loop's first MAD overlap that drain:

* the pre-loop set of the loop's carried FIX->M pair for accumulator 1 is issued ahead of
  the remainder's drain (``SyncPlan.pre_set_gap``: it moves back over source-pipe work that
  does not touch what its consumer touches), so the first trip's MAD on accumulator 1 does
  not wait for a drain of accumulator 0;
* the hazard drain(remainder) -> MAD on accumulator 0 is ordered by the carried pair of
  accumulator 0, whose pre-loop set is queued on FIX after the drain and waited right
  before that MAD, instead of a wait before the loop that would hold back the whole first
  trip (``Walker.defer``).

Where no carried pair orders the hazard (the loop touches accumulator 0 before any FIX->M
wait), the wait before the loop stays. Every program is simulated against its serial run
(no race, flags balanced, same numbers) for constant and run-time trip counts, zero
included; with zero trips the tail's MAD on accumulator 0 is ordered after the remainder's
drain through that pair's pre-loop set and post-loop wait (the loop's consumer never runs).
"""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.pto import parse
from ptoc.pto.insert_sync import insert_sync
from ptoc.pto.sync_examples import remainder_then_dbc_loop
from test_insert_sync import run_checked, sync_lines

N_BLOCK = 64


def tensors(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {"arg0": rng.integers(-3, 4, (64, 64)).astype(np.float32),
            "arg1": rng.integers(-3, 4, (64, 8 * N_BLOCK)).astype(np.float32),
            "arg2": np.zeros((64, 8 * N_BLOCK), np.float32)}


def before_loop(lines: list[str]) -> list[str]:
    """The sync lines between the remainder's drain and the loop."""
    return lines[remainder_drain(lines) + 1:lines.index("scf.for")]


def remainder_drain(lines: list[str]) -> int:
    return next(i for i, s in enumerate(lines) if s.startswith("pto.tstore"))


def fix_to_m(lines: list[str], kind: str) -> list[str]:
    return [s for s in lines if s.startswith(f"pto.{kind}[<FIX>, <M>")]


def test_the_loop_starts_without_waiting_for_the_remainders_drain():
    lines = sync_lines(insert_sync(parse(remainder_then_dbc_loop())).module)
    assert fix_to_m(before_loop(lines), "wait_flag") == []
    # one FIX->M pre-loop set (accumulator 1's pair) is issued before the remainder's drain,
    # the other (accumulator 0's) after it
    assert len(fix_to_m(lines[:remainder_drain(lines)], "set_flag")) == 1
    assert len(fix_to_m(before_loop(lines), "set_flag")) == 1


@pytest.mark.parametrize("trips", [1, 2, 3])
def test_constant_trip_counts_are_race_free_and_exact(trips):
    module = insert_sync(parse(remainder_then_dbc_loop(trips=trips))).module
    run_checked(module, tensors(trips))


@pytest.mark.parametrize("trips", [0, 1, 2, 3])
def test_one_program_is_correct_for_every_run_time_trip_count(trips):
    """The loop may run zero times: no wait before the loop is needed for it either (its
    consumer then never runs, and the tail's MAD gets the remainder's drain through the
    carried pair's pre-loop set and post-loop wait)."""
    module = insert_sync(parse(remainder_then_dbc_loop(trips="%n"))).module
    assert fix_to_m(before_loop(sync_lines(module)), "wait_flag") == []
    run_checked(module, {**tensors(trips), "n": N_BLOCK * (1 + 2 * trips)})


@pytest.mark.parametrize("trips", [0, 1, 3])
def test_a_consumer_before_every_carried_wait_keeps_the_pre_loop_wait(trips):
    """The loop adds into accumulator 0 (the buffer the remainder drains) before its only
    carried FIX->M pair (accumulator 1's) is waited: no carried pair orders that first
    write, so the remainder's drain is waited for before the loop."""
    module = insert_sync(parse(remainder_then_dbc_loop(trips="%n", accumulate=True))).module
    assert len(fix_to_m(before_loop(sync_lines(module)), "wait_flag")) == 1
    run_checked(module, {**tensors(trips), "n": N_BLOCK * (1 + trips)})
