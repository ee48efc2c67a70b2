"""A @pl.program with a module-level kernel, run with pypto.runtime.run and ir.compile."""

import os
import sys
import tempfile

import pypto.language as pl
import torch
from pypto import ir
from pypto.backend import BackendType
from pypto.runtime import RunConfig, run


@pl.function(type=pl.FunctionType.InCore)
def negate(x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
           ) -> pl.Tensor[[32, 64], pl.FP32]:
    pl.store(pl.neg(pl.load(x, [0, 0], [32, 64])), [0, 0], y)
    return y


@pl.program
class Negate:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
             ) -> pl.Tensor[[32, 64], pl.FP32]:
        y = negate(x, y)
        return y


if __name__ == "__main__":
    x = torch.randn(32, 64)
    y = torch.zeros(32, 64)
    run(Negate, x, y, config=RunConfig(platform="a2a3sim"))
    assert torch.equal(y, -x)
    with tempfile.TemporaryDirectory() as tmp:
        out = ir.compile(Negate, output_dir=tmp, backend_type=BackendType.Ascend910B)
        assert os.path.isfile(os.path.join(out, "pto", "negate.pto")), os.listdir(out)
        again = ir.deserialize(ir.serialize(Negate))
        assert again.name == "Negate"
    print("OK", sys.argv[1:])
