"""AutoTileMatmulL0's PH-AT perf hints (pypto-passes.md §3.7): each code, its condition, and
the log-line format ``[perf_hint PH-AT-0xx] AutoTileMatmulL0: <message> at <span>``.

Every skip leaves the matmul exactly as written.
"""

import os
import re
import sys
from dataclasses import replace

import pytest

import ptoc.language as pl
from ptoc.ir.nodes import Program, SeqStmts
from ptoc.passes import PassContext, auto_tile_matmul_l0, explain
from ptoc.passes import auto_tile_analysis
from ptoc.passes.l0_tile_chooser import choose_l0_tile

sys.path.insert(0, os.path.dirname(__file__))
from test_auto_tile_matmul_l0 import bias_kernel, chain_kernel, kernel, matmul_kernel  # noqa: E402

LINE = re.compile(r"^\[perf_hint (PH-AT-0\d\d)\] AutoTileMatmulL0: (.+) at <string>:\d+:\d+$")


def hints_of(prog_or_src, **options):
    prog = pl.parse_program(prog_or_src) if isinstance(prog_or_src, str) else prog_or_src
    with PassContext(**options) as ctx:
        out = auto_tile_matmul_l0()(prog)
    lines = [d.format() for d in ctx.diagnostics]
    for line in lines:
        assert LINE.match(line), line
    return prog, out, lines


def only(lines, code):
    assert [LINE.match(x).group(1) for x in lines] == [code], lines
    return LINE.match(lines[0]).group(2)


def test_every_code_is_registered_and_explained():
    for code in ("PH-AT-003", "PH-AT-005", "PH-AT-006", "PH-AT-007", "PH-AT-008", "PH-AT-009",
                 "PH-AT-010", "PH-AT-011"):
        assert "AutoTileMatmulL0" in explain(code)


def test_ph_at_003_sub_byte_dtype_skipped(monkeypatch):
    """ptoc has no sub-byte dtype yet; the filter is exercised by declaring BF16 sub-byte."""
    monkeypatch.setattr(auto_tile_analysis, "_is_sub_byte", lambda d: d.value == "BF16")
    prog, out, lines = hints_of(matmul_kernel(16, 2048, 64))
    assert out is prog
    assert "sub-byte" in only(lines, "PH-AT-003")


def test_ph_at_005_chooser_rejected_config_skipped():
    prog, out, lines = hints_of(matmul_kernel(8, 64, 64))
    assert out is prog
    message = only(lines, "PH-AT-005")
    assert "'c'" in message and "M=8 < min_m=16" in message


def test_ph_at_006_oversized_matmul_acc_mn_deferred():
    middle = ("        acc = pl.tile.create([256, 256], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
              "        c = pl.matmul_acc(acc, am, bm)\n        out = pl.store(c, [0, 0], out)\n")
    prog, out, lines = hints_of(matmul_kernel(256, 64, 256, middle=middle))
    assert out is prog
    message = only(lines, "PH-AT-006")
    assert "accumulator 'acc' is owned by the caller" in message and "[128, 256]" in message


def test_ph_at_006_no_store_consumer_untouched():
    """An oversized result read by something other than one store or matmul operands."""
    middle = ("        c = pl.matmul(am, bm)\n"
              "        out = pl.store(c, [0, 0], out)\n"
              "        out = pl.store(c, [0, 0], out)\n")
    prog, out, lines = hints_of(matmul_kernel(256, 64, 256, middle=middle))
    assert out is prog
    assert "no M/N placement applies" in only(lines, "PH-AT-006")


