"""A check that fails (the script asks for a wrong answer): the command exits 1."""

import pypto.language as pl
import torch


@pl.jit
def copy(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(a, [0, 0], [16, 64]), [0, 0], out)
    return out


if __name__ == "__main__":
    a = torch.ones(16, 64)
    out = torch.zeros(16, 64)
    copy(a, out)
    assert torch.equal(out, 2 * a), "copy is not a doubling"
