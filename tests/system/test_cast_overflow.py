"""pl.cast to a narrower float on the simulated core: integers past FP16's range become inf
(from 65520 on, as an IEEE round-to-nearest conversion does), not the largest finite value.
pl.cast's default mode rounds ties away from zero, numpy's conversion ties to even, so the
inputs avoid ties below 65520 (odd, or 5 + 8k modulo the spacing 32) plus the tie at +-65520 itself, where both give inf."""

from __future__ import annotations

import numpy as np

import ptoc.language as pl


@pl.jit
def narrow(x: pl.Tensor[[8, 64], pl.INT32], out: pl.Out[pl.Tensor[[8, 64], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.cast(x, pl.FP16)
    return out


def test_int32_to_fp16_matches_numpy_bit_for_bit_across_the_overflow_boundary():
    edge = np.arange(65471, 65600, 2, dtype=np.int64)[:64]
    edge[0] = 65520
    rows = [edge, -edge, edge * 300, (32768 + 1000 * np.arange(64) + 5) * (-1) ** np.arange(64),
            np.full(64, 2**31 - 1), np.full(64, -2**31), np.arange(64), -np.arange(64)]
    x = np.stack(rows).astype(np.int32)
    out = np.zeros((8, 64), np.float16)
    narrow(x, out)
    with np.errstate(over="ignore"):
        golden = x.astype(np.float16)
    assert np.isinf(golden).sum() > 100
    np.testing.assert_array_equal(out.view(np.uint16), golden.view(np.uint16))
