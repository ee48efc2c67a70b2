"""Every way a kernel can write a DDR tensor reaches the caller, or fails loudly.

A write that is silently dropped is the worst bug ptoc can have: the output tensor keeps
its old bytes and a check that compares it with a stale golden may even pass. Each case
here writes through one path (bare and assigned stores, stores in loops and branches,
slice windows, assemble sugar, explicit kernels that forget ``pl.Out``, kernels called for
effect, scopes with several outputs, a scope that reads and writes one tensor, ``@pl.jit``)
and checks the bytes against numpy; the guards at the end check that the runtime refuses,
rather than passes, a write it could not deliver.
"""

from dataclasses import replace

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import Direction
from ptoc.errors import InternalError, RuntimeConfigError

rng = np.random.default_rng(11)
N = 64


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def run(program, *tensors):
    compiled = ir.compile(program, None)
    result = compiled.run(*tensors)
    assert not result.races
    return compiled


@pl.program
class BareStoreInScope:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [N, N])
            pl.store(pl.add(t, t), [0, 0], c)
        return c


@pl.program
class BareStoreInLoop:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4 * N, N], pl.FP32], c: pl.Out[pl.Tensor[[4 * N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                t = pl.load(a, [i * N, 0], [N, N])
                pl.store(pl.exp(t), [i * N, 0], c)
        return c


@pl.program
class StoreInBranch:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], flag: pl.Scalar[pl.INT32],
             c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [N, N])
            if flag > 0:
                pl.store(pl.add(t, t), [0, 0], c)
            else:
                pl.store(pl.mul(t, t), [0, 0], c)
        return c


@pl.program
class AssembleSugar:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[2 * N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c[N:2 * N, 0:N] = pl.exp(a)
            c[0:N, 0:N] = pl.add(a, a)
        return c


@pl.program
class TwoOutputs:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]],
             d: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [N, N])
            pl.store(pl.add(t, t), [0, 0], c)
            d = pl.store(pl.exp(t), [0, 0], d)
        return c


