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


@pl.jit.inline
def shift(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.sub(pl.load(a, [0, 0], [32, 64]), 0.5), [0, 0], c)
    return c


@pl.jit.inline
def halve(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.mul(pl.load(a, [0, 0], [32, 64]), 0.5), [0, 0], c)
    return c


@pl.jit
def shift_then_halve(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    mid = pl.create_tensor([32, 64], dtype=pl.FP32)
    mid = shift(a, mid)
    out = halve(mid, out)
    return out


@pl.jit.opaque
def rows_twice(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.add(pl.load(a, [i * 16, 0], [16, 64]), 2.0), [i * 16, 0], c)
    return c


@pl.jit
def via_opaque(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = rows_twice(a, out)
    return out


@pl.jit.host
def host_entry(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = via_opaque(a, out)
    return out


@pl.jit.host
def host_to_a_rank(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = via_opaque(a, out, device=1)
    return out


@pl.jit
def entry_calls_entry(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = via_opaque(a, out)
    return out


@pl.jit.incore(level=pl.Level.AIV)
def vector_kernel(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = pl.store(pl.neg(pl.load(a, [0, 0], [32, 64])), [0, 0], out)
    return out


@pl.jit
def calls_vector_kernel(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = vector_kernel(a, out)
    return out


@pl.jit(auto_scope=False)
def hand_scoped(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.scope():
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.add(pl.load(a, [0, 0], [32, 64]), 5.0), [0, 0], out)
    return out


@pl.jit
def from_signature(a: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
                   bias: pl.Scalar[pl.FP32] = 0.25):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [32, 64]), bias), [0, 0], out)
    return out
