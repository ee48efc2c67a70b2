"""A paged-attention decode step written as a PyPTO user writes one (issue 13 acceptance).

Each request has ``Q`` query rows and a context of ``lens[r]`` tokens held in KV blocks of
``BS`` rows scattered over a block pool; ``table[r * MAXB + j]`` names the pool block of
the request's ``j``-th block. The orchestration reads the lengths to find how many block
steps to run; every stage is an SPMD launch whose blocks take requests round-robin
(``pl.tile.get_block_idx`` / ``get_block_num``) and read the block table with
``pl.tensor.read``. Softmax is computed online across a request's blocks; the last block
of a request is partial (``valid_shape`` + ``fillpad``), and a request stops contributing
once its blocks run out.
"""

import ml_dtypes
import numpy as np

Q, D, BS, MAXB = 16, 32, 16, 4
SRC = """
import ptoc.language as pl

R, Q, D, BS, MAXB, POOL, CORES = {R}, {Q}, {D}, {BS}, {MAXB}, {POOL}, {CORES}


@pl.program
class PagedDecode:
    @pl.function(type=pl.FunctionType.Orchestration)
    def decode(self, q: pl.Tensor[[R * Q, D], pl.BF16], kc: pl.Tensor[[POOL * BS, D], pl.BF16],
               vc: pl.Tensor[[POOL * BS, D], pl.BF16], table: pl.Tensor[[R * MAXB], pl.INT32],
               lens: pl.Tensor[[R], pl.INT32], scale: pl.Scalar[pl.FP32],
               out: pl.Out[pl.Tensor[[R * Q, D], pl.FP32]]) -> pl.Tensor[[R * Q, D], pl.FP32]:
        steps: pl.Scalar[pl.INDEX] = 0
        for r in pl.range(pl.tensor.dim(lens, 0)):
            steps = pl.max(steps, (pl.tensor.read(lens, [r]) + BS - 1) // BS)
        m = pl.create_tensor([R * Q, 1], dtype=pl.FP32)
        l = pl.create_tensor([R * Q, 1], dtype=pl.FP32)
        acc = pl.create_tensor([R * Q, D], dtype=pl.FP32)
        for j in pl.range(steps):
            # per-step scratch: fresh buffers, so a step's writes never overtake the previous
            # step's reads (the runtime orders read-after-write and write-after-write only)
            s = pl.create_tensor([R * Q, BS], dtype=pl.FP32)
            p = pl.create_tensor([R * Q, BS], dtype=pl.BF16)
            m_blk = pl.create_tensor([R * Q, 1], dtype=pl.FP32)
            l_blk = pl.create_tensor([R * Q, 1], dtype=pl.FP32)
            o_blk = pl.create_tensor([R * Q, D], dtype=pl.FP32)
            for core in pl.spmd(CORES):  # scores: s = q @ k^T of the request's j-th block
                for r in pl.range(core, R, pl.tile.get_block_num()):
                    if j * BS < pl.tensor.read(lens, [r]):
                        row = pl.tensor.read(table, [r * MAXB + j]) * BS
                        qm = pl.load(q, [r * Q, 0], [Q, D], target_memory=pl.Mem.Mat)
                        km = pl.load(kc, [row, 0], [BS, D], target_memory=pl.Mem.Mat)
                        kt = pl.tile.transpose_view(km)
                        sc = pl.matmul(pl.move(qm, target_memory=pl.Mem.Left),
                                       pl.move(kt, target_memory=pl.Mem.Right))
                        pl.store(sc, [r * Q, 0], s)
            for core in pl.spmd(CORES):  # block softmax over the valid columns
                for r in pl.range(core, R, pl.tile.get_block_num()):
                    left = pl.tensor.read(lens, [r]) - j * BS
                    if left > 0:
                        valid = pl.min(left, BS)
                        st = pl.load(s, [r * Q, 0], [Q, BS], valid_shape=[Q, valid])
                        st = pl.mul(pl.tile.fillpad(st, pad_value=pl.PadValue.min), scale)
                        scratch = pl.create_tile([Q, BS], dtype=pl.FP32,
                                                 target_memory=pl.Mem.Vec)
                        mx = pl.row_max(st, scratch)
                        pb = pl.cast(pl.exp(pl.row_expand_sub(st, mx)), target_type=pl.BF16)
                        sm = pl.row_sum(pl.cast(pb, target_type=pl.FP32), scratch)
                        pl.store(pb, [r * Q, 0], p)
                        pl.store(mx, [r * Q, 0], m_blk)
                        pl.store(sm, [r * Q, 0], l_blk)
            for core in pl.spmd(CORES):  # o_blk = p @ v of the same block
                for r in pl.range(core, R, pl.tile.get_block_num()):
                    if j * BS < pl.tensor.read(lens, [r]):
                        row = pl.tensor.read(table, [r * MAXB + j]) * BS
                        pm = pl.load(p, [r * Q, 0], [Q, BS], target_memory=pl.Mem.Mat)
                        vm = pl.load(vc, [row, 0], [BS, D], target_memory=pl.Mem.Mat)
                        ob = pl.matmul(pl.move(pm, target_memory=pl.Mem.Left),
                                       pl.move(vm, target_memory=pl.Mem.Right))
                        pl.store(ob, [r * Q, 0], o_blk)
            for core in pl.spmd(CORES):  # online softmax: fold the block into m, l, acc
                for r in pl.range(core, R, pl.tile.get_block_num()):
                    if j * BS < pl.tensor.read(lens, [r]):
                        mb = pl.load(m_blk, [r * Q, 0], [Q, 1])
                        lb = pl.load(l_blk, [r * Q, 0], [Q, 1])
                        ob = pl.load(o_blk, [r * Q, 0], [Q, D])
                        if j == 0:
                            pl.store(mb, [r * Q, 0], m)
                            pl.store(lb, [r * Q, 0], l)
                            pl.store(ob, [r * Q, 0], acc)
                        else:
                            mo = pl.reshape(pl.load(m, [r * Q, 0], [Q, 1]), [1, Q])
                            lo = pl.reshape(pl.load(l, [r * Q, 0], [Q, 1]), [1, Q])
                            mn = pl.maximum(mo, pl.reshape(mb, [1, Q]))
                            keep = pl.exp(pl.sub(mo, mn))
                            take = pl.exp(pl.sub(pl.reshape(mb, [1, Q]), mn))
                            ln = pl.add(pl.mul(keep, lo), pl.mul(take, pl.reshape(lb, [1, Q])))
                            ao = pl.load(acc, [r * Q, 0], [Q, D])
                            an = pl.add(pl.row_expand_mul(ao, pl.reshape(keep, [Q, 1])),
                                        pl.row_expand_mul(ob, pl.reshape(take, [Q, 1])))
                            pl.store(pl.reshape(mn, [Q, 1]), [r * Q, 0], m)
                            pl.store(pl.reshape(ln, [Q, 1]), [r * Q, 0], l)
                            pl.store(an, [r * Q, 0], acc)
        for core in pl.spmd(CORES):  # out = acc / l
            for r in pl.range(core, R, pl.tile.get_block_num()):
                a = pl.load(acc, [r * Q, 0], [Q, D])
                pl.store(pl.row_expand_div(a, pl.load(l, [r * Q, 0], [Q, 1])), [r * Q, 0], out)
        return out
"""


