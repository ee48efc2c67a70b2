"""IR that codegen cannot lower gives a CodegenError naming the op or variable, the line and
the fix — never a KeyError or AttributeError from inside ptoc."""

from __future__ import annotations

import pytest

from codegen_helpers import FILE, kernel_src, lower, tensor, tile
from ptoc.codegen import CodegenError, generate_module
from ptoc.errors import PtocError
from ptoc.language import parse_program

P = f"a: {tensor([64, 64])}, out: {tensor([64, 64], out=True)}"
VEC = {"m0": ("Vec", 16384), "m1": ("Vec", 16384)}


def _fails(body: str, *, params: str = P, allocs=VEC, line: int | None = None, **kw):
    src = kernel_src(params, body, allocs=allocs)
    with pytest.raises(CodegenError) as info:
        lower(src, **kw)
    err = info.value
    assert isinstance(err, PtocError)
    if line is not None:
        assert err.loc is not None and err.loc.line == line and err.loc.file == FILE
        assert "loc_file" not in kw
    return err.message + " " + (err.hint or "")


# kernel_src puts the first body line (after the allocs) on line 7 + number of allocs
FIRST = 7 + len(VEC)


def test_tensor_level_op_left_unlowered():
    msg = _fails(f"""
        t: {tensor([64, 64])} = pl.tensor.add(a, a)
    """, line=FIRST)
    assert "tensor.add" in msg and "ConvertTensorToTileOps" in msg


def test_missing_memref_under_pypto_but_fine_under_ptoas():
    body = f"""
        x: {tile([16, 64], memref=False)} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
    """
    msg = _fails(body, line=FIRST)
    assert "'x'" in msg and "MemRef" in msg and "AllocateMemoryAddr" in msg
    text, _ = lower(kernel_src(P, body, allocs=VEC), with_addresses=False)
    assert "pto.alloc_tile valid_row" in text


def test_tile_without_memory_space():
    msg = _fails("""
        x: pl.Tile[[16, 64], pl.FP32] = pl.tile.create([16, 64], dtype=pl.FP32)
    """, line=FIRST)
    assert "'x'" in msg and "InferTileMemorySpace" in msg


def test_matmul_operand_still_in_mat():
    allocs = {"mm": ("Mat", 65536), "mr": ("Right", 8192), "mc": ("Acc", 16384)}
    msg = _fails(f"""
        am: {tile([64, 64], 'Mat', 'mm', 0, 'BF16')} = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        br: {tile([64, 64], 'Right', 'mr', 0, 'BF16')} = pl.tile.extract(am, 0, 0, [64, 64], target_memory=pl.Mem.Right)
        c: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul(am, br)
    """, params=f"a: {tensor([64, 64], 'BF16')}", allocs=allocs, line=12)
    assert "%am" in msg and "Left" in msg and "tile.move" in msg


def test_mixed_cube_and_vector_incore_kernel():
    allocs = {"mm": ("Mat", 65536), "m0": ("Vec", 16384)}
    msg = _fails(f"""
        am: {tile([64, 64], 'Mat', 'mm')} = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
    """, allocs=allocs)
    assert "kernel" in msg and "AIC" in msg and "AIV" in msg


def test_orchestration_function_is_not_a_kernel():
    src = kernel_src(P, "pass", ftype="Orchestration")
    fn = parse_program(src, FILE).functions[0]
    with pytest.raises(CodegenError, match="not a kernel"):
        generate_module(fn)


def test_a_slice_past_its_parent_under_both_planners():
    """A window must lie inside its parent (a column window of several rows is fine: it
    keeps the parent's row stride)."""
    body = f"""
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        s: {tile([16, 32], base='m0')} = pl.tile.slice(x, [16, 32], [0, 48])
    """
    for with_addresses in (True, False):
        msg = _fails(body, with_addresses=with_addresses, line=FIRST + 1)
        assert "tile.slice" in msg and "reaches past its edge" in msg


def test_assemble_without_a_lowering():
    msg = _fails(f"""
        x: {tile([16, 64], base='m0')} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        y: {tile([32, 64], 'Vec', 'm1', 4096, 'BF16')} = pl.tile.create([32, 64], dtype=pl.BF16, target_memory=pl.Mem.Vec)
        z: {tile([32, 64], 'Vec', 'm1', 4096, 'BF16')} = pl.tile.assemble(y, x, [16, 0])
    """, line=FIRST + 2)
    assert "no PTO lowering" in msg and "f32" in msg and "bf16" in msg


def test_unknown_target_is_reported():
    src = kernel_src(P, "pass")
    with pytest.raises(PtocError, match="a9"):
        lower(src, target="a9")


def test_errors_point_at_the_dsl_even_without_emitted_locs():
    body = f"""
        x: {tile([16, 64], memref=False)} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
    """
    with pytest.raises(CodegenError) as info:
        lower(kernel_src(P, body, allocs=VEC), emit_loc=False, loc_file="program.py")
    assert info.value.loc.file == FILE and info.value.loc.line == FIRST
    assert info.value.loc.col == 8  # DSL columns stay 0-based; only PTO locs are 1-based


def test_matmul_acc_outside_its_accumulator_buffer():
    allocs = {"mm": ("Mat", 65536), "ml": ("Left", 8192), "mr": ("Right", 8192),
              "mc": ("Acc", 32768)}
    msg = _fails(f"""
        am: {tile([64, 64], 'Mat', 'mm', 0, 'BF16')} = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        al: {tile([64, 64], 'Left', 'ml', 0, 'BF16')} = pl.tile.extract(am, 0, 0, [64, 64], target_memory=pl.Mem.Left)
        br: {tile([64, 64], 'Right', 'mr', 0, 'BF16')} = pl.tile.extract(am, 0, 0, [64, 64], target_memory=pl.Mem.Right)
        c: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul(al, br)
        c2: {tile([64, 64], 'Acc', 'mc', 16384)} = pl.tile.matmul_acc(c, al, br)
    """, params=f"a: {tensor([64, 64], 'BF16')}", allocs=allocs, line=15)
    assert "'c2'" in msg and "%c" in msg and "InitMemRef" in msg
