"""@pl.jit kernels whose compiled program folds values from outside their source text: a
module constant, a closure value, a default argument, a kernel from another module."""

import ptoc.language as pl

from cache_helpers import scale_by_factor

SCALE = 1.0


@pl.jit
def by_module_constant(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.muls(pl.load(x, [0, 0], [16, 64]), SCALE), [0, 0], y)
    return y


def make_by_closure(factor):
    @pl.jit
    def by_closure(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        y = pl.store(pl.muls(pl.load(x, [0, 0], [16, 64]), factor), [0, 0], y)
        return y
    return by_closure


@pl.jit
def by_default(x: pl.Tensor, y: pl.Out[pl.Tensor], s: pl.FP32 = 2.0):
    y = pl.store(pl.muls(pl.load(x, [0, 0], [16, 64]), s), [0, 0], y)
    return y


@pl.jit
def by_helper(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = scale_by_factor(x, y)
    return y
