"""Bare stores inside a loop: each iteration writes its own row block of the output."""

import pypto.language as pl
import torch
from pypto.runtime import RunConfig

ROWS, COLS, BLOCK = 128, 64, 32


@pl.jit
def row_softmax(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(ROWS // BLOCK):
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, COLS])
            scratch = pl.create_tile([BLOCK, COLS], dtype=pl.FP32,
                                     target_memory=pl.MemorySpace.Vec)
            m: pl.Tile[[BLOCK, 1], pl.FP32] = pl.row_max(t, scratch)
            e = pl.exp(pl.row_expand_sub(t, m))
            s: pl.Tile[[BLOCK, 1], pl.FP32] = pl.row_sum(e, scratch)
            pl.store(pl.row_expand_div(e, s), [i * BLOCK, 0], out)
    return out


if __name__ == "__main__":
    torch.manual_seed(4)
    x = torch.randn(ROWS, COLS)
    out = torch.zeros(ROWS, COLS)
    row_softmax(x, out, config=RunConfig(platform="a5sim"))
    expected = torch.softmax(x, dim=-1)
    assert torch.allclose(out, expected, rtol=1e-5, atol=1e-5), \
        f"max diff {(out - expected).abs().max().item()}"
    print("OK")
