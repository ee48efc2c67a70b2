"""@pl.jit.incore kernels composed by a @pl.jit entry: literal scalars, intermediate tensors."""

import pypto.language as pl
import torch
from pypto.runtime import RunConfig


@pl.jit.incore
def add_const(a: pl.Tensor, s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    pl.store(pl.add(pl.load(a, [0, 0], [64, 64]), s), [0, 0], out)
    return out


@pl.jit.incore
def mul(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    pl.store(pl.mul(pl.load(a, [0, 0], [64, 64]), pl.load(b, [0, 0], [64, 64])), [0, 0], out)
    return out


@pl.jit
def quadratic(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    p = pl.create_tensor([64, 64], dtype=pl.FP32)
    p = add_const(x, 1.0, p)
    q = pl.create_tensor([64, 64], dtype=pl.FP32)
    q = add_const(x, -3.0, q)
    out = mul(p, q, out)
    return out


if __name__ == "__main__":
    torch.manual_seed(3)
    x = torch.randn(64, 64)
    out = torch.zeros(64, 64)
    quadratic(x, out, config=RunConfig())
    assert torch.allclose(out, (x + 1.0) * (x - 3.0), rtol=1e-5, atol=1e-5)
    print("OK")
