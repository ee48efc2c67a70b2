"""AllocateMemoryAddr (reference §10): name-ordered 32-byte bump allocation, overflow errors."""

from __future__ import annotations

import os
import sys

import pytest

from ptoc.errors import AllocationError, PtocError
from ptoc.ir import assert_structural_equal
from ptoc.language import parse_program
from ptoc.passes import MemoryPlanner, PassContext
from ptoc.passes.allocate_memory_addr import allocate_memory_addr, plan_addresses
from ptoc.passes.init_mem_ref import init_mem_ref

sys.path.insert(0, os.path.dirname(__file__))
from _memory_programs import buffers, program  # noqa: E402

SMALL = "pl.Tile[[3, 5], pl.FP32, pl.Mem.Vec]"   # 60 bytes: the next buffer starts at 64
IO = "x: pl.Tensor[[3, 5], pl.FP32], out: pl.Out[pl.Tensor[[3, 5], pl.FP32]]"


def _small_program():
    return program(IO, "pl.Tensor[[3, 5], pl.FP32]", [
        f"t1: {SMALL} = pl.tile.load(x, [0, 0], [3, 5], [3, 5], target_memory=pl.Mem.Vec)",
        f"t2: {SMALL} = pl.tile.load(x, [0, 0], [3, 5], [3, 5], target_memory=pl.Mem.Vec)",
        f"t3: {SMALL} = pl.tile.add(t1, t2)",
        "o: pl.Tensor[[3, 5], pl.FP32] = pl.tile.store(t3, [0, 0], out)", "return o"])


def test_sequential_32_byte_aligned_placement():
    with PassContext():
        out = allocate_memory_addr()(init_mem_ref()(_small_program()))
    bufs = buffers(out)
    assert [bufs[n] for n in ("t1", "t2", "t3")] == [
        ("mem_vec_2", 0), ("mem_vec_3", 64), ("mem_vec_4", 128)]


