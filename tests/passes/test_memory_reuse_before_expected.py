"""Before/Expected programs for MaterializeSemanticAliases, MemoryReuse and AllocateMemoryAddr.

The program is the peeled K loop AutoTileMatmulL0 emits (``if k == 0: matmul else:
matmul_acc`` carried in one accumulator) as InitMemRef leaves it: the seed matmul and the
if-result got a buffer of their own (``mem_acc_4``).
"""

from __future__ import annotations

from ptoc.ir import assert_structural_equal
from ptoc.language import parse_program
from ptoc.passes import PassContext
from ptoc.passes.allocate_memory_addr import allocate_memory_addr
from ptoc.passes.materialize_semantic_aliases import materialize_semantic_aliases
from ptoc.passes.memory_reuse import memory_reuse

BEFORE = """\
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, out: pl.Out[pl.Tensor[[16, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 4096)]]) -> pl.Tensor[[16, 64], pl.FP32]:
        mem_left_1: pl.Ptr = pl.tile.alloc(pl.Mem.Left, 2048)
        mem_right_2: pl.Ptr = pl.tile.alloc(pl.Mem.Right, 8192)
        mem_acc_3: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 4096)
        mem_acc_4: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 4096)
        l: pl.Tile[[16, 64], pl.BF16, pl.MemRef(mem_left_1, pl.const(0, pl.INT64), 2048), pl.Mem.Left] = pl.tile.create([16, 64], dtype=pl.BF16, target_memory=pl.Mem.Left)
        r: pl.Tile[[64, 64], pl.BF16, pl.MemRef(mem_right_2, pl.const(0, pl.INT64), 8192), pl.Mem.Right] = pl.tile.create([64, 64], dtype=pl.BF16, target_memory=pl.Mem.Right)
        init: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for k, (c,) in pl.range(0, 4, 1, init_values=(init,)):
            if k == 0:
                first: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_4, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.tile.matmul(l, r)
                phi: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_4, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.yield_(first)
            else:
                nxt: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.tile.matmul_acc(c, l, r)
                phi: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_4, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.yield_(nxt)
            res: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.yield_(phi)
        o: pl.Tensor[[16, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 4096)] = pl.tile.store(res, [0, 0], out)
        return o
"""

# MaterializeSemanticAliases: the carried buffer mem_acc_3 is pushed into both arms.
AFTER_ALIASES = """\
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, out: pl.Out[pl.Tensor[[16, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 4096)]]) -> pl.Tensor[[16, 64], pl.FP32]:
        mem_left_1: pl.Ptr = pl.tile.alloc(pl.Mem.Left, 2048)
        mem_right_2: pl.Ptr = pl.tile.alloc(pl.Mem.Right, 8192)
        mem_acc_3: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 4096)
        mem_acc_4: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 4096)
        l: pl.Tile[[16, 64], pl.BF16, pl.MemRef(mem_left_1, pl.const(0, pl.INT64), 2048), pl.Mem.Left] = pl.tile.create([16, 64], dtype=pl.BF16, target_memory=pl.Mem.Left)
        r: pl.Tile[[64, 64], pl.BF16, pl.MemRef(mem_right_2, pl.const(0, pl.INT64), 8192), pl.Mem.Right] = pl.tile.create([64, 64], dtype=pl.BF16, target_memory=pl.Mem.Right)
        init: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for k, (c,) in pl.range(0, 4, 1, init_values=(init,)):
            if k == 0:
                first: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.tile.matmul(l, r)
                phi: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.yield_(first)
            else:
                nxt: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.tile.matmul_acc(c, l, r)
                phi: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.yield_(nxt)
            res: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.yield_(phi)
        o: pl.Tensor[[16, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 4096)] = pl.tile.store(res, [0, 0], out)
        return o
"""

