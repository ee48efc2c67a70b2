"""Kernels the orchestration pass tests launch: ``fill`` copies x into y (an ``Out``),
``bump`` adds a scalar to y in place (an ``InOut``)."""

KERNELS = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[32], pl.FP32], y: pl.Out[pl.Tensor[[32], pl.FP32]]) -> pl.Tensor[[32], pl.FP32]:
        t = pl.load(x, [0], [32])
        y = pl.store(t, [0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, s: pl.Scalar[pl.FP32], y: pl.InOut[pl.Tensor[[32], pl.FP32]]) -> pl.Tensor[[32], pl.FP32]:
        t = pl.load(y, [0], [32])
        y = pl.store(pl.adds(t, s), [0], y)
        return y

"""
