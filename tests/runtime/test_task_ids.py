"""Task ids as values (``pl.submit``, ``with pl.at(...) as tid`` + ``deps=[...]``, ``pl.array``
of ``pl.TASK_ID``, ``pl.system.task_dummy``) and the tracking opt-outs (``pl.manual_scope``,
``pl.no_dep``, ``no_dep_args``): the stated edges reach the scheduler (``Task.deps``) and order
the tasks on the simulated chip; an edge left out where the data needs one is a race report."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import ArgDirection
from ptoc.errors import PtocError
from ptoc.ir.nodes import body_scope
from ptoc.ir.printer import flatten
from ptoc.ir.verifier import verify
from ptoc.language.roundtrip import roundtrip
from ptoc.passes import VerificationLevel
from ptoc.passes.context import PassContext
from ptoc.runtime import RunConfig
from task_programs import KERNELS, MANUAL_SUBMIT, N, PHASES, WAR, program

CHIP = RunConfig(sim_mode="fast", chip=True)


def run_chip(prog):
    a = np.random.default_rng(1).standard_normal((N, N)).astype(np.float32)
    c = np.zeros((N, N), np.float32)
    result = ir.compile(prog, None).run(a, c, config=CHIP)
    np.testing.assert_allclose(c, np.exp(2 * a), rtol=1e-5)  # data is program order anyway
    return result.chip


def test_in_a_manual_scope_only_the_stated_edge_orders_the_tasks_on_the_chip():
    prog = program(MANUAL_SUBMIT.format(deps=", deps=[first]"))
    chip = run_chip(prog)
    first, second = chip.tasks
    assert second.deps == (0,) and second.start >= first.end
    assert chip.races == []
    a, c = np.ones((N, N), np.float32), np.zeros((N, N), np.float32)
    in_order = ir.compile(prog, None).run(a, c, config=RunConfig(sim_mode="fast"))
    assert [run.task.deps for run in in_order.runs] == [(), (0,)]   # the same Task.deps


def test_dropping_the_stated_edge_in_a_manual_scope_is_reported_as_a_race():
    chip = run_chip(program(MANUAL_SUBMIT.format(deps="")))
    assert chip.tasks[1].deps == ()          # nothing inferred inside pl.manual_scope
    (race,) = chip.races
    assert (race.kind, race.buffer) == ("RAW", "GM %t")
    assert race.first.task == "double#0" and race.second.task == "exp#1"
    line = KERNELS.count("\n")                 # the line before the body's first
    assert (race.first.where, race.second.where) == (f"tasks.py:{line + 2}", f"tasks.py:{line + 3}")


@pytest.mark.parametrize("deps,races", [(", deps=[reader]", 0), ("", 1)])
def test_a_pl_at_deps_edge_is_added_to_what_the_runtime_infers(deps, races):
    chip = run_chip(program(WAR.format(N=N, deps=deps)))
    assert len(chip.tasks) == 3 and chip.tasks[1].deps == (0,)   # inferred RAW on t
    assert (1 in chip.tasks[2].deps) == bool(deps)
    assert [r.kind for r in chip.races] == ["WAR"] * races


def test_a_kernel_with_a_named_task_prints_as_a_submit_and_round_trips():
    prog = program(WAR.format(N=N, deps=", deps=[reader]"))
    lowered = ir.compile(prog, None).program
    text = lowered.get_function("main").as_python()
    assert "pl.submit(self.main_incore_0" in text and "deps=[reader]" in text
    verify(roundtrip(lowered, label="submit"))


@pytest.mark.parametrize("gate,deps", [
    ("", ", deps=[tids]"),                                        # a whole TASK_ID array
    ("", ", deps=[tids[0], tids[1], tids[2], tids[3]]"),          # its elements
    ("gate = pl.system.task_dummy(deps=[tids])", ", deps=[gate]"),  # one id for the four
])
def test_a_task_id_array_fans_in_every_task_it_holds(gate, deps):
    chip = run_chip(program(PHASES.format(gate=gate, deps=deps)))
    assert [t.deps for t in chip.tasks[4:]] == [(0, 1, 2, 3)] * 4
    assert min(t.start for t in chip.tasks[4:]) >= max(t.end for t in chip.tasks[:4])
    assert chip.races == [] or {r.kind for r in chip.races} == {"WAW"}  # the four doubles


@pytest.mark.parametrize("body", [
    PHASES.format(gate="", deps=", deps=[tids]"),          # a tensor and a TASK_ID array
    "n: pl.Scalar[pl.INDEX] = 0\nfor b in pl.range(4):\n    t = self.double(a, t)\n"
    "    n = n + 1\nc = self.exp(t, c)",                   # a tensor and a scalar
])
def test_a_loop_carrying_a_tensor_and_another_value_round_trips_after_every_pass(body):
    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):   # print/parse/compare
        lowered = ir.compile(program(body), None).program                # after each pass
    text = lowered.get_function("main").as_python()
    # the loop's tensor result has InitMemRef's own MemRef, declared on the line before the
    # untyped multi-target yield (the parser would otherwise re-type it from the init value)
    assert re.search(r"\n *t: pl.Tensor\[\[32, 32\], pl.FP32, pl.MemRef\(\"mem_ddr_\d+\".*\n"
                     r" *t, (tids|n) = pl.yield_\(", text)
    verify(roundtrip(lowered, label="two carries"))


def test_an_unset_array_element_is_no_dependency():
    chip = run_chip(program("""