def test_memrefs_are_ordered_by_name_as_strings():
    """``mem_vec_10`` sorts before ``mem_vec_9``, exactly as PyPTO's allocator orders them."""
    src = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 16], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 1024)]) -> pl.Tensor[[16, 16], pl.FP32]:
        mem_vec_9: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 1024)
        mem_vec_10: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 1000)
        a: pl.Tile[[16, 16], pl.FP32, pl.MemRef(mem_vec_9, pl.const(0, pl.INT64), 1024), pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Vec)
        b: pl.Tile[[250, 1], pl.FP32, pl.MemRef(mem_vec_10, pl.const(0, pl.INT64), 1000), pl.Mem.Vec] = pl.tile.create([250, 1], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        return x
"""
    with PassContext():
        out = allocate_memory_addr()(parse_program(src))
    assert buffers(out) == {"a": ("mem_vec_9", 1024), "b": ("mem_vec_10", 0)}
    text = out.as_python()
    assert "pl.tile.alloc(pl.Mem.Vec, 1000)" in text      # declarations are unchanged


def test_int32_dbc_accumulators_use_non_overlapping_physical_ranges():
    """Two INT32 16x512 accumulators (32 physical rows on a2a3): {0, 65536}."""
    acc = "pl.Tile[[16, 512], pl.INT32, pl.Mem.Acc]"
    io = ("a: pl.Tensor[[16, 64], pl.INT8], b: pl.Tensor[[64, 512], pl.INT8], "
          "out: pl.Out[pl.Tensor[[32, 512], pl.INT32]]")
    lines = [
        "am: pl.Tile[[16, 64], pl.INT8, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 64], [16, 64], "
        "target_memory=pl.Mem.Mat)",
        "bm: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 512], "
        "[64, 512], target_memory=pl.Mem.Mat)",
        "l: pl.Tile[[16, 64], pl.INT8, pl.Mem.Left] = pl.tile.move(am, target_memory=pl.Mem.Left)",
        "r: pl.Tile[[64, 512], pl.INT8, pl.Mem.Right] = pl.tile.move(bm, target_memory=pl.Mem.Right)",
        f"c0: {acc} = pl.tile.matmul(l, r)", f"c1: {acc} = pl.tile.matmul(l, r)",
        "o0: pl.Tensor[[32, 512], pl.INT32] = pl.tile.store(c0, [0, 0], out)",
        "o1: pl.Tensor[[32, 512], pl.INT32] = pl.tile.store(c1, [16, 0], o0)", "return o1"]
    with PassContext():
        out = allocate_memory_addr()(init_mem_ref()(program(io, "pl.Tensor[[32, 512], pl.INT32]",
                                                            lines)))
    bufs = buffers(out)
    assert sorted([bufs["c0"][1], bufs["c1"][1]]) == [0, 65536]
    assert out.as_python().count("pl.tile.alloc(pl.Mem.Acc, 65536)") == 2


def test_overflow_names_space_bytes_buffers_and_fix():
    big = "pl.Tile[[256, 128], pl.FP32, pl.Mem.Vec]"   # 128 KiB each, two co-live: 256 KiB
    prog = program("x: pl.Tensor[[256, 128], pl.FP32], out: pl.Out[pl.Tensor[[256, 128], pl.FP32]]",
                   "pl.Tensor[[256, 128], pl.FP32]", [
                       f"p: {big} = pl.tile.load(x, [0, 0], [256, 128], [256, 128], target_memory=pl.Mem.Vec)",
                       f"q: {big} = pl.tile.load(x, [0, 0], [256, 128], [256, 128], target_memory=pl.Mem.Vec)",
                       f"s: {big} = pl.tile.add(p, q)",
                       "o: pl.Tensor[[256, 128], pl.FP32] = pl.tile.store(s, [0, 0], out)",
                       "return o"])
    with PassContext():
        with pytest.raises(AllocationError) as err:
            allocate_memory_addr()(init_mem_ref()(prog))
    message = str(err.value)
    assert "Vec buffer usage (393216 bytes) exceeds platform limit (188416 bytes)" in message
    assert "mem_vec_2" in message and "p" in message and "fix:" in message
    assert isinstance(err.value, PtocError)


def test_ptoas_planner_leaves_memrefs_without_addresses():
    with PassContext(memory_planner=MemoryPlanner.PTOAS):
        before = init_mem_ref()(_small_program())
        assert_structural_equal(allocate_memory_addr()(before), before)


def test_plan_addresses_reports_placements():
    with PassContext() as ctx:
        fn = init_mem_ref()(_small_program()).get_function("kernel")
        placements = plan_addresses(fn, ctx.get_backend())
    assert [(p.name, p.addr, p.size) for p in placements] == [
        ("mem_vec_2", 0, 60), ("mem_vec_3", 64, 60), ("mem_vec_4", 128, 60)]
    assert placements[0].tiles == ["t1"]


def test_rerunning_keeps_the_addresses():
    with PassContext():
        once = allocate_memory_addr()(init_mem_ref()(_small_program()))
        twice = allocate_memory_addr()(once)
    assert_structural_equal(twice, once)
    assert buffers(twice)["t3"] == ("mem_vec_4", 128)


def test_a_view_keeps_its_offset_inside_its_buffer():
    view = program("x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]",
                   "pl.Tensor[[32, 64], pl.FP32]", [
                       "a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], "
                       "[16, 16], target_memory=pl.Mem.Vec)",
                       "t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [64, 64], "
                       "[64, 64], target_memory=pl.Mem.Vec)",
                       "s: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [32, 64], [32, 0])",
                       "o: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(s, [0, 0], out)",
                       "o2: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(a, [0, 0], o)",
                       "return o2"])
    with PassContext():
        out = allocate_memory_addr()(init_mem_ref()(view))
        again = allocate_memory_addr()(out)
    bufs = buffers(out)
    assert bufs["a"] == ("mem_vec_2", 0) and bufs["t"] == ("mem_vec_3", 1024)
    assert bufs["s"] == ("mem_vec_3", 1024 + 8192)
    assert buffers(again) == bufs
