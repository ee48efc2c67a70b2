"""ExpandManualPhaseFence: Before -> Expected (a full-array fan-in of a manual-scope loop
becomes one task_dummy barrier), the shapes left direct, and the same task order at run
time."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.tasks import derive_call_directions, expand_manual_phase_fence
from ptoc.runtime import RunConfig

R, C = 128, 32
KERNEL = f"""import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, x: pl.Tensor[[{R}, {C}], pl.FP32], row: pl.Scalar[pl.INDEX],
               y: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]) -> pl.Tensor[[{R}, {C}], pl.FP32]:
        t = pl.load(x, [row, 0], [16, {C}])
        y = pl.store(pl.adds(t, 1.0), [row, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{R}, {C}], pl.FP32], y: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]
             ) -> pl.Tensor[[{R}, {C}], pl.FP32]:
"""


def parse(body: str):
    lines = "".join(f"        {line}\n" for line in body.strip("\n").splitlines())
    with PassContext():
        return derive_call_directions()(pl.parse_program(KERNEL + lines))


def expand(body: str):
    with PassContext():
        return expand_manual_phase_fence()(parse(body))


# two phases of {n} launches; the second phase waits for the whole first one
PHASES = """
with pl.manual_scope():
    tids = pl.array.create({n}, pl.TASK_ID)
    for b in pl.parallel({n}):
        y, tid = pl.submit(self.stripe, x, b * 16, y)
        tids[b] = tid
    {fence}for b in pl.parallel({m}):
        y, tid = pl.submit(self.stripe, x, 64 + b * 16, y, deps=[{deps}])
return y
"""


def phases(n=4, m=4, fence="", deps="tids"):
    return PHASES.format(n=n, m=m, fence=fence, deps=deps)


def test_a_full_array_fan_in_becomes_one_barrier_before_the_loop():
    fence = ('tids_fence = pl.system.task_dummy(deps=[tids], attrs={"dummy_task": True})\n'
             '    ')
    assert_structural_equal(expand(phases()), parse(phases(fence=fence, deps="tids_fence")))


@pytest.mark.parametrize("body", [
    phases(n=4, m=1),                           # N -> 1: 4 edges either way plus a barrier
    phases(n=2, m=2),                           # 2 -> 2: 4 = 4
    phases(deps="tids[0], tids[1]"),            # scalar dependencies
    phases(deps="tids, tids[0]"),               # mixed
    phases().replace("with pl.manual_scope():", "if True:"),   # not a manual scope
])
def test_shapes_without_a_clear_benefit_or_outside_manual_scopes_stay_direct(body):
    before = parse(body)
    with PassContext():
        assert expand_manual_phase_fence()(before) is before


def test_an_array_the_loop_updates_is_left_direct():
    body = """
with pl.manual_scope():
    tids = pl.array.create(4, pl.TASK_ID)
    for b in pl.parallel(4):
        y, tid = pl.submit(self.stripe, x, b * 16, y)
        tids[b] = tid
    for b in pl.range(4):
        y, tid = pl.submit(self.stripe, x, 64 + b * 16, y, deps=[tids])
        tids[b] = tid
return y
"""
    before = parse(body)
    with PassContext():
        assert expand_manual_phase_fence()(before) is before


def test_the_tasks_wait_for_the_same_tasks_with_and_without_the_barrier():
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    runs = []
    for body in (phases(), phases(fence="gate = pl.system.task_dummy(deps=[tids])\n    ",
                                  deps="gate")):
        y = np.zeros((R, C), np.float32)
        compiled = ir.compile(pl.parse_program(KERNEL + "".join(
            f"        {line}\n" for line in body.strip("\n").splitlines())), None)
        fences = [s for s in compiled.program.get_function("main").as_python().splitlines()
                  if "task_dummy" in s]
        assert len(fences) == 1          # the pipeline inserted the barrier / kept the user's
        chip = compiled.run(x, y, config=RunConfig(sim_mode="fast", chip=True)).chip
        runs.append([t.deps for t in chip.tasks])
        np.testing.assert_array_equal(y[:128], np.concatenate([x[:128] + 1.0]))
    assert runs[0] == runs[1] and runs[0][4:] == [(0, 1, 2, 3)] * 4
