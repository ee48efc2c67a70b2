"""``scf.while`` in PTO text: parse -> print is the identity, the verifier keeps the
condition region scalar, InsertSync syncs the body as a loop of unknown trip count (zero
included), and the simulator runs the trips the condition decides."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.errors import PtocError, PtoError
from ptoc.pto import ConditionOp, WhileOp, parse, print_module, verify
from ptoc.pto.insert_sync import insert_sync
from ptoc.sim import simulate
from test_insert_sync import VEC as VEC_TYPE, load, run_checked, store, vec_kernel, vop, xy

WHILE = """
%r = scf.while (%b = %c0) : (index) -> (index) {
  %go = arith.cmpi slt, %b, %n : index
  scf.condition(%go) %b : index
} do {
^bb0(%i: index):
  {load}
  {op}
  {store}
  %next = arith.addi %i, %c1 : index
  scf.yield %next : index
}
"""


def while_kernel(cond_extra: str = "") -> str:
    body = WHILE.replace("{load}", load("t0", "%wx0")).replace(
        "{op}", vop("tabs", "t1", "t0")).replace("{store}", store("t1", "%wy0"))
    body = body.replace("  %go =", cond_extra + "  %go =") if cond_extra else body
    return vec_kernel(body, params=", %n: index")


def test_parse_print_round_trip():
    module = parse(while_kernel())
    loop = next(op for op in module.kernel().body if isinstance(op, WhileOp))
    assert [a.name for a, _ in loop.iter_args] == ["b"] and [a.name for a in loop.body_args] == ["i"]
    assert isinstance(loop.condition, ConditionOp) and loop.results[0].name == "r"
    text = print_module(module)
    assert "%r = scf.while (%b = %c0) : (index) -> (index) {" in text
    assert "} do {" in text and "^bb0(%i: index):" in text
    assert parse(text) == module
    verify(module)


def test_a_while_without_carries():
    body = """
scf.while : () -> () {
  %go = arith.cmpi slt, %c0, %n : index
  scf.condition(%go)
} do {
  scf.yield
}
"""
    module = parse(vec_kernel(body, params=", %n: index"))
    assert parse(print_module(module)) == module
    verify(module)


@pytest.mark.parametrize("text,phrase", [
    (while_kernel().replace("  scf.condition(%go) %b : index\n", ""), "must end with scf.condition"),
    (while_kernel().replace("  scf.yield %next : index\n", ""), "must end with scf.yield"),
    (while_kernel().replace(": (index) -> (index)", ": (index) -> (i32)"), "differ from its result"),
], ids=["no_condition", "no_yield", "types"])
def test_parse_errors(text, phrase):
    with pytest.raises(PtoError, match=phrase):
        parse(text)


@pytest.mark.parametrize("text,phrase", [
    (while_kernel(cond_extra="  " + load("t0", "%wx1") + "\n"), "in the condition region"),
    (while_kernel().replace("scf.condition(%go) %b : index", "scf.condition(%b) %b : index"),
     "has type index"),
    (while_kernel().replace("^bb0(%i: index):", "^bb0(%i: index, %j: index):"),
     "body takes 2 argument"),
], ids=["pipe_op_in_condition", "condition_not_i1", "body_arg_type"])
def test_verifier_errors(text, phrase):
    with pytest.raises(PtoError, match=phrase):
        verify(parse(text))


def test_insert_sync_treats_the_body_as_a_loop_of_unknown_trips():
    """As a run-time-bounded scf.for: the loop-carried WARs get a pre-loop set, a wait at
    the top of the body and a post-loop wait, so the flags balance for any trip count."""
    result = insert_sync(parse(while_kernel()))
    lines = [ln.strip() for ln in print_module(result.module).splitlines()]
    head = next(i for i, ln in enumerate(lines) if "scf.while" in ln)
    end = lines.index("}", lines.index("} do {"))
    def flags(part):
        return [ln.replace("<PIPE_", "<").replace("EVENT_ID", "") for ln in part
                if ln.startswith(("pto.set_flag", "pto.wait_flag"))]
    assert flags(lines[:head]) == ["pto.set_flag[<V>, <MTE2>, <0>]",
                                   "pto.set_flag[<MTE3>, <V>, <0>]"]
    inside = flags(lines[head:end])
    assert inside[0] == "pto.wait_flag[<V>, <MTE2>, <0>]" and \
        inside[-1] == "pto.set_flag[<MTE3>, <V>, <0>]"
    assert not flags(lines[head:lines.index("} do {")])     # nothing in the condition region
    assert flags(lines[end:]) == ["pto.wait_flag[<V>, <MTE2>, <0>]",
                                  "pto.wait_flag[<MTE3>, <V>, <0>]"]
    assert result.stats["k"]["carried"] == 2


@pytest.mark.parametrize("trips", [0, 1, 2, 5])
def test_the_synced_loop_runs_race_free_for_every_trip_count(trips):
    result = insert_sync(parse(while_kernel()))
    tensors = {**xy(trips), "n": trips}
    timed = run_checked(result.module, tensors)
    want = tensors["y"].copy()
    if trips:
        want[:, :16] = np.abs(tensors["x"][:, :16])
    np.testing.assert_array_equal(timed.outputs["y"], want)


def test_a_condition_on_tile_data_is_refused_by_the_simulator():
    """The trip count must be known while the instruction stream is built: a carry set
    from a value the body reads out of a tile cannot steer the loop (an error, never a
    guess)."""
    read = ("%e = pto.tgetval ins(%t1, %c0 : " + VEC_TYPE + ", index) outs : f32\n"
            "  %k = arith.fptosi %e : f32 to index\n  %next = arith.addi %i, %k : index")
    text = while_kernel().replace("%next = arith.addi %i, %c1 : index", read)
    module = insert_sync(parse(text)).module
    with pytest.raises(PtocError, match="depends on tile data"):
        simulate(module, {**xy(), "n": 2})
    simulate(module, {**xy(), "n": 0})     # zero trips: the body never runs
