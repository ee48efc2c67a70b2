"""MemoryReuse: lifetimes (§9.1), packing and guards (§9.2), post-packing (§9.4), the
dbC accumulator pair and split-K chains (§9.5, §14.2, issue 6 item 1)."""

from __future__ import annotations

import os
import sys

import pytest

from ptoc.errors import PassError
from ptoc.ir import assert_structural_equal
from ptoc.language import parse_program
from ptoc.passes import PassContext
from ptoc.passes.init_mem_ref import init_mem_ref
from ptoc.passes.memory_lifetimes import analyze_lifetimes, overlaps
from ptoc.passes.memory_reuse import memory_reuse

sys.path.insert(0, os.path.dirname(__file__))
from _memory_programs import allocs, buffers, hints, program, run_memory_passes  # noqa: E402

VEC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]"
TENSOR = "pl.Tensor[[64, 64], pl.FP32]"
IO = f"x: {TENSOR}, out: pl.Out[{TENSOR}]"


def load(name: str) -> str:
    return (f"{name}: {VEC} = pl.tile.load(x, [0, 0], [64, 64], [64, 64], "
            "target_memory=pl.Mem.Vec)")


# ---- lifetimes ----------------------------------------------------------------------

def test_straight_line_tiles_reuse_a_dead_buffer():
    prog = program(IO, TENSOR, [
        load("t"), f"e: {VEC} = pl.tile.exp(t)", load("u"), f"s: {VEC} = pl.tile.add(e, u)",
        f"o: {TENSOR} = pl.tile.store(s, [0, 0], out)", "return o"])
    bufs = buffers(run_memory_passes(prog))
    assert bufs["e"] == bufs["t"]          # exp may write over its operand (touching lifetimes)
    assert bufs["u"] != bufs["e"]          # e is still read by the add
    assert bufs["s"] == bufs["t"]          # both add operands die at the add


def test_value_read_inside_a_loop_lives_until_the_loop_ends():
    prog = program(IO, TENSOR, [
        load("t"),
        "for i, (acc,) in pl.range(0, 4, 1, init_values=(out,)):",
        f"    e: {VEC} = pl.tile.exp(t)",
        "    " + load("u"),
        f"    s: {VEC} = pl.tile.add(e, u)",
        f"    o: {TENSOR} = pl.tile.store(s, [0, 0], acc)",
        f"    r: {TENSOR} = pl.yield_(o)",
        "return r"])
    with PassContext():
        fn = init_mem_ref()(prog).get_function("kernel")
    by_name = {iv.vars[0].name: iv for iv in analyze_lifetimes(fn)}
    assert overlaps(by_name["t"], by_name["u"])
    bufs = buffers(run_memory_passes(prog))
    assert bufs["t"] != bufs["u"] and bufs["t"] != bufs["s"]


def test_if_arms_are_a_phi_family_and_share():
    prog = program(IO + ", flag: pl.Scalar[pl.INDEX]", TENSOR, [
        "if flag == 0:",
        "    " + load("p"),
        f"    phi: {VEC} = pl.yield_(p)",
        "else:",
        f"    q: {VEC} = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)",
        f"    phi: {VEC} = pl.yield_(q)",
        f"o: {TENSOR} = pl.tile.store(phi, [0, 0], out)", "return o"])
    bufs = buffers(run_memory_passes(prog))
    assert bufs["p"] == bufs["q"] == bufs["phi"]


def test_no_alias_guard_keeps_a_row_reduction_off_its_operands():
    row = "pl.Tile[[64, 1], pl.FP32, pl.Mem.Vec]"
    prog = program(IO + f", o2: pl.Out[pl.Tensor[[64, 1], pl.FP32]]", TENSOR, [
        load("t"), load("tmp"), f"m: {row} = pl.tile.row_max(t, tmp)",
        f"e: {VEC} = pl.tile.exp(t)",
        f"o: {TENSOR} = pl.tile.store(e, [0, 0], out)",
        "om: pl.Tensor[[64, 1], pl.FP32] = pl.tile.store(m, [0, 0], o2)", "return o"])
    bufs = buffers(run_memory_passes(prog))
    assert bufs["m"] not in (bufs["t"], bufs["tmp"])


def test_elementwise_result_may_take_its_operand_buffer():
    prog = program(IO, TENSOR, [
        load("t"), f"e: {VEC} = pl.tile.exp(t)", f"o: {TENSOR} = pl.tile.store(e, [0, 0], out)",
        "return o"])
    out = run_memory_passes(prog)
    assert buffers(out)["e"] == buffers(out)["t"]
    assert allocs(out, "Vec") == [16384]


