"""A run that found data races never hands back its numbers silently: a call returning only
the outputs (``compiled(...)``, ``@pl.jit`` calls, ``pypto.runtime.run``) raises
``DataRaceError`` unless ``RunConfig(on_race="warn")``; ``compiled.run`` returns its report
(``RunResult.races``) and warns. The racing program: a manual scope whose second task reads
what the first writes, with the edge between them left out."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ptoc import ir
from ptoc.errors import DataRaceError, DataRaceWarning, RuntimeConfigError
from ptoc.runtime import RunConfig
from task_programs import N, program

RACY = """
with pl.manual_scope():
    t, first = pl.submit(self.double, a, t)
    c, second = pl.submit(self.exp, t, c{deps})
"""
CHIP = dict(sim_mode="fast", chip=True)


def compiled(deps: str):
    return ir.compile(program(RACY.format(deps=deps)), None)


def a_input():
    return np.random.default_rng(3).standard_normal((N, N)).astype(np.float32)


def test_a_call_returning_outputs_refuses_racy_numbers():
    with pytest.raises(DataRaceError, match=r"(?s)1 data race\b.*RAW") as info:
        compiled("")(a_input(), config=RunConfig(**CHIP))
    assert "on_race='warn'" in str(info.value) and "tasks.py:" in str(info.value)


def test_on_race_warn_returns_the_outputs_with_a_warning():
    a = a_input()
    with pytest.warns(DataRaceWarning, match="1 data race"):
        c = compiled("")(a, config=RunConfig(on_race="warn", **CHIP))
    np.testing.assert_allclose(c, np.exp(2 * a), rtol=1e-5)   # program order, the one timing


def test_run_returns_the_races_and_warns():
    a = a_input()
    with pytest.warns(DataRaceWarning):
        result = compiled("").run(a, np.zeros_like(a), config=RunConfig(**CHIP))
    assert [(r.kind, r.buffer) for _, r in result.races] == [("RAW", "GM %t")]


def test_the_same_program_with_its_edge_runs_quietly():
    a = a_input()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataRaceWarning)
        c = compiled(", deps=[first]")(a, config=RunConfig(**CHIP))
    np.testing.assert_allclose(c, np.exp(2 * a), rtol=1e-5)


def test_an_unknown_race_policy_is_refused():
    with pytest.raises(RuntimeConfigError, match="on_race 'ignore' is not one of error, warn"):
        RunConfig(on_race="ignore")
