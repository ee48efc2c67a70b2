"""``x.shape`` in a kernel: ``x.shape[i]`` folds at parse time (pl.static_assert can check
it), ``M, N = x.shape`` and ``K = x.shape[1] // 2`` bind constants so tiles shaped by them are
static; checked against numpy, and the failing/ambiguous forms are refused."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.errors import ParseError

x = np.random.default_rng(8).standard_normal((64, 128)).astype(np.float32)


@pl.jit.incore
def halves(a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    pl.static_assert(a.shape[1] == 128, "expected 128 columns")
    pl.static_assert(a.shape[-2] == out.shape[0])
    M, N = a.shape
    K = a.shape[1] // 2
    left = pl.load(a, [0, 0], [M, K])
    right = pl.load(a, [0, K], [M, N - K])
    pl.store(pl.mul(left, 2.0), [0, 0], out)
    pl.store(pl.add(right, 1.0), [0, K], out)
    return out


@pl.jit
def run_halves(a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    out = halves(a, out)
    return out


def test_shape_dims_are_parse_time_constants():
    out = np.full_like(x, np.nan)
    run_halves(x, out)
    np.testing.assert_array_equal(out, np.concatenate([x[:, :64] * 2, x[:, 64:] + 1], axis=1))


@pl.jit
def wrong_width(a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    pl.static_assert(a.shape[1] == 64, "expected 64 columns")
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.exp(a)
    return out


@pl.jit
def rebinds(a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    M = 3
    M, N = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.exp(a)
    return out


@pl.jit
def past_the_rank(a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    pl.static_assert(a.shape[2] == 1)
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.exp(a)
    return out


@pytest.mark.parametrize("fn, phrase", [
    (wrong_width, "pl.static_assert failed: expected 64 columns"),
    (rebinds, "'M' is already a variable"),
    (past_the_rank, r"'a.shape\[2\]' needs a constant index in \[-2, 2\)"),
], ids=["assert", "rebind", "rank"])
def test_refused_shape_forms(fn, phrase):
    with pytest.raises(ParseError, match=phrase):
        fn(x, np.zeros_like(x))