def test_ph_at_006_dbc_grid_without_placement_falls_back_to_one_accumulator():
    """Deliberate (inferred): when [M, N] fits L0C and the grid only existed for dbC, a result
    with no placement keeps the single-accumulator choice instead of a PH-AT-006 skip."""
    middle = ("        c = pl.matmul(am, bm)\n"
              "        out = pl.store(c, [0, 0], out)\n"
              "        out = pl.store(c, [0, 0], out)\n")
    prog, out, lines = hints_of(matmul_kernel(160, 64, 160, "FP32", middle=middle),
                                enable_pypto_l0c_double_buffer=True)
    assert lines == []
    assert "pipeline_double_buffer_c" not in out.as_python()
    assert "tile.matmul_acc" in out.as_python()  # the K-only loop of the dbC-off choice


def test_ph_at_006_mat_scratch_over_mat_capacity():
    """A [1024, 512] bf16 scratch is 1 MiB > 512 KiB of Mat."""
    prog, out, lines = hints_of(chain_kernel(1024, 512))
    message = only(lines, "PH-AT-006")
    assert "1048576 bytes" in message and "524288" in message
    assert out is prog


def test_ph_at_006_bias_resident_bias_needing_n_split():
    src = bias_kernel(512, 128, 256).replace(
        "        c = pl.matmul_bias(am, bm, bb)\n",
        "        bt = pl.move(bb, target_memory=pl.Mem.Bias)\n        c = pl.matmul_bias(am, bm, bt)\n")
    prog, out, lines = hints_of(src, enable_pypto_l0c_double_buffer=True)
    assert "Bias-resident bias 'bt' would need an N split" in only(lines, "PH-AT-006")
    assert out is prog


def test_ph_at_007_non_aligned_k_left_untouched():
    prog, out, lines = hints_of(matmul_kernel(64, 40, 64))
    assert out is prog
    assert "K=40 is not a multiple of 16" in only(lines, "PH-AT-007")


def test_ph_at_008_padded_fallback_is_reported_and_the_tile_used(monkeypatch):
    """The chooser pads only with allow_padding (never set by the pass); its hint text is
    forwarded when present."""
    def padded(cfg):
        return replace(choose_l0_tile(cfg), perf_hint="padded M from 8 to 16")
    monkeypatch.setattr(auto_tile_analysis, "choose_l0_tile", padded)
    prog, out, lines = hints_of(matmul_kernel(16, 2048, 64))
    assert "padded M from 8 to 16" in only(lines, "PH-AT-008")
    assert out is not prog


def test_ph_at_009_f32_chained_intermediate_on_a2a3():
    """No cast: the oversized f32 result feeds an f32 matmul directly; 910B needs a bf16/f16
    Mat scratch, so the producer is left untiled."""
    src = kernel("a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[64, 256], pl.FP32], "
                 "e: pl.Tensor[[256, 64], pl.FP32], out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]",
                 "pl.Tensor[[256, 64], pl.FP32]", """\
        am = pl.load(a, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [64, 256], target_memory=pl.Mem.Mat)
        em = pl.load(e, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        c: pl.Tile[[256, 256], pl.FP32] = pl.matmul(am, bm)
        d = pl.matmul(c, em)
        out = pl.store(d, [0, 0], out)
        return out
""")
    prog, out, lines = hints_of(src)
    message = only(lines[:1], "PH-AT-009")
    assert "'c'" in message and "consumed as FP32" in message and "bf16/f16 Mat scratch" in message


def test_ph_at_009_round_cast_chain_on_a2a3():
    prog, out, lines = hints_of(chain_kernel(256, 256, mode="round"))
    message = only(lines, "PH-AT-009")
    assert "'cb'" in message and "rint" in message
    assert out is prog


def test_ph_at_010_message():
    _, _, lines = hints_of(chain_kernel(128, 128, mode="round"))
    message = only(lines, "PH-AT-010")
    assert "'cb'" in message and "'c'" in message and "FP32 -> BF16" in message