def program_source(requests: int, pool: int, cores: int) -> str:
    return SRC.format(R=requests, Q=Q, D=D, BS=BS, MAXB=MAXB, POOL=pool, CORES=cores)


def inputs(lens, pool: int, seed: int = 0):
    """Random bf16 query/KV pool, a block table drawn from the pool, the lengths."""
    rng = np.random.default_rng(seed)
    requests = len(lens)
    bf16 = ml_dtypes.bfloat16
    q = rng.standard_normal((requests * Q, D)).astype(bf16)
    kc = rng.standard_normal((pool * BS, D)).astype(bf16)
    vc = rng.standard_normal((pool * BS, D)).astype(bf16)
    table = rng.permutation(pool)[:requests * MAXB].astype(np.int32)
    return q, kc, vc, table, np.asarray(lens, np.int32)


def golden(q, kc, vc, table, lens, scale: float) -> np.ndarray:
    """Blockwise online softmax attention in float32 with the kernels' bf16 rounding of p."""
    out = np.zeros((len(lens) * Q, D), np.float32)
    f32 = np.float32
    for r, seq in enumerate(lens):
        qr = q[r * Q:(r + 1) * Q].astype(f32)
        m = l = acc = None
        for j in range(-(-int(seq) // BS)):
            rows = slice(int(table[r * MAXB + j]) * BS, int(table[r * MAXB + j]) * BS + BS)
            valid = min(BS, int(seq) - j * BS)
            s = (qr @ kc[rows].astype(f32).T)[:, :valid] * f32(scale)
            mb = s.max(axis=1, keepdims=True)
            pb = np.exp(s - mb).astype(ml_dtypes.bfloat16).astype(f32)
            lb = pb.sum(axis=1, keepdims=True)
            ob = pb @ vc[rows].astype(f32)[:valid]
            if j == 0:
                m, l, acc = mb, lb, ob
            else:
                mn = np.maximum(m, mb)
                keep, take = np.exp(m - mn), np.exp(mb - mn)
                m, l, acc = mn, keep * l + take * lb, keep * acc + take * ob
        out[r * Q:(r + 1) * Q] = acc / l
    return out
