"""AutoTileMatmulL0: PyPTO conformance, Before/Expected programs for every rewrite form.

Reference: pypto-passes.md §3 (semantics) and §14.4 (the reference tests re-expressed here).
The existing-pipeline dbC recogniser (§3.6) and the PH-AT codes have their own files.
"""

import glob
import os

import pytest

import ptoc.language as pl
from ptoc.dtypes import ForKind
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import AssignStmt, ForStmt, IfStmt
from ptoc.passes import MemoryPlanner, PassContext, auto_tile_matmul_l0
from ptoc.passes.auto_tile_analysis import L0OperandTooLargeError
from oracle_data import ORACLE_ROOT

ORACLE = sorted(glob.glob(os.path.join(str(ORACLE_ROOT), "dumps", "*", "")))
HEADER = "import ptoc.language as pl\n\n@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"


def folder_context(name: str) -> PassContext:
    """The options PyPTO ran each oracle folder under (dumps/README.md)."""
    if name.endswith("dbc_on"):
        return PassContext(enable_pypto_l0c_double_buffer=True)
    if name.endswith("ptoas"):
        return PassContext(memory_planner=MemoryPlanner.PTOAS)
    return PassContext()


@pytest.mark.parametrize("folder", ORACLE, ids=lambda p: p.rstrip(os.sep).split(os.sep)[-1])
def test_matches_pypto(folder):
    name = folder.rstrip(os.sep).split(os.sep)[-1]
    before = pl.parse_program(open(os.path.join(folder, "15_after_LegalizeTileCast.py")).read())
    expected = pl.parse_program(open(os.path.join(folder, "16_after_AutoTileMatmulL0.py")).read())
    with folder_context(name) as ctx:
        out = auto_tile_matmul_l0(spread_dbc_tails=False)(before)  # PyPTO's exact output
    assert_structural_equal(out, expected)
    assert not [d for d in ctx.diagnostics if d.code.startswith("PH-AT")]


# ---- helpers ---------------------------------------------------------------------------------

def kernel(params: str, ret: str, body: str) -> str:
    return HEADER + f"    def k(self, {params}) -> {ret}:\n" + body


def matmul_kernel(M, K, N, dt="BF16", *, out_dt="FP32", middle=None) -> str:
    """a[M,K] and b[K,N] loaded to Mat, one matmul, one store (the oracle program)."""
    body = (f"        am = pl.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)\n"
            f"        bm = pl.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)\n"
            + (middle or "        c = pl.matmul(am, bm)\n        out = pl.store(c, [0, 0], out)\n")
            + "        return out\n")
    return kernel(f"a: pl.Tensor[[{M}, {K}], pl.{dt}], b: pl.Tensor[[{K}, {N}], pl.{dt}], "
                  f"out: pl.Out[pl.Tensor[[{M}, {N}], pl.{out_dt}]]",
                  f"pl.Tensor[[{M}, {N}], pl.{out_dt}]", body)


LOADS = ("        am: pl.Tile[[{M}, {K}], pl.{dt}, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [{M}, {K}], [{M}, {K}], target_memory=pl.Mem.Mat)\n"
         "        bm: pl.Tile[[{K}, {N}], pl.{dt}, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [{K}, {N}], [{K}, {N}], target_memory=pl.Mem.Mat)\n")


def expected_kernel(M, K, N, dt, body, out_dt="FP32") -> str:
    return kernel(f"a: pl.Tensor[[{M}, {K}], pl.{dt}], b: pl.Tensor[[{K}, {N}], pl.{dt}], "
                  f"out: pl.Out[pl.Tensor[[{M}, {N}], pl.{out_dt}]]",
                  f"pl.Tensor[[{M}, {N}], pl.{out_dt}]",
                  LOADS.format(M=M, K=K, N=N, dt=dt) + body)


def run(src: str, **options):
    with PassContext(**options) as ctx:
        out = auto_tile_matmul_l0()(pl.parse_program(src))
    return out, [d.format() for d in ctx.diagnostics]


def stmts(prog):
    return prog.functions[0].body.stmts


def loops(node):
    """Every ForStmt under ``node`` in program order."""
    found = []

    def walk(s):
        if hasattr(s, "functions"):
            for f in s.functions:
                walk(f)
        elif isinstance(s, ForStmt):
            found.append(s)
            walk(s.body)
        elif isinstance(s, IfStmt):
            walk(s.then_body)
            walk(s.else_body)
        elif hasattr(s, "stmts"):
            for x in s.stmts:
                walk(x)
        elif hasattr(s, "body"):
            walk(s.body)

    walk(node)
    return found


def calls(node, op):
    found = []

    def walk(s):
        if hasattr(s, "functions"):
            for f in s.functions:
                walk(f.body)
        if isinstance(s, AssignStmt) and getattr(s.value, "op", None) == op:
            found.append(s)
        for x in getattr(s, "stmts", ()) or ():
            walk(x)
        if isinstance(s, ForStmt):
            walk(s.body)
        if isinstance(s, IfStmt):
            walk(s.then_body)
            walk(s.else_body)

    walk(node)
    return found


# ---- §3.3 K-only -----------------------------------------------------------------------------