# MemoryReuse: nothing left to merge; the unused mem_acc_4 allocation is removed.
AFTER_REUSE = """\
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, out: pl.Out[pl.Tensor[[16, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 4096)]]) -> pl.Tensor[[16, 64], pl.FP32]:
        mem_left_1: pl.Ptr = pl.tile.alloc(pl.Mem.Left, 2048)
        mem_right_2: pl.Ptr = pl.tile.alloc(pl.Mem.Right, 8192)
        mem_acc_3: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 4096)
        l: pl.Tile[[16, 64], pl.BF16, pl.MemRef(mem_left_1, pl.const(0, pl.INT64), 2048), pl.Mem.Left] = pl.tile.create([16, 64], dtype=pl.BF16, target_memory=pl.Mem.Left)
        r: pl.Tile[[64, 64], pl.BF16, pl.MemRef(mem_right_2, pl.const(0, pl.INT64), 8192), pl.Mem.Right] = pl.tile.create([64, 64], dtype=pl.BF16, target_memory=pl.Mem.Right)
        init: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for k, (c,) in pl.range(0, 4, 1, init_values=(init,)):
            if k == 0:
                first: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.tile.matmul(l, r)
                phi: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.yield_(first)
            else:
                nxt: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.tile.matmul_acc(c, l, r)
                phi: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.yield_(nxt)
            res: pl.Tile[[16, 64], pl.FP32, pl.MemRef(mem_acc_3, pl.const(0, pl.INT64), 4096), pl.Mem.Acc] = pl.yield_(phi)
        o: pl.Tensor[[16, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 4096)] = pl.tile.store(res, [0, 0], out)
        return o
"""


def test_aliases_push_the_carried_buffer_into_the_if_arms():
    with PassContext():
        out = materialize_semantic_aliases()(parse_program(BEFORE))
    assert_structural_equal(out, parse_program(AFTER_ALIASES))


def test_reuse_removes_the_now_unused_allocation():
    with PassContext():
        out = memory_reuse()(parse_program(AFTER_ALIASES))
    assert_structural_equal(out, parse_program(AFTER_REUSE))
    assert "mem_acc_4" not in out.as_python()


def test_allocation_of_one_buffer_per_space_is_at_zero():
    with PassContext():
        out = allocate_memory_addr()(parse_program(AFTER_REUSE))
    assert_structural_equal(out, parse_program(AFTER_REUSE))


VEC = "pl.Tile[[64, 64], pl.FP32, pl.MemRef(%s, pl.const(%d, pl.INT64), 16384), pl.Mem.Vec]"
HEAD = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[64, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 16384)], out: pl.Out[pl.Tensor[[64, 64], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 16384)]]) -> pl.Tensor[[64, 64], pl.FP32]:
"""


def _vec_program(allocs, where, offsets=None):
    offsets = offsets or {}
    body = [f"        {name}: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)" for name in allocs]
    ops = [("t", "pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)"),
           ("e", "pl.tile.exp(t)"),
           ("u", "pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)"),
           ("s", "pl.tile.add(e, u)")]
    for name, call in ops:
        ty = VEC % (where[name], offsets.get(where[name], 0))
        body.append(f"        {name}: {ty} = {call}")
    body.append('        o: pl.Tensor[[64, 64], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), '
                '16384)] = pl.tile.store(s, [0, 0], out)')
    body.append("        return o")
    return parse_program(HEAD + "\n".join(body) + "\n")


def test_reuse_straight_line_before_expected():
    before = _vec_program(["mem_vec_2", "mem_vec_3", "mem_vec_4", "mem_vec_5"],
                          {"t": "mem_vec_2", "e": "mem_vec_3", "u": "mem_vec_4", "s": "mem_vec_5"})
    expected = _vec_program(["mem_vec_2", "mem_vec_4"],
                            {"t": "mem_vec_2", "e": "mem_vec_2", "u": "mem_vec_4", "s": "mem_vec_2"})
    with PassContext():
        out = memory_reuse()(before)
    assert_structural_equal(out, expected)


def test_allocate_straight_line_before_expected():
    where = {"t": "mem_vec_2", "e": "mem_vec_2", "u": "mem_vec_4", "s": "mem_vec_2"}
    before = _vec_program(["mem_vec_2", "mem_vec_4"], where)
    expected = _vec_program(["mem_vec_2", "mem_vec_4"], where, {"mem_vec_4": 16384})
    with PassContext():
        out = allocate_memory_addr()(before)
    assert_structural_equal(out, expected)
