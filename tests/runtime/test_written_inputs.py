"""A tensor parameter declared In that a kernel writes anyway is the caller's buffer, as on
a device: the caller sees the write (a KV cache handed to a kernel's ``pl.Out``)."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.errors import RuntimeConfigError
from ptoc.runtime import RunConfig, run

R, C = 16, 64


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # run() writes its build_output/ in the working directory


@pl.program
class CacheUpdate:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, a: pl.Tensor[[R, C], pl.FP32], row: pl.Scalar[pl.INDEX],
             cache: pl.Out[pl.Tensor[[4 * R, C], pl.FP32]]) -> pl.Tensor[[4 * R, C], pl.FP32]:
        t = pl.load(a, [0, 0], [R, C])
        return pl.store(pl.add(t, 1.0), [row, 0], cache)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[R, C], pl.FP32], cache: pl.Tensor[[4 * R, C], pl.FP32],
             o: pl.Out[pl.Tensor[[4 * R, C], pl.FP32]]) -> pl.Tensor[[4 * R, C], pl.FP32]:
        cache = self.bump(a, 2 * R, cache)
        o = self.bump(a, R, o)
        return o


@pytest.mark.parametrize("chip", [False, True])
def test_an_input_a_kernel_writes_is_written_in_place(chip):
    a = np.random.default_rng(0).standard_normal((R, C)).astype(np.float32)
    cache = np.full((4 * R, C), 7.0, np.float32)
    o = np.zeros((4 * R, C), np.float32)
    run(CacheUpdate, a, cache, o, config=RunConfig(chip=chip))
    expected = np.full((4 * R, C), 7.0, np.float32)
    expected[2 * R:3 * R] = a + 1.0
    np.testing.assert_array_equal(cache, expected)
    np.testing.assert_array_equal(o[R:2 * R], a + 1.0)


def test_a_written_input_passed_read_only_is_an_error_an_unwritten_one_is_not():
    a = np.random.default_rng(1).standard_normal((R, C)).astype(np.float32)
    a.flags.writeable = False  # an input the program only reads may be read-only
    cache = np.full((4 * R, C), 7.0, np.float32)
    cache.flags.writeable = False
    with pytest.raises(RuntimeConfigError, match="writes tensor 'cache'.*read-only"):
        run(CacheUpdate, a, cache, np.zeros((4 * R, C), np.float32))
