"""The orchestration interpreter makes tasks over one GM; the in-order dispatcher runs them."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import DataType
from ptoc.errors import RuntimeConfigError
from ptoc.runtime.orchestration import Orchestrator
from ptoc.sim.global_memory import GlobalMemory

N = 32


@pl.program
class Chain:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, a: pl.Tensor[[N, N], pl.FP32], t: pl.Out[pl.Tensor[[N, N], pl.FP32]]
               ) -> pl.Tensor[[N, N], pl.FP32]:
        x = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Vec)
        pl.store(pl.add(x, x), [0, 0], t)
        return t

    @pl.function(type=pl.FunctionType.InCore)
    def exp(self, t: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]
            ) -> pl.Tensor[[N, N], pl.FP32]:
        x = pl.load(t, [0, 0], [N, N], target_memory=pl.Mem.Vec)
        pl.store(pl.exp(x), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]
             ) -> pl.Tensor[[N, N], pl.FP32]:
        t = pl.create_tensor([N, N], dtype=pl.FP32)
        t = self.double(a, t)
        c = self.exp(t, c)
        return c


class Recorder:
    """A dispatcher that only keeps what it is given."""

    def __init__(self):
        self.tasks = []

    def submit(self, task):
        self.tasks.append(task)


@pytest.fixture(scope="module")
def chain():
    return ir.compile(Chain, None)


def test_kernel_calls_become_tasks_with_their_gm_regions(chain):
    gm = GlobalMemory()
    a = gm.alloc("a", (N, N), DataType.FP32)
    c = gm.alloc("c", (N, N), DataType.FP32)
    recorder = Recorder()
    Orchestrator(chain, gm, recorder).run(chain.entry, [a, c])
    double, exp = recorder.tasks
    assert [t.kernel for t in recorder.tasks] == ["double", "exp"]
    assert [t.index for t in recorder.tasks] == [0, 1]
    assert [r.name for r in double.reads] == ["a"] and [w.name for w in double.writes] == ["t"]
    assert [r.name for r in exp.reads] == ["t"] and exp.writes[0] is c
    assert double.writes[0] is exp.reads[0]          # the created tensor flows through
    with open(__file__, encoding="utf-8") as source:
        lines = source.read().splitlines()
    call_lines = [i + 1 for i, text in enumerate(lines) if text.strip() in
                  ("t = self.double(a, t)", "c = self.exp(t, c)")]
    assert [t.loc.line for t in recorder.tasks] == call_lines
    assert double.label().startswith("double#0 at ")


def test_tasks_run_in_order_on_the_shared_gm(chain):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((N, N)).astype(np.float32)
    c = np.zeros((N, N), np.float32)
    result = chain.run(a, c)
    np.testing.assert_allclose(c, np.exp(a + a), rtol=1e-6)
    assert [run.task.kernel for run in result.runs] == ["double", "exp"]
    assert result.cycles == sum(run.sim.wall_cycles for run in result.runs)


def test_a_strided_slice_as_a_kernel_argument_is_refused(chain):
    gm = GlobalMemory()
    wide = gm.alloc("wide", (N, 2 * N), DataType.FP32)
    t = gm.alloc("t", (N, N), DataType.FP32)
    orch = Orchestrator(chain, gm, Recorder())
    with pytest.raises(RuntimeConfigError, match="strided slice of 'wide'"):
        orch.launch(chain.program.get_function("double"), [wide.slice([0, 0], [N, N]), t], None)
    rows = gm.alloc("rows", (2 * N, N), DataType.FP32)
    orch.launch(chain.program.get_function("double"), [rows.slice([N, 0], [N, N]), t], None)
    assert orch.tasks[-1].reads[0].offset == N * N


def test_on_the_chip_the_same_tasks_give_the_same_data_and_a_chip_timeline(chain):
    from ptoc.runtime import RunConfig

    rng = np.random.default_rng(4)
    a = rng.standard_normal((N, N)).astype(np.float32)
    c_order, c_chip = np.zeros((N, N), np.float32), np.zeros((N, N), np.float32)
    in_order = chain.run(a, c_order, config=RunConfig(sim_mode="fast"))
    on_chip = chain.run(a, c_chip, config=RunConfig(sim_mode="fast", chip=True))
    np.testing.assert_array_equal(c_chip, c_order)
    chip = on_chip.chip
    assert in_order.chip is None and on_chip.runs == []
    assert [t.name for t in chip.tasks] == ["double#0", "exp#1"]
    assert chip.tasks[1].deps == (0,) and chip.tasks[1].start >= chip.tasks[0].end
    assert on_chip.cycles == chip.wall_cycles
    for task, run in zip(chip.tasks, in_order.runs):
        assert task.alone_cycles == run.sim.wall_cycles


def test_a_chip_run_refuses_serial_mode():
    from ptoc.runtime import RunConfig

    with pytest.raises(RuntimeConfigError, match="no serial mode"):
        RunConfig(chip=True, sim_mode="serial")
