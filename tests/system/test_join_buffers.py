"""Loop carries and branch results never share a buffer with a value still in use.

PyPTO lets an ``if`` result take its then-branch value's buffer and a loop carry its init
value's, and packs the two arms of an ``if`` into one buffer. When both arms' values (or the
value and its reader) are live at once, that hands a reader the wrong bytes with no error.
ptoc copies where a copy exists (Vec), rejects where none does (Acc: there is no Acc -> Acc
path, PyPTO's "cannot reconcile divergent L0C accumulator buffers"), and otherwise keeps
PyPTO's sharing. Each program runs under both planners and both branch directions.
"""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.codegen.errors import CodegenError
from ptoc.errors import PassError

N = 32
PLANNERS = [None, "PTOAS"]
rng = np.random.default_rng(5)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def f16(*shape):
    return rng.standard_normal(shape).astype(np.float16)


def vec_branches(read_then_value_after: bool):
    """Both arms yield a tile made before the ``if``; optionally the then-arm's tile is read
    again after the ``if``."""

    @pl.program
    class VecBranches:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                   flag: pl.Scalar[pl.INT32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            t1 = pl.add(pl.load(a, [0, 0], [N, N]), pl.load(a, [0, 0], [N, N]))
            t2 = pl.mul(pl.load(b, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N]))
            if flag > 0:
                r = t1
            else:
                r = t2
            if read_then_value_after:
                r = pl.add(r, t1)
            y = pl.store(r, [0, 0], y)
            return y

    return VecBranches


@pl.program
class InitReadAfterTheLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        t0 = pl.load(a, [0, 0], [N, N])
        acc = t0
        for i in pl.range(3):
            acc = pl.add(acc, acc)
        y = pl.store(pl.sub(acc, t0), [0, 0], y)
        return y


def acc_branches(made_in_arms: bool):
    """Both arms yield an accumulator; either made inside its arm, or (``made_in_arms`` off)
    the then-arm yields one made before the ``if`` while the else-arm still extends another."""

    @pl.program
    class AccBranches:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[N, N], pl.FP16], b: pl.Tensor[[N, N], pl.FP16],
                   c: pl.Tensor[[N, N], pl.FP16], flag: pl.Scalar[pl.INT32],
                   y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            al = pl.move(pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat),
                         target_memory=pl.Mem.Left)
            br = pl.move(pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat),
                         target_memory=pl.Mem.Right)
            cr = pl.move(pl.load(c, [0, 0], [N, N], target_memory=pl.Mem.Mat),
                         target_memory=pl.Mem.Right)
            if made_in_arms:
                if flag > 0:
                    r = pl.matmul(al, cr)
                else:
                    r0 = pl.matmul(al, br)
                    r = pl.matmul_acc(r0, al, br)
            else:
                acc = pl.matmul(al, br)
                seed = pl.matmul(al, cr)
                if flag > 0:
                    r = seed
                else:
                    r = pl.matmul_acc(acc, al, br)
            y = pl.store(r, [0, 0], y)
            return y

    return AccBranches


@pl.program
class AccumulatorInitReadAfterTheLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[N, N], pl.FP16], b: pl.Tensor[[N, N], pl.FP16],
               y: pl.Out[pl.Tensor[[N, N], pl.FP32]], z: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        al = pl.move(pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        br = pl.move(pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        acc0 = pl.matmul(al, br)
        acc = acc0
        for i in pl.range(2):
            acc = pl.matmul_acc(acc, al, br)
        y = pl.store(acc, [0, 0], y)
        z = pl.store(acc0, [0, 0], z)
        return y


def _run(program, planner, *tensors):
    compiled = ir.compile(program, None, memory_planner=planner)
    result = compiled.run(*tensors)
    assert result.races == []
    return compiled


@pytest.mark.parametrize("planner", PLANNERS)
@pytest.mark.parametrize("flag", [1, 0])
def test_both_arms_made_before_the_if_stay_apart(planner, flag):
    a, b, y = f32(N, N), f32(N, N), np.zeros((N, N), np.float32)
    _run(vec_branches(read_then_value_after=False), planner, a, b, flag, y)
    np.testing.assert_array_equal(y, a + a if flag else b * b)


@pytest.mark.parametrize("planner", PLANNERS)
@pytest.mark.parametrize("flag", [1, 0])
def test_then_value_read_after_the_if_is_copied_first(planner, flag):
    a, b, y = f32(N, N), f32(N, N), np.zeros((N, N), np.float32)
    compiled = _run(vec_branches(read_then_value_after=True), planner, a, b, flag, y)
    np.testing.assert_array_equal(y, (a + a if flag else b * b) + (a + a))
    assert "= pl.tile.move(r, target_memory=pl.Mem.Vec)" in compiled.program.as_python()


@pytest.mark.parametrize("planner", PLANNERS)
def test_loop_init_read_after_the_loop_is_copied_first(planner):
    a, y = f32(N, N), np.zeros((N, N), np.float32)
    _run(InitReadAfterTheLoop, planner, a, y)
    np.testing.assert_array_equal(y, 8 * a - a)


@pytest.mark.parametrize("planner", PLANNERS)
@pytest.mark.parametrize("flag", [1, 0])
def test_accumulators_made_in_the_arms_share_the_result_buffer(planner, flag):
    a, b, c, y = f16(N, N), f16(N, N), f16(N, N), np.zeros((N, N), np.float32)
    _run(acc_branches(made_in_arms=True), planner, a, b, c, flag, y)
    fa, fb, fc = (x.astype(np.float32) for x in (a, b, c))
    np.testing.assert_allclose(y, fa @ fc if flag else 2 * (fa @ fb), rtol=1e-3, atol=1e-3)


def test_divergent_accumulators_are_rejected_under_pypto():
    with pytest.raises(PassError, match="cannot reconcile divergent L0C accumulator buffers"):
        ir.compile(acc_branches(made_in_arms=False), None)


def test_divergent_accumulators_are_rejected_under_ptoas():
    with pytest.raises(CodegenError, match="cannot reconcile divergent L0C accumulator buffers"):
        ir.compile(acc_branches(made_in_arms=False), None, memory_planner="PTOAS")


@pytest.mark.parametrize("planner", PLANNERS)
def test_accumulator_init_read_after_the_loop_is_rejected(planner):
    with pytest.raises(PassError, match="Acc tile cannot be copied"):
        ir.compile(AccumulatorInitReadAfterTheLoop, None, memory_planner=planner)
