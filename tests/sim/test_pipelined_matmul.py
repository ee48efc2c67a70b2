"""The hand-written double-buffered K-loop matmul (Level 3): numerics, races, schedule."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from ptoc.backend import Pipe, get_profile
from ptoc.errors import DeadlockError, FlagProtocolError
from ptoc.sim import simulate

from ptoc.sim.examples import dbuf_matmul, delete_lines, sync_pairs, two_acc_matmul

BF16 = ml_dtypes.bfloat16


def _inputs(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(BF16)
    b = rng.standard_normal((K, N)).astype(BF16)
    return {"arg0": a, "arg1": b, "arg2": np.zeros((M, N), np.float32)}


def golden_kstep(a, b, k):
    """pto-isa order written out independently: per k-step a fresh fp32 partial summed in
    increasing k, added once to the running fp32 accumulator."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k0 in range(0, a.shape[1], k):
        part = np.zeros_like(c)
        for kk in range(k0, k0 + k):
            part = part + np.outer(a32[:, kk], b32[kk, :]).astype(np.float32)
        c = c + part
    return c


@pytest.mark.parametrize("shape", [(128, 256, 256, 64), (64, 128, 512, 128), (32, 64, 128, 32)])
def test_dbuf_matmul_equals_numpy_golden_with_no_races(shape):
    M, N, K, k = shape
    t = _inputs(M, N, K)
    res = simulate(dbuf_matmul(M, N, K, k), t)
    assert res.races == []
    np.testing.assert_array_equal(res.outputs["arg2"], golden_kstep(t["arg0"], t["arg1"], k))
    ref = t["arg0"].astype(np.float64) @ t["arg1"].astype(np.float64)
    np.testing.assert_allclose(res.outputs["arg2"], ref, rtol=1e-5, atol=1e-4)


def test_fast_mode_is_float64_rounded_once():
    t = _inputs(128, 256, 256)
    res = simulate(dbuf_matmul(), t, mode="fast")
    ref = (t["arg0"].astype(np.float64) @ t["arg1"].astype(np.float64))
    # fast mode rounds each k-step's acc + partial once to fp32
    np.testing.assert_allclose(res.outputs["arg2"], ref, rtol=1e-6, atol=1e-5)
    assert res.races == []


def test_dbuf_matmul_wall_matches_hand_schedule():
    """MTE2-bound steady state: the loads run back to back, so
    wall = t0 + steps*(tA + tB) + extract(A + B) of the last step + MAD + drain,
    where t0 = 8 is the issue slot of the first tload (5 pre-sets and two waits before it)."""
    M, N, K, k = 128, 256, 256, 64
    prof = get_profile("a2a3-device")
    gm_bw = 135.0 * 2**30 / 1.85e9                  # pto-isa flat GM->L1 (hw-model.md §2.3)
    t_a, t_b = M * k * 2 / gm_bw, k * N * 2 / gm_bw
    scale = (16384 / 129.7 + 32768 / 85.4) / 415.5  # sweep rescaled to the pto-isa GEMM step
    e_a, e_b = M * k * 2 / (129.7 * scale), k * N * 2 / (85.4 * scale)
    mad = 21 + math.ceil(M / 16) * math.ceil(k / 16) * math.ceil(N / 16)
    drain = 164 + M * max(4.45, 4 * N / 118.0)      # odd(ceil(256/8)) - 1 = 0
    steps = K // k
    assert t_a + t_b > e_a + e_b and t_a + t_b > mad   # MTE2-bound as assumed above
    expected_wall = 8 + steps * (t_a + t_b) + (e_a + e_b) + mad + drain
    res = simulate(dbuf_matmul(M, N, K, k), _inputs(M, N, K), profile=prof)
    assert res.wall_cycles == pytest.approx(expected_wall, abs=1e-6)
    loads = res.on_pipe(Pipe.PIPE_MTE2)
    durations = [t_a, t_b] * steps
    for i, rec in enumerate(loads):
        assert rec.start == pytest.approx(8 + sum(durations[:i]))
    # every tload starts exactly when the previous one ends (MTE2 never idles)
    for prev, nxt in zip(loads, loads[1:]):
        assert nxt.start == pytest.approx(prev.end)
    mads = res.on_pipe("M")
    extracts = res.on_pipe("MTE1")
    for j, m in enumerate(mads):
        assert m.start == pytest.approx(extracts[2 * j + 1].end)       # waits MTE1 -> M
        assert extracts[2 * j].start == pytest.approx(loads[2 * j + 1].end)  # waits MTE2 -> MTE1
    assert res.binding_pipe is Pipe.PIPE_MTE2
    assert res.pipe_busy[Pipe.PIPE_M] == pytest.approx(steps * mad)