with pl.manual_scope():
    tids = pl.array.create(2, pl.TASK_ID)
    t, tid = pl.submit(self.double, a, t)
    tids[1] = tid
    c, last = pl.submit(self.exp, t, c, deps=[tids])
"""))
    assert chip.tasks[1].deps == (0,)


@pytest.mark.parametrize("body", [
    "t = self.double(a, t)\nc = self.exp(pl.no_dep(t), c)",
    "t = self.double(a, t)\nwith pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[t]):\n"
    "    x = pl.load(t, [0, 0], [32, 32])\n    pl.store(pl.exp(x), [0, 0], c)",
])
def test_a_no_dep_slot_is_not_tracked_so_a_real_edge_dropped_is_a_race(body):
    prog = program(body)
    lowered = ir.compile(prog, None)
    calls = [s.value for s in flatten(body_scope(flatten(lowered.program.get_function("main")
                                                         .body)).body)
             if hasattr(s, "value") and getattr(s.value, "is_function", False)]
    assert calls[1].attrs["arg_directions"][0] is ArgDirection.NoDep
    chip = run_chip(prog)
    assert chip.tasks[1].deps == ()
    assert [r.kind for r in chip.races] == ["RAW"]


def test_an_array_index_outside_the_array_is_an_error_at_run_time():
    prog = program("""
with pl.manual_scope():
    tids = pl.array.create(2, pl.TASK_ID)
    for i in pl.range(3):
        t, tid = pl.submit(self.double, a, t)
        tids[i] = tid
