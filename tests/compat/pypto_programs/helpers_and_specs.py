"""@pl.jit.inline / @pl.jit.opaque helpers composed by a @pl.jit entry; a @pl.program run
return-style on tensors made from TensorSpecs; PyPTO's ir names (OptimizationStrategy)."""

import pypto.language as pl
import torch
from pypto import ir
from pypto.runtime import RunConfig, TensorSpec, run


@pl.jit.inline
def scale_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 128])
        pl.store(pl.mul(t, 4.0), [0, 0], y)
    return y


@pl.jit.opaque
def add_halves(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for col in pl.range(0, 128, 64):
        with pl.at(level=pl.Level.CORE_GROUP):
            block = pl.load(x, [0, col], [32, 64])
            shifted = pl.add(block, 1.0)
            pl.store(shifted, [0, col], y)
    return y


@pl.jit
def composed(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    scaled = scale_rows(x, pl.create_tensor([32, 128], dtype=pl.FP32))
    return add_halves(scaled, y)


@pl.program
class Square:
    @pl.function(type=pl.FunctionType.InCore)
    def square(self, x: pl.Tensor[[32, 128], pl.BF16], y: pl.Out[pl.Tensor[[32, 128], pl.FP32]]):
        t = pl.cast(pl.load(x, [0, 0], [32, 128]), pl.FP32)
        pl.store(pl.mul(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 128], pl.BF16], y: pl.Out[pl.Tensor[[32, 128], pl.FP32]]):
        y = self.square(x, y)
        return y


if __name__ == "__main__":
    x = torch.randn(32, 128)
    y = torch.zeros(32, 128)
    composed(x, y)
    assert torch.allclose(y, x * 4.0 + 1.0), (y - (x * 4.0 + 1.0)).abs().max()
    assert len(composed.lower(x, y).functions) == 4  # entry, opaque, two kernels

    specs = [TensorSpec("x", [32, 128], torch.bfloat16, init_value=torch.randn),
             TensorSpec("y", [32, 128], torch.float32, is_output=True)]
    tensors = {spec.name: spec.create_tensor() for spec in specs}
    inputs = [tensors[spec.name] for spec in specs if not spec.is_output]
    compiled = run(Square, config=RunConfig(strategy=ir.OptimizationStrategy.Default))
    out = compiled(*inputs)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    assert torch.allclose(out, tensors["x"].float() ** 2)
    print("OK")
