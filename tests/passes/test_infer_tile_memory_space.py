"""InferTileMemorySpace: defaults, cube operands moved into L0, the legal-move graph."""

from __future__ import annotations

import os
import sys

import pytest

from ptoc.errors import PassError
from ptoc.ir import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.infer_tile_memory_space import infer_tile_memory_space

sys.path.insert(0, os.path.dirname(__file__))
from _memory_programs import program  # noqa: E402

IO = ("a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], "
      "out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]")
RET = "pl.Tensor[[64, 64], pl.FP32]"


def run(prog, **ctx):
    with PassContext(**ctx):
        return infer_tile_memory_space()(prog)


def test_mat_loads_feeding_the_cube_are_moved_into_l0_other_loads_stay_vec():
    before = program(IO, RET, [
        "x: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)",
        "y: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)",
        "c: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x, y)",
        "o: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)",
        "v: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(a, [0, 0], [64, 64])",
        "w: pl.Tile[[64, 64], pl.FP32] = pl.tile.exp(v)",
        "return o"])
    expected = program(IO, RET, [
        "x: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 64], [64, 64], "
        "target_memory=pl.Mem.Mat)",
        "y: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 64], [64, 64], "
        "target_memory=pl.Mem.Mat)",
        "x_left: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(x, target_memory=pl.Mem.Left)",
        "y_right: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(y, "
        "target_memory=pl.Mem.Right)",
        "c: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x_left, y_right)",
        "o: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)",
        "v: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 64], [64, 64], "
        "target_memory=pl.Mem.Vec)",
        "w: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(v)",
        "return o"])
    assert_structural_equal(run(before), expected)


def test_a_vec_load_feeding_the_cube_is_refused_with_the_data_path():
    """A load without target_memory is a Vec load (PyPTO's default); Vec -> Left does not
    exist on a2a3, so the operand cannot reach L0 and the error says how to load it."""
    before = program(IO, RET, [
        "x: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(a, [0, 0], [64, 64])",
        "y: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)",
        "c: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x, y)",
        "return out"])
    with pytest.raises(PassError, match=r"'x' is in pl.Mem.Vec.*no data path Vec -> Left") as info:
        run(before)
    assert "pl.Mem.Mat" in info.value.hint


def test_create_seeding_a_loop_carried_matmul_acc_is_acc_others_vec():
    acc = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc]"
    before = program(IO, RET, [
        "x: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 64], [64, 64], "
        "target_memory=pl.Mem.Mat)",
        "l: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(x, target_memory=pl.Mem.Left)",
        "r: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(x, target_memory=pl.Mem.Right)",
        "init: pl.Tile[[64, 64], pl.FP32] = pl.tile.create([64, 64], dtype=pl.FP32)",
        "scratch: pl.Tile[[64, 64], pl.FP32] = pl.tile.create([64, 64], dtype=pl.FP32)",
        "for k, (c,) in pl.range(0, 4, 1, init_values=(init,)):",
        f"    n: {acc} = pl.tile.matmul_acc(c, l, r)",
        f"    res: {acc} = pl.yield_(n)",
        "o: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(res, [0, 0], out)",
        "return o"])
    text = run(before).as_python()
    assert "init: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([64, 64], " \
           "dtype=pl.FP32, target_memory=pl.Mem.Acc)" in text
    assert "scratch: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]" in text


def test_fully_specified_program_is_returned_unchanged():
    prog = program(IO, RET, [
        "v: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 64], [64, 64], "
        "target_memory=pl.Mem.Vec)",
        "o: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(v, [0, 0], out)", "return o"])
    assert run(prog) is prog


def _on_one_core(prog, kind="AIV"):
    """The program with its kernel declared a one-core function (AIC/AIV): there a cube <->
    vector move is an ordinary move that must exist on the target."""
    from ptoc.language import parse_program

    text = prog.as_python().replace("type=pl.FunctionType.InCore", f"type=pl.FunctionType.{kind}")
    return parse_program(text)


def test_illegal_move_on_a2a3_names_the_path_and_the_legal_destinations():
    prog = _on_one_core(program(IO, RET, [
        "v: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 64], [64, 64], "
        "target_memory=pl.Mem.Vec)",
        "l: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(v, target_memory=pl.Mem.Left)",
        "return out"]))
    with pytest.raises(PassError, match=r"tile 'v' is in pl.Mem.Vec.*a2a3 has no data path "
                                        r"Vec -> Left") as err:
        run(prog)
    assert "pl.Mem.Mat" in str(err.value)          # the fix names the way through Mat


def test_vec_to_mat_is_legal_on_a5_only():
    prog = _on_one_core(program(IO, RET, [
        "v: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 64], [64, 64], "
        "target_memory=pl.Mem.Vec)",
        "m: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.move(v, target_memory=pl.Mem.Mat)",
        "return out"]))
    assert run(prog, target="a5") is prog
    with pytest.raises(PassError, match=r"no data path Vec -> Mat"):
        run(prog, target="a2a3")


def test_a_mat_view_feeding_the_cube_is_moved_into_l0():
    prog = program(IO, RET, [
        "x: pl.Tile[[64, 64], pl.FP32] = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)",
        "xs: pl.Tile[[32, 64], pl.FP32] = pl.tile.slice(x, [32, 64], [0, 0])",
        "y: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 64], [64, 64], "
        "target_memory=pl.Mem.Mat)",
        "c: pl.Tile[[32, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(xs, y)",
        "return out"])
    text = run(prog).as_python()
    assert "x: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat]" in text
    assert "xs: pl.Tile[[32, 64], pl.FP32, pl.Mem.Mat]" in text
    assert "pl.tile.move(xs, target_memory=pl.Mem.Left)" in text


def test_a_cube_vector_move_in_an_incore_kernel_is_a_cross_core_boundary():
    """In a mixed InCore kernel Vec -> Mat is a pipe transfer (ExpandMixedKernel), legal on
    a2a3 too."""
    prog = program(IO, RET, [
        "v: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 64], [64, 64], "
        "target_memory=pl.Mem.Vec)",
        "m: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.move(v, target_memory=pl.Mem.Mat)",
        "return out"])
    assert run(prog, target="a2a3") is prog