def test_skinny_gemm_pipelined():
    """16x2048x64 bf16: k = 256, ``ko == 0`` -> matmul, else matmul_acc (test_skinny_gemm_pipelined)."""
    out, hints = run(matmul_kernel(16, 2048, 64))
    expected = expected_kernel(16, 2048, 64, "BF16", """\
        c_init: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for ko, (c_iter,) in pl.pipeline(0, 2048, 256, stage=2, init_values=(c_init,)):
            sa: pl.Tile[[16, 256], pl.BF16, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(am, 0, ko, [16, 256], target_memory=pl.Mem.Left)
            sb: pl.Tile[[256, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(bm, ko, 0, [256, 64], target_memory=pl.Mem.Right)
            if ko == 0:
                first: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(sa, sb)
                phi: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(first)
            else:
                acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_iter, sa, sb)
                phi: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(acc)
            c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(phi)
        out2: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out2
""")
    assert_structural_equal(out, pl.parse_program(expected))
    assert hints == []
    # The K-loop never carries store overlap or dbC attrs (§3.3, trap 4).
    (loop,) = loops(out)
    assert loop.attrs == {"pipeline_stages": 2}
    # Names follow PyPTO's, so dumps read side by side.
    text = out.as_python()
    for name in ("c_l0_init", "c_l0_ko", "c_l0_c", "c_l0_a", "c_l0_b", "c_l0_c_first",
                 "c_l0_c_acc", "c_l0_c_phi"):
        assert f"{name}:" in text or f"{name}," in text


def test_k_tail_is_peeled_after_the_pipelined_loop():
    """128x272x128 bf16: k = 96, two full blocks in the loop, an 80-wide matmul_acc tail."""
    out, _ = run(matmul_kernel(128, 272, 128))
    expected = expected_kernel(128, 272, 128, "BF16", """\
        c_init: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.create([128, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for ko, (c_iter,) in pl.pipeline(0, 192, 96, stage=2, init_values=(c_init,)):
            sa: pl.Tile[[128, 96], pl.BF16, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(am, 0, ko, [128, 96], target_memory=pl.Mem.Left)
            sb: pl.Tile[[96, 128], pl.BF16, pl.Mem.Right] = pl.tile.extract(bm, ko, 0, [96, 128], target_memory=pl.Mem.Right)
            if ko == 0:
                first: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(sa, sb)
                phi: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.yield_(first)
            else:
                acc: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_iter, sa, sb)
                phi: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.yield_(acc)
            kmain: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.yield_(phi)
        ta: pl.Tile[[128, 80], pl.BF16, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(am, 0, 192, [128, 80], target_memory=pl.Mem.Left)
        tb: pl.Tile[[80, 128], pl.BF16, pl.Mem.Right] = pl.tile.extract(bm, 192, 0, [80, 128], target_memory=pl.Mem.Right)
        c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(kmain, ta, tb)
        out2: pl.Tensor[[128, 128], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out2
""")
    assert_structural_equal(out, pl.parse_program(expected))
    assert "c_l0_kmain" in out.as_python()


def test_matmul_acc_pipelined_uses_uniform_matmul_acc_on_the_caller_accumulator():
    """A caller-owned accumulator is the loop's init; every block is matmul_acc (no branch)."""
    middle = ("        acc = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
              "        c = pl.matmul_acc(acc, am, bm)\n        out = pl.store(c, [0, 0], out)\n")
    out, _ = run(matmul_kernel(16, 2048, 64, middle=middle))
    expected = expected_kernel(16, 2048, 64, "BF16", """\
        acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for ko, (c_iter,) in pl.pipeline(0, 2048, 256, stage=2, init_values=(acc,)):
            sa: pl.Tile[[16, 256], pl.BF16, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(am, 0, ko, [16, 256], target_memory=pl.Mem.Left)
            sb: pl.Tile[[256, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(bm, ko, 0, [256, 64], target_memory=pl.Mem.Right)
            step: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_iter, sa, sb)
            c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(step)
        out2: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out2
""")
    assert_structural_equal(out, pl.parse_program(expected))


