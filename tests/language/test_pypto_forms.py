"""Forms PyPTO prints and parses that ptoc must read and write the same way.

Each test writes the PyPTO spelling, parses it, checks the IR it must give, and checks that
printing gives the spelling back (parse -> print is the identity on PyPTO's own text).
"""

from __future__ import annotations

import ptoc.language as pl
from ptoc.dtypes import DataType, ForKind
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import AssignStmt, BinOp, ConstInt, ForStmt
from ptoc.ir.printer import print_program


def program(body: str, params: str = "a: pl.Tensor[[16, 64], pl.FP32], "
            "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]") -> str:
    return ("# pypto.program: P\nimport pypto.language as pl\n\n@pl.program\nclass P:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def k(self, {params}) -> pl.Tensor[[16, 64], pl.FP32]:\n{body}")


def reprint(text: str):
    parsed = pl.parse_program(text)
    assert print_program(parsed, module="pypto") == text
    return parsed


def stmts(p):
    return p.functions[0].body.stmts


def test_memref_literal_offset_is_int64():
    text = program(
        '        t: pl.Tile[[16, 64], pl.FP32, pl.MemRef("mem_vec_0", 0, 4096), pl.Mem.Vec] = '
        'pl.tile.load(a, [0, 0], [16, 64], [16, 64], target_memory=pl.Mem.Vec)\n'
        '        out: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(t, [0, 0], out)\n'
        '        return out\n',
        params='a: pl.Tensor[[16, 64], pl.FP32, pl.MemRef("mem_ddr_0", 0, 4096)], '
               'out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]')
    p = pl.parse_program(text)
    tile_offset = stmts(p)[0].var.type.memref.offset
    param_offset = p.functions[0].params[0].var.type.memref.offset
    for offset in (tile_offset, param_offset):
        assert isinstance(offset, ConstInt) and offset.dtype is DataType.INT64 and offset.value == 0
    # the same as InitMemRef's spelling, pl.const(0, pl.INT64)
    explicit = pl.parse_program(text.replace(", 0, 4096)", ", pl.const(0, pl.INT64), 4096)"))
    assert_structural_equal(p, explicit)


def test_matmul_acc_init_cond_is_positional():
    text = program(
        "        acc0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([16, 64], "
        "dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
        "        for k0, (acc,) in pl.range(4, init_values=(acc0,)):\n"
        "            l: pl.Tile[[16, 16], pl.FP32, pl.Mem.Left] = pl.tile.create([16, 16], "
        "dtype=pl.FP32, target_memory=pl.Mem.Left)\n"
        "            r: pl.Tile[[16, 64], pl.FP32, pl.Mem.Right] = pl.tile.create([16, 64], "
        "dtype=pl.FP32, target_memory=pl.Mem.Right)\n"
        "            c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, l, r, k0 == 0)\n"
        "            acc_out: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(c)\n"
        "        out: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(acc_out, [0, 0], out)\n"
        "        return out\n")
    p = reprint(text)
    loop = stmts(p)[1]
    mm = loop.body.stmts[2].value
    assert len(mm.args) == 4 and isinstance(mm.args[3], BinOp) and mm.args[3].lhs is loop.loop_var
    assert mm.kwargs == ()
    # the keyword spelling means the same call
    assert_structural_equal(p, pl.parse_program(text.replace("l, r, k0 == 0)", "l, r, init_cond=k0 == 0)")))


def test_loops_print_in_pythons_short_forms():
    text = program(
        "        for i in pl.pipeline(8, stage=4):\n"
        "            t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 64], "
        "[16, 64], target_memory=pl.Mem.Vec)\n"
        "        for j in pl.range(2, 8):\n"
        "            pass\n"
        "        for u in pl.unroll(0, 8, 2):\n"
        "            pass\n"
        "        return out\n")
    loops = [s for s in stmts(reprint(text)) if isinstance(s, ForStmt)]
    assert loops[0].kind is ForKind.Pipeline and loops[0].attrs == {"pipeline_stages": 4}
    bounds = [(s.start.value, s.stop.value, s.step.value) for s in loops]
    assert bounds == [(0, 8, 1), (2, 8, 1), (0, 8, 2)]


def test_non_index_bounds_keep_the_long_form():
    text = program(
        "        for i in pl.range(pl.const(0, pl.INT64), 8):\n"
        "            pass\n"
        "        return out\n")
    loop = stmts(reprint(text))[0]
    assert loop.start.dtype is DataType.INT64


def test_rebinding_a_dead_name_prints_back_unchanged():
    text = program(
        "        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 64], "
        "[16, 64], target_memory=pl.Mem.Vec)\n"
        "        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)\n"
        "        out: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(t, [0, 0], out)\n"
        "        return out\n")
    p = reprint(text)
    first, second, store, _ = stmts(p)
    assert first.var is not second.var and second.value.args[0] is first.var
    assert store.value.args[0] is second.var
    assert store.var is not p.functions[0].params[1].var


def test_a_live_name_is_not_rebound():
    """``t`` is still read after the second definition, so that one needs its own name."""
    text = program(
        "        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 64], "
        "[16, 64], target_memory=pl.Mem.Vec)\n"
        "        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)\n"
        "        u: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(t, t)\n"
        "        return out\n")
    p = pl.parse_program(text)
    first = stmts(p)[0].var
    from dataclasses import replace
    # make the sum read the first t: the printer must then keep two names
    fn = p.functions[0]
    body = list(fn.body.stmts)
    body[2] = AssignStmt(body[2].var, replace(body[2].value, args=(first, body[1].var)))
    p2 = replace(p, functions=(replace(fn, body=replace(fn.body, stmts=tuple(body))),))
    printed = print_program(p2)
    assert "t_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)" in printed
    assert "pl.tile.add(t, t_1)" in printed
    assert_structural_equal(pl.parse_program(printed), p2)
