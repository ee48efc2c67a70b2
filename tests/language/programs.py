"""DSL programs covering every construct the parser supports (shared by the language tests)."""

HEADER = "import ptoc.language as pl\nM, K, N = 64, 128, 64\nKT = 64\n"

TILE_MATMUL = HEADER + '''
@pl.program
class TileMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16],
           c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        am = pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat)
        al = pl.move(am, target_memory=pl.Mem.Left)
        bl = pl.move(bm, target_memory=pl.Mem.Right)
        acc = pl.matmul(al, bl)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.mm(a, b, c)
        return c
'''

K_LOOP = HEADER + '''
@pl.program
class KLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, x: pl.Tensor[[M, K], pl.FP32], w: pl.Tensor[[K, N], pl.FP32],
           y: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        acc = pl.tile.create([M, N], pl.FP32, target_memory=pl.Mem.Acc)
        for k0 in pl.range(0, K, KT):
            xl1 = pl.load(x, [0, k0], [M, KT], target_memory=pl.Mem.Mat)
            wl1 = pl.load(w, [k0, 0], [KT, N], target_memory=pl.Mem.Mat)
            acc = pl.matmul_acc(acc, pl.move(xl1, target_memory=pl.Mem.Left),
                                pl.move(wl1, target_memory=pl.Mem.Right), init_cond=(k0 == 0))
        return pl.store(acc, [0, 0], y)
'''

EXPLICIT_CARRY = '''
import ptoc.language as pl

@pl.program
class OnlineMax:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, s: pl.Tensor[[64, 256], pl.FP32], o: pl.Out[pl.Tensor[[64, 1], pl.FP32]]) -> pl.Tensor[[64, 1], pl.FP32]:
        tmp = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        t0 = pl.load(s, [0, 0], [64, 64])
        m0 = pl.row_max(t0, tmp)
        l0 = pl.row_sum(pl.row_expand_expdif(t0, m0), tmp)
        for j, (m, l) in pl.range(1, 4, init_values=(m0, l0)):
            t = pl.load(s, [0, j * 64], [64, 64])
            m_new = pl.maximum(m, pl.row_max(t, tmp))
            l_new = pl.add(pl.mul(l, pl.exp(pl.sub(m, m_new))), pl.row_sum(pl.row_expand_expdif(t, m_new), tmp))
            m_out, l_out = pl.yield_(m_new, l_new)
        r = pl.row_expand_div(m_out, l_out)
        return pl.store(r, [0, 0], o)
'''

PIPELINE_IF = '''
import ptoc.language as pl

@pl.program
class PipelinedK:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 1536], pl.BF16], b: pl.Tensor[[1536, 128], pl.BF16],
          c: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.Mem.Acc)
        for kb in pl.pipeline(0, 8, 1, stage=2, attrs={"pipeline_overlap_stores": False}):
            at = pl.load(a, [0, kb * 192], [16, 192], target_memory=pl.Mem.Mat)
            bt = pl.load(b, [kb * 192, 0], [192, 128], target_memory=pl.Mem.Mat)
            if kb == 0:
                acc = pl.matmul(at, bt)
            else:
                acc = pl.matmul_acc(acc, at, bt)
        c = pl.store(acc, [0, 0], c)
        return c
'''

VECTOR_OPS = '''
import ptoc.language as pl
R = 32
C = 128

@pl.program
class VectorOps:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Tensor[[R, C], pl.FP32],
          o: pl.Out[pl.Tensor[[R, C], pl.FP16]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[R, C], pl.FP16]:
        pl.static_assert(C % 16 == 0, "C must be a multiple of 16")
        a = pl.load(x, [0, 0], [R, C])
        b = pl.load(y, [0, 0], [R, C])
        s = a + b
        d = pl.sub(s, b)
        p = pl.mul(d, a) * 2.0
        q = pl.div(pl.maximum(p, a), pl.minimum(p, b))
        r = pl.relu(pl.neg(pl.exp(pl.adds(q, 1.0))))
        f = pl.tile.full([R, C], pl.FP32, 0.5)
        g = pl.tile.muls(pl.add(r, f), 0.25)
        h = pl.cast(g, pl.FP16, mode="rint")
        w = h[0:16, 0:C]
        z = pl.tile.assemble(h, w, [16, 0])
        o = pl.store(z, [0, 0], o)
        return o
'''

SCALAR_AND_LOOPS = '''
import ptoc.language as pl

@pl.program
class Loops:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[512, 128], pl.FP32], y: pl.Out[pl.Tensor[[512, 128], pl.FP32]],
          n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[512, 128], pl.FP32]:
        for i in pl.range(4):
            t = pl.load(x, [i * 128, 0], [128, 128])
            y = pl.store(pl.exp(t), [i * 128, 0], y)
        for j in pl.unroll(0, 2):
            u = pl.load(x, [(j + 1) * 64 // 2 % 512, 0], [64, 128])
            y = pl.store(u, [j * 64, 0], y)
        for p in pl.parallel(0, n, 2):
            v = pl.load(x, [p, 0], [64, 128])
        if n > 3 and n != 7:
            y = pl.store(pl.load(x, [0, 0], [64, 128]), [0, 0], y)
        return y
'''

TENSOR_LEVEL = '''
import ptoc.language as pl

@pl.program
class TensorLevel:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, x: pl.Tensor[[128, 256], pl.BF16], w: pl.Tensor[[256, 128], pl.BF16],
           y: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        y[:] = pl.matmul(x, w, out_dtype=pl.FP32)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def vec(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32],
            o: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        o[0:64, :] = pl.add(a[0:64, :], b[0:64, :])
        o = pl.assemble(o, pl.relu(a[64:128, :]), [64, 0])
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 256], pl.BF16], w: pl.Tensor[[256, 128], pl.BF16],
             b: pl.Tensor[[128, 128], pl.FP32], o: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        tmp = pl.create_tensor([128, 128], dtype=pl.FP32)
        tmp = self.mm(x, w, tmp)
        o = self.vec(tmp, b, o)
        return o
'''

MATMUL_BIAS_IF_PHI = '''
import ptoc.language as pl

@pl.program
class BiasPhi:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
          bias: pl.Tensor[[1, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
          flag: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 64], pl.FP32]:
        am = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        zm = pl.load(bias, [0, 0], [1, 64], target_memory=pl.Mem.Mat)
        zb = pl.move(zm, target_memory=pl.Mem.Bias)
        al = pl.move(am, target_memory=pl.Mem.Left)
        bl = pl.move(bm, target_memory=pl.Mem.Right)
        if flag == 0:
            r = pl.matmul_bias(al, bl, zb)
            out = pl.yield_(r)
        else:
            s = pl.matmul(al, bl)
            out = pl.yield_(s)
        mat = pl.tile.extract(out, 0, 0, [64, 64], target_memory=pl.Mem.Mat)
        c = pl.store(out, [0, 0], c)
        return c
'''

ALL = {
    "tile_matmul": TILE_MATMUL, "k_loop": K_LOOP, "explicit_carry": EXPLICIT_CARRY,
    "pipeline_if": PIPELINE_IF, "vector_ops": VECTOR_OPS, "loops": SCALAR_AND_LOOPS,
    "tensor_level": TENSOR_LEVEL, "bias_phi": MATMUL_BIAS_IF_PHI,
}