def test_vec_lhs_is_staged_to_mat_before_the_k_loop():
    """The PV pattern: a Vec lhs is moved to Mat once (after the init), then extracted per block.

    ptoc's tile.matmul typing rejects a Vec lhs at parse time, so the input is built by
    swapping the lhs of a parsed matmul for a Vec tile; the output has no Vec-lhs matmul left.
    """
    from dataclasses import replace

    from ptoc.dtypes import MemorySpace
    from ptoc.ir.nodes import Program, SeqStmts
    from ptoc.ir.types import TileType

    src = kernel("a: pl.Tensor[[16, 2048], pl.BF16], b: pl.Tensor[[2048, 64], pl.BF16], "
                 "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]", "pl.Tensor[[16, 64], pl.FP32]", """\
        pv = pl.load(a, [0, 0], [16, 2048], target_memory=pl.Mem.Vec)
        am = pl.load(a, [0, 0], [16, 2048], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [2048, 64], target_memory=pl.Mem.Mat)
        c = pl.matmul(am, bm)
        out = pl.store(c, [0, 0], out)
        return out
""")
    prog = pl.parse_program(src)
    fn = prog.functions[0]
    pv = fn.body.stmts[0].var
    assert isinstance(pv.type, TileType) and pv.type.memory_space is MemorySpace.Vec
    mm = fn.body.stmts[3]
    vec_mm = replace(mm, value=replace(mm.value, args=(pv, mm.value.args[1])))
    body = SeqStmts(fn.body.stmts[:1] + fn.body.stmts[2:3] + (vec_mm,) + fn.body.stmts[4:])
    prog = Program(prog.name, (replace(fn, body=body),))
    with PassContext():
        out = auto_tile_matmul_l0()(prog)
    expected = kernel("a: pl.Tensor[[16, 2048], pl.BF16], b: pl.Tensor[[2048, 64], pl.BF16], "
                      "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]", "pl.Tensor[[16, 64], pl.FP32]", """\
        pv: pl.Tile[[16, 2048], pl.BF16, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 2048], [16, 2048], target_memory=pl.Mem.Vec)
        bm: pl.Tile[[2048, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [2048, 64], [2048, 64], target_memory=pl.Mem.Mat)
        c_init: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        pm: pl.Tile[[16, 2048], pl.BF16, pl.Mem.Mat] = pl.tile.move(pv, target_memory=pl.Mem.Mat)
        for ko, (c_iter,) in pl.pipeline(0, 2048, 256, stage=2, init_values=(c_init,)):
            sa: pl.Tile[[16, 256], pl.BF16, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(pm, 0, ko, [16, 256], target_memory=pl.Mem.Left)
            sb: pl.Tile[[256, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(bm, ko, 0, [256, 64], target_memory=pl.Mem.Right)
            if ko == 0:
                first: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(sa, sb)
                phi: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(first)
            else:
                acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_iter, sa, sb)
                phi: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(acc)
            c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(phi)
        out2: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out2
""")
    assert_structural_equal(out, pl.parse_program(expected))


def test_already_l0_sized_skipped():
    src = matmul_kernel(64, 64, 64)
    prog = pl.parse_program(src)
    with PassContext() as ctx:
        out = auto_tile_matmul_l0()(prog)
    assert out is prog and list(ctx.diagnostics) == []


def test_pass_idempotent():
    for options in ({}, {"enable_pypto_l0c_double_buffer": True}):
        once, _ = run(matmul_kernel(320, 64, 320), **options)
        with PassContext(**options):
            twice = auto_tile_matmul_l0()(once)
        assert twice is once


def test_non_incore_functions_untouched():
    src = ("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.InCore)\n"
           "    def k(self, a: pl.Tensor[[16, 2048], pl.BF16], b: pl.Tensor[[2048, 64], pl.BF16], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:\n"
           "        am = pl.load(a, [0, 0], [16, 2048], target_memory=pl.Mem.Mat)\n"
           "        bm = pl.load(b, [0, 0], [2048, 64], target_memory=pl.Mem.Mat)\n"
           "        c = pl.matmul(am, bm)\n        out = pl.store(c, [0, 0], out)\n        return out\n"
           "    @pl.function(type=pl.FunctionType.Orchestration)\n"
           "    def main(self, a: pl.Tensor[[16, 2048], pl.BF16], b: pl.Tensor[[2048, 64], pl.BF16], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:\n"
           "        out = self.k(a, b, out)\n        return out\n")
    prog = pl.parse_program(src)
    out, _ = run(src)
    assert out.functions[1] is not None
    assert_structural_equal(out.functions[1], prog.functions[1])
    assert loops(out.functions[0])


# ---- §3.4 split-K grid -------------------------------------------------------------------------

def test_split_k_grid_is_unrolled_with_one_k_loop_per_output_tile():
    """[256,128]@[128,256] FP32: (128, 256, 32) -> two K-loops, stores chained in SSA."""
    out, _ = run(matmul_kernel(256, 128, 256, "FP32"))
    tile = """\
        {p}_init: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.tile.create([128, 256], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for {p}_ko, ({p}_iter,) in pl.pipeline(0, 128, 32, stage=2, init_values=({p}_init,)):
            {p}_a: pl.Tile[[128, 32], pl.FP32, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(am, {row}, {p}_ko, [128, 32], target_memory=pl.Mem.Left)
            {p}_b: pl.Tile[[32, 256], pl.FP32, pl.Mem.Right] = pl.tile.extract(bm, {p}_ko, 0, [32, 256], target_memory=pl.Mem.Right)
            if {p}_ko == 0:
                {p}_first: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.tile.matmul({p}_a, {p}_b)
                {p}_phi: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.yield_({p}_first)
            else:
                {p}_acc: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc({p}_iter, {p}_a, {p}_b)
                {p}_phi: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.yield_({p}_acc)
            {p}: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.yield_({p}_phi)
        {p}_out: pl.Tensor[[256, 256], pl.FP32] = pl.tile.store({p}, [{row}, 0], {chain})
"""
    expected = expected_kernel(256, 128, 256, "FP32",
                               tile.format(p="t0", row=0, chain="out")
                               + tile.format(p="t1", row=128, chain="t0_out")
                               + "        return t1_out\n")
    assert_structural_equal(out, pl.parse_program(expected))
    # K-loops never carry dbC or store-overlap attrs, whatever the planner (§3.3, trap 4).
    for options in ({}, {"enable_pypto_l0c_double_buffer": True},
                    {"memory_planner": MemoryPlanner.PTOAS}):
        for shape in [(256, 128, 256), (16, 2048, 64), (128, 272, 128)]:
            out, _ = run(matmul_kernel(*shape, "FP32"), **options)
            for loop in loops(out):
                if any(isinstance(x, IfStmt) for x in loop.body.stmts):
                    assert loop.attrs == {"pipeline_stages": 2}


