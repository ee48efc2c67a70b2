"""A timing-only chip run (``numerics=False``) computes no data, so a dispatch predicate is
evaluated on GM as it was before the run: correct for a gate the run never writes (a host
input), refused for one a task of the run writes — never timing for a guessed set of tasks."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chip_kernels import C, R, add_kernel, add_task
from ptoc.dtypes import DataType
from ptoc.errors import SourceLoc
from ptoc.sim.chip import ChipConfigError, simulate_chip
from ptoc.sim.global_memory import GlobalMemory
from ptoc.sim.task import DispatchPredicate

F32 = DataType.FP32


def gated(task, gate, text="g[0, 0] > 0", line=40):
    """``task`` launched at moe.py:``line`` with ``predicate=(gate[0, 0] > 0)``."""
    return replace(task, loc=SourceLoc("moe.py", line),
                   predicate=DispatchPredicate(gate, (0, 0), ">", 0, text))


def build(gm, gate_value: float):
    """x, y inputs; g (2R rows) holds ``gate_value`` in row 0 before the run; task 0 writes
    rows R.. of g (not the gate element), task 1 (predicated on g[0, 0]) writes z."""
    rng = np.random.default_rng(0)
    x, y = (gm.alloc(n, (R, C), F32, init=rng.standard_normal((R, C)).astype(np.float32))
            for n in "xy")
    g = gm.alloc("g", (2 * R, C), F32, init=np.full((2 * R, C), gate_value, np.float32))
    z = gm.alloc("z", (R, C), F32)
    k = add_kernel()
    return [add_task(0, k, x, y, g.slice((R, 0), (R, C))),
            gated(add_task(1, k, x, y, z), g)]


@pytest.mark.parametrize("gate_value,runs", [(1.0, True), (-1.0, False)])
def test_a_gate_the_run_never_writes_is_evaluated_as_the_numerics_run_does(gate_value, runs):
    """Task 0 writes other rows of the gate's tensor: the element keeps its host value."""
    timed = simulate_chip(build(GlobalMemory(), gate_value), mode="fast", numerics=False)
    full = simulate_chip(build(GlobalMemory(), gate_value), mode="fast")
    assert [t.skipped for t in timed.tasks] == [t.skipped for t in full.tasks] == [False, not runs]
    assert [(t.start, t.end) for t in timed.tasks] == [(t.start, t.end) for t in full.tasks]


def test_a_gate_a_task_of_the_run_writes_is_refused_without_numerics():
    """Before the run g[0, 0] is 0, so a pre-run read would skip task 1; the producer makes
    it x + y > 0 (x = y = 1), so with numerics task 1 runs."""
    def tasks(gm):
        x, y = (gm.alloc(n, (R, C), F32, init=np.ones((R, C), np.float32)) for n in "xy")
        g, z = gm.alloc("g", (R, C), F32), gm.alloc("z", (R, C), F32)
        k = add_kernel()
        producer = replace(add_task(0, k, x, y, g), loc=SourceLoc("moe.py", 38))
        return [producer, gated(add_task(1, k, x, y, z, deps=[0]), g)]

    full = simulate_chip(tasks(GlobalMemory()), mode="fast")
    assert [t.skipped for t in full.tasks] == [False, False]
    with pytest.raises(ChipConfigError) as err:
        simulate_chip(tasks(GlobalMemory()), mode="fast", numerics=False)
    text = str(err.value)
    assert "add#1 at moe.py:40" in text and "(g[0, 0] > 0)" in text
    assert "element [0, 0] of 'g'" in text and "add#0 at moe.py:38" in text
    assert "numerics=True" in text
