"""Codegen's PTO computes the right numbers: generate, insert sync (``ptoc.pto.insert_sync``),
run on the simulated core, compare with numpy — and the simulator sees no data race.

These tests check the *meaning* of each lowering (operand order, in-place accumulators,
loop-carried buffers, folded loops, offsets), which text comparisons cannot.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptoc.pto as pto
from codegen_helpers import FILE, kernel_src, tensor, tile
from ptoc.codegen import generate_kernels
from ptoc.language import parse_program
from ptoc.pto.insert_sync import insert_sync
from ptoc.sim.api import simulate

from test_oracle_conformance import DUMPS, FOLDERS  # noqa: E402  (same directory)


def _run(text: str, inputs: list):
    synced = insert_sync(pto.parse(text))
    module = getattr(synced, "module", synced)
    result = simulate(module, inputs)
    assert not result.races, result.races
    outs = result.outputs
    return list(outs.values()) if isinstance(outs, dict) else list(outs)


@pytest.mark.parametrize("folder", [f for f in FOLDERS if "ptoas" not in f])
def test_oracle_kernels_compute_the_matmul(folder):
    dump = sorted((DUMPS / folder).glob("35_after_*.py"))[-1]
    program = parse_program(dump.read_text(), "program.py")
    kernel = program.get_function("kernel")
    (m, k), (_, n) = (p.var.type.shape for p in kernel.params[:2])
    dtype = ml_dtypes.bfloat16 if "bf16" in folder else np.float32
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    outs = _run(generate_kernels(program)["kernel"], [a, b, np.zeros((m, n), np.float32)])
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(outs[2], expected, rtol=1e-4, atol=1e-4)


VEC = {"m0": ("Vec", 4096), "m1": ("Vec", 4096), "m2": ("Vec", 4096)}


def test_vector_loop_with_branch_and_carried_tile():
    body = f"""
        x0: {tile([16, 64], base='m0')} = pl.tile.load(out, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        for i, (x,) in pl.range(0, 64, 16, init_values=(x0,)):
            y: {tile([16, 64], base='m1', offset=4096)} = pl.tile.load(a, [i, 0], [16, 64], target_memory=pl.Mem.Vec)
            x1: {tile([16, 64], base='m2', offset=8192)} = pl.tile.add(x, y)
            if i < 32:
                z: {tile([16, 64], base='m0')} = pl.tile.muls(x1, 2.0)
                zz = pl.yield_(z)
            else:
                z2: {tile([16, 64], base='m0')} = pl.tile.exp(x1)
                zz = pl.yield_(z2)
            r = pl.yield_(zz)
        o: {tensor([16, 64])} = pl.tile.store(r, [0, 0], out)
    """
    src = kernel_src(f"a: {tensor([64, 64])}, out: {tensor([16, 64], out=True)}", body,
                     allocs=VEC)
    text = generate_kernels(parse_program(src, FILE))["kernel"]
    a = np.random.default_rng(1).uniform(-0.5, 0.5, (64, 64)).astype(np.float32)
    outs = _run(text, [a, np.zeros((16, 64), np.float32)])
    acc = np.zeros((16, 64), np.float32)
    for i in range(0, 64, 16):
        x1 = acc + a[i:i + 16]
        acc = (x1 * 2.0) if i < 32 else np.exp(x1)
    np.testing.assert_allclose(outs[1], acc, rtol=1e-5, atol=1e-5)


def test_row_softmax_pieces():
    body = f"""
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        t: {tile([16, 64], base='m1', offset=4096)} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        mx: {tile([16, 1], base='m2', offset=8192, size=512)} = pl.tile.row_max(x, t)
        e: {tile([16, 64], base='m0')} = pl.tile.row_expand_expdif(x, mx)
        s: {tile([16, 1], base='m2', offset=8704, size=512)} = pl.tile.row_sum(e, t)
        y: {tile([16, 64], base='m1', offset=4096)} = pl.tile.row_expand_div(e, s)
        o: {tensor([16, 64])} = pl.tile.store(y, [0, 0], out)
    """
    src = kernel_src(f"a: {tensor([16, 64])}, out: {tensor([16, 64], out=True)}", body,
                     allocs={"m0": ("Vec", 4096), "m1": ("Vec", 4096), "m2": ("Vec", 1024)})
    text = generate_kernels(parse_program(src, FILE))["kernel"]
    a = np.random.default_rng(2).standard_normal((16, 64)).astype(np.float32)
    outs = _run(text, [a, np.zeros((16, 64), np.float32)])
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(outs[1], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_slice_and_assemble_windows_of_vec_tiles():
    body = f"""
        x: {tile([32, 64], base='m0', size=8192)} = pl.tile.load(a, [0, 0], [32, 64], target_memory=pl.Mem.Vec)
        s: {tile([16, 64], base='m0', size=8192)} = pl.tile.slice(x, [16, 64], [8, 0])
        e: {tile([16, 64], base='m1', offset=8192)} = pl.tile.exp(s)
        y: {tile([32, 64], base='m2', offset=12288, size=8192)} = pl.tile.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Vec)
        y1: {tile([32, 64], base='m2', offset=12288, size=8192)} = pl.tile.assemble(y, e, [16, 0])
        o: {tensor([32, 64])} = pl.tile.store(y1, [0, 0], out)
    """
    params = f"a: {tensor([32, 64])}, b: {tensor([32, 64])}, out: {tensor([32, 64], out=True)}"
    src = kernel_src(params, body, allocs={"m0": ("Vec", 8192), "m1": ("Vec", 4096),
                                           "m2": ("Vec", 8192)})
    text = generate_kernels(parse_program(src, FILE))["kernel"]
    rng = np.random.default_rng(3)
    a, b = (rng.uniform(-1, 1, (32, 64)).astype(np.float32) for _ in range(2))
    outs = _run(text, [a, b, np.zeros((32, 64), np.float32)])
    expected = b.copy()
    expected[16:32] = np.exp(a[8:24])
    np.testing.assert_allclose(outs[2], expected, rtol=1e-6, atol=1e-6)


def test_k_loop_with_init_cond_accumulates():
    allocs = {"mm": ("Mat", 65536), "ml": ("Left", 8192), "mr": ("Right", 8192),
              "mc": ("Acc", 16384)}
    body = f"""
        am: {tile([64, 256], 'Mat', 'mm', 0, 'BF16')} = pl.tile.load(a, [0, 0], [64, 256], target_memory=pl.Mem.Mat)
        bm: {tile([256, 64], 'Mat', 'mm', 32768, 'BF16')} = pl.tile.load(b, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        c0: {tile([64, 64], 'Acc', 'mc')} = pl.tile.create([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for ko, (c,) in pl.range(0, 256, 64, init_values=(c0,)):
            al: {tile([64, 64], 'Left', 'ml', 0, 'BF16')} = pl.tile.extract(am, 0, ko, [64, 64], target_memory=pl.Mem.Left)
            br: {tile([64, 64], 'Right', 'mr', 0, 'BF16')} = pl.tile.extract(bm, ko, 0, [64, 64], target_memory=pl.Mem.Right)
            c1: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul_acc(c, al, br, init_cond=(ko == 0))
            r = pl.yield_(c1)
        o: {tensor([64, 64])} = pl.tile.store(r, [0, 0], out)
    """
    params = (f"a: {tensor([64, 256], 'BF16')}, b: {tensor([256, 64], 'BF16')}, "
              f"out: {tensor([64, 64], out=True)}")
    text = generate_kernels(parse_program(kernel_src(params, body, allocs=allocs), FILE))["kernel"]
    rng = np.random.default_rng(4)
    a = rng.standard_normal((64, 256)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((256, 64)).astype(ml_dtypes.bfloat16)
    assert "scf.if" in text and "pto.tmatmul.acc" in text
    outs = _run(text, [a, b, np.zeros((64, 64), np.float32)])
    np.testing.assert_allclose(outs[2], a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-4, atol=1e-3)


def test_moves_bias_and_cast():
    allocs = {"mm": ("Mat", 65536), "ml": ("Left", 8192), "mr": ("Right", 8192),
              "mc": ("Acc", 16384), "mb": ("Bias", 256)}
    body = f"""
        am: {tile([64, 64], 'Mat', 'mm', 0, 'BF16')} = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        bm: {tile([64, 64], 'Mat', 'mm', 8192, 'BF16')} = pl.tile.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        zm: {tile([1, 64], 'Mat', 'mm', 16384)} = pl.tile.load(bias, [0, 0], [1, 64], target_memory=pl.Mem.Mat)
        al: {tile([64, 64], 'Left', 'ml', 0, 'BF16')} = pl.tile.move(am, target_memory=pl.Mem.Left)
        br: {tile([64, 64], 'Right', 'mr', 0, 'BF16')} = pl.tile.move(bm, target_memory=pl.Mem.Right)
        z: {tile([1, 64], 'Bias', 'mb')} = pl.tile.move(zm, target_memory=pl.Mem.Bias)
        c: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul_bias(al, br, z)
        o: {tensor([64, 64], 'BF16')} = pl.tile.store(c, [0, 0], out)
    """
    params = (f"a: {tensor([64, 64], 'BF16')}, b: {tensor([64, 64], 'BF16')}, "
              f"bias: {tensor([1, 64])}, out: {tensor([64, 64], 'BF16', out=True)}")
    text = generate_kernels(parse_program(kernel_src(params, body, allocs=allocs), FILE))["kernel"]
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    bias = rng.standard_normal((1, 64)).astype(np.float32)
    outs = _run(text, [a, b, bias, np.zeros((64, 64), ml_dtypes.bfloat16)])
    expected = a.astype(np.float64) @ b.astype(np.float64) + bias
    np.testing.assert_allclose(outs[3].astype(np.float64), expected, rtol=1e-2, atol=1e-1)


def test_vector_cast_to_bf16():
    body = f"""
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        h: {tile([16, 64], 'Vec', 'm1', 4096, 'BF16')} = pl.tile.cast(x, pl.BF16, mode="rint")
        o: {tensor([16, 64], 'BF16')} = pl.tile.store(h, [0, 0], out)
    """
    params = f"a: {tensor([16, 64])}, out: {tensor([16, 64], 'BF16', out=True)}"
    text = generate_kernels(parse_program(kernel_src(params, body, allocs=VEC), FILE))["kernel"]
    a = np.random.default_rng(6).standard_normal((16, 64)).astype(np.float32)
    outs = _run(text, [a, np.zeros((16, 64), ml_dtypes.bfloat16)])
    np.testing.assert_array_equal(outs[1], a.astype(ml_dtypes.bfloat16))