# ---- §3.4 full-K grids -------------------------------------------------------------------------

def test_mn_tiling_full_k_row_outer_pipelined_with_right_tail():
    """320x64x320 bf16, flag off: (160, 128, 64) OS holding A -> rows outer (Pipeline), a
    64-wide right strip peeled in m-steps; the Acc stays 160x128 (< L0C, one accumulator)."""
    out, _ = run(matmul_kernel(320, 64, 320))
    expected = expected_kernel(320, 64, 320, "BF16", """\
        for o, (oc,) in pl.pipeline(0, 320, 160, stage=2, init_values=(out,), attrs={"pipeline_overlap_stores": False}):
            sa: pl.Tile[[160, 64], pl.BF16, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(am, o, 0, [160, 64], target_memory=pl.Mem.Left)
            for i, (ic,) in pl.pipeline(0, 256, 128, stage=2, init_values=(oc,), attrs={"pipeline_overlap_stores": False}):
                sb: pl.Tile[[64, 128], pl.BF16, pl.Mem.Right] = pl.tile.extract(bm, 0, i, [64, 128], target_memory=pl.Mem.Right)
                c: pl.Tile[[160, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(sa, sb)
                t0: pl.Tensor[[320, 320], pl.FP32] = pl.tile.store(c, [o, i], ic)
                irv: pl.Tensor[[320, 320], pl.FP32] = pl.yield_(t0)
            orv: pl.Tensor[[320, 320], pl.FP32] = pl.yield_(irv)
        ta1: pl.Tile[[160, 64], pl.BF16, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(am, 0, 0, [160, 64], target_memory=pl.Mem.Left)
        tb1: pl.Tile[[64, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(bm, 0, 256, [64, 64], target_memory=pl.Mem.Right)
        tc1: pl.Tile[[160, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta1, tb1)
        t1: pl.Tensor[[320, 320], pl.FP32] = pl.tile.store(tc1, [0, 256], orv)
        ta2: pl.Tile[[160, 64], pl.BF16, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(am, 160, 0, [160, 64], target_memory=pl.Mem.Left)
        tb2: pl.Tile[[64, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(bm, 0, 256, [64, 64], target_memory=pl.Mem.Right)
        tc2: pl.Tile[[160, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta2, tb2)
        t2: pl.Tensor[[320, 320], pl.FP32] = pl.tile.store(tc2, [160, 256], t1)
        return t2
""")
    assert_structural_equal(out, pl.parse_program(expected))


def test_full_k_column_outer_dbc_with_bottom_and_right_tails():
    """320x64x320 bf16 with the flag: (112, 128, 64) dbC, OS holding B -> columns outer; the
    bottom strip (rows 224..320) in n-steps, then the right strip in m-steps (steps 1..5)."""
    out, _ = run(matmul_kernel(320, 64, 320), enable_pypto_l0c_double_buffer=True)
    outer, inner = loops(out)
    assert outer.kind is ForKind.Pipeline and (outer.start.value, outer.stop.value, outer.step.value) == (0, 256, 128)
    assert outer.attrs == {"pipeline_stages": 2, "pipeline_overlap_stores": False}
    assert (inner.stop.value, inner.step.value) == (224, 112)
    assert inner.attrs == {"pipeline_stages": 2, "pipeline_overlap_stores": False,
                           "pipeline_double_buffer_c": True}
    held = outer.body.stmts[0]
    assert held.value.op == "tile.extract" and held.var.type.shape == (64, 128)
    stores = [s.value for s in stmts(out) if isinstance(s, AssignStmt) and s.value.op == "tile.store"]
    placed = [(s.args[1].items[0].value, s.args[1].items[1].value, tuple(s.args[0].type.shape))
              for s in stores]
    assert placed == [(224, 0, (96, 128)), (224, 128, (96, 128)), (224, 256, (96, 64)),
                      (0, 256, (112, 64)), (112, 256, (112, 64))]
    assert [s.var.name for s in stmts(out) if isinstance(s, AssignStmt)
            and s.value.op == "tile.store"] == [f"out_t{i}" for i in range(1, 6)]


@pytest.mark.parametrize("options", [{"enable_pypto_l0c_double_buffer": True},
                                     {"memory_planner": MemoryPlanner.DSA_RP},
                                     {"memory_planner": MemoryPlanner.PTOAS}],
                         ids=["pypto_flag", "dsa_rp", "ptoas"])
@pytest.mark.parametrize("M,N,tile_m,tile_n", [(160, 160, 80, 128), (144, 144, 48, 128),
                                               (256, 256, 32, 256), (448, 448, 112, 128),
                                               (384, 256, 32, 256)])