def test_serial_mode_is_slower_and_bit_identical():
    t = _inputs(128, 256, 256)
    timed = simulate(dbuf_matmul(), t)
    serial = simulate(dbuf_matmul(), t, mode="serial")
    np.testing.assert_array_equal(timed.outputs["arg2"], serial.outputs["arg2"])
    assert serial.wall_cycles > timed.wall_cycles
    busy = sum(serial.pipe_busy.values())
    assert serial.wall_cycles == pytest.approx(busy + 8, abs=1e-6)   # first tload issues at 8


# -- deleting each set/wait pair ------------------------------------------------------------
_TEXT = dbuf_matmul(128, 512, 256, 64, n=256)     # two output tiles share the L0C accumulator
_SHAPE = (128, 512, 256)
_PAIRS = sync_pairs(_TEXT)


def test_pairing_covers_every_sync_line():
    lines = _TEXT.splitlines()
    sync_lines = {i for i, l in enumerate(lines) if "set_flag" in l or "wait_flag" in l}
    assert {i for pair in _PAIRS for i in pair} == sync_lines


#: Deletions whose missing RAW flag lets the consumer read before the producer commits
#: under the default profile. (Deleting MTE2->MTE1 #1 is reported as a RAW race too, but the
#: slot-1 extract happens to start after its load lands, so the numbers survive.)
_WRONG_NUMBERS = ("<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>", "<PIPE_MTE1>, <PIPE_M>, <EVENT_ID1>",
                  "<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>")


@pytest.mark.parametrize("pair", _PAIRS, ids=lambda p: f"line{p[0]}-{p[1]}")
def test_deleting_a_flag_pair_is_a_race_or_a_deadlock(pair):
    text = delete_lines(_TEXT, pair)
    t = _inputs(*_SHAPE)
    good = simulate(_TEXT, t).outputs["arg2"]
    line = _TEXT.splitlines()[pair[0]]
    in_loop = line.startswith("    ")
    try:
        res = simulate(text, t)
    except DeadlockError as exc:
        assert "deadlock" in str(exc) and "blocked" in str(exc)
        assert exc.timeline is not None and not exc.timeline.complete
        assert not in_loop, "only the pre-loop/post-loop pairs should starve a wait"
        return
    except FlagProtocolError as exc:
        # the unsynchronised MAD runs ahead and re-sets its release flag early; the partial
        # timeline carries the RAW races that explain why
        assert exc.timeline.races and {r.kind for r in exc.timeline.races} == {"RAW"}
        return
    assert res.races, f"deleting {line.strip()} went unreported"
    kinds = {r.kind for r in res.races}
    if any(key in line for key in _WRONG_NUMBERS):
        assert "RAW" in kinds
        assert not np.array_equal(res.outputs["arg2"], good)


def test_races_do_not_depend_on_the_timing_profile():
    lines = _TEXT.splitlines()
    pair = next(p for p in _PAIRS if "PIPE_MTE1>, <PIPE_MTE2" in lines[p[0]]
                and lines[p[0]].startswith("    "))
    text = delete_lines(_TEXT, pair)
    t = _inputs(*_SHAPE)
    found = [{(r.kind, r.buffer, r.first_seq, r.second_seq) for r in
              simulate(text, t, profile=p).races} for p in ("a2a3-device", "a2a3-ptoisa")]
    assert found[0] and found[0] == found[1]


