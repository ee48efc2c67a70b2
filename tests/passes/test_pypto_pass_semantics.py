"""Pass behaviour that must be PyPTO's (issue 10, differences 1 and 3-6): Before/Expected.

1. LowerPipelineLoops, CanonicalizeIOOrder and MemoryReuse transform every function that
   holds pipelines or tiles, not only kernels (MemoryReuse skips orchestration only);
   AllocateMemoryAddr places only kernels (InCore/AIC/AIV), as PyPTO's does.
3. ``pl.load`` without ``target_memory`` is a Vec load with a Vec tile when parsed, so
   InitMemRef can run on a freshly parsed program.
4. A Mat tile stored to GM keeps its load in Mat; the store reads a Vec copy (a cube ->
   vector pipe in an InCore kernel where the target's pipe reads L1: a2a3).
5. On a5 the Left tiles AutoTileMatmulL0 extracts keep the implicit layout (910B stamps
   ``pl.TileView(blayout=row_major)``).
6. ``pl.tile.matmul(vec_tile, mat_tile)`` is accepted (AutoTileMatmulL0 stages the Vec lhs
   through Mat), and a cast of an accumulator is a Vec tile in the accumulator's layout
   that a matmul accepts.
"""

from __future__ import annotations

import dataclasses

import pytest

import ptoc.language as pl
from ptoc.dtypes import FunctionType, MemorySpace
from ptoc.errors import PassError
from ptoc.ir import assert_structural_equal
from ptoc.ir.nodes import AssignStmt
from ptoc.passes import PassContext
from ptoc.passes.allocate_memory_addr import allocate_memory_addr
from ptoc.passes.auto_tile_matmul_l0 import auto_tile_matmul_l0
from ptoc.passes.canonicalize_io_order import canonicalize_io_order
from ptoc.passes.infer_tile_memory_space import infer_tile_memory_space
from ptoc.passes.init_mem_ref import init_mem_ref
from ptoc.passes.lower_pipeline_loops import lower_pipeline_loops
from ptoc.passes.memory_reuse import memory_reuse


def prog(body: str, params: str, ret: str, deco: str = "@pl.function") -> str:
    return ("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
            f"    {deco}\n    def main(self, {params}) -> {ret}:\n" + body)


def run(passes, src: str, **ctx):
    program = pl.parse_program(src) if isinstance(src, str) else src
    with PassContext(**ctx):
        for p in passes:
            program = p()(program)
    return program


T64 = "pl.Tensor[[64, 64], pl.FP32]"
IO64 = f"a: {T64}, b: {T64}, out: pl.Out[{T64}]"
STRIP = "a: pl.Tensor[[512, 64], pl.FP32], out: pl.Out[pl.Tensor[[512, 64], pl.FP32]]"
T512 = "pl.Tensor[[512, 64], pl.FP32]"


# ---- 1. which functions each pass transforms ------------------------------------------------

def test_lower_pipeline_loops_replicates_a_plain_function():
    before = prog("""\
        for i in pl.pipeline(0, 8, 1, stage=4):
            t = pl.load(a, [i * 64, 0], [64, 64])
            out = pl.store(t, [i * 64, 0], out)
        return out
""", STRIP, T512)
    expected = prog("""\
        for i, (o,) in pl.pipeline(0, 8, 4, stage=1, init_values=(out,)):
            t0 = pl.tile.load(a, [i * 64, 0], [64, 64], attrs={"pipeline_membership": "0:0"})
            s0 = pl.tile.store(t0, [i * 64, 0], o)
            t1 = pl.tile.load(a, [(i + 1) * 64, 0], [64, 64], attrs={"pipeline_membership": "0:1"})
            s1 = pl.tile.store(t1, [(i + 1) * 64, 0], s0)
            t2 = pl.tile.load(a, [(i + 2) * 64, 0], [64, 64], attrs={"pipeline_membership": "0:2"})
            s2 = pl.tile.store(t2, [(i + 2) * 64, 0], s1)
            t3 = pl.tile.load(a, [(i + 3) * 64, 0], [64, 64], attrs={"pipeline_membership": "0:3"})
            s3 = pl.tile.store(t3, [(i + 3) * 64, 0], s2)
            r = pl.yield_(s3)
        return r
""", STRIP, T512)
    assert_structural_equal(run([lower_pipeline_loops], before), pl.parse_program(expected))