def test_system_dbc_shapes_emit_expected_fp32_tile(options, M, N, tile_m, tile_n):
    out, _ = run(matmul_kernel(M, 64, N, "FP32"), **options)
    text = out.as_python()
    assert f"[{tile_m}, 64], target_memory=pl.Mem.Left" in text
    assert f"[64, {tile_n}], target_memory=pl.Mem.Right" in text
    assert text.count("pipeline_double_buffer_c") == 1


def test_pypto_planner_without_the_flag_never_double_buffers():
    for M, N in [(160, 160), (256, 256), (448, 448)]:
        out, _ = run(matmul_kernel(M, 64, N, "FP32"))
        assert "pipeline_double_buffer_c" not in out.as_python()


@pytest.mark.parametrize("M,N,outer,held", [(16, 256, (16, 16), "Left"), (256, 16, (16, 16), "Right")])
@pytest.mark.parametrize("planner", [MemoryPlanner.PYPTO, MemoryPlanner.DSA_RP])
def test_dbc_one_dimensional_grid(M, N, outer, held, planner):
    """K=128 bf16 1-D grids: outer ``pl.pipeline(0, 16, 16`` precedes the inner
    ``pl.pipeline(0, 256, 128``; the held extract sits in the outer region; dbC on the inner
    loop only; under DSA_RP the flag changes nothing."""
    options = {"memory_planner": planner}
    if planner is MemoryPlanner.PYPTO:
        options["enable_pypto_l0c_double_buffer"] = True
    out, _ = run(matmul_kernel(M, 128, N), **options)
    text = out.as_python()
    assert text.index("pl.pipeline(0, 16, 16,") < text.index("pl.pipeline(0, 256, 128,")
    o, i = loops(out)
    assert o.body.stmts[0].var.type.memory_space.value == held
    assert "pipeline_double_buffer_c" not in o.attrs and i.attrs["pipeline_double_buffer_c"] is True
    if planner is MemoryPlanner.DSA_RP:
        flagged, _ = run(matmul_kernel(M, 128, N), memory_planner=planner,
                         enable_pypto_l0c_double_buffer=True)
        assert_structural_equal(flagged, out)


def test_a_stationary_single_buffers_held_operand():
    """512x128x128 bf16: A-stationary (256, 128, 128) -> rows outer, Sequential, no attrs."""
    out, _ = run(matmul_kernel(512, 128, 128))
    expected = expected_kernel(512, 128, 128, "BF16", """\
        for o, (oc,) in pl.range(0, 512, 256, init_values=(out,)):
            sa: pl.Tile[[256, 128], pl.BF16, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(am, o, 0, [256, 128], target_memory=pl.Mem.Left)
            for i, (ic,) in pl.pipeline(0, 128, 128, stage=2, init_values=(oc,), attrs={"pipeline_overlap_stores": False}):
                sb: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.tile.extract(bm, 0, i, [128, 128], target_memory=pl.Mem.Right)
                c: pl.Tile[[256, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(sa, sb)
                t0: pl.Tensor[[512, 128], pl.FP32] = pl.tile.store(c, [o, i], ic)
                irv: pl.Tensor[[512, 128], pl.FP32] = pl.yield_(t0)
            orv: pl.Tensor[[512, 128], pl.FP32] = pl.yield_(irv)
        return orv
""")
    assert_structural_equal(out, pl.parse_program(expected))


def test_b_stationary_single_buffers_held_operand():
    """256x256x256 bf16 with dbC allowed: B-stationary (64, 128, 256) -> columns outer in a
    Sequential loop holding the [256, 128] Right panel; rows stream in the dbC Pipeline."""
    out, _ = run(matmul_kernel(256, 256, 256), memory_planner=MemoryPlanner.PTOAS)
    outer, inner = loops(out)
    assert outer.kind is ForKind.Sequential and outer.attrs == {}
    held = outer.body.stmts[0]
    assert held.value.op == "tile.extract" and held.var.type.memory_space.value == "Right"
    assert tuple(held.var.type.shape) == (256, 128)
    assert inner.kind is ForKind.Pipeline and inner.attrs["pipeline_double_buffer_c"] is True
    assert tuple(inner.body.stmts[0].var.type.shape) == (64, 256)


def test_full_k_direct_store_keeps_one_accumulator_per_tile_without_the_flag():
    """320x64x320 bf16 default: the [320, 320] Acc (400 KiB) never appears; every Acc is a tile."""
    out, _ = run(matmul_kernel(320, 64, 320))
    accs = [s.var.type.shape for s in calls(out, "tile.matmul")]
    assert accs and all(tuple(s)[0] <= 160 and tuple(s)[1] <= 128 for s in accs)


# ---- §3.4 Mat scratch and §3.5 the cast fold ---------------------------------------------------

CHAIN = """\
        em = pl.load(e, [0, 0], [{N}, 64], target_memory=pl.Mem.Mat)
        c = pl.matmul(am, bm)
        cb: pl.Tile[[{M}, {N}], pl.BF16] = pl.cast(c, pl.BF16, mode="{mode}")
        d = pl.matmul(cb, em)
        out = pl.store(d, [0, 0], out)
"""


def chain_kernel(M, N, mode="rint") -> str:
    src = matmul_kernel(M, 64, N, middle=CHAIN.format(M=M, N=N, mode=mode))
    return src.replace(f"out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]",
                       f"e: pl.Tensor[[{N}, 64], pl.BF16], out: pl.Out[pl.Tensor[[{M}, 64], pl.FP32]]"
                       f") -> pl.Tensor[[{M}, 64], pl.FP32]")


