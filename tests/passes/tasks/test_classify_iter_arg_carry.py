"""ClassifyIterArgCarry: Before -> Expected stamps (trivial alias vs rebind, task-id fence
sizes), the run-time trip-count error, and what a fence means when the program runs."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PtocError
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.properties import IRProperty, check_property
from ptoc.passes.tasks import (
    classify_iter_arg_carry, derive_call_directions, materialize_runtime_scopes,
)
from ptoc.runtime import RunConfig

KERNEL = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]
             ) -> pl.Tensor[[32, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [32, 32])
        u = pl.load(y, [0, 0], [32, 32])
        y = pl.store(pl.add(t, u), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.InOut[pl.Tensor[[32, 32], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32, 32], pl.FP32]:
"""


def indent(body: str) -> str:
    return "".join(f"        {line}\n" for line in body.strip("\n").splitlines())


def classify(body: str):
    with PassContext():
        program = derive_call_directions()(pl.parse_program(KERNEL + indent(body)))
        return classify_iter_arg_carry()(materialize_runtime_scopes()(program))


def check(before: str, expected: str):
    out = classify(before)
    want = derive_call_directions()(pl.parse_program(KERNEL + indent(expected)))
    assert_structural_equal(out, want)
    assert check_property(IRProperty.IterArgCarryClassified, out) is True
    return out


def test_a_kernel_writing_the_carried_buffer_in_place_is_a_trivial_alias():
    check("""
for i in pl.range(4):
    y = self.bump(x, y)
return y
""", """
for i, (y1,) in pl.range(4, init_values=(y,), attrs={"iter_arg_rebind_0": False}):
    y2 = self.bump(x, y1)
    y3 = pl.yield_(y2)
return y3
""")


def test_a_buffer_made_in_the_body_and_a_computed_scalar_are_rebinds():
    check("""
k: pl.Scalar[pl.INDEX] = 0
for i in pl.range(4):
    z = pl.create_tensor([32, 32], dtype=pl.FP32)
    z = self.bump(x, z)
    y = pl.assemble(y, z, [0, 0])
    k = k + i
return y
""", """
k: pl.Scalar[pl.INDEX] = 0
for i, (y1, k1) in pl.range(4, init_values=(y, k),
                            attrs={"iter_arg_rebind_0": False, "iter_arg_rebind_1": True}):
    z = pl.create_tensor([32, 32], dtype=pl.FP32)
    z1 = self.bump(x, z)
    y2 = pl.assemble(y1, z1, [0, 0])
    k2 = k1 + i
    y3, k3 = pl.yield_(y2, k2)
return y3
""")


FENCE = """
with pl.manual_scope():
    y, tid = pl.submit(self.bump, x, y)
    for p in pl.range(2):
        for b in pl.parallel({n}):
            y, tid = pl.submit(self.bump, x, y, deps=[tid])
    y, last = pl.submit(self.bump, x, y, deps=[tid])
return y
"""


def test_a_task_id_carried_out_of_a_manual_parallel_loop_is_a_fence_of_its_trip_count():
    out = classify(FENCE.format(n=4))
    outer = [s for s in out.get_function("main").body.stmts[0].body.stmts
             if type(s).__name__ == "ForStmt"][0]
    inner = [s for s in outer.body.stmts if type(s).__name__ == "ForStmt"][0]
    assert inner.attrs == {"iter_arg_rebind_0": False, "iter_arg_rebind_1": True,
                           "iter_arg_array_size_1": 4}
    assert outer.attrs == {"iter_arg_rebind_0": False, "iter_arg_rebind_1": True,
                           "iter_arg_array_size_1": 4}   # the sequential loop inherits it


def test_a_run_time_trip_count_cannot_size_a_fence():
    with pytest.raises(PtocError, match="statically-known trip count"):
        classify(FENCE.format(n="n"))


def test_on_the_chip_a_fence_makes_the_next_launch_wait_for_every_parallel_iteration():
    compiled = ir.compile(pl.parse_program(KERNEL + indent(FENCE.format(n=4))), None)
    x = np.ones((32, 32), np.float32)
    y = np.zeros((32, 32), np.float32)
    chip = compiled.run(x, y, 4, config=RunConfig(sim_mode="fast", chip=True)).chip
    deps = [t.deps for t in chip.tasks]
    assert deps[1:5] == [(0,)] * 4                 # phase 0: each waits for the first launch
    assert deps[5:9] == [(1, 2, 3, 4)] * 4         # phase 1: for all of phase 0
    assert deps[9] == (5, 6, 7, 8)                 # after the loops: for all of phase 1
    np.testing.assert_array_equal(y, np.full((32, 32), 10.0, np.float32))
