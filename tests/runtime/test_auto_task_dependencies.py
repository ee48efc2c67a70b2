"""AutoDeriveTaskDependencies at run time: with ``analyze_auto_scopes_for_deps`` on, the
compiler's edges reach ``Task.deps`` and its demoted slots drop their run-time lookups, and
on the simulated chip the task-graph tests' programs and the paged decode give the same
numbers, bit for bit, with no race the option-off run does not have (the paged decode:
tests/system/test_paged_attention_decode.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc import ir
from ptoc.jit.cache import options_key
from ptoc.runtime import RunConfig
from task_programs import MANUAL_SUBMIT, N, PHASES, WAR, program

CHIP = RunConfig(sim_mode="fast", chip=True)

RACE_FREE = {
    "chain": "t = self.double(a, t)\nc = self.exp(t, c)",
    "submits": "t, first = pl.submit(self.double, a, t)\nc, second = pl.submit(self.exp, t, c)",
    "war with its deps": WAR.format(N=N, deps=", deps=[reader]"),
    "manual with its deps": MANUAL_SUBMIT.format(deps=", deps=[first]"),
    "loop": "for b in pl.range(4):\n    t = self.double(a, t)\nc = self.exp(t, c)",
}


def run(body: str, analyze: bool, chip: bool = True):
    a = np.random.default_rng(1).standard_normal((N, N)).astype(np.float32)
    c = np.zeros((N, N), np.float32)
    compiled = ir.compile(program(body), None, analyze_auto_scopes_for_deps=analyze)
    result = compiled.run(a, c, config=CHIP if chip else RunConfig(sim_mode="fast"))
    return c, result


def lookups(body: str, analyze: bool) -> int:
    """Regions the launches look up at run time (the in-order dispatcher's Task.reads)."""
    _, result = run(body, analyze, chip=False)
    return sum(len(r.task.reads) for r in result.runs)


@pytest.mark.parametrize("name", list(RACE_FREE))
def test_on_the_chip_the_option_changes_no_number_and_adds_no_race(name):
    body = RACE_FREE[name]
    c_off, off = run(body, False)
    c_on, on = run(body, True)
    assert np.array_equal(c_on, c_off)
    np.testing.assert_allclose(c_on, np.exp(2 * np.random.default_rng(1).standard_normal(
        (N, N)).astype(np.float32)), rtol=1e-5)
    assert off.races == [] and on.races == []
    for before, after in zip(off.chip.tasks, on.chip.tasks):
        assert set(before.deps) <= set(after.deps)     # stated where it was inferred
    assert lookups(body, True) <= lookups(body, False)


def test_a_covered_read_needs_no_lookup_its_edge_is_stated():
    chain = RACE_FREE["chain"]
    assert (lookups(chain, False), lookups(chain, True)) == (2, 1)   # exp's read of t
    _, on = run(chain, True)
    assert [t.deps for t in on.chip.tasks] == [(), (0,)]


def test_the_compiler_states_the_write_after_read_the_runtime_never_infers():
    body = WAR.format(N=N, deps="")
    _, off = run(body, False)
    assert [race.kind for _, race in off.races] == ["WAR"]
    _, on = run(body, True)
    assert on.races == [] and on.chip.tasks[2].deps == (0, 1)


@pytest.mark.parametrize("body,kind", [
    (MANUAL_SUBMIT.format(deps=""), "RAW"),                      # a manual scope's edge
    ("t = self.double(a, t)\nc = self.exp(pl.no_dep(t), c)", "RAW"),  # a slot untracked
    ("s = pl.create_tensor([32, 32], dtype=pl.FP32, manual_dep=True)\n"  # a tensor untracked
     "s = self.double(a, s)\nc = self.exp(s, c)", "RAW"),
    (PHASES.format(gate="", deps=", deps=[tids]"), "WAW"),        # four writers of one c
])
def test_an_edge_the_user_left_out_stays_a_reported_race(body, kind):
    c_off, off = run(body, False)
    c_on, on = run(body, True)
    assert np.array_equal(c_on, c_off)
    assert {race.kind for _, race in on.races} == {kind}
    assert [race for _, race in on.races] == [race for _, race in off.races]


def test_the_option_is_a_compile_option_of_run_config_and_the_jit_key():
    config = RunConfig(analyze_auto_scopes_for_deps=True)
    assert config.compile_options()["analyze_auto_scopes_for_deps"] is True
    assert options_key(config.compile_options()) != options_key(RunConfig().compile_options())


def test_pyptos_pass_manager_keyword_switches_the_analysis_for_its_pipeline():
    from ptoc.passes import PassManager

    edges = []
    for analyze in (True, False):
        lowered = PassManager.get_strategy(analyze_auto_scopes_for_deps=analyze).run_passes(
            program(RACE_FREE["chain"]))
        edges.append("compiler_manual_dep_edges" in lowered.as_python())
    assert edges == [True, False]
