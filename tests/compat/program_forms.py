"""Module-level @pl.function kernels called by name from a @pl.program (PyPTO's form)."""

import ptoc.language as pl


@pl.function(type=pl.FunctionType.InCore)
def scale(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
          ) -> pl.Tensor[[16, 64], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 64])
    pl.store(pl.mul(t, 2.0), [0, 0], y)
    return y


@pl.program
class TwoScales:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
              ) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        pl.store(pl.add(t, 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
             ) -> pl.Tensor[[16, 64], pl.FP32]:
        a = pl.create_tensor([16, 64], dtype=pl.FP32)
        a = scale(x, a)
        b = pl.create_tensor([16, 64], dtype=pl.FP32)
        b = self.shift(a, b)
        y = scale(b, y)
        return y


@pl.inline
def doubled(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.mul(pl.load(x, [0, 0], [16, 64]), 2.0), [0, 0], y)
    return y


@pl.program
class Quadruple:
    @pl.inline
    def again(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        y = doubled(x, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        mid = pl.create_tensor([16, 64], dtype=pl.FP32)
        mid = doubled(x, mid)
        y = self.again(mid, y)
        return y


@pl.inline
def twice(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    return pl.mul(x, 2.0)


@pl.jit.incore
def plus_twice(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y[:] = pl.add(twice(x), x)
    return y


@pl.jit
def jit_calls_inline(x: pl.Tensor, out: pl.Out[pl.Tensor], out3: pl.Out[pl.Tensor]):
    """A module-level @pl.inline called from a @pl.jit body and from its incore callee."""
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = twice(x)
    out3 = plus_twice(x, out3)
    return out, out3
