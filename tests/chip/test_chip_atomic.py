"""Atomic-add stores: split-K across cores sums right and does not race; the DSL lowers
``atomic=pl.AtomicType.Add`` to PTO with the target's dtype rules."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.codegen.errors import CodegenError
from ptoc.errors import PtoError, TypeCheckError
from ptoc.pto import parse, verify
from ptoc.runtime import RunConfig
from ptoc.sim import numerics
from ptoc.sim.chip import simulate_chip
from ptoc.sim.chip.examples import split_k_tasks
from ptoc.sim.examples import Writer

M, N, K, SPLITS = 128, 256, 2048, 4


@pytest.mark.parametrize("mode", ["fast", "reference"])
def test_split_k_over_cores_adds_every_partial_into_c(mode):
    tasks, (a, b, c) = split_k_tasks(M, N, K, splits=SPLITS, seed=3)
    res = simulate_chip(tasks, mode=mode)
    want = a.array().astype(np.float64) @ b.array().astype(np.float64)
    np.testing.assert_allclose(c.array(), want, rtol=1e-4, atol=1e-3)
    assert not res.races and not res.task_races
    spans = sorted((t.start, t.end) for t in res.tasks)
    assert all(s2 < e1 for (_, e1), (s2, _) in zip(spans, spans[1:]))   # they overlap
    assert len({t.cores for t in res.tasks}) == SPLITS


def test_split_k_with_plain_stores_races_on_c():
    tasks, _ = split_k_tasks(M, N, K, splits=SPLITS, seed=None, atomic=False)
    races = simulate_chip(tasks, numerics=False).races
    assert len(races) == SPLITS * (SPLITS - 1) // 2
    assert {(r.kind, r.buffer) for r in races} == {("WAW", "GM %c")}


def test_the_atomic_add_keeps_the_gm_element_type():
    old = np.array([1.0, 2.0], ml_dtypes.bfloat16)
    got = numerics.atomic_add(old, np.array([2 ** -9, 1.0], np.float32))
    assert got.dtype == old.dtype and list(got.astype(np.float32)) == [1.0, 3.0]
    wrapped = numerics.atomic_add(np.array([127], np.int8), np.array([1], np.int8))
    assert wrapped.dtype == np.int8 and wrapped[0] == -128


def _atomic_text(dtype: str, value: str = "atomic_add") -> str:
    """Load a tile of arg0 and add it into arg1 (``dtype`` elements)."""
    w = Writer([("%arg0", dtype), ("%arg1", dtype)])
    src, dst = w.view("x", "%arg0", dtype, 16, 64), w.view("y", "%arg1", dtype, 16, 64)
    t = w.alloc("t", "vec", dtype, 16, 64, 0)
    w.op("pto.tload", [w.window(src, w.idx(0), w.idx(0), 16, 64)], [w.t(t)])
    w.sync("set_flag", "MTE2", "MTE3", 0)
    w.sync("wait_flag", "MTE2", "MTE3", 0)
    w.op("pto.tstore", [w.t(t)], [w.window(dst, w.idx(0), w.idx(0), 16, 64)],
         f" {{atomicType = #pto<atomic_type {value}>}}")
    return w.render()


def test_the_pto_verifier_checks_atomic_types_and_target_dtypes():
    verify(parse(_atomic_text("f32")), target="a5")
    with pytest.raises(PtoError, match="atomicType .* is not an atomic type"):
        verify(parse(_atomic_text("f32", "atomic_max")))
    with pytest.raises(PtoError, match="atomic-add into a bf16 GM window is not supported on "
                                       "target a5"):
        verify(parse(_atomic_text("bf16")), target="a5")
    verify(parse(_atomic_text("bf16")), target="a2a3")


R, C = 16, 64


@pl.program
class AtomicStore:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[R, C], pl.FP32], out: pl.InOut[pl.Tensor[[R, C], pl.FP32]]):
        t = pl.load(x, [0, 0], [R, C])
        pl.store(t, [0, 0], out, atomic=pl.AtomicType.Add)


@pl.program
class SplitKProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def part(self, a: pl.Tensor[[64, 256], pl.BF16], b: pl.Tensor[[256, 64], pl.BF16],
             c: pl.InOut[pl.Tensor[[64, 64], pl.FP32]], s: pl.Scalar[pl.INDEX]):
        am = pl.load(a, [0, s * 64], [64, 64], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [s * 64, 0], [64, 64], target_memory=pl.Mem.Mat)
        pl.store(pl.matmul(am, bm), [0, 0], c, atomic=pl.AtomicType.Add)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 256], pl.BF16], b: pl.Tensor[[256, 64], pl.BF16],
             c: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]):
        for s in pl.range(4):
            self.part(a, b, c, s)


def test_a_dsl_atomic_store_adds_into_the_tensor():
    compiled = ir.compile(AtomicStore, None)
    store = [line for line in compiled.pto_text["kernel"].splitlines() if "pto.tstore" in line]
    assert store and all("{atomicType = #pto<atomic_type atomic_add>}" in line for line in store)
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    out = np.full((R, C), 0.5, np.float32)
    compiled.run(x, out)
    np.testing.assert_array_equal(out, x + 0.5)


@pytest.mark.parametrize("chip", [False, True])
def test_a_dsl_split_k_sums_its_parts_in_order_and_on_the_chip(chip):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 256)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((256, 64)).astype(ml_dtypes.bfloat16)
    c = np.zeros((64, 64), np.float32)
    result = ir.compile(SplitKProgram, None).run(a, b, c,
                                                 config=RunConfig(sim_mode="fast", chip=chip))
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3)
    assert not result.races


def test_atomic_dtype_rules_in_the_dsl():
    text = '''
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.{dt}], out: pl.InOut[pl.Tensor[[16, 64], pl.{dt}]]):
        t = pl.load(x, [0, 0], [16, 64])
        pl.store(t, [0, 0], out, atomic=pl.AtomicType.Add)
'''
    with pytest.raises(TypeCheckError, match="requires a FP32/BF16/FP16/INT32/INT16/INT8 "
                                             "destination .* it is UINT8"):
        pl.parse_program(text.replace("{dt}", "UINT8"), "<uint8>")
    bf16 = pl.parse_program(text.replace("{dt}", "BF16"), "<bf16>")
    ir.compile(bf16, None, platform="a2a3sim")
    with pytest.raises(CodegenError, match="bf16 atomic-add needs the A2/A3 store pipe"):
        ir.compile(bf16, None, platform="a5sim")