# ---- accumulators --------------------------------------------------------------------

ACC = "pl.Tile[[80, 128], pl.FP32, pl.Mem.Acc]"
LEFT = "pl.Tile[[80, 64], pl.FP32, pl.Mem.Left]"
RIGHT = "pl.Tile[[64, 128], pl.FP32, pl.Mem.Right]"
CUBE_IO = ("a: pl.Tensor[[80, 64], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32], "
           "out: pl.Out[pl.Tensor[[320, 128], pl.FP32]]")
OUT = "pl.Tensor[[320, 128], pl.FP32]"


def _operands() -> list[str]:
    return ["am: pl.Tile[[80, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [80, 64], "
            "[80, 64], target_memory=pl.Mem.Mat)",
            "bm: pl.Tile[[64, 128], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 128], "
            "[64, 128], target_memory=pl.Mem.Mat)",
            f"l: {LEFT} = pl.tile.move(am, target_memory=pl.Mem.Left)",
            f"r: {RIGHT} = pl.tile.move(bm, target_memory=pl.Mem.Right)"]


def _accumulators(order: str, tags: list[str | None]) -> list[str]:
    """Matmuls ``c{i}`` and their stores; ``order`` like "MMSS" or "MSMS"."""
    lines, m, s, prev = [], 0, 0, "out"
    for step in order:
        if step == "M":
            tag = tags[m]
            attrs = f', attrs={{"pipeline_membership": "{tag}"}}' if tag else ""
            lines.append(f"c{m}: {ACC} = pl.tile.matmul(l, r{attrs})")
            m += 1
        else:
            lines.append(f"o{s}: {OUT} = pl.tile.store(c{s}, [{80 * s}, 0], {prev})")
            prev = f"o{s}"
            s += 1
    return lines + [f"return {prev}"]


def test_dbc_pair_gets_exactly_two_acc_buffers_at_0_and_aligned_size():
    ctx = PassContext()
    prog = program(CUBE_IO, OUT, _operands() + _accumulators("MMSS", ["0:0", "0:1"]))
    out = run_memory_passes(prog, ctx)
    bufs = buffers(out)
    assert allocs(out, "Acc") == [40960, 40960]
    assert {bufs["c0"][1], bufs["c1"][1]} == {0, 40960}
    assert hints(ctx) == [] and hints(ctx, "W-MR-001") == []


def test_dbc_depth_four_rotated_mod_two_keeps_two_buffers():
    ctx = PassContext()
    prog = program(CUBE_IO, OUT, _operands()
                   + _accumulators("MMSSMMSS", ["0:0", "0:1", "0:0", "0:1"]))
    bufs = buffers(run_memory_passes(prog, ctx))
    assert bufs["c0"] == bufs["c2"] and bufs["c1"] == bufs["c3"] and bufs["c0"] != bufs["c1"]
    assert hints(ctx) == []


def test_one_accumulator_without_dbc():
    """Untagged accumulators in ``M0 S0 M1 S1`` order are lifetime-disjoint: one buffer."""
    ctx = PassContext()
    out = run_memory_passes(program(CUBE_IO, OUT, _operands() + _accumulators("MSMS", [None, None])),
                            ctx)
    assert allocs(out, "Acc") == [40960]
    assert hints(ctx) == []


def test_split_k_matmul_acc_chain_coalesces_onto_one_acc_buffer():
    lines = _operands() + [
        f"c0: {ACC} = pl.tile.matmul(l, r)",
        f"c1: {ACC} = pl.tile.matmul_acc(c0, l, r)",
        f"c2: {ACC} = pl.tile.matmul_acc(c1, l, r)",
        f"o: {OUT} = pl.tile.store(c2, [0, 0], out)", "return o"]
    out = run_memory_passes(program(CUBE_IO, OUT, lines))
    bufs = buffers(out)
    assert bufs["c0"] == bufs["c1"] == bufs["c2"]
    assert allocs(out, "Acc") == [40960]
    assert "tile.move" not in out.as_python().split("pl.tile.matmul(")[1]