def test_canonicalize_io_order_reorders_a_plain_function():
    before = prog("""\
        for i, (o,) in pl.pipeline(0, 8, 2, stage=1, init_values=(out,)):
            t0 = pl.tile.load(a, [i * 64, 0], [64, 64], attrs={"pipeline_membership": "0:0"})
            e0 = pl.tile.exp(t0, attrs={"pipeline_membership": "0:0"})
            s0 = pl.tile.store(e0, [i * 64, 0], o)
            t1 = pl.tile.load(a, [(i + 1) * 64, 0], [64, 64], attrs={"pipeline_membership": "0:1"})
            e1 = pl.tile.exp(t1, attrs={"pipeline_membership": "0:1"})
            s1 = pl.tile.store(e1, [(i + 1) * 64, 0], s0)
            r = pl.yield_(s1)
        return r
""", STRIP, T512)
    after = run([canonicalize_io_order], before).functions[0]
    loop = after.body.stmts[0]
    ops = [s.value.op for s in loop.body.stmts if isinstance(s, AssignStmt)]
    assert ops[:2] == ["tile.load", "tile.load"]  # both stages' loads hoisted to the top
    assert after.func_type is FunctionType.Opaque


def test_memory_reuse_coalesces_a_plain_function():
    """A plain function's chain shares one Vec buffer; the second input keeps its own."""
    before = prog("""\
        x: pl.Tile[[64, 64], pl.FP32] = pl.load(a, [0, 0], [64, 64])
        y: pl.Tile[[64, 64], pl.FP32] = pl.load(b, [0, 0], [64, 64])
        s: pl.Tile[[64, 64], pl.FP32] = pl.add(x, y)
        e: pl.Tile[[64, 64], pl.FP32] = pl.exp(s)
        n: pl.Tile[[64, 64], pl.FP32] = pl.neg(e)
        out: pl.Tensor[[64, 64], pl.FP32] = pl.store(n, [0, 0], out)
        return out
""", IO64, T64)
    after = run([init_mem_ref, memory_reuse], before)
    mr = 'pl.MemRef(mem_vec_3, pl.const(0, pl.INT64), 16384), pl.Mem.Vec'
    mr2 = 'pl.MemRef(mem_vec_4, pl.const(0, pl.INT64), 16384), pl.Mem.Vec'
    ddr = 'pl.MemRef("mem_ddr_{}", pl.const(0, pl.INT64), 16384)'
    expected = prog(f"""\
        mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)
        mem_vec_4: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)
        x: pl.Tile[[64, 64], pl.FP32, {mr}] = pl.tile.load(a, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        y: pl.Tile[[64, 64], pl.FP32, {mr2}] = pl.tile.load(b, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        s: pl.Tile[[64, 64], pl.FP32, {mr}] = pl.tile.add(x, y)
        e: pl.Tile[[64, 64], pl.FP32, {mr}] = pl.tile.exp(s)
        n: pl.Tile[[64, 64], pl.FP32, {mr}] = pl.tile.neg(e)
        out: pl.Tensor[[64, 64], pl.FP32, {ddr.format(2)}] = pl.tile.store(n, [0, 0], out)
        return out
""", f"a: pl.Tensor[[64, 64], pl.FP32, {ddr.format(0)}], "
     f"b: pl.Tensor[[64, 64], pl.FP32, {ddr.format(1)}], "
     f"out: pl.Out[pl.Tensor[[64, 64], pl.FP32, {ddr.format(2)}]]", T64)
    assert_structural_equal(after, pl.parse_program(expected))


