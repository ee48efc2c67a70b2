"""@pl.jit kernels written in forms PyPTO code uses (jit functions must live in a file)."""

import ptoc.language as pl


@pl.jit.incore
def add_scalar(a: pl.Tensor, s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    out = pl.store(pl.add(pl.load(a, [0, 0], [32, 64]), s), [0, 0], out)
    return out


@pl.jit.incore
def add_count(a: pl.Tensor, n: pl.Scalar[pl.INT32], out: pl.Out[pl.Tensor]):
    out = pl.store(pl.add(pl.load(a, [0, 0], [32, 64]), n), [0, 0], out)
    return out


@pl.jit
def literal_scalars(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.create_tensor([32, 64], dtype=pl.FP32)
    t = add_scalar(a, 1.5, t)
    out = add_scalar(t, 2, out)
    return out


@pl.jit
def fractional_count(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = add_count(a, 2.5, out)
    return out


@pl.jit
def same_name(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="same_name"):
        out = pl.store(pl.mul(pl.load(a, [0, 0], [32, 64]), 3.0), [0, 0], out)
    return out
