"""Bad programs and bad inputs: each is a PtocError naming the PTO line and the fix."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

from ptoc.errors import DeadlockError, FlagProtocolError, PtocError, SimulationError
from ptoc.sim import simulate
from ptoc.sim.examples import dbuf_matmul, two_acc_matmul

BF16 = ml_dtypes.bfloat16
BASE = dbuf_matmul(128, 256, 128, 64)


def _inputs(M=128, N=256, K=128):
    rng = np.random.default_rng(0)
    return {"arg0": rng.standard_normal((M, K)).astype(BF16),
            "arg1": rng.standard_normal((K, N)).astype(BF16),
            "arg2": np.zeros((M, N), np.float32)}


def _line_of(text, needle, nth=0):
    hits = [i for i, l in enumerate(text.splitlines()) if needle in l]
    return hits[nth]


def replace_line(text, needle, new, nth=0):
    lines = text.splitlines()
    i = _line_of(text, needle, nth)
    lines[i] = lines[i].replace(needle, new) if new is not None else ""
    return "\n".join(lines) + "\n", i + 1


def insert_after(text, needle, new, nth=0):
    lines = text.splitlines()
    i = _line_of(text, needle, nth)
    lines.insert(i + 1, "  " + new)
    return "\n".join(lines) + "\n", i + 2


def _op_line(text, needle):
    """The whole (stripped) line of the first op containing ``needle``."""
    return text.splitlines()[_line_of(text, needle)].strip()


def _at_next(mutated, needle):
    """The error belongs to the first ``needle`` op after the mutated line (its user)."""
    text, line = mutated
    lines = text.splitlines()
    return text, next(i + 1 for i in range(line, len(lines)) if needle in lines[i])


MUTATIONS = {
    # flag protocol and deadlock
    "wait_without_set": lambda t: insert_after(
        t, "pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]",
        "pto.wait_flag[<PIPE_MTE2>, <PIPE_FIX>, <EVENT_ID3>]"),
    "double_set": lambda t: insert_after(
        t, "pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]",
        "pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]"),
    "flag_left_set": lambda t: insert_after(
        t, "pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]",
        "pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID5>]"),
    "same_pipe_flag": lambda t: insert_after(
        t, "pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]",
        "pto.set_flag[<PIPE_M>, <PIPE_M>, <EVENT_ID5>]"),
    "flag_on_pipe_all": lambda t: insert_after(
        t, "pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]",
        "pto.set_flag[<PIPE_ALL>, <PIPE_M>, <EVENT_ID5>]"),
    # memory placement
    "tile_past_capacity": lambda t: replace_line(
        t, "%c = pto.alloc_tile addr = %addr0", "%c = pto.alloc_tile addr = %addr16384"),
    "misaligned_tile": lambda t: replace_line(
        t, "%a1_1 = pto.alloc_tile addr = %addr16384", "%a1_1 = pto.alloc_tile addr = %addr16"),
    # operands
    "matmul_k_mismatch": lambda t: replace_line(
        t, "pto.tmatmul ins(%a0_0, %b0_0", "pto.tmatmul ins(%a0_0, %b1x"),
    "acc_read_before_written": lambda t: replace_line(  # the first K step accumulates too
        t, _op_line(t, "pto.tmatmul ins(%a0_0"), _op_line(t, "pto.tmatmul.acc ins(%c, %a0_0")),
    "acc_in_place_mismatch": lambda t: replace_line(
        t, "pto.tmatmul.acc ins(%c, %a0_1", "pto.tmatmul.acc ins(%cx, %a0_1"),
    "tload_window_too_big": lambda t: _at_next(replace_line(
        t, "sizes = [%c128, %c64] : !pto.tensor_view<?x?xbf16> -> "
           "!pto.partition_tensor_view<128x64xbf16>",
        "sizes = [%c128, %c128] : !pto.tensor_view<?x?xbf16> -> "
        "!pto.partition_tensor_view<128x128xbf16>"), "pto.tload"),
    "window_outside_tensor": lambda t: replace_line(
        t, "offsets = [%mi, %ko]", "offsets = [%c64, %ko]"),
    "textract_outside_source": lambda t: replace_line(
        t, "pto.textract ins(%a1_0, %c0, %c0", "pto.textract ins(%a1_0, %c64, %c0"),
    "illegal_data_path": lambda t: replace_line(
        t, "outs(%a1_0 : !pto.tile_buf<loc=mat", "outs(%a0_0 : !pto.tile_buf<loc=left"),
    "barrier_before_set": lambda t: insert_after(
        t, "pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]",
        "pto.wait_flag[<PIPE_MTE3>, <PIPE_FIX>, <EVENT_ID2>]\n  pto.barrier <PIPE_ALL>\n"
        "  pto.set_flag[<PIPE_MTE3>, <PIPE_FIX>, <EVENT_ID2>]"),
}


def _extra_tiles(text):
    """Declare the extra tiles some mutations refer to (%b1x: a K-mismatched Right tile,
    %cx: a second accumulator)."""
    right = ("%b1x = pto.alloc_tile addr = %addr0 : !pto.tile_buf<loc=right, dtype=bf16, "
             "rows=32, cols=256, v_row=32, v_col=256, blayout=row_major, slayout=col_major, "
             "fractal=512, pad=0>")
    acc = ("%cx = pto.alloc_tile addr = %addr0 : !pto.tile_buf<loc=acc, dtype=f32, rows=64, "
           "cols=256, v_row=64, v_col=256, blayout=col_major, slayout=row_major, "
           "fractal=1024, pad=0>")
    lines = text.splitlines()
    i = _line_of(text, "%c = pto.alloc_tile")
    lines[i + 1:i + 1] = ["  " + right, "  " + acc]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_bad_program_reports_a_ptoc_error_with_its_line(name):
    text, line = MUTATIONS[name](_extra_tiles(BASE))
    with pytest.raises(PtocError) as info:
        simulate(text, _inputs())
    err = info.value
    assert err.loc is not None and err.loc.line > 0, err
    if name not in ("tile_past_capacity",):
        assert err.loc.line == line, (name, str(err))
    assert err.hint, f"{name}: no fix suggested in {err}"


def test_deadlock_names_blocked_pipes_and_flag_and_carries_a_timeline():
    text, line = MUTATIONS["wait_without_set"](BASE)
    with pytest.raises(DeadlockError) as info:
        simulate(text, _inputs())
    msg = str(info.value)
    assert "PIPE_FIX blocked" in msg and "PIPE_MTE2->PIPE_FIX EVENT_ID3" in msg
    tl = info.value.timeline
    assert tl is not None and not tl.complete and tl.instructions


def test_barrier_cannot_pass_a_wait_whose_set_is_issued_after_it():
    text, _ = MUTATIONS["barrier_before_set"](BASE)
    with pytest.raises(DeadlockError, match="PIPE_FIX blocked"):
        simulate(text, _inputs())


def test_double_set_and_flag_left_set_are_protocol_errors():
    text, line = MUTATIONS["double_set"](BASE)
    with pytest.raises(FlagProtocolError, match="set twice") as info:
        simulate(text, _inputs())
    assert info.value.loc.line == line
    text, line = MUTATIONS["flag_left_set"](BASE)
    with pytest.raises(FlagProtocolError, match="still set at kernel end") as info:
        simulate(text, _inputs())
    assert info.value.loc.line == line
    assert isinstance(info.value, SimulationError) and info.value.timeline is not None


def test_an_accumulation_into_bytes_nothing_wrote_is_refused():
    """Acc holds whatever an earlier kernel left (zeros in a fresh simulator): accumulating
    onto it would give a number no hardware run reproduces."""
    text, _ = MUTATIONS["acc_read_before_written"](BASE)
    with pytest.raises(PtocError, match=r"accumulates into %c \(128x256 f32\).*no earlier "
                                        r"instruction of this kernel wrote it"):
        simulate(text, _inputs())
    assert simulate(BASE, _inputs()).outputs  # the unmutated kernel starts with a tmatmul


def test_capacity_error_names_buffer_sizes():
    text, _ = MUTATIONS["tile_past_capacity"](BASE)
    with pytest.raises(PtocError, match=r"131072|Acc"):
        simulate(text, _inputs())


# -- bad inputs ------------------------------------------------------------------------------
def test_missing_unknown_and_mistyped_bindings():
    t = _inputs()
    with pytest.raises(PtocError, match="no value bound to kernel parameter %arg2"):
        simulate(BASE, {"arg0": t["arg0"], "arg1": t["arg1"]})
    with pytest.raises(PtocError, match="no parameter %argX"):
        simulate(BASE, {**t, "argX": t["arg0"]})
    with pytest.raises(PtocError, match="dtype float32.*bf16"):
        simulate(BASE, {**t, "arg0": t["arg0"].astype(np.float32)})
    with pytest.raises(PtocError, match="reaches element"):
        simulate(BASE, {**t, "arg1": t["arg1"][:64]})
    with pytest.raises(PtocError, match="3 parameters"):
        simulate(BASE, [t["arg0"]])


def test_positional_binding_and_percent_names_work():
    t = _inputs()
    a = simulate(BASE, [t["arg0"], t["arg1"], t["arg2"]]).outputs["arg2"]
    b = simulate(BASE, {"%arg0": t["arg0"], "%arg1": t["arg1"], "%arg2": t["arg2"]}).outputs["arg2"]
    np.testing.assert_array_equal(a, b)
    assert not t["arg2"].any(), "inputs are copied, never written"


def test_bad_mode_profile_and_target():
    with pytest.raises(PtocError, match="unknown simulation mode"):
        simulate(BASE, _inputs(), mode="turbo")
    with pytest.raises(PtocError, match="describes target a5"):
        simulate(BASE, _inputs(), profile="a5-sim")
    with pytest.raises(PtocError, match="unknown target"):
        simulate(BASE, _inputs(), target="a9")


def test_tiles_without_address_are_planned():
    text = re.sub(r"(%(a1_0|b1_1|a0_1) = pto.alloc_tile )addr = %addr\d+ ", r"\1", BASE)
    assert text.count("pto.alloc_tile :") == 3
    t = _inputs()
    res = simulate(text, t)
    assert res.races == [] and any("plan_memory" in n for n in res.notes)
    np.testing.assert_array_equal(res.outputs["arg2"], simulate(BASE, t).outputs["arg2"])


def test_level2_input_is_synchronised_by_insert_sync():
    level2 = "\n".join(l for l in BASE.splitlines()
                       if "set_flag" not in l and "wait_flag" not in l) + "\n"
    t = _inputs()
    res = simulate(level2, t)
    assert not res.serial and res.sync_level == 2 and res.races == []
    assert any("insert_sync" in n for n in res.notes)
    np.testing.assert_array_equal(res.outputs["arg2"], simulate(BASE, t).outputs["arg2"])
    serial = simulate(level2, t, mode="serial")
    assert serial.serial and serial.wall_cycles > res.wall_cycles
    np.testing.assert_array_equal(serial.outputs["arg2"], res.outputs["arg2"])
    starts = [r.start for r in serial.instructions if r.kind == "work"]
    ends = [r.end for r in serial.instructions if r.kind == "work"]
    assert all(s >= e for s, e in zip(starts[1:], ends))


def test_two_acc_kernel_without_second_flag_id_is_a_race_not_an_error():
    text = two_acc_matmul(same_address=True).replace("addr = %addr0 : !pto.tile_buf<loc=acc",
                                                     "addr = %addr0 : !pto.tile_buf<loc=acc", 1)
    rng = np.random.default_rng(0)
    t = {"arg0": rng.standard_normal((128, 64)).astype(BF16),
         "arg1": rng.standard_normal((64, 512)).astype(BF16),
         "arg2": np.zeros((128, 512), np.float32)}
    assert simulate(text, t).races == []


def test_counter_flag_mode_accepts_a_second_set_before_its_wait():
    text, _ = MUTATIONS["double_set"](BASE)
    text, _ = insert_after(text, "pto.wait_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]",
                           "pto.wait_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]", nth=1)
    with pytest.raises(FlagProtocolError, match="set twice"):
        simulate(text, _inputs())
    res = simulate(text, _inputs(), flag_mode="counter")
    assert res.races == []
    np.testing.assert_array_equal(res.outputs["arg2"], simulate(BASE, _inputs()).outputs["arg2"])
    with pytest.raises(PtocError, match="unknown flag mode"):
        simulate(BASE, _inputs(), flag_mode="bits")
