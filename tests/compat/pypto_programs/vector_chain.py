"""relu(a * b + a) in one scope, with a bare store; fp32 and bf16 tensors written back in place."""

import pypto.language as pl
import torch
from pypto.runtime import RunConfig

ROWS, COLS = 32, 128


@pl.jit
def fused(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [ROWS, COLS])
        tb = pl.load(b, [0, 0], [ROWS, COLS])
        pl.store(pl.relu(pl.add(pl.mul(ta, tb), ta)), [0, 0], out)
    return out


if __name__ == "__main__":
    torch.manual_seed(1)
    for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 5e-2)):
        a = torch.randn(ROWS, COLS, dtype=dtype)
        b = torch.randn(ROWS, COLS, dtype=dtype)
        out = torch.zeros(ROWS, COLS, dtype=dtype)
        fused(a, b, out, config=RunConfig(platform="a2a3"))
        expected = torch.relu(a.float() * b.float() + a.float()).to(dtype)
        assert torch.allclose(out.float(), expected.float(), rtol=tol, atol=tol), \
            f"{dtype}: max diff {(out.float() - expected.float()).abs().max().item()}"
    print("OK")
