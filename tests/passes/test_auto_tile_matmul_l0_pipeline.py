"""AutoTileMatmulL0 through the later passes: the §14.4 reference tests that look at what the
tiled IR becomes (lowered op order, Acc allocations, PTO codegen)."""

import os
import sys

import pytest

import ptoc.language as pl
from ptoc.dtypes import MemorySpace
from ptoc.ir.nodes import AssignStmt, ForStmt, IfStmt
from ptoc.passes import (
    MemoryPlanner, PassContext, PassManager, auto_tile_matmul_l0, canonicalize_io_order,
    lower_pipeline_loops,
)
from ptoc.passes.infer_tile_memory_space import infer_tile_memory_space
from ptoc.passes.memref_rewrite import defined_vars, is_alloc, memref_of

sys.path.insert(0, os.path.dirname(__file__))
from test_auto_tile_matmul_l0 import matmul_kernel  # noqa: E402
from test_auto_tile_matmul_l0_pipeline_dbc import pipeline_kernel, scratch_kernel  # noqa: E402


def flat_ops(node):
    """Matmul and store-like op names in program order (loops and branches flattened)."""
    ops = []

    def walk(s):
        if hasattr(s, "functions"):
            for f in s.functions:
                walk(f.body)
        elif isinstance(s, AssignStmt) and getattr(s.value, "op", None) in (
                "tile.matmul", "tile.matmul_acc", "tile.store", "tile.assemble"):
            ops.append(s.value.op.split(".")[1])
        elif isinstance(s, ForStmt):
            walk(s.body)
        elif isinstance(s, IfStmt):
            walk(s.then_body)
            walk(s.else_body)
        for x in getattr(s, "stmts", ()) or ():
            walk(x)

    walk(node)
    return ops


def lowered(src, **options):
    with PassContext(**options):
        prog = auto_tile_matmul_l0()(pl.parse_program(src))
        prog = infer_tile_memory_space()(prog)
        prog = lower_pipeline_loops()(prog)
        return canonicalize_io_order()(prog)


def compiled(src, **options):
    with PassContext(**options) as ctx:
        out = PassManager.get_strategy().run_passes(pl.parse_program(src), write_report=False)
    return out, ctx


def acc_allocs(prog):
    fn = prog.functions[0]
    return [s for s in fn.body.stmts if is_alloc(s) and s.value.args[0] is MemorySpace.Acc]


def test_full_k_direct_gm_keeps_one_l0c_accumulator():
    """320x64x320 bf16, default: allocation succeeds (the whole [320, 320] Acc would be
    400 KiB), and after lowering every matmul is immediately followed by its store."""
    out, _ = compiled(matmul_kernel(320, 64, 320))
    assert len(acc_allocs(out)) == 1
    ops = flat_ops(lowered(matmul_kernel(320, 64, 320)))
    assert ops and all(ops[i + 1] == "store" for i, op in enumerate(ops) if op == "matmul")


def test_dbc2_ptoas_co_lives_two_l0c_accumulators():
    """256x64x256 bf16: under PTOAS the lowered order has ``matmul, matmul, store, store``;
    under default PYPTO every matmul is followed by its store."""
    ops = flat_ops(lowered(matmul_kernel(256, 64, 256), memory_planner=MemoryPlanner.PTOAS))
    assert "matmul,matmul,store,store" in ",".join(ops)
    ops = flat_ops(lowered(matmul_kernel(256, 64, 256)))
    assert all(ops[i + 1] == "store" for i, op in enumerate(ops) if op == "matmul")


def test_dbc2_pypto_flag_allocates_ping_pong():
    off, _ = compiled(matmul_kernel(256, 64, 256))
    on, _ = compiled(matmul_kernel(256, 64, 256), enable_pypto_l0c_double_buffer=True)
    assert len(acc_allocs(off)) == 1
    assert len(acc_allocs(on)) == 2


@pytest.mark.parametrize("M,N", [(16, 256), (256, 16)])
def test_dbc_one_dimensional_grid_allocates_two_accumulators(M, N):
    out, _ = compiled(matmul_kernel(M, 128, N), enable_pypto_l0c_double_buffer=True)
    assert len(acc_allocs(out)) == 2


@pytest.mark.parametrize("shape", [(320, 320), (272, 272)])
def test_full_k_direct_gm_generates_valid_pto(shape):
    from ptoc.codegen import generate_modules

    M, N = shape
    out, _ = compiled(matmul_kernel(M, 64, N))
    modules = generate_modules(out)
    assert modules


@pytest.mark.parametrize("stage,width,order", [(3, 384, "MMSSMS"), (4, 512, "MMSSMMSS")])
def test_deeper_pipeline_keeps_two_accumulators_and_chunks_the_drain_schedule(stage, width, order):
    src = pipeline_kernel(tile_n=32, stage=stage, width=width)
    ops = flat_ops(lowered(src))
    seq = "".join("M" if op == "matmul" else "S" for op in ops)
    assert seq.startswith(order)
    out, _ = compiled(src)
    assert len(acc_allocs(out)) == 2


def test_int32_dbc_allocations_use_non_overlapping_physical_ranges():
    out, _ = compiled(pipeline_kernel(tile_n=512, width=2048, dt="INT8", k=64))
    allocs = acc_allocs(out)
    assert [s.value.args[1] for s in allocs] == [65536, 65536]
    fn = out.functions[0]
    ranges = sorted({(memref_of(v).offset.value, memref_of(v).size) for v in defined_vars(fn)
                     if getattr(v.type, "memory_space", None) is MemorySpace.Acc})
    assert ranges == [(0, 65536), (65536, 65536)]


def test_mat_scratch_pipeline_gets_exactly_two_acc_buffers():
    """(64, 8): marked, then exactly two Acc buffers after memory_reuse (the scratch is kept
    bf16 and K = 64 so that the double-buffered b panels fit Mat next to it)."""
    src = scratch_kernel(64, 8, k=64, scratch_dtype="BF16")
    # the scratch leaves the core through the cube (a Mat tile reaches GM only via Vec, a
    # mixed kernel): its consumer's accumulator reuses one of the loop's two buffers
    src = src.replace("out: pl.Out[pl.Tensor[[64, 1024], pl.FP32]]) -> pl.Tensor[[64, 1024], pl.FP32]",
                      "w: pl.Tensor[[1024, 16], pl.BF16], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]"
                      ") -> pl.Tensor[[64, 16], pl.FP32]")
    src = src.replace("        res = pl.store(o5, [0, 0], out)\n",
                      "        wm = pl.load(w, [0, 0], [1024, 16], target_memory=pl.Mem.Mat)\n"
                      "        res = pl.store(pl.matmul(o5, wm), [0, 0], out)\n")
    out, _ = compiled(src)
    assert len(acc_allocs(out)) == 2


def test_existing_pipeline_marked_loop_has_two_acc_buffers_without_the_flag():
    out, ctx = compiled(pipeline_kernel())
    assert len(acc_allocs(out)) == 2
    assert not [d for d in ctx.diagnostics if d.code == "PH-MR-001" and " in Acc," in d.message]
