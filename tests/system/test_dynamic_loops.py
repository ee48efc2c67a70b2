"""Loops whose trip count comes from a pl.dynamic dimension (a ceil-div of M by the block):
pl.range and pl.pipeline (replicated, with a run-time remainder) run every M, the last block's
valid tail included, exact against numpy; one compile serves every M."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir

M = pl.dynamic("M")
T = 16


def _blocks(stage: int):
    """Row blocks over ceil(M / T) iterations: a row-local result per block and a column sum
    carried from the first block through the others (the tail's stale padding would show
    in the sum)."""

    @pl.program
    class Blocks:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]],
              s: pl.Out[pl.Tensor[[1, 64], pl.FP32]]
              ) -> tuple[pl.Tensor[[M, 64], pl.FP32], pl.Tensor[[1, 64], pl.FP32]]:
            m = pl.tensor.dim(a, 0)
            acc = pl.col_sum(pl.slice(a, [T, 64], [0, 0], clamp=True))
            if stage == 1:
                for b in pl.range(1, (m + T - 1) // T, 1):
                    x = pl.slice(a, [T, 64], [b * T, 0], clamp=True)
                    acc = pl.add(acc, pl.col_sum(x))
                    out = pl.assemble(out, pl.row_expand_sub(x, pl.row_max(x)), [b * T, 0])
            else:
                for b in pl.pipeline(1, (m + T - 1) // T, 1, stage=stage):
                    x = pl.slice(a, [T, 64], [b * T, 0], clamp=True)
                    acc = pl.add(acc, pl.col_sum(x))
                    out = pl.assemble(out, pl.row_expand_sub(x, pl.row_max(x)), [b * T, 0])
            s[:] = acc
            return out, s

    return ir.compile(Blocks)


def _tile_blocks():
    """The same with tiles: pl.load valid over pl.min(m - i, T) rows in a 2-stage pipeline."""

    @pl.program
    class TileBlocks:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
            m = pl.tensor.dim(a, 0)
            for b in pl.pipeline(0, (m + T - 1) // T, 1, stage=2):
                i = b * T
                x = pl.load(a, [i, 0], [T, 64], valid_shape=[pl.min(m - i, T), 64])
                tmp = pl.create_tile([T, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
                out = pl.store(pl.row_expand_sub(x, pl.row_max(x, tmp)), [i, 0], out)
            return out

    return ir.compile(TileBlocks)


@pytest.fixture(scope="module", params=[1, 2, 3])
def blocks(request):
    return _blocks(request.param)


@pytest.fixture(scope="module")
def tile_blocks():
    return _tile_blocks()


def _rows(m, order):
    """Integer data (sums exact below 2**24); 'rising' puts the largest rows in the tail."""
    rng = np.random.default_rng(m)
    a = rng.integers(-50, 50, (m, 64)).astype(np.float32)
    if order == "rising":
        a += np.arange(m, dtype=np.float32)[:, None] * 20
    return a


@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 300), order=st.sampled_from(["random", "rising"]))
def test_blocks_over_a_run_time_trip_count_run_every_m_exact(blocks, m, order):
    a = _rows(m, order)
    out = np.full((m, 64), 7.0, np.float32)
    s = np.zeros((1, 64), np.float32)
    result = blocks.run(a, out, s)
    assert result.races == []
    want = a - a.max(axis=1, keepdims=True)
    want[:T] = 7.0                                  # the first block only feeds the sum
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(s[0], a.sum(axis=0))


@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 300), order=st.sampled_from(["random", "rising"]))
def test_a_tile_pipeline_over_a_run_time_trip_count_runs_every_m_exact(tile_blocks, m, order):
    a = _rows(m, order)
    out = np.full((m, 64), 7.0, np.float32)
    result = tile_blocks.run(a, out)
    assert result.races == []
    np.testing.assert_array_equal(out, a - a.max(axis=1, keepdims=True))
