"""@pl.jit: specialisation, outlining, incore discovery, the cache key and the caches."""

import numpy as np
import pytest

from ptoc.dtypes import FunctionType, MemorySpace
from ptoc.errors import PtocError
from ptoc.passes import MemoryPlanner, PassContext
from ptoc.runtime import RunConfig

import jit_kernels as kernels

rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(autouse=True)
def _fresh_caches():
    for fn in (kernels.linear_relu, kernels.mm32, kernels.scaled, kernels.tensor_mm):
        fn._cache.clear()


def test_incore_kernels_are_discovered_and_run():
    a, b, bias = f32(64, 64), f32(64, 64), f32(64, 64)
    y = np.zeros((64, 64), np.float32)
    kernels.linear_relu(a, b, bias, y)
    np.testing.assert_allclose(y, np.maximum(a @ b + bias, 0), rtol=1e-4, atol=1e-4)
    program = kernels.linear_relu.specialize(a, b, bias, y)
    kinds = [(f.name, f.func_type) for f in program.functions]
    assert kinds == [("cube", FunctionType.InCore), ("bias_relu", FunctionType.InCore),
                     ("linear_relu", FunctionType.Orchestration)]


def test_at_scope_is_outlined_with_name_hint():
    x = rng.standard_normal((32, 32)).astype(np.float16)
    w = rng.standard_normal((32, 32)).astype(np.float16)
    y = np.zeros((32, 32), np.float32)
    kernels.mm32(x, w, y)
    np.testing.assert_allclose(y, x.astype(np.float32) @ w.astype(np.float32), rtol=1e-2, atol=1e-2)
    names = [f.name for f in kernels.mm32.lower(x, w, y).functions]
    assert names == ["mm32_kernel", "mm32"]


def test_scalars_are_specialisation_constants():
    x, y = f32(32, 64), np.zeros((32, 64), np.float32)
    kernels.scaled(x, y, 2.5)
    np.testing.assert_allclose(y, 2.5 * x)
    kernels.scaled(x, y, 2.5)
    assert len(kernels.scaled._cache) == 1, "same signature: cached"
    kernels.scaled(x, y, -1.0)
    np.testing.assert_allclose(y, -x)
    assert len(kernels.scaled._cache) == 2, "a new scalar value compiles a new kernel"
    program = kernels.scaled.specialize(x, y, 4.0)
    assert [p.var.name for p in program.functions[-1].params] == ["x", "y"]


def test_shapes_and_dtypes_split_the_key():
    x, y = f32(32, 64), np.zeros((32, 64), np.float32)
    key = kernels.scaled.cache_key(x, y, 1.0)
    assert key == kernels.scaled.cache_key(f32(32, 64), np.ones((32, 64), np.float32), 1.0)
    assert key != kernels.scaled.cache_key(f32(32, 64).astype(np.float16),
                                           np.zeros((32, 64), np.float16), 1.0)
    assert key != kernels.scaled.cache_key(f32(64, 64), np.zeros((64, 64), np.float32), 1.0)
    assert key != kernels.scaled.cache_key(x, y, 1.0, config=RunConfig(platform="a5sim"))


def test_dbc_flag_splits_the_key_only_under_pypto():
    x, w, y = f32(160, 64), f32(64, 160), np.zeros((160, 160), np.float32)
    off = kernels.tensor_mm.cache_key(x, w, y)
    on = kernels.tensor_mm.cache_key(x, w, y, config=RunConfig(enable_pypto_l0c_double_buffer=True))
    assert off != on
    with PassContext(enable_pypto_l0c_double_buffer=True):
        assert kernels.tensor_mm.cache_key(x, w, y) == on, "the active context is read"
    ptoas_off = kernels.tensor_mm.cache_key(x, w, y, config=RunConfig(memory_planner=MemoryPlanner.PTOAS))
    ptoas_on = kernels.tensor_mm.cache_key(x, w, y, config=RunConfig(
        memory_planner=MemoryPlanner.PTOAS, enable_pypto_l0c_double_buffer=True))
    assert ptoas_off == ptoas_on != off


