"""System-test programs of the end-to-end issue, as PTOTestCases (numpy goldens)."""

import numpy as np

import ptoc.language as pl
from ptoc.testing import DataType, PTOTestCase, TensorSpec

#: one tensor-level matmul kernel; fill in M, K, N and DT (the operand dtype)
MATMUL = '''
import ptoc.language as pl

@pl.program
class MM:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[{M}, {K}], pl.{DT}], b: pl.Tensor[[{K}, {N}], pl.{DT}],
          c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        am = pl.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)
        c = pl.store(pl.tile.matmul(am, bm), [0, 0], c)
        return c
'''


_DT = {"FP32": DataType.FP32, "FP16": DataType.FP16, "BF16": DataType.BF16}


def f32(x):
    return np.asarray(x, dtype=np.float32)


class TileMatmul(PTOTestCase):
    """64x64x64 single-tile matmul through Mat -> Left/Right -> Acc -> DDR."""

    def __init__(self, dtype="FP32"):
        self.dtype = dtype

    def get_name(self):
        return f"tile_matmul_{self.dtype.lower()}"

    def get_rtol(self):
        return 1e-5 if self.dtype == "FP32" else 1e-2

    get_atol = get_rtol

    def define_tensors(self):
        dt = _DT[self.dtype]
        return [TensorSpec("a", [64, 64], dt), TensorSpec("b", [64, 64], dt),
                TensorSpec("c", [64, 64], DataType.FP32, is_output=True)]

    def get_program(self):
        dt = getattr(pl, self.dtype)

        @pl.program
        class TileMM:
            @pl.function(type=pl.FunctionType.InCore)
            def mm(self, a: pl.Tensor[[64, 64], dt], b: pl.Tensor[[64, 64], dt],
                   c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                am = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                acc = pl.matmul(pl.move(am, target_memory=pl.Mem.Left),
                                pl.move(bm, target_memory=pl.Mem.Right))
                c = pl.store(acc, [0, 0], c)
                return c

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[64, 64], dt], b: pl.Tensor[[64, 64], dt],
                     c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                c = self.mm(a, b, c)
                return c
        return TileMM

    def compute_expected(self, t, params=None):
        t["c"][:] = f32(t["a"]) @ f32(t["b"])


