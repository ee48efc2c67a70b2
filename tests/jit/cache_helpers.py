"""An @pl.jit.incore kernel in another module, folding that module's constant (the cache
tests change FACTOR and expect the entry kernel that calls it to recompile)."""

import ptoc.language as pl

FACTOR = 2.0


@pl.jit.incore
def scale_by_factor(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.muls(pl.load(x, [0, 0], [16, 64]), FACTOR), [0, 0], y)
    return y