def test_oversized_chained_result_goes_through_a_bf16_mat_scratch():
    """(a@b) -> cast(rint) -> @e with a 256x256 f32 intermediate (256 KiB > L0C): the grid
    drains each [128, 256] tile into one [256, 256] bf16 Mat scratch (the cast is dropped),
    and the second matmul reads the scratch."""
    out, hints = run(chain_kernel(256, 256))
    assert hints == []
    body = stmts(out)
    scratch = body[3]
    assert scratch.value.op == "tile.create" and tuple(scratch.var.type.shape) == (256, 256)
    assert scratch.var.type.dtype.value == "BF16" and scratch.var.type.memory_space.value == "Mat"
    assert not calls(out, "tile.cast")
    (assemble,) = calls(out, "tile.assemble")
    assert assemble.value.args[1].type.memory_space.value == "Acc"
    outer = body[4]
    assert isinstance(outer, ForStmt) and outer.iter_args[0].init is scratch.var
    # The consumer matmul now reads the scratch chain's final value.
    second_lhs = [s for s in calls(out, "tile.extract") if s.value.args[0] is outer.return_vars[0]]
    assert second_lhs


def test_mat_scratch_producer_is_output_stationary_under_pypto():
    """Issue #1908: under PYPTO the scratch producer is re-chosen output-stationary."""
    out, _ = run(chain_kernel(512, 256))
    outer = [s for s in stmts(out) if isinstance(s, ForStmt)][0]
    assert outer.kind is ForKind.Pipeline  # OS; a held-operand regime would be Sequential


def test_fits_l0c_cast_fold_rint_becomes_a_fixpipe_write_to_mat():
    out, hints = run(chain_kernel(128, 128))
    expected = kernel("a: pl.Tensor[[128, 64], pl.BF16], b: pl.Tensor[[64, 128], pl.BF16], "
                      "e: pl.Tensor[[128, 64], pl.BF16], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]",
                      "pl.Tensor[[128, 64], pl.FP32]", """\
        am: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [128, 64], [128, 64], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
        em: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(e, [0, 0], [128, 64], [128, 64], target_memory=pl.Mem.Mat)
        c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(am, bm)
        s: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.tile.create([128, 128], dtype=pl.BF16, target_memory=pl.Mem.Mat)
        cb: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.tile.assemble(s, c, [0, 0])
        d: pl.Tile[[128, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(cb, em)
        out2: pl.Tensor[[128, 64], pl.FP32] = pl.tile.store(d, [0, 0], out)
        return out2
""")
    assert_structural_equal(out, pl.parse_program(expected))
    assert hints == []


def test_fits_l0c_cast_with_round_mode_stays_a_vector_cast_with_ph_at_010():
    out, hints = run(chain_kernel(128, 128, mode="round"))
    assert len(calls(out, "tile.cast")) == 1 and not calls(out, "tile.assemble")
    assert len(hints) == 1 and hints[0].startswith("[perf_hint PH-AT-010] AutoTileMatmulL0: ")
    assert "mode='round'" in hints[0] and "rint" in hints[0]


# ---- biased matmul -----------------------------------------------------------------------------

def bias_kernel(M, K, N) -> str:
    return kernel(f"a: pl.Tensor[[{M}, {K}], pl.FP32], b: pl.Tensor[[{K}, {N}], pl.FP32], "
                  f"bias: pl.Tensor[[1, {N}], pl.FP32], out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]",
                  f"pl.Tensor[[{M}, {N}], pl.FP32]", f"""\
        am = pl.load(a, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)
        bb = pl.load(bias, [0, 0], [1, {N}], target_memory=pl.Mem.Mat)
        c = pl.matmul_bias(am, bm, bb)
        out = pl.store(c, [0, 0], out)
        return out
""")


def test_biased_k_loop_applies_the_bias_on_the_first_block_only():
    """64x272x64 fp32 matmul_bias: k = 96 (Bias caps), bias on ``ko == 0``, matmul_acc after
    and in the 80-wide K tail."""
    out, _ = run(bias_kernel(64, 272, 64))
    (loop,) = loops(out)
    (branch,) = [s for s in loop.body.stmts if isinstance(s, IfStmt)]
    assert [s.value.op for s in branch.then_body.stmts[:-1]] == ["tile.matmul_bias"]
    assert [s.value.op for s in branch.else_body.stmts[:-1]] == ["tile.matmul_acc"]
    assert (loop.stop.value, loop.step.value) == (192, 96)
    tail = stmts(out)[-3]
    assert tail.value.op == "tile.matmul_acc" and tail.value.args[1].type.shape == (64, 80)
    assert len(calls(out, "tile.matmul_bias")) == 1