class KLoopInitCond(PTOTestCase):
    """64x256x64 FP32, a user K-loop with matmul_acc(init_cond=(k0 == 0)), kt = 64."""

    def define_tensors(self):
        return [TensorSpec("x", [64, 256], DataType.FP32), TensorSpec("w", [256, 64], DataType.FP32),
                TensorSpec("y", [64, 64], DataType.FP32, is_output=True)]

    def get_rtol(self):
        return 1e-4

    get_atol = get_rtol

    def get_program(self):
        @pl.program
        class KLoop:
            @pl.function(type=pl.FunctionType.InCore)
            def mm(self, x: pl.Tensor[[64, 256], pl.FP32], w: pl.Tensor[[256, 64], pl.FP32],
                   y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                acc = pl.tile.create([64, 64], pl.FP32, target_memory=pl.Mem.Acc)
                for k0 in pl.range(0, 256, 64):
                    xm = pl.load(x, [0, k0], [64, 64], target_memory=pl.Mem.Mat)
                    wm = pl.load(w, [k0, 0], [64, 64], target_memory=pl.Mem.Mat)
                    acc = pl.matmul_acc(acc, pl.move(xm, target_memory=pl.Mem.Left),
                                        pl.move(wm, target_memory=pl.Mem.Right),
                                        init_cond=(k0 == 0))
                y = pl.store(acc, [0, 0], y)
                return y
        return KLoop

    def compute_expected(self, t, params=None):
        t["y"][:] = f32(t["x"]) @ f32(t["w"])


class MatmulBias(PTOTestCase):
    """64x64x64 BF16 matmul plus an FP32 bias row."""

    def get_rtol(self):
        return 1e-2

    get_atol = get_rtol

    def define_tensors(self):
        return [TensorSpec("a", [64, 64], DataType.BF16), TensorSpec("b", [64, 64], DataType.BF16),
                TensorSpec("bias", [1, 64], DataType.FP32),
                TensorSpec("c", [64, 64], DataType.FP32, is_output=True)]

    def get_program(self):
        @pl.program
        class Bias:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
                  bias: pl.Tensor[[1, 64], pl.FP32],
                  c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                am = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                zm = pl.load(bias, [0, 0], [1, 64], target_memory=pl.Mem.Mat)
                r = pl.matmul_bias(pl.move(am, target_memory=pl.Mem.Left),
                                   pl.move(bm, target_memory=pl.Mem.Right),
                                   pl.move(zm, target_memory=pl.Mem.Bias))
                return pl.store(r, [0, 0], c)
        return Bias

    def compute_expected(self, t, params=None):
        t["c"][:] = f32(t["a"]) @ f32(t["b"]) + t["bias"]


class ChunkedAdd(PTOTestCase):
    """512x128 FP32 a + b in four 128-row chunks with pl.range."""

    def define_tensors(self):
        return [TensorSpec("a", [512, 128], DataType.FP32), TensorSpec("b", [512, 128], DataType.FP32),
                TensorSpec("c", [512, 128], DataType.FP32, is_output=True)]

    def get_program(self):
        @pl.program
        class Chunked:
            @pl.function(type=pl.FunctionType.InCore)
            def add(self, a: pl.Tensor[[512, 128], pl.FP32], b: pl.Tensor[[512, 128], pl.FP32],
                    c: pl.Out[pl.Tensor[[512, 128], pl.FP32]]) -> pl.Tensor[[512, 128], pl.FP32]:
                for i in pl.range(0, 512, 128):
                    x = pl.load(a, [i, 0], [128, 128])
                    y = pl.load(b, [i, 0], [128, 128])
                    c = pl.store(pl.add(x, y), [i, 0], c)
                return c
        return Chunked

    def compute_expected(self, t, params=None):
        t["c"][:] = t["a"] + t["b"]


class RowSoftmax(PTOTestCase):
    """64x64 FP32 row softmax with row_max/row_sum scratch and row-expand ops."""

    def get_rtol(self):
        return 1e-5

    def get_atol(self):
        return 1e-6

    def define_tensors(self):
        return [TensorSpec("x", [64, 64], DataType.FP32),
                TensorSpec("y", [64, 64], DataType.FP32, is_output=True)]

    def get_program(self):
        @pl.program
        class Softmax:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 64], pl.FP32],
                  y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                t = pl.load(x, [0, 0], [64, 64])
                scratch = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
                mx = pl.row_max(t, scratch)
                e = pl.row_expand_expdif(t, mx)
                sm = pl.row_sum(e, scratch)
                y = pl.store(pl.row_expand_div(e, sm), [0, 0], y)
                return y
        return Softmax

    def compute_expected(self, t, params=None):
        x = t["x"].astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        t["y"][:] = e / e.sum(axis=1, keepdims=True)


class CubeThenVector(PTOTestCase):
    """Two kernels: a cube matmul into a DDR intermediate, then a vector bias + relu."""

    def define_tensors(self):
        return [TensorSpec("a", [64, 64], DataType.FP32), TensorSpec("b", [64, 64], DataType.FP32),
                TensorSpec("bias", [64, 64], DataType.FP32),
                TensorSpec("y", [64, 64], DataType.FP32, is_output=True)]

    def get_rtol(self):
        return 1e-4

    get_atol = get_rtol

    def get_program(self):
        @pl.program
        class FusedLinear:
            @pl.function(type=pl.FunctionType.InCore)
            def cube(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                     c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                ta = pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat),
                             target_memory=pl.Mem.Left)
                tb = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat),
                             target_memory=pl.Mem.Right)
                c = pl.store(pl.matmul(ta, tb), [0, 0], c)
                return c

            @pl.function(type=pl.FunctionType.InCore)
            def bias_relu(self, x: pl.Tensor[[64, 64], pl.FP32], bias: pl.Tensor[[64, 64], pl.FP32],
                          y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                s = pl.add(pl.load(x, [0, 0], [64, 64]), pl.load(bias, [0, 0], [64, 64]))
                y = pl.store(pl.relu(s), [0, 0], y)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                     bias: pl.Tensor[[64, 64], pl.FP32],
                     y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
                tmp = self.cube(a, b, tmp)
                y = self.bias_relu(tmp, bias, y)
                return y
        return FusedLinear

    def compute_expected(self, t, params=None):
        t["y"][:] = np.maximum(f32(t["a"]) @ f32(t["b"]) + t["bias"], 0)


END_TO_END = [TileMatmul("FP32"), TileMatmul("FP16"), TileMatmul("BF16"), KLoopInitCond(),
              MatmulBias(), ChunkedAdd(), RowSoftmax(), CubeThenVector()]
