"""A value computed in one pl.at scope and read by a later one: the first kernel stores it
into an Out parameter ConvertTensorToTileOps adds (``ret<i>_out``), the orchestration
allocates that tensor, and the second kernel reads it from GM (PyPTO's behaviour). Checked
against numpy, with a cube result, two results of one scope, a pl.cluster wrapper in
between, and the Out-parameter rebinding that would leave the caller's buffer unwritten."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.errors import PartialCodegenError, PassError

rng = np.random.default_rng(12)


@pl.jit
def cube_then_vector(a: pl.Tensor[[64, 96], pl.FP16], b: pl.Tensor[[96, 64], pl.FP16],
                     x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm"):
        prod = pl.matmul(a, b, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gate"):
        out[:] = pl.mul(pl.relu(prod), x)
    return out


@pl.jit
def clustered(a: pl.Tensor[[64, 96], pl.FP16], b: pl.Tensor[[96, 64], pl.FP16],
              x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.cluster():
        with pl.at(level=pl.Level.CORE_GROUP):
            prod = pl.matmul(a, b, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(pl.relu(prod), x)
    return out


@pl.jit
def two_results(x: pl.Tensor[[32, 64], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32],
                out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        hi = pl.maximum(x, y)
        lo = pl.minimum(x, y)
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.sub(hi, lo)
    return out


@pl.jit
def rebinds_out(x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.exp(x)
    return out


@pl.jit
def rebinds_out_through_a_cluster(x: pl.Tensor[[32, 64], pl.FP32],
                                  out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    with pl.cluster():
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.exp(x)
    return out


def _gemm_inputs():
    a = rng.standard_normal((64, 96)).astype(np.float16)
    b = rng.standard_normal((96, 64)).astype(np.float16)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    golden = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0) * x
    return a, b, x, golden


@pytest.mark.parametrize("fn", [cube_then_vector, clustered], ids=["plain", "cluster"])
def test_a_matmul_result_crosses_to_the_next_scope_through_gm(fn):
    a, b, x, golden = _gemm_inputs()
    out = np.full((64, 64), np.nan, np.float32)
    fn(a, b, x, out)
    np.testing.assert_allclose(out, golden, rtol=1e-5, atol=1e-5)
    program = fn.lower(a, b, x, out)
    gemm = next(f for f in program.functions if f.func_type is pl.FunctionType.AIC)
    assert [p.name for p in gemm.params][-1] == "ret0_out"
    assert gemm.params[-1].direction is pl.Direction.Out


def test_two_values_of_one_scope_each_get_an_output():
    x = rng.standard_normal((32, 64)).astype(np.float32)
    y = rng.standard_normal((32, 64)).astype(np.float32)
    out = np.full((32, 64), np.nan, np.float32)
    two_results(x, y, out)
    np.testing.assert_array_equal(out, np.abs(x - y))


@pytest.mark.parametrize("fn", [rebinds_out, rebinds_out_through_a_cluster],
                         ids=["plain", "cluster"])
def test_rebinding_an_out_parameter_is_refused_not_left_unwritten(fn):
    x = np.zeros((32, 64), np.float32)
    with pytest.raises(PassError, match=r"rebinds the name of the output parameter 'out'.*out\[:\] =") \
            as info:
        fn(x, np.zeros_like(x))
    # PyPTO's code generator refuses it: scripts catch PartialCodegenError, a RuntimeError
    assert isinstance(info.value, PartialCodegenError) and isinstance(info.value, RuntimeError)
    assert info.value.files == {}