def test_allocate_memory_addr_places_kernels_only():
    body = """\
        x: pl.Tile[[64, 64], pl.FP32] = pl.load(a, [0, 0], [64, 64])
        y: pl.Tile[[64, 64], pl.FP32] = pl.load(b, [0, 0], [64, 64])
        s: pl.Tile[[64, 64], pl.FP32] = pl.add(x, y)
        out: pl.Tensor[[64, 64], pl.FP32] = pl.store(s, [0, 0], out)
        return out
"""
    opaque = run([init_mem_ref], prog(body, IO64, T64))
    assert run([allocate_memory_addr], opaque) is opaque
    kernel = run([init_mem_ref, allocate_memory_addr],
                 prog(body, IO64, T64, deco="@pl.function(type=pl.FunctionType.InCore)"))
    offsets = [s.var.type.memref.offset.value for s in kernel.functions[0].body.stmts
               if isinstance(s, AssignStmt) and s.var.type.__class__.__name__ == "TileType"]
    assert offsets == [0, 16384, 32768]


# ---- 3. pl.load without target_memory -------------------------------------------------------

def test_load_without_target_is_a_vec_load_when_parsed():
    p = pl.parse_program(prog("""\
        t = pl.load(a, [0, 0], [64, 64])
        u: pl.Tile[[64, 64], pl.FP32] = pl.load(b, [0, 0], [64, 64])
        return out
""", IO64, T64))
    for s in p.functions[0].body.stmts[:2]:
        assert s.value.kwarg("target_memory") is MemorySpace.Vec
        assert s.var.type.memory_space is MemorySpace.Vec
    # InitMemRef straight after parsing (no InferTileMemorySpace) places them in Vec
    after = run([init_mem_ref], p)
    assert "mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)" in after.as_python()


# ---- 4. a Mat tile stored to GM ---------------------------------------------------------------

MAT_STORE = """\
        t: pl.Tile[[16, 128], pl.BF16] = pl.load(a, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        out: pl.Tensor[[16, 128], pl.BF16] = pl.store(t, [0, 0], out)
        return out
"""
BF = "pl.Tensor[[16, 128], pl.BF16]"
IO_BF = f"a: {BF}, out: pl.Out[{BF}]"


def test_a_mat_tile_stored_to_gm_keeps_the_mat_load_and_stores_a_vec_copy():
    # in an InCore kernel on a2a3 the move is a cube -> vector pipe (ExpandMixedKernel)
    before = prog(MAT_STORE, IO_BF, BF, deco="@pl.function(type=pl.FunctionType.InCore)")
    expected = prog("""\
        t: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        t_vec: pl.Tile[[16, 128], pl.BF16, pl.Mem.Vec] = pl.tile.move(t, target_memory=pl.Mem.Vec)
        out: pl.Tensor[[16, 128], pl.BF16] = pl.tile.store(t_vec, [0, 0], out)
        return out
""", IO_BF, BF, deco="@pl.function(type=pl.FunctionType.InCore)")
    after = run([infer_tile_memory_space], before, target="a2a3")
    assert_structural_equal(after, pl.parse_program(expected))


@pytest.mark.parametrize("target, deco, hint", [
    # a5's cube -> vector ring is in UB, which L1 cannot reach
    ("a5", "@pl.function(type=pl.FunctionType.InCore)", "carries Acc tiles only"),
    # outside an InCore kernel there is no vector core to cross to
    ("a2a3", "@pl.function", "write the kernel as an InCore function"),
])
def test_a_mat_tile_stored_to_gm_without_a_pipe_for_it_is_refused(target, deco, hint):
    before = prog(MAT_STORE, IO_BF, BF, deco=deco)
    with pytest.raises(PassError, match=r"'t' is in pl.Mem.Mat.*no data path Mat -> Vec") as info:
        run([infer_tile_memory_space], before, target=target)
    assert "target_memory=pl.Mem.Vec" in info.value.hint and hint in info.value.hint


# ---- 5. Left tiles on a5 ----------------------------------------------------------------------