def test_flag_from_context_recompiles_with_two_acc_buffers():
    x, w = f32(160, 64), f32(64, 160)
    y = np.zeros((160, 160), np.float32)
    first = kernels.tensor_mm.compile(x, w, y)
    with PassContext(enable_pypto_l0c_double_buffer=True):
        second = kernels.tensor_mm.compile(x, w, y)
        kernels.tensor_mm(x, w, y)
    np.testing.assert_allclose(y, x @ w, rtol=1e-3, atol=1e-3)
    assert second is not first
    assert len(first.allocations_in(MemorySpace.Acc)) == 1
    assert len(second.allocations_in(MemorySpace.Acc)) == 2
    again = kernels.tensor_mm.compile(x, w, y)
    assert again is first, "flag off again: the first compile is reused"


def test_disk_cache_reloads_without_compiling(tmp_path, monkeypatch):
    from ptoc.jit.decorator import JITFunction

    fn = JITFunction(kernels.scaled.fn, cache_dir=tmp_path)
    x, y = f32(32, 64), np.zeros((32, 64), np.float32)
    fn(x, y, 3.0)
    assert len(list(tmp_path.glob("*.json"))) == 1
    fresh = JITFunction(kernels.scaled.fn, cache_dir=tmp_path)

    def boom(*args, **kwargs):
        raise AssertionError("compiled although the disk cache holds this signature")

    monkeypatch.setattr("ptoc.runtime.compile_ir", boom)
    fresh(x, y, 3.0)
    np.testing.assert_allclose(y, 3.0 * x)


def test_annotation_mismatch_and_arity_errors():
    x16 = rng.standard_normal((16, 32)).astype(np.float16)
    with pytest.raises(PtocError, match="annotation says"):
        kernels.mm32.specialize(x16, x16, np.zeros((16, 32), np.float32))
    with pytest.raises(PtocError, match="takes 3 arguments"):
        kernels.mm32.specialize(x16, x16)


def test_lower_returns_the_post_pass_program():
    x, y = f32(32, 64), np.zeros((32, 64), np.float32)
    lowered = kernels.scaled.lower(x, y, 2.0)
    assert "pl.tile.alloc" in lowered.as_python()


def test_lower_runs_the_passes_only_as_pypto_does(monkeypatch):
    # PyPTO's lower runs no code generation and touches no cache: a program whose codegen
    # fails still lowers, and the result is what compile() lowers to
    from ptoc.ir.equality import assert_structural_equal

    x, y = f32(32, 64), np.zeros((32, 64), np.float32)
    compiled = kernels.scaled.compile(x, y, 2.0, config=RunConfig(platform="a5sim"))
    kernels.scaled._cache.clear()

    def no_codegen(*_args, **_kwargs):
        raise AssertionError("lower() generated code")
    monkeypatch.setattr("ptoc.codegen.generate_kernels", no_codegen)
    lowered = kernels.scaled.lower(x, y, 2.0, config=RunConfig(platform="a5sim"))
    assert_structural_equal(lowered, compiled.program)
    assert kernels.scaled._cache == {}


def test_a_mixed_kernel_runs_and_reloads_from_the_disk_cache(tmp_path, monkeypatch):
    """A mixed scope compiles to one core group (one PTO module for its AIC and AIV
    kernels); the disk cache entry holds that module and reloads without compiling."""
    from ptoc.jit.decorator import JITFunction

    a, b = (rng.standard_normal((64, 64)).astype(np.float16) for _ in range(2))
    bias, out = f32(64, 64), np.zeros((64, 64), np.float32)
    want = a.astype(np.float32) @ b.astype(np.float32) + bias
    JITFunction(kernels.mixed_mm_bias.fn, cache_dir=tmp_path)(a, b, bias, out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)

    def boom(*args, **kwargs):
        raise AssertionError("compiled although the disk cache holds this signature")

    monkeypatch.setattr("ptoc.runtime.compile_ir", boom)
    out[:] = 0
    JITFunction(kernels.mixed_mm_bias.fn, cache_dir=tmp_path)(a, b, bias, out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
