"""While loops run on the simulator: trip counts decided at run time (a scalar argument,
values read from an input tensor), zero trips, tile and tensor carries, race-free sync
around a loop whose trip count InsertSync cannot know, and a loop that never ends stops
at the simulator's scalar-step limit with an error instead of hanging."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PtocError
from ptoc.runtime import RunConfig
from ptoc.sim import SimLimits

R, C, T = 16, 32, 8     # rows per trip, columns, most trips


@pl.program
class RowsWhile:
    """Rows [0, n*R) of ``c`` become exp(a); the rest keep their bytes."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], a: pl.Tensor[[T * R, C], pl.FP32],
          c: pl.Out[pl.Tensor[[T * R, C], pl.FP32]]) -> pl.Tensor[[T * R, C], pl.FP32]:
        for (i, o) in pl.while_(init_values=(0, c)):
            pl.cond(i < n)
            t = pl.load(a, [i * R, 0], [R, C])
            o2 = pl.store(pl.exp(t), [i * R, 0], o)
            i2, o3 = pl.yield_(i + 1, o2)
        return o3


@pl.program
class RowsPlainWhile:
    """The same loop written as Python's ``while`` (the carries are the rebound names)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], a: pl.Tensor[[T * R, C], pl.FP32],
          c: pl.Out[pl.Tensor[[T * R, C], pl.FP32]]) -> pl.Tensor[[T * R, C], pl.FP32]:
        i = 0
        while i < n:
            t = pl.load(a, [i * R, 0], [R, C])
            c = pl.store(pl.exp(t), [i * R, 0], c)
            i = i + 1
        return c


@pl.program
class UntilBound:
    """Adds ``a`` to an accumulator tile once per trip while the running sum of
    ``steps[0..i)`` is below ``bound`` (and i < T): the trip count comes from tensor data."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, bound: pl.Scalar[pl.INT32], steps: pl.Tensor[[T], pl.INT32],
          a: pl.Tensor[[R, C], pl.FP32],
          c: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        t = pl.load(a, [0, 0], [R, C])
        acc0 = pl.sub(t, t)
        for (i, s, acc) in pl.while_(init_values=(0, 0, acc0)):
            pl.cond(s < bound and i < T)
            v = pl.tensor.read(steps, [i])
            acc2 = pl.add(acc, t)
            i2, s2, acc3 = pl.yield_(i + 1, s + v, acc2)
        c = pl.store(acc3, [0, 0], c)
        return c


@pl.program
class NeverEnds:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[R, C], pl.FP32],
          c: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        t = pl.load(a, [0, 0], [R, C])
        for (i, acc) in pl.while_(init_values=(0, t)):
            pl.cond(i >= 0)
            acc2 = pl.add(acc, t)
            i2, acc3 = pl.yield_(i + 1, acc2)
        c = pl.store(acc3, [0, 0], c)
        return c


@pl.program
class ForgetsToCount:
    """``i`` is never rebound in the body: the loop carries no scalar and never ends."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], a: pl.Tensor[[R, C], pl.FP32],
          c: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        i = 0
        while i < n:
            t = pl.load(a, [0, 0], [R, C])
            c = pl.store(pl.exp(t), [0, 0], c)
        return c


@pl.program
class Jumps:
    """Row blocks 0..7 become exp(a), skipping block ``skip`` and stopping at block ``n``."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], skip: pl.Scalar[pl.INDEX],
          a: pl.Tensor[[T * R, C], pl.FP32],
          c: pl.Out[pl.Tensor[[T * R, C], pl.FP32]]) -> pl.Tensor[[T * R, C], pl.FP32]:
        for i in pl.range(T):
            if i == skip:
                continue
            if i >= n:
                break
            t = pl.load(a, [i * R, 0], [R, C])
            c = pl.store(pl.exp(t), [i * R, 0], c)
        return c


def mixed_rows(split: pl.SplitMode):
    """Block i of ``out`` becomes exp(a_i @ a_i) for i < n: per trip the cube multiplies
    and hands the product to the vector core (cross-core pipe inside the while)."""

    @pl.program
    class MixedRows:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, n: pl.Scalar[pl.INDEX], a: pl.Tensor[[4 * R, R], pl.FP16],
                 out: pl.Out[pl.Tensor[[4 * R, R], pl.FP32]]) -> pl.Tensor[[4 * R, R], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(split)]):
                i = 0
                while i < n:
                    x = pl.load(a, [i * R, 0], [R, R], target_memory=pl.Mem.Mat)
                    p = pl.matmul(pl.move(x, target_memory=pl.Mem.Left),
                                  pl.move(x, target_memory=pl.Mem.Right))
                    e = pl.exp(pl.move(p, target_memory=pl.Mem.Vec))
                    out = pl.store(e, [i * R, 0], out)
                    i = i + 1
            return out

    return MixedRows


