"""@pl.jit functions for the dynamic-dimension cache-key tests (read from source)."""

import ptoc.language as pl

M = pl.dynamic("M")


@pl.jit.inline
def add_tiles(a: pl.Tensor, b: pl.Tensor, out: pl.Tensor):
    m = pl.tensor.dim(a, 0)
    for i in pl.range(0, m, 16):
        x = pl.load(a, [i, 0], [16, 64])
        y = pl.load(b, [i, 0], [16, 64])
        out = pl.store(pl.add(x, y), [i, 0], out)
    return out


@pl.jit
def add_rows(a: pl.Tensor[[M, 64], pl.FP32], b: pl.Tensor[[M, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = add_tiles(a, b, out)
    return out


@pl.jit
def add_static(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = add_tiles(a, b, out)
    return out


@pl.jit
def add_bound(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    a.bind_dynamic(0, M)
    b.bind_dynamic(0, M)
    out.bind_dynamic(0, M)
    with pl.at(level=pl.Level.CORE_GROUP):
        out = add_tiles(a, b, out)
    return out


@pl.jit.incore
def add_incore_local(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    R = pl.dynamic("R")             # a symbol of this body (PyPTO's form)
    a.bind_dynamic(0, R)
    b.bind_dynamic(0, R)
    out.bind_dynamic(0, R)
    out = add_tiles(a, b, out)
    return out


@pl.jit
def add_cascaded(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = add_incore_local(a, b, out)   # the callee's dynamic dim makes these dims dynamic
    return out


@pl.jit.incore
def add_incore_annotated(a: pl.Tensor[[M, 64], pl.FP32], b: pl.Tensor[[M, 64], pl.FP32],
                         out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    out = add_tiles(a, b, out)
    return out


@pl.jit
def add_cascaded_annotation(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = add_incore_annotated(a, b, out)
    return out
