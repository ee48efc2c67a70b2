"""@pl.jit: two incore kernels (cube, then vector) through a DDR intermediate.

Run: python examples/05_jit_linear_relu.py
"""

import numpy as np

import ptoc.language as pl


@pl.jit.incore
def cube(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    ta = pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
    tb = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
    c = pl.store(pl.matmul(ta, tb), [0, 0], c)
    return c


@pl.jit.incore
def bias_relu(x: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.relu(pl.add(pl.load(x, [0, 0], [64, 64]), pl.load(bias, [0, 0], [64, 64]))), [0, 0], y)
    return y


@pl.jit
def linear_relu(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
    tmp = cube(a, b, tmp)
    y = bias_relu(tmp, bias, y)
    return y


def example_inputs():
    """Inputs for `ptoc run examples/05_jit_linear_relu.py` (outputs included, in order)."""
    rng = np.random.default_rng(4)
    a, b, bias = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(3))
    return a, b, bias, np.zeros((64, 64), np.float32)


def golden(inputs):
    """The numpy reference `ptoc run` compares against."""
    return {"y": np.maximum(inputs["a"] @ inputs["b"] + inputs["bias"], 0)}


def main(output_dir=None) -> float:
    a, b, bias, y = example_inputs()
    linear_relu(a, b, bias, y)
    error = float(np.abs(y - np.maximum(a @ b + bias, 0)).max())
    assert error < 1e-4
    print(f"max error {error:.2e}; compiled signatures cached: {len(linear_relu._cache)}")
    return error


if __name__ == "__main__":
    main()