@pl.program
class WriteThenRead:
    """The second scope must read what the first wrote (and not a stale tensor)."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        tmp = pl.create_tensor([N, N], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.exp(pl.load(a, [0, 0], [N, N])), [0, 0], tmp)
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.add(pl.load(tmp, [0, 0], [N, N]), pl.load(a, [0, 0], [N, N])), [0, 0], c)
        return c


@pl.program
class ReadModifyWrite:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            old = pl.load(c, [0, 0], [N, N])
            pl.store(pl.add(old, pl.load(a, [0, 0], [N, N])), [0, 0], c)
        return c


@pl.program
class ExplicitKernelForgetsOut:
    """The kernel declares ``c`` In, writes it and is called for effect (PyPTO lifts it)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Tensor[[N, N], pl.FP32]):
        t = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Vec)
        pl.store(pl.add(t, t), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        self.kernel(a, c)
        return c


@pl.jit
def jit_bare_store(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [N, N])
        pl.store(pl.relu(t), [0, 0], c)
    return c


def test_bare_store_in_scope():
    a, c = f32(N, N), np.zeros((N, N), np.float32)
    compiled = run(BareStoreInScope, a, c)
    np.testing.assert_array_equal(c, a + a)
    kernel = compiled.program.get_function("main_incore_0")
    assert [(p.var.name, p.direction) for p in kernel.params] == [
        ("a", Direction.In), ("c", Direction.Out)]


def test_bare_store_in_loop():
    a, c = f32(4 * N, N), np.zeros((4 * N, N), np.float32)
    run(BareStoreInLoop, a, c)
    np.testing.assert_allclose(c, np.exp(a), rtol=1e-6)


@pytest.mark.parametrize("flag", [1, 0])
def test_store_in_each_branch(flag):
    a, c = f32(N, N), np.zeros((N, N), np.float32)
    run(StoreInBranch, a, flag, c)
    np.testing.assert_array_equal(c, a + a if flag else a * a)


def test_assemble_sugar_into_row_windows():
    a, c = f32(N, N), np.zeros((2 * N, N), np.float32)
    run(AssembleSugar, a, c)
    np.testing.assert_array_equal(c[:N], a + a)
    np.testing.assert_allclose(c[N:], np.exp(a), rtol=1e-6)


def test_scope_with_two_outputs_returns_both():
    a, c, d = f32(N, N), np.zeros((N, N), np.float32), np.zeros((N, N), np.float32)
    compiled = run(TwoOutputs, a, c, d)
    np.testing.assert_array_equal(c, a + a)
    np.testing.assert_allclose(d, np.exp(a), rtol=1e-6)
    kernel = compiled.program.get_function("main_incore_0")
    assert len(kernel.return_types) == 2
    assert "_tuple_tmp" in compiled.program.as_python()


def test_second_scope_reads_the_first_scopes_write():
    a, c = f32(N, N), np.zeros((N, N), np.float32)
    run(WriteThenRead, a, c)
    exp = np.exp(a.astype(np.float64)).astype(np.float32)   # the vector unit's exp, rounded once
    np.testing.assert_allclose(c, exp + a, rtol=1e-6)


def test_scope_that_reads_and_writes_a_tensor_makes_it_inout():
    a, c = f32(N, N), f32(N, N)
    expected = c + a
    compiled = run(ReadModifyWrite, a, c)
    np.testing.assert_array_equal(c, expected)
    kernel = compiled.program.get_function("main_incore_0")
    assert {p.var.name: p.direction for p in kernel.params} == {
        "c": Direction.InOut, "a": Direction.In}


def test_explicit_kernel_writing_an_in_parameter_is_lifted_to_out():
    a, c = f32(N, N), np.zeros((N, N), np.float32)
    compiled = run(ExplicitKernelForgetsOut, a, c)
    np.testing.assert_array_equal(c, a + a)
    assert compiled.program.get_function("kernel").params[1].direction is Direction.Out


def test_jit_bare_store():
    a, c = f32(N, N), np.zeros((N, N), np.float32)
    jit_bare_store(a, c)
    np.testing.assert_array_equal(c, np.maximum(a, 0))


def test_runtime_refuses_a_write_to_an_in_parameter():
    """If a pass ever lost a direction, the run fails instead of dropping the write."""
    compiled = ir.compile(ExplicitKernelForgetsOut, None)
    kernel = compiled.program.get_function("kernel")
    forced = replace(kernel, params=tuple(replace(p, direction=Direction.In)
                                          for p in kernel.params))
    functions = tuple(forced if f is kernel else f for f in compiled.program.functions)
    compiled.program = replace(compiled.program, functions=functions)
    with pytest.raises(InternalError, match="wrote its In parameter 'c'"):
        compiled.run(f32(N, N), np.zeros((N, N), np.float32))


def test_one_array_passed_as_two_parameters_is_one_gm_tensor():
    """The kernel reads ``a`` and writes ``c``; passed the same array for both, it reads and
    writes the same GM bytes (as on a device), so the array ends as a + a."""
    compiled = ir.compile(ExplicitKernelForgetsOut, None)
    a = f32(N, N)
    want = a + a
    result = compiled.run(a, a)
    assert not result.races
    np.testing.assert_array_equal(a, want)
    assert [r.name for r in result.runs[0].sim.instructions if r.writes and
            r.writes[0].buffer.startswith("GM")] == ["pto.tstore"]
    assert {acc.buffer for r in result.runs[0].sim.instructions for acc in r.reads + r.writes
            if acc.buffer.startswith("GM")} == {"GM %a"}


def test_partly_overlapping_arguments_are_refused():
    compiled = ir.compile(ExplicitKernelForgetsOut, None)
    big = f32(N + 1, N)
    with pytest.raises(RuntimeConfigError, match="overlapping parts of one array"):
        compiled.run(big[:N], big[1:])


@pl.program
class StoreThroughSliceView:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[2 * N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            lower = c[N:2 * N, 0:N]
            pl.store(pl.exp(pl.load(a, [0, 0], [N, N])), [0, 0], lower)
        return c


def test_store_through_a_slice_view_writes_the_sliced_tensor():
    a, c = f32(N, N), np.zeros((2 * N, N), np.float32)
    compiled = run(StoreThroughSliceView, a, c)
    np.testing.assert_array_equal(c[:N], 0)
    np.testing.assert_allclose(c[N:], np.exp(a), rtol=1e-6)
    kernel = compiled.program.get_function("main_incore_0")
    assert {p.var.name: p.direction for p in kernel.params}["c"] is Direction.Out


@pl.program
class AssignedStoreThroughSliceView:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2 * N, N], pl.FP32], c: pl.Out[pl.Tensor[[2 * N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            upper = c[0:N, 0:N]
            src = a[N:2 * N, 0:N]
            upper = pl.store(pl.exp(pl.load(src, [0, 0], [N // 2, N])), [0, 0], upper)
            upper = pl.store(pl.load(src, [N // 2, 0], [N // 2, N]), [N // 2, 0], upper)
        return c


def test_assigned_store_and_load_through_slice_views():
    a, c = f32(2 * N, N), np.zeros((2 * N, N), np.float32)
    run(AssignedStoreThroughSliceView, a, c)
    half = N // 2
    np.testing.assert_allclose(c[:half], np.exp(a[N:N + half]), rtol=1e-6)
    np.testing.assert_array_equal(c[half:N], a[N + half:])
    np.testing.assert_array_equal(c[N:], 0)


@pl.program
class StoreResultEscapesTheLoop:
    """``new = pl.store(..., out)`` first bound inside a loop and returned after it (PyPTO's
    ConvertToSSA promotes it with the destination as its initial value)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[4 * N, N], pl.FP32],
               out: pl.Out[pl.Tensor[[4 * N, N], pl.FP32]]) -> pl.Tensor[[4 * N, N], pl.FP32]:
        for i in pl.range(4):
            t = pl.load(a, [i * N, 0], [N, N])
            out_new = pl.store(pl.add(t, t), [i * N, 0], out)
        return out_new


def test_store_result_first_bound_in_a_loop_names_the_tensor_after_it():
    a, out = f32(4 * N, N), np.zeros((4 * N, N), np.float32)
    compiled = run(StoreResultEscapesTheLoop, a, out)
    np.testing.assert_array_equal(out, a + a)
    assert compiled.program.get_function("kernel").body.stmts[-1].values[0].name == "out"


def _split_mixed(mode: str, bare: bool):
    """A matmul whose Vec epilogue the two AIV lanes split (``pl.split``), ending in a bare
    or an assigned store: each lane must write its own half."""
    store = "pl.store(pl.add(v, v), [0, 0], y)" if bare else "y = pl.store(pl.add(v, v), [0, 0], y)"
    return pl.parse_program(f"""
import ptoc.language as pl

@pl.program
class SplitEpilogue:
    @pl.function
    def main(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.{mode})]):
            am = pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
            v = pl.move(pl.matmul(am, bm), target_memory=pl.MemorySpace.Vec)
            {store}
        return y
""", filename="split_epilogue.py")


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("mode", ["UP_DOWN", "LEFT_RIGHT"])
@pytest.mark.parametrize("bare", [True, False])
def test_bare_and_assigned_stores_of_a_split_mixed_kernel(platform, mode, bare):
    from ptoc.runtime import RunConfig

    a, b, y = f32(32, 32), f32(32, 64), np.zeros((32, 64), np.float32)
    compiled = ir.compile(_split_mixed(mode, bare), None, platform=platform)
    result = compiled.run(a, b, y, config=RunConfig(platform=platform))
    assert result.races == []
    np.testing.assert_allclose(y, 2 * (a.astype(np.float64) @ b), rtol=1e-5, atol=1e-4)