def test_biased_grid_applies_the_bias_once_per_output_tile():
    """128x64x512 fp32: N is split in 256-column tiles; each tile's matmul_bias reads the
    [1, 256] Bias window of its own columns, extracted with the held panel."""
    out, _ = run(bias_kernel(128, 64, 512))
    outer, inner = loops(out)
    window = outer.body.stmts[1]
    assert window.value.op == "tile.extract" and window.var.type.memory_space.value == "Bias"
    assert tuple(window.var.type.shape) == (1, 256) and window.value.args[2] is outer.loop_var
    (mm,) = calls(out, "tile.matmul_bias")
    assert mm.value.args[2] is window.var and not calls(out, "tile.matmul")


# ---- the explicit-L0 operand error -------------------------------------------------------------

def test_explicit_l0_operand_larger_than_l0a_raises_with_both_fixes():
    src = matmul_kernel(256, 256, 64, middle=(
        "        al = pl.move(am, target_memory=pl.Mem.Left)\n"
        "        c = pl.matmul(al, bm)\n        out = pl.store(c, [0, 0], out)\n"))
    with pytest.raises(L0OperandTooLargeError) as err:
        run(src)
    text = str(err.value)
    assert "'al'" in text and "[256, 256]" in text and "BF16" in text
    assert "131072" in text and "65536" in text
    assert "pl.Mem.Mat" in text and "extract" in text


def test_legal_manual_l0_operands_are_left_alone():
    src = matmul_kernel(64, 128, 64, middle=(
        "        al = pl.move(am, target_memory=pl.Mem.Left)\n"
        "        br = pl.move(bm, target_memory=pl.Mem.Right)\n"
        "        c = pl.matmul(al, br)\n        out = pl.store(c, [0, 0], out)\n"))
    prog = pl.parse_program(src)
    with PassContext():
        assert auto_tile_matmul_l0()(prog) is prog


def test_user_k_loop_with_if_matmul_else_matmul_acc_that_fits_is_left_alone():
    """A user-written stage-2 K-loop over L0-sized blocks is already tiled."""
    src = kernel("a: pl.Tensor[[64, 256], pl.BF16], b: pl.Tensor[[256, 64], pl.BF16], "
                 "out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]", "pl.Tensor[[64, 64], pl.FP32]", """\
        acc0 = pl.tile.create([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for kb, (acc,) in pl.pipeline(0, 4, 1, stage=2, init_values=(acc0,)):
            am = pl.load(a, [0, kb * 64], [64, 64], target_memory=pl.Mem.Mat)
            bm = pl.load(b, [kb * 64, 0], [64, 64], target_memory=pl.Mem.Mat)
            if kb == 0:
                r = pl.matmul(am, bm)
                acc2 = pl.yield_(r)
            else:
                r2 = pl.matmul_acc(acc, am, bm)
                acc2 = pl.yield_(r2)
            acc3 = pl.yield_(acc2)
        out = pl.store(acc3, [0, 0], out)
        return out
""")
    prog = pl.parse_program(src)
    with PassContext():
        assert auto_tile_matmul_l0()(prog) is prog


# ---- §3.1 pre-phase: the canonical split-K accumulator ---------------------------------------

SPLIT_K_BODY = """\
        acc0 = pl.tile.create([{M}, {N}], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for kb, (acc,) in pl.pipeline(0, 4, 1, stage=2, init_values=(acc0,)):
            am = pl.load(a, [0, kb * 64], [{M}, 64], target_memory=pl.Mem.Mat)
            bm = pl.load(b, [kb * 64, 0], [64, {N}], target_memory=pl.Mem.Mat)
            if kb == 0:
                r = pl.matmul(am, bm)
                acc2 = pl.yield_(r)
            else:
                r2 = pl.matmul_acc(acc, am, bm)
                acc2 = pl.yield_(r2)
            acc3 = pl.yield_(acc2)
        out = pl.store(acc3, [0, 0], out)
        return out
"""


def split_k_kernel(M, N):
    return kernel(f"a: pl.Tensor[[{M}, 256], pl.BF16], b: pl.Tensor[[256, {N}], pl.BF16], "
                  f"out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]", f"pl.Tensor[[{M}, {N}], pl.FP32]",
                  SPLIT_K_BODY.format(M=M, N=N))


def test_canonical_split_k_accumulator_over_l0c_gets_an_output_grid_outside_the_k_loop():
    """[256, 256] f32 (256 KiB > L0C): one K-loop clone per [128, 256] tile, loads narrowed
    to the tile's rows, the tiles stored at their offsets with the stores chained."""
    out, hints = run(split_k_kernel(256, 256))
    tile = """\
        {p}_init: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.tile.create([128, 256], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for {p}_kb, ({p}_acc,) in pl.pipeline(0, 4, 1, stage=2, init_values=({p}_init,)):
            {p}_am: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [{row}, {p}_kb * 64], [128, 64], [128, 64], target_memory=pl.Mem.Mat)
            {p}_bm: pl.Tile[[64, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [{p}_kb * 64, 0], [64, 256], [64, 256], target_memory=pl.Mem.Mat)
            if {p}_kb == 0:
                {p}_r: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.tile.matmul({p}_am, {p}_bm)
                {p}_phi: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.yield_({p}_r)
            else:
                {p}_r2: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc({p}_acc, {p}_am, {p}_bm)
                {p}_phi: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.yield_({p}_r2)
            {p}_res: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.yield_({p}_phi)
        {p}_out: pl.Tensor[[256, 256], pl.FP32] = pl.tile.store({p}_res, [{row}, 0], {chain})
"""
    expected = kernel("a: pl.Tensor[[256, 256], pl.BF16], b: pl.Tensor[[256, 256], pl.BF16], "
                      "out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]", "pl.Tensor[[256, 256], pl.FP32]",
                      tile.format(p="t0", row=0, chain="out")
                      + tile.format(p="t1", row=128, chain="t0_out") + "        return t1_out\n")
    assert_structural_equal(out, pl.parse_program(expected))
    assert hints == []


