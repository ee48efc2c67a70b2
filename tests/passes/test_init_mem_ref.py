"""InitMemRef (reference §7): Before/Expected programs, sharing rules, physical Acc sizes."""

from __future__ import annotations

import os
import sys

import pytest

from ptoc.errors import PassError
from ptoc.ir import assert_structural_equal
from ptoc.language import parse_program
from ptoc.passes import PassContext
from ptoc.passes.init_mem_ref import init_mem_ref

sys.path.insert(0, os.path.dirname(__file__))
from _memory_programs import allocs, buffers, program  # noqa: E402

HEAD = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
"""


def run(prog, **ctx):
    with PassContext(**ctx):
        return init_mem_ref()(prog)


def test_views_and_in_place_ops_share_their_source_buffer():
    before = parse_program(HEAD + """\
    def kernel(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        s: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [32, 64], [32, 0])
        e: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(s)
        o: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(e, [0, 0], out)
        return o
""")
    expected = parse_program(HEAD + """\
    def kernel(self, x: pl.Tensor[[64, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 16384)], out: pl.Out[pl.Tensor[[32, 64], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 8192)]]) -> pl.Tensor[[32, 64], pl.FP32]:
        mem_vec_2: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)
        mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 8192)
        t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(mem_vec_2, pl.const(0, pl.INT64), 16384), pl.Mem.Vec] = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        s: pl.Tile[[32, 64], pl.FP32, pl.MemRef(mem_vec_2, pl.const(8192, pl.INT64), 8192), pl.Mem.Vec] = pl.tile.slice(t, [32, 64], [32, 0])
        e: pl.Tile[[32, 64], pl.FP32, pl.MemRef(mem_vec_3, pl.const(0, pl.INT64), 8192), pl.Mem.Vec] = pl.tile.exp(s)
        o: pl.Tensor[[32, 64], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 8192)] = pl.tile.store(e, [0, 0], out)
        return o
""")
    assert_structural_equal(run(before), expected)


ACC_LINES = [
    "am: pl.Tile[[16, 64], pl.INT8, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 64], [16, 64], "
    "target_memory=pl.Mem.Mat)",
    "bm: pl.Tile[[64, 128], pl.INT8, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 128], [64, 128], "
    "target_memory=pl.Mem.Mat)",
    "l: pl.Tile[[16, 64], pl.INT8, pl.Mem.Left] = pl.tile.move(am, target_memory=pl.Mem.Left)",
    "r: pl.Tile[[64, 128], pl.INT8, pl.Mem.Right] = pl.tile.move(bm, target_memory=pl.Mem.Right)",
    "c0: pl.Tile[[16, 128], pl.INT32, pl.Mem.Acc] = pl.tile.matmul(l, r)",
    "c1: pl.Tile[[16, 128], pl.INT32, pl.Mem.Acc] = pl.tile.matmul_acc(c0, l, r)",
    "o: pl.Tensor[[16, 128], pl.INT32] = pl.tile.store(c1, [0, 0], out)",
    "return o",
]
ACC_IO = ("a: pl.Tensor[[16, 64], pl.INT8], b: pl.Tensor[[64, 128], pl.INT8], "
          "out: pl.Out[pl.Tensor[[16, 128], pl.INT32]]")


@pytest.mark.parametrize("target,acc_bytes", [("a2a3", 16384), ("a5", 8192)])
def test_int32_acc_uses_the_targets_physical_m_rows(target, acc_bytes):
    out = run(program(ACC_IO, "pl.Tensor[[16, 128], pl.INT32]", ACC_LINES), target=target)
    assert allocs(out, "Acc") == [acc_bytes]       # 16 rows pad to 32 on a2a3, not on a5
    bufs = buffers(out)
    assert bufs["c1"] == bufs["c0"]                # matmul_acc writes its accumulator


def test_loop_carries_share_and_results_take_a_counter_value():
    acc = "pl.Tile[[16, 128], pl.FP32, pl.Mem.Acc]"
    lines = [
        "am: pl.Tile[[16, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 64], [16, 64], "
        "target_memory=pl.Mem.Mat)",
        "bm: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 128], "
        "[64, 128], target_memory=pl.Mem.Mat)",
        "l: pl.Tile[[16, 64], pl.BF16, pl.Mem.Left] = pl.tile.move(am, target_memory=pl.Mem.Left)",
        "r: pl.Tile[[64, 128], pl.BF16, pl.Mem.Right] = pl.tile.move(bm, target_memory=pl.Mem.Right)",
        f"init: {acc} = pl.tile.create([16, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)",
        "for k, (c,) in pl.range(0, 4, 1, init_values=(init,)):",
        "    if k == 0:",
        f"        first: {acc} = pl.tile.matmul(l, r)",
        f"        phi: {acc} = pl.yield_(first)",
        "    else:",
        f"        nxt: {acc} = pl.tile.matmul_acc(c, l, r)",
        f"        phi: {acc} = pl.yield_(nxt)",
        f"    res: {acc} = pl.yield_(phi)",
        "after: pl.Tile[[16, 64], pl.BF16, pl.Mem.Left] = pl.tile.move(am, target_memory=pl.Mem.Left)",
        "o: pl.Tensor[[16, 128], pl.FP32] = pl.tile.store(res, [0, 0], out)",
        "return o"]
    io = ("a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 128], pl.BF16], "
          "out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]")
    bufs = buffers(run(program(io, "pl.Tensor[[16, 128], pl.FP32]", lines)))
    assert bufs["c"] == bufs["init"] == bufs["nxt"] == bufs["res"] == ("mem_acc_7", 0)
    assert bufs["first"] == bufs["phi"] == ("mem_acc_8", 0)
    # the if result (9) and the loop result (10) used counter values: the next tile is 11
    assert bufs["after"] == ("mem_left_11", 0)


def test_tile_without_memory_space_is_rejected():
    prog = program("x: pl.Tensor[[16, 16], pl.FP32]", "pl.Tensor[[16, 16], pl.FP32]", [
        "t: pl.Tile[[16, 16], pl.FP32] = pl.tile.create([16, 16], dtype=pl.FP32)",
        "return x"])
    with pytest.raises(PassError, match=r"MemoryInferred|no memory space"):
        run(prog)


def test_is_idempotent():
    prog = program(ACC_IO, "pl.Tensor[[16, 128], pl.INT32]", ACC_LINES)
    once = run(prog)
    assert_structural_equal(run(once), once)


def test_a_kernel_without_tile_joins_skips_the_join_copy_analysis(monkeypatch):
    """Copies go only before a loop carrying a tile from a variable or an if with a tile
    result; a kernel with neither (the direct-store grids carry only their output tensor)
    does not pay for the lifetime walk, and a kernel with one still gets its copy checked."""
    from ptoc.passes import join_copies

    walks = []
    real = join_copies.value_ranges
    monkeypatch.setattr(join_copies, "value_ranges", lambda fn: walks.append(fn.name) or real(fn))
    straight = parse_program(HEAD + """\
    def kernel(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i, (o,) in pl.range(0, 2, 1, init_values=(out,)):
            t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
            o2: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(t, [0, 0], o)
            o3 = pl.yield_(o2)
        return o3
""")
    run(straight)
    assert walks == []
    carried = parse_program(HEAD + """\
    def kernel(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        for i, (c,) in pl.range(0, 2, 1, init_values=(t,)):
            c2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(c, t)
            c3 = pl.yield_(c2)
        o: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(c3, [0, 0], out)
        return o
""")
    out = run(carried)
    assert walks == ["kernel"]
    assert "tile.move" in out.as_python()     # t is read in the loop: the carry gets a copy