def test_k_loop_accumulator_phi_coalesces_onto_the_carried_buffer():
    """The peeled ``if ko == 0: matmul else: matmul_acc`` phi of a K loop (§14.2)."""
    lines = _operands() + [
        f"init: {ACC} = pl.tile.create([80, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)",
        "for ko, (c,) in pl.range(0, 128, 64, init_values=(init,)):",
        "    if ko == 0:",
        f"        first: {ACC} = pl.tile.matmul(l, r)",
        f"        phi: {ACC} = pl.yield_(first)",
        "    else:",
        f"        acc: {ACC} = pl.tile.matmul_acc(c, l, r)",
        f"        phi: {ACC} = pl.yield_(acc)",
        f"    res: {ACC} = pl.yield_(phi)",
        f"o: {OUT} = pl.tile.store(res, [0, 0], out)", "return o"]
    out = run_memory_passes(program(CUBE_IO, OUT, lines))
    assert allocs(out, "Acc") == [40960]
    assert len({v for k, v in buffers(out).items() if k in ("init", "first", "acc", "phi", "res")}) == 1


def test_yielded_matmul_takes_the_carry_buffer_once_the_carry_is_dead():
    """The carried accumulator's last read comes before the next one is made: one buffer."""
    lines = _operands() + [
        f"init: {ACC} = pl.tile.create([80, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)",
        "for ko, (c,) in pl.range(0, 128, 64, init_values=(init,)):",
        f"    o1: {OUT} = pl.tile.store(c, [0, 0], out)",
        f"    n: {ACC} = pl.tile.matmul(l, r)",
        f"    res: {ACC} = pl.yield_(n)",
        f"o: {OUT} = pl.tile.store(res, [0, 0], out)", "return o"]
    with PassContext():
        out = memory_reuse()(init_mem_ref()(program(CUBE_IO, OUT, lines)))
    assert allocs(out, "Acc") == [40960]
    assert "pl.tile.move(n" not in out.as_python()


def test_divergent_acc_carry_is_rejected():
    """The carried accumulator is still read after the next one is made: no Acc copy."""
    lines = _operands() + [
        f"init: {ACC} = pl.tile.create([80, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)",
        "for ko, (c,) in pl.range(0, 128, 64, init_values=(init,)):",
        f"    n: {ACC} = pl.tile.matmul(l, r)",
        f"    o1: {OUT} = pl.tile.store(c, [0, 0], out)",
        f"    res: {ACC} = pl.yield_(n)",
        f"o: {OUT} = pl.tile.store(res, [0, 0], out)", "return o"]
    with PassContext():
        prog = init_mem_ref()(program(CUBE_IO, OUT, lines))
        with pytest.raises(PassError, match=r"cannot reconcile divergent L0C accumulator buffers"):
            memory_reuse()(prog)


def test_divergent_vec_carry_gets_a_move_into_the_carried_buffer():
    lines = [
        load("init"),
        "for i, (c,) in pl.range(0, 4, 1, init_values=(init,)):",
        f"    n: {VEC} = pl.tile.exp(c)",
        f"    e2: {VEC} = pl.tile.exp(n)",
        f"    o1: {TENSOR} = pl.tile.store(c, [0, 0], out)",
        f"    res: {VEC} = pl.yield_(e2)",
        f"o: {TENSOR} = pl.tile.store(res, [0, 0], out)", "return o"]
    with PassContext():
        prog = init_mem_ref()(program(IO, TENSOR, lines))
        out = memory_reuse()(prog)
    text = out.as_python()
    assert "pl.tile.move(e2, target_memory=pl.Mem.Vec)" in text


# ---- post-packing and scope ----------------------------------------------------------

def test_unused_allocs_removed_and_membership_stripped():
    lines = [
        'a0: {v} = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec, '
        'attrs={{"pipeline_membership": "0:0"}})'.format(v=VEC),
        f"o0: {TENSOR} = pl.tile.store(a0, [0, 0], out)",
        'a1: {v} = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec, '
        'attrs={{"pipeline_membership": "0:0"}})'.format(v=VEC),
        f"o1: {TENSOR} = pl.tile.store(a1, [0, 0], o0)", "return o1"]
    out = run_memory_passes(program(IO, TENSOR, lines), allocate=False)
    text = out.as_python()
    assert "pipeline_membership" not in text
    assert allocs(out, "Vec") == [16384]


def test_orchestration_and_tile_free_functions_are_unchanged():
    src = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        return x
"""
    prog = parse_program(src)
    with PassContext():
        assert memory_reuse()(init_mem_ref()(prog)) is not None
        before = init_mem_ref()(prog)
        assert_structural_equal(memory_reuse()(before), before)
