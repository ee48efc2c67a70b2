"""The hand-written Level-3 examples are correct programs: on the simulator they give numpy's
numbers with no data race (so the flags in them are complete)."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

sim = pytest.importorskip("ptoc.sim")

DATA = os.path.join(os.path.dirname(__file__), "data")


def _text(name: str) -> str:
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return f.read()


def test_kloop_matmul_example():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 256)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((256, 128)).astype(ml_dtypes.bfloat16)
    res = sim.simulate(_text("l3_kloop_matmul.pto"), {"a": a, "b": b, "c": np.zeros((128, 128), np.float32)})
    np.testing.assert_allclose(res.outputs["c"], a.astype(np.float32) @ b.astype(np.float32),
                               rtol=1e-4, atol=1e-3)
    assert not res.races


def test_bias_insert_example_on_a5():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((32, 32)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((32, 64)).astype(ml_dtypes.bfloat16)
    bias = rng.standard_normal((1, 64)).astype(np.float32)
    res = sim.simulate(_text("a5_bias_insert.pto"),
                       {"a": a, "b": b, "bias": bias, "out": np.zeros((32, 64), np.float32), "m": 32},
                       target="a5")
    np.testing.assert_allclose(res.outputs["out"], a.astype(np.float32) @ b.astype(np.float32) + bias,
                               rtol=1e-4, atol=1e-3)
    assert not res.races


def test_row_softmax_example():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((48, 64)).astype(np.float32)
    with np.errstate(all="ignore"):
        res = sim.simulate(_text("l3_row_softmax.pto"),
                           {"x": x, "y": np.zeros((48, 64), ml_dtypes.bfloat16), "rows": 48,
                            "scale": 0.5})
    z = x * 0.5
    e = np.exp(z - z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(res.outputs["y"].astype(np.float32), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-2, atol=1e-3)
    assert not res.races