def test_canonical_split_k_accumulator_that_fits_is_left_to_the_per_matmul_rewrite():
    src = split_k_kernel(128, 128)
    prog = pl.parse_program(src)
    with PassContext():
        assert auto_tile_matmul_l0()(prog) is prog


def test_canonical_split_k_grid_compiles_through_the_default_pipeline():
    from ptoc.passes import PassManager

    with PassContext():
        out = PassManager.get_strategy().run_passes(pl.parse_program(split_k_kernel(256, 256)),
                                                    write_report=False)
    assert out.functions[0].body.stmts


def test_matmul_acc_init_cond_only_overwrites_on_the_first_k_block():
    """``init_cond`` (overwrite instead of accumulate) must not reset the accumulator on
    later K blocks, so the K-loop conjoins it with ``ko == 0``."""
    src = kernel("a: pl.Tensor[[16, 2048], pl.BF16], b: pl.Tensor[[2048, 64], pl.BF16], "
                 "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]", "pl.Tensor[[16, 64], pl.FP32]", """\
        acc0 = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for j, (acc,) in pl.range(0, 2, 1, init_values=(acc0,)):
            am = pl.load(a, [0, 0], [16, 2048], target_memory=pl.Mem.Mat)
            bm = pl.load(b, [0, 0], [2048, 64], target_memory=pl.Mem.Mat)
            c = pl.matmul_acc(acc, am, bm, init_cond=j == 0)
            acc2 = pl.yield_(c)
        out = pl.store(acc2, [0, 0], out)
        return out
""")
    out, _ = run(src)
    (mm,) = calls(out, "tile.matmul_acc")
    cond = mm.value.args[3]
    assert cond.op == "and" and cond.rhs.op == "==" and cond.rhs.lhs is loops(out)[1].loop_var


# ---- orientation and regime shapes (test_system_*_shapes, os-hoist) ------------------------------

def _choice(M, K, N, dt_bytes, **options):
    from ptoc.passes import L0TileConfig, choose_l0_tile

    dbc = options.get("memory_planner") is MemoryPlanner.PTOAS or \
        options.get("enable_pypto_l0c_double_buffer", False)
    return choose_l0_tile(L0TileConfig.for_target(
        "a2a3", M=M, N=N, K=K, bytes_a=dt_bytes, bytes_b=dt_bytes, bytes_c=4,
        allow_a_stationary=True, allow_b_stationary=True, allow_double_buffer_c=dbc,
        allow_k_boundary=True))


@pytest.mark.parametrize("M,K,N", [(16, 2048, 64), (64, 1024, 64), (128, 1024, 128), (16, 512, 256)])
def test_system_k_split_shapes_emit_k_only_loop(M, K, N):
    out, _ = run(matmul_kernel(M, K, N))
    (loop,) = loops(out)
    assert loop.attrs == {"pipeline_stages": 2}
    assert any(isinstance(s, IfStmt) for s in loop.body.stmts)
    assert tuple(calls(out, "tile.store")[0].value.args[0].type.shape) == (M, N)


@pytest.mark.parametrize("M,K,N,options", [
    (320, 64, 320, {}), (512, 64, 512, {}), (256, 64, 256, {}), (1024, 64, 1024, {}),
    (320, 64, 320, {"enable_pypto_l0c_double_buffer": True}),
    (64, 64, 2048, {"enable_pypto_l0c_double_buffer": True}),
    (512, 128, 128, {}), (256, 256, 256, {"memory_planner": MemoryPlanner.PTOAS}),
    (64, 512, 256, {"memory_planner": MemoryPlanner.PTOAS}),
])
def test_full_k_orientation_follows_stationarity_and_os_holds_a(M, K, N, options):
    """Rows outer iff A-stationary, or OS holding A (os_holds_a); the outer loop is a
    Pipeline exactly for OS; the held panel is extracted once per outer trip."""
    from ptoc.passes import Stationarity

    choice = _choice(M, K, N, 2, **options)
    if choice.k != K:
        pytest.skip(f"split-K choice {choice}")
    out, _ = run(matmul_kernel(M, K, N), **options)
    outer, inner = loops(out)[:2]
    rows_outer = choice.os_holds_a if choice.stationarity is Stationarity.OutputStationary \
        else choice.stationarity is Stationarity.AStationary
    held = outer.body.stmts[0].var.type
    assert held.memory_space.value == ("Left" if rows_outer else "Right")
    assert tuple(held.shape) == ((choice.m, K) if rows_outer else (K, choice.n))
    assert (outer.kind is ForKind.Pipeline) == (choice.stationarity is Stationarity.OutputStationary)
    assert inner.kind is ForKind.Pipeline
    assert inner.attrs.get("pipeline_double_buffer_c", False) == choice.double_buffer_c
