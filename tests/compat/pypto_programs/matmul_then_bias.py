"""A cube scope and a vector scope chained through a scratch tensor, with a task dependency."""

import pypto.language as pl
import torch
from pypto.runtime import RunConfig

M, K, N = 64, 64, 64


@pl.jit
def linear(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, tmp: pl.Out[pl.Tensor],
           y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear") as cube:
        xm = pl.load(x, [0, 0], [M, K], target_memory=pl.MemorySpace.Mat)
        wm = pl.load(w, [0, 0], [K, N], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(xm, target_memory=pl.MemorySpace.Left),
                        pl.move(wm, target_memory=pl.MemorySpace.Right))
        pl.store(acc, [0, 0], tmp)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_bias", deps=[cube]):
        t = pl.load(tmp, [0, 0], [M, N])
        pl.store(pl.add(t, pl.load(bias, [0, 0], [M, N])), [0, 0], y)
    return tmp, y


if __name__ == "__main__":
    torch.manual_seed(2)
    x = torch.randn(M, K, dtype=torch.float16)
    w = torch.randn(K, N, dtype=torch.float16)
    bias = torch.randn(M, N, dtype=torch.float32)
    tmp = torch.zeros(M, N, dtype=torch.float32)
    y = torch.zeros(M, N, dtype=torch.float32)
    linear(x, w, bias, tmp, y, config=RunConfig(device_id=0, enable_pmu=0))
    product = x.float() @ w.float()
    assert torch.allclose(tmp, product, rtol=1e-3, atol=1e-3), "matmul scratch"
    assert torch.allclose(y, product + bias, rtol=1e-3, atol=1e-3), "bias"
    print("OK")