SKINNY = """\
        lm = pl.load(a, [0, 0], [16, 2048], target_memory=pl.Mem.Mat)
        rm = pl.load(b, [0, 0], [2048, 64], target_memory=pl.Mem.Mat)
        c = pl.matmul(lm, rm)
        out = pl.store(c, [0, 0], out)
        return out
"""
SKINNY_IO = ("a: pl.Tensor[[16, 2048], pl.BF16], b: pl.Tensor[[2048, 64], pl.BF16], "
             "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
SKINNY_RET = "pl.Tensor[[16, 64], pl.FP32]"


def _left_views(program):
    text = program.as_python()
    return [line.split(" = ", 1)[0] for line in text.splitlines() if "pl.Mem.Left" in line
            and "pl.tile.extract" in line]


@pytest.mark.parametrize("target, stamped", [("a2a3", True), ("a5", False)])
def test_left_extracts_carry_the_row_major_stamp_on_910b_only(target, stamped):
    src = prog(SKINNY, SKINNY_IO, SKINNY_RET, deco="@pl.function(type=pl.FunctionType.InCore)")
    lefts = _left_views(run([auto_tile_matmul_l0], src, target=target))
    assert lefts
    assert all(("pl.TileView(blayout=pl.TileLayout.row_major)" in l) is stamped for l in lefts)


# ---- 6. Vec lhs, cast of an accumulator ---------------------------------------------------------

def test_matmul_of_a_vec_lhs_parses_and_autotile_stages_it_through_mat():
    src = prog(SKINNY.replace("lm = pl.load(a, [0, 0], [16, 2048], target_memory=pl.Mem.Mat)",
                              "lm = pl.load(a, [0, 0], [16, 2048])"),
               SKINNY_IO, SKINNY_RET, deco="@pl.function(type=pl.FunctionType.InCore)")
    parsed = pl.parse_program(src)
    assert parsed.functions[0].body.stmts[0].var.type.memory_space is MemorySpace.Vec
    text = run([auto_tile_matmul_l0], parsed, target="a5").as_python()
    assert "c_l0_lhs_mat: pl.Tile[[16, 2048], pl.BF16, pl.Mem.Mat] = pl.tile.move(lm, " \
           "target_memory=pl.Mem.Mat)" in text


def test_cast_of_an_accumulator_is_a_vec_tile_in_the_accumulator_layout():
    src = prog("""\
        lm = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        rm = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul(lm, rm)
        cb = pl.tile.cast(c, pl.BF16, mode="rint")
        d = pl.tile.matmul(cb, rm)
        out = pl.store(d, [0, 0], out)
        return out
""", "a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16], "
     "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]", "pl.Tensor[[16, 64], pl.FP32]",
        deco="@pl.function(type=pl.FunctionType.InCore)")
    parsed = pl.parse_program(src)
    cb = parsed.functions[0].body.stmts[3].var
    assert cb.type.memory_space is MemorySpace.Vec
    assert "pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout.col_major, " \
           "slayout=pl.TileLayout.row_major)] = pl.tile.cast(c" in parsed.as_python()
    # the cast fold turns it into a Mat scratch the second matmul reads
    text = run([auto_tile_matmul_l0], parsed).as_python()
    assert "pl.tile.cast(" not in text and "cb_mat" in text


# ---- ConvertToSSA and the configured backend --------------------------------------------------

def test_convert_to_ssa_certifies_the_parsed_program():
    from ptoc.errors import VerificationError
    from ptoc.ir.nodes import SeqStmts
    from ptoc.passes import convert_to_ssa

    p = pl.parse_program(prog(SKINNY, SKINNY_IO, SKINNY_RET))
    with PassContext():
        assert convert_to_ssa()(p) is p
    fn = p.functions[0]
    twice = fn.body.stmts[0]
    broken = dataclasses.replace(p, functions=(dataclasses.replace(
        fn, body=SeqStmts((twice,) + fn.body.stmts)),))
    with PassContext(verification_level="NONE"), pytest.raises(VerificationError, match="lm"):
        convert_to_ssa()(broken)


def test_configured_backend_is_the_default_target():
    from ptoc.backend import (
        BackendType, get_backend_type, is_backend_configured, reset_for_testing, set_backend_type,
    )

    reset_for_testing()
    try:
        assert not is_backend_configured() and PassContext().target == "a2a3"
        set_backend_type(BackendType.Ascend950)
        assert get_backend_type() is BackendType.Ascend950 and PassContext().target == "a5"
        assert PassContext(target="a2a3").target == "a2a3"
        src = prog(SKINNY, SKINNY_IO, SKINNY_RET, deco="@pl.function(type=pl.FunctionType.InCore)")
        assert all("TileView" not in l for l in _left_views(run([auto_tile_matmul_l0], src)))
    finally:
        reset_for_testing()
