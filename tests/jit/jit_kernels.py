"""@pl.jit kernels used by the jit tests (jit functions must live in a source file)."""

import ptoc.language as pl


@pl.jit.incore
def cube(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    ta = pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
    tb = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
    c = pl.store(pl.matmul(ta, tb), [0, 0], c)
    return c


@pl.jit.incore
def bias_relu(x: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    s = pl.add(pl.load(x, [0, 0], [64, 64]), pl.load(bias, [0, 0], [64, 64]))
    y = pl.store(pl.relu(s), [0, 0], y)
    return y


@pl.jit
def linear_relu(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
    tmp = cube(a, b, tmp)
    y = bias_relu(tmp, bias, y)
    return y


@pl.jit
def mm32(x: pl.Tensor[[32, 32], pl.FP16], w: pl.Tensor[[32, 32], pl.FP16],
         y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm32_kernel"):
        xl1 = pl.load(x, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        wl1 = pl.load(w, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(xl1, target_memory=pl.Mem.Left),
                        pl.move(wl1, target_memory=pl.Mem.Right))
        y = pl.store(acc, [0, 0], y)
    return y


@pl.jit
def scaled(x: pl.Tensor, y: pl.Out[pl.Tensor], s: pl.FP32):
    t = pl.load(x, [0, 0], [32, 64])
    y = pl.store(pl.muls(t, s), [0, 0], y)
    return y


@pl.jit
def tensor_mm(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        y[:] = pl.matmul(x, w, out_dtype=pl.FP32)
    return y


@pl.jit
def mixed_mm_bias(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        out[:] = pl.add(pl.matmul(a, b, out_dtype=pl.FP32), bias)
    return out


@pl.jit
def relu_of_unwritten(bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([64, 64], dtype=pl.FP32)    # nothing writes it: garbage on a device
    y = bias_relu(tmp, bias, y)
    return y