c = self.exp(t, c)
""")
    with pytest.raises(PtocError, match=r"pl.array index 2 is outside the array \(size 2\)"):
        run_chip(prog)


@pytest.mark.parametrize("body,message", [
    ("t, tid = pl.submit(a, t)", "first argument must be a self.<kernel>"),
    ("t, tid = pl.submit(self.double, a, t, deps=[a])", "is not a task id"),
    # PyPTO's submit targets: (result, task id), the id a plain name
    ("with pl.manual_scope():\n    tids = pl.array.create(2, pl.TASK_ID)\n"
     "    t, tids[0] = pl.submit(self.double, a, t)",
     r"pl.submit\(\.\.\.\) task id target 'tids\[0\]' must be a plain name \(fix: write "
     r"'out, tid = pl.submit\(self.kernel, \.\.\.\)', then store it on its own line: "
     r"'tids\[0\] = tid'\)"),
    ("t, u, tid = pl.submit(self.double, a, t)", "exactly 2 targets"),
    ("(t, u), tid = pl.submit(self.double, a, t)",
     r"unpacks 2 result value\(s\) but kernel 'double' returns 1"),
    ("(t, [u]), tid = pl.submit(self.double, a, t)", "result target '\\[u\\]' must be a plain name"),
    ("with pl.at(level=pl.Level.CORE_GROUP, allow_early_resolve=True, dumps=[t]):\n"
     "    x = pl.load(a, [0, 0], [32, 32])\n    pl.store(x, [0, 0], t)", "dumps="),
    ("t = self.double(pl.no_dep(a) + 1, t)", "no_dep"),
    ("with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[c]):\n"
     "    x = pl.load(a, [0, 0], [32, 32])\n    pl.store(x, [0, 0], t)",
     "no_dep_args names 'c', which the pl.at region does not use"),
])
def test_what_ptoc_cannot_honour_is_an_error(body, message):
    with pytest.raises(PtocError, match=message):
        ir.compile(program(body), None)


def test_a_kernel_with_two_results_is_submitted_as_a_tuple_and_its_id():
    src = KERNELS.replace("    @pl.function(type=pl.FunctionType.Orchestration)", """    @pl.function(type=pl.FunctionType.InCore)
    def both(self, a: pl.Tensor[[32, 32], pl.FP32], t: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
             u: pl.Out[pl.Tensor[[32, 32], pl.FP32]]
             ) -> tuple[pl.Tensor[[32, 32], pl.FP32], pl.Tensor[[32, 32], pl.FP32]]:
        x = pl.load(a, [0, 0], [32, 32])
        pl.store(pl.add(x, x), [0, 0], t)
        pl.store(pl.mul(x, 3.0), [0, 0], u)
        return t, u

    @pl.function(type=pl.FunctionType.Orchestration)""")
    body = """        u = pl.create_tensor([32, 32], dtype=pl.FP32)
        with pl.manual_scope():
            (t, u), both_id = pl.submit(self.both, a, t, u)
            c, last = pl.submit(self.exp, t, c, deps=[both_id])
        return c
"""
    prog = pl.parse_program(src + body, filename="tasks.py")
    verify(roundtrip(prog, label="two results"))
    chip = run_chip(prog)
    assert chip.tasks[1].deps == (0,) and chip.races == []


MANUAL_DEP = """
s = pl.create_tensor([32, 32], dtype=pl.FP32{opt})
s = self.double(a, s)
c = self.exp(s, c)
"""


@pytest.mark.parametrize("opt,deps,races", [(", manual_dep=True", (), ["RAW"]), ("", (0,), [])])
def test_a_manual_dep_tensor_is_tracked_by_no_task_so_its_missing_edge_is_a_race(opt, deps,
                                                                                 races):
    chip = run_chip(program(MANUAL_DEP.format(opt=opt)))
    assert chip.tasks[1].deps == deps
    assert [race.kind for race in chip.races] == races
    if races:
        assert chip.races[0].buffer == "GM %s"


def test_a_manual_dep_tensor_is_ordered_by_the_edge_the_user_states():
    chip = run_chip(program("""
s = pl.create_tensor([32, 32], dtype=pl.FP32, manual_dep=True)
s, wrote = pl.submit(self.double, a, s)
c, read = pl.submit(self.exp, s, c, deps=[wrote])
"""))
    assert chip.tasks[1].deps == (0,) and chip.races == []


def test_init_value_pre_fills_a_created_tensor():
    prog = program("s = pl.create_tensor([32, 32], dtype=pl.FP32, init_value=1.5)\n"
                   "c = self.exp(s, c)")
    c = np.zeros((N, N), np.float32)
    ir.compile(prog, None).run(np.zeros((N, N), np.float32), c, config=CHIP)
    np.testing.assert_allclose(c, np.exp(np.float32(1.5)), rtol=1e-6)


@pytest.mark.parametrize("options,message", [
    ("dtype=pl.BF16, init_value=1.0", "non-zero values only for integer and 32/64-bit float"),
    ("dtype=pl.FP32, init_value='zero'", "must be a finite number"),
    ("dtype=pl.FP32, manual_dep=1", "must be True or False"),
])
def test_create_tensor_options_out_of_pyptos_limits_are_errors(options, message):
    with pytest.raises(PtocError, match=message):
        program(f"s = pl.create_tensor([32, 32], {options})")