@pl.program
class WhileInPipeline:
    """A while loop inside a pl.pipeline body (replicated per stage, IO reordered around it)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], a: pl.Tensor[[4 * R, C], pl.FP32],
          c: pl.Out[pl.Tensor[[4 * R, C], pl.FP32]]) -> pl.Tensor[[4 * R, C], pl.FP32]:
        for b in pl.pipeline(4, stage=2):
            t = pl.load(a, [b * R, 0], [R, C])
            j = 0
            while j < n:
                t = pl.add(t, t)
                j = j + 1
            c = pl.store(t, [b * R, 0], c)
        return c


def _compiled(program):
    return ir.compile(program, None)


ROWS = {name: _compiled(p) for name, p in (("pl_while", RowsWhile),
                                           ("plain_while", RowsPlainWhile))}
UNTIL = _compiled(UntilBound)


def trips_until(bound: int, steps: np.ndarray) -> int:
    s, i = 0, 0
    while s < bound and i < T:
        s, i = s + int(steps[i]), i + 1
    return i


@pytest.mark.parametrize("form", sorted(ROWS))
@settings(max_examples=6, deadline=None)
@given(n=st.integers(0, T), seed=st.integers(0, 2**16))
def test_rows_loop_runs_n_trips_race_free(form, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((T * R, C)).astype(np.float32)
    c = np.full((T * R, C), 7.0, np.float32)
    result = ROWS[form].run(n, a, c)
    assert not result.races
    want = np.full_like(c, 7.0)
    want[:n * R] = np.exp(a[:n * R])
    np.testing.assert_allclose(c, want, rtol=1e-6, atol=1e-6)


@settings(max_examples=8, deadline=None)
@given(bound=st.integers(-3, 40), steps=st.lists(st.integers(0, 9), min_size=T, max_size=T),
       seed=st.integers(0, 2**16))
def test_trip_count_read_from_a_tensor(bound, steps, seed):
    steps = np.asarray(steps, np.int32)
    a = np.random.default_rng(seed).standard_normal((R, C)).astype(np.float32)
    c = np.zeros((R, C), np.float32)
    result = UNTIL.run(bound, steps, a, c)
    assert not result.races
    np.testing.assert_allclose(c, a * trips_until(bound, steps), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bound", [0, 7, 100])
def test_the_ptoas_planner_places_the_loop_buffers(bound):
    """memory_planner=PTOAS: the PTO-level planner sees the while body as a loop (buffers
    live across trips stay apart)."""
    steps = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)
    a = np.random.default_rng(bound).standard_normal((R, C)).astype(np.float32)
    c = np.zeros((R, C), np.float32)
    result = ir.compile(UntilBound, None, memory_planner="PTOAS").run(bound, steps, a, c)
    assert not result.races
    np.testing.assert_allclose(c, a * trips_until(bound, steps), rtol=1e-5, atol=1e-5)


def test_zero_trips_keep_the_initial_values():
    a = np.ones((R, C), np.float32)
    c = np.full((R, C), 3.0, np.float32)
    UNTIL.run(0, np.ones(T, np.int32), a, c)
    np.testing.assert_array_equal(c, np.zeros((R, C), np.float32))


def test_the_loop_is_an_scf_while_with_sync_inside():
    """InsertSync treats the body as a loop of unknown trip count: the load -> exp -> store
    chain of one trip and the buffer reuse of the next are ordered inside the body."""
    text = ROWS["pl_while"].pto_text["k"]
    head = text.index("scf.while")
    body = text[head:text.index("return", head)]
    assert "scf.condition(" in body and "^bb0(" in body
    assert "wait_flag" in body and "set_flag" in body


def test_a_loop_that_never_ends_stops_at_the_step_limit():
    compiled = _compiled(NeverEnds)
    a = np.ones((R, C), np.float32)
    c = np.zeros((R, C), np.float32)
    config = RunConfig(sim_limits=SimLimits(max_scalar_steps=20_000))
    with pytest.raises(PtocError, match="scalar steps") as info:
        compiled.run(a, c, config=config)
    assert "max_scalar_steps" in str(info.value)


def test_a_trip_that_changes_no_carry_is_reported_at_once():
    a = np.ones((R, C), np.float32)
    c = np.zeros((R, C), np.float32)
    with pytest.raises(PtocError, match="never ends") as info:
        _compiled(ForgetsToCount).run(3, a, c)
    assert "i = i + 1" in str(info.value)
    _compiled(ForgetsToCount).run(0, a, c)     # zero trips: fine


JUMPS = _compiled(Jumps)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(0, T + 1), skip=st.integers(0, T + 1), seed=st.integers(0, 2**16))
def test_break_and_continue_match_python(n, skip, seed):
    a = np.random.default_rng(seed).standard_normal((T * R, C)).astype(np.float32)
    c = np.full((T * R, C), 7.0, np.float32)
    result = JUMPS.run(n, skip, a, c)
    assert not result.races
    want = np.full_like(c, 7.0)
    for i in range(T):
        if i == skip:
            continue
        if i >= n:
            break
        want[i * R:(i + 1) * R] = np.exp(a[i * R:(i + 1) * R])
    np.testing.assert_allclose(c, want, rtol=1e-6, atol=1e-6)



MIXED = {split.name: _compiled(mixed_rows(split))
         for split in (pl.SplitMode.NONE, pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT)}


@pytest.mark.parametrize("split", sorted(MIXED))
@settings(max_examples=4, deadline=None)
@given(n=st.integers(0, 4), seed=st.integers(0, 2**16))
def test_a_mixed_kernel_runs_its_while_on_both_cores(split, n, seed):
    a = (np.random.default_rng(seed).standard_normal((4 * R, R)) * 0.25).astype(np.float16)
    out = np.full((4 * R, R), 5.0, np.float32)
    result = MIXED[split].run(n, a, out)
    assert not result.races
    want = np.full_like(out, 5.0)
    for i in range(n):
        block = a[i * R:(i + 1) * R].astype(np.float32)
        want[i * R:(i + 1) * R] = np.exp(block @ block)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_while_inside_a_pipelined_loop(n):
    a = np.random.default_rng(n).standard_normal((4 * R, C)).astype(np.float32)
    c = np.zeros((4 * R, C), np.float32)
    result = _compiled(WhileInPipeline).run(n, a, c)
    assert not result.races
    np.testing.assert_array_equal(c, a * 2.0 ** n)