def test_ph_at_011_biased_matmul_with_a_vec_lhs():
    """A Vec lhs cannot be parsed into a matmul_bias (ptoc's op typing), so it is swapped in."""
    src = bias_kernel(64, 272, 64).replace(
        "        am = pl.load(a, [0, 0], [64, 272], target_memory=pl.Mem.Mat)\n",
        "        av = pl.load(a, [0, 0], [64, 272], target_memory=pl.Mem.Vec)\n"
        "        am = pl.load(a, [0, 0], [64, 272], target_memory=pl.Mem.Mat)\n")
    prog = pl.parse_program(src)
    fn = prog.functions[0]
    av = fn.body.stmts[0].var
    i = next(j for j, s in enumerate(fn.body.stmts) if getattr(s.value, "op", "") == "tile.matmul_bias")
    mm = fn.body.stmts[i]
    swapped = replace(mm, value=replace(mm.value, args=(av,) + mm.value.args[1:]))
    body = SeqStmts(fn.body.stmts[:i] + (swapped,) + fn.body.stmts[i + 1:])
    prog = Program(prog.name, (replace(fn, body=body),))
    with PassContext(verification_level="NONE") as ctx:  # the input itself is ill-typed
        out = auto_tile_matmul_l0()(prog)
    lines = [d.format() for d in ctx.diagnostics]
    assert "needs its lhs in Mat" in only(lines, "PH-AT-011")
    assert out is prog


def test_ph_at_011_bias_resident_bias_larger_than_the_bias_table():
    src = bias_kernel(64, 64, 512).replace(
        "        c = pl.matmul_bias(am, bm, bb)\n",
        "        bt = pl.move(bb, target_memory=pl.Mem.Bias)\n        c = pl.matmul_bias(am, bm, bt)\n")
    prog, out, lines = hints_of(src)
    message = only(lines, "PH-AT-011")
    assert "2048 bytes" in message and "1024" in message
    assert out is prog


def test_disabled_codes_are_not_reported():
    with PassContext(disabled_diagnostics=["PH-AT-*"]) as ctx:
        auto_tile_matmul_l0()(pl.parse_program(matmul_kernel(64, 40, 64)))
    assert list(ctx.diagnostics) == []


def test_hints_are_reported_once_per_program_in_statement_order():
    src = kernel("a: pl.Tensor[[64, 40], pl.BF16], b: pl.Tensor[[40, 64], pl.BF16], "
                 "out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]", "pl.Tensor[[64, 64], pl.FP32]", """\
        am = pl.load(a, [0, 0], [64, 40], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [40, 64], target_memory=pl.Mem.Mat)
        c = pl.matmul(am, bm)
        d = pl.matmul(am, bm)
        out = pl.store(c, [0, 0], out)
        return out
""")
    _, _, lines = hints_of(src)
    assert [LINE.match(x).group(1) for x in lines] == ["PH-AT-007", "PH-AT-007"]
    assert "'c'" in lines[0] and "'d'" in lines[1]


def test_a5_accepts_an_f32_mat_scratch_without_ph_at_009():
    """Only backends that need a low-precision Mat scratch (910B) refuse the f32 chain: on a5
    the [256, 384] f32 intermediate (384 KiB > 256 KiB of L0C) drains into an f32 scratch."""
    src = kernel("a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[64, 384], pl.FP32], "
                 "e: pl.Tensor[[384, 64], pl.FP32], out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]",
                 "pl.Tensor[[256, 64], pl.FP32]", """\
        am = pl.load(a, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [64, 384], target_memory=pl.Mem.Mat)
        em = pl.load(e, [0, 0], [384, 64], target_memory=pl.Mem.Mat)
        c: pl.Tile[[256, 384], pl.FP32] = pl.matmul(am, bm)
        d = pl.matmul(c, em)
        out = pl.store(d, [0, 0], out)
        return out
""")
    _, out, lines = hints_of(src, target="a5")
    assert not [x for x in lines if "PH-AT-009" in x]
    scratch = [s for s in out.functions[0].body.stmts
               if getattr(getattr(s, "value", None), "op", "") == "tile.create"
               and s.var.type.memory_space.value == "Mat"]
    assert len(scratch) == 1 and scratch[0].var.type.dtype.value == "FP32"
