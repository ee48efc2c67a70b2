"""A ``pl.create_tensor`` result used as a matmul accumulator (PyPTO's K-loop idiom: the loop's
first step takes ``acc = pl.matmul(...)``, later ones ``acc = pl.matmul_acc(acc, ...)``) is an
Acc tile carried through the loop and the branch; it matches numpy. When the accumulation can
read the created tile before any matmul wrote it (every step accumulates), the simulator refuses the run instead of adding to whatever Acc held."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ptoc.language as pl
from ptoc.errors import PtocError

M, K, N, KC = 16, 256, 64, 64
BF16 = ml_dtypes.bfloat16
rng = np.random.default_rng(11)
A = rng.standard_normal((M, K)).astype(BF16)
W = rng.standard_normal((K, N)).astype(BF16)
GOLDEN = A.astype(np.float32) @ W.astype(np.float32)


@pl.jit
def k_loop(a: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.create_tensor([M, N], dtype=pl.FP32)
        for kb in pl.pipeline(0, K // KC, stage=2):
            k0 = kb * KC
            if k0 == 0:
                acc = pl.matmul(a[:, k0:k0 + KC], w[k0:k0 + KC, :], out_dtype=pl.FP32)
            else:
                acc = pl.matmul_acc(acc, a[:, k0:k0 + KC], w[k0:k0 + KC, :])
        out = pl.assemble(out, acc, [0, 0])
    return out


@pl.jit
def first_step_accumulates(a: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.create_tensor([M, N], dtype=pl.FP32)
        for kb in pl.range(K // KC):  # every step accumulates: the first reads nothing written
            acc = pl.matmul_acc(acc, a[:, kb * KC:kb * KC + KC], w[kb * KC:kb * KC + KC, :])
        out = pl.assemble(out, acc, [0, 0])
    return out


def test_accumulating_into_the_created_tile_before_a_matmul_is_refused():
    out = np.zeros((M, N), np.float32)
    with pytest.raises(PtocError, match=r"accumulates into %acc.*no earlier instruction of "
                                        r"this kernel wrote it") as info:
        first_step_accumulates(A, W, out)
    assert "test_created_accumulator.py" in str(info.value)  # names the user's line
    assert info.value.hint