# -- two accumulators ------------------------------------------------------------------------
def _overlaps(a, b):
    return a[0] < b[1] and b[0] < a[1]


def test_two_accumulators_at_distinct_addresses_overlap_drain_and_mad():
    t = _inputs(128, 512, 64)
    res = simulate(two_acc_matmul(same_address=False), t)
    assert res.races == []
    ref = t["arg0"].astype(np.float64) @ t["arg1"].astype(np.float64)
    np.testing.assert_allclose(res.outputs["arg2"], ref, rtol=1e-5, atol=1e-4)
    drains = res.busy_intervals("FIX")
    mads = res.busy_intervals("M")
    assert len(drains) == 4 and len(mads) == 4
    # the drain of tile i runs while the MAD of tile i + 1 computes
    assert _overlaps(drains[0], mads[1])
    assert sum(_overlaps(d, m) for d in drains for m in mads) >= 2


def test_two_accumulators_at_one_address_serialise():
    t = _inputs(128, 512, 64)
    dbc = simulate(two_acc_matmul(same_address=False), t)
    one = simulate(two_acc_matmul(same_address=True), t)
    assert one.races == []
    np.testing.assert_array_equal(one.outputs["arg2"], dbc.outputs["arg2"])
    drains, mads = one.busy_intervals("FIX"), one.busy_intervals("M")
    assert not any(_overlaps(d, m) for d in drains for m in mads)
    for (d_start, d_end), (m_start, _) in zip(drains, mads[1:]):
        assert m_start >= d_end          # the next MAD waits for the previous drain
    assert one.wall_cycles > dbc.wall_cycles


def test_shared_address_with_dbc_flags_is_a_race():
    """One address but per-slot ids: the flags no longer protect the bytes."""
    text = two_acc_matmul(same_address=False).replace("addr = %addr65536", "addr = %addr0")
    t = _inputs(128, 512, 64)
    res = simulate(text, t)
    kinds = {r.kind for r in res.races}
    assert res.races and kinds & {"WAR", "WAW"}
    assert all(r.buffer == "Acc" for r in res.races)


def test_three_sync_variants_same_numbers_only_per_slot_ids_overlap():
    """hw-model.md §6.5 item 4: precise per-slot ids, a single shared id, PIPE_ALL barriers."""
    t = _inputs(128, 512, 64)
    per_slot = simulate(two_acc_matmul(), t)
    shared = simulate(two_acc_matmul(ids=1), t)
    barrier = simulate(two_acc_matmul(sync="barrier"), t)
    for res in (shared, barrier):
        assert res.races == []
        np.testing.assert_array_equal(res.outputs["arg2"], per_slot.outputs["arg2"])
        assert not any(_overlaps(d, m) for d in res.busy_intervals("FIX")
                       for m in res.busy_intervals("M"))
    assert per_slot.wall_cycles < shared.wall_cycles <= barrier.wall_cycles


def test_drain_emission_order_does_not_change_a_flag_synchronised_schedule():
    """With per-slot flags the queues are per pipe and the scalar unit never blocks, so
    M0 M1 S0 S1 and M0 S0 M1 S1 give the same per-pipe timeline (up to issue slots)."""
    t = _inputs(128, 512, 64)
    msms = simulate(two_acc_matmul(order="MSMS"), t)
    mmss = simulate(two_acc_matmul(order="MMSS"), t)
    assert mmss.races == []
    np.testing.assert_array_equal(mmss.outputs["arg2"], msms.outputs["arg2"])
    assert mmss.wall_cycles == pytest.approx(msms.wall_cycles, abs=4)
    assert _overlaps(mmss.busy_intervals("FIX")[0], mmss.busy_intervals("M")[1])
