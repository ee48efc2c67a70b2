"""LowerAutoVectorSplit: Before/Expected programs and the splits it refuses."""

from __future__ import annotations

import os
import sys

import pytest

from ptoc.errors import PassError
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes.mixed.lower_auto_vector_split import lower_auto_vector_split

sys.path.insert(0, os.path.dirname(__file__))
from _mixed_programs import CUBE, function, program, run  # noqa: E402

EPILOGUE = '''
        av: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.move(acc, target_memory=pl.Mem.Vec)
        bv: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        z: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(av, bv)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(z, [0, 0], out)
        return o'''


def lower(prog):
    return run(lower_auto_vector_split, prog)


ASSIGNED = ("        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(z, [0, 0], out)\n        return o",
            "        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(z, [0 + subblock_idx * 32, 0], out)\n"
            "        return o")
# a bare 'pl.store(z, offs, out)' is a write too: each lane stores its own rows
BARE = ("        pl.tile.store(z, [0, 0], out)\n        return out",
        "        pl.tile.store(z, [0 + subblock_idx * 32, 0], out)\n        return out")


@pytest.mark.parametrize("store", [ASSIGNED, BARE], ids=["assigned", "bare"])
def test_up_down_halves_the_vector_rows_and_shards_the_cube_result(store):
    assert ASSIGNED[0] in EPILOGUE
    epilogue = EPILOGUE.replace(ASSIGNED[0], store[0])
    before = program(function("k", CUBE + epilogue, attrs='{"split": pl.SplitMode.UP_DOWN}'))
    expected = program(function("k", '''
        subblock_idx: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()''' + CUBE + '''
        av: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(acc, split=1)
        bv: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0 + subblock_idx * 32, 0], [32, 128], [32, 128], target_memory=pl.Mem.Vec)
        z: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(av, bv)
''' + store[1], attrs='{"split": pl.SplitMode.UP_DOWN, "split_aiv": True}'))
    assert_structural_equal(lower(before), expected)


def test_left_right_halves_the_columns():
    before = program(function("k", CUBE + EPILOGUE, attrs='{"split": pl.SplitMode.LEFT_RIGHT}'))
    expected = program(function("k", '''
        subblock_idx: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()''' + CUBE + '''
        av: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(acc, split=2)
        bv: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0, 0 + subblock_idx * 64], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        z: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(av, bv)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(z, [0, 0 + subblock_idx * 64], out)
        return o''', attrs='{"split": pl.SplitMode.LEFT_RIGHT, "split_aiv": True}'))
    assert_structural_equal(lower(before), expected)


def test_vector_to_cube_boundary_gathers_then_moves_on_the_cube():
    body = CUBE + '''
        av: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.move(acc, target_memory=pl.Mem.Vec)
        hv: pl.Tile[[64, 128], pl.BF16, pl.Mem.Vec] = pl.tile.cast(av, pl.BF16, mode="rint")
        hl: pl.Tile[[64, 128], pl.BF16, pl.Mem.Left] = pl.tile.move(hv, target_memory=pl.Mem.Left)
        d: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(hl, br)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(d, [0, 0], out)
        return o'''
    before = program(function("k", body, attrs='{"split": pl.SplitMode.UP_DOWN}'))
    expected = program(function("k", '''
        subblock_idx: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()''' + CUBE + '''
        av: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(acc, split=1)
        hv: pl.Tile[[32, 128], pl.BF16, pl.Mem.Vec] = pl.tile.cast(av, pl.BF16, mode="rint")
        hl_mat: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.aic_gather(hv, split=1)
        hl: pl.Tile[[64, 128], pl.BF16, pl.Mem.Left] = pl.tile.move(hl_mat, target_memory=pl.Mem.Left)
        d: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(hl, br)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(d, [0, 0], out)
        return o''', attrs='{"split": pl.SplitMode.UP_DOWN, "split_aiv": True}'))
    assert_structural_equal(lower(before), expected)


@pytest.mark.parametrize("attrs", ["", '{"split": pl.SplitMode.NONE}',
                                   '{"split": pl.SplitMode.UP_DOWN, "split_aiv": True}'])
def test_unsplit_or_already_split_functions_are_untouched(attrs):
    before = program(function("k", CUBE + EPILOGUE, attrs=attrs))
    assert lower(before) is before


def test_a_pure_vector_split_function_is_untouched():
    body = '''
        bv: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.exp(bv), [0, 0], out)
        return o'''
    before = program(function("k", body, attrs='{"split": pl.SplitMode.UP_DOWN}'))
    assert lower(before) is before


def test_a_row_reduction_across_a_column_split_is_refused():
    body = CUBE + '''
        av: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.move(acc, target_memory=pl.Mem.Vec)
        tmp: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.create([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        rs: pl.Tile[[64, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(av, tmp)
        return out'''
    with pytest.raises(PassError, match=r"row_sum reduces the axis the split halves.*UP_DOWN"):
        lower(program(function("k", body, attrs='{"split": pl.SplitMode.LEFT_RIGHT}')))


def test_an_unsplit_store_is_refused_because_both_lanes_would_write_it():
    body = CUBE + '''
        av: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.move(acc, target_memory=pl.Mem.Vec)
        tmp: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.create([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        rs: pl.Tile[[64, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(av, tmp)
        row: pl.Tile[[1, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0, 0], [1, 128], [1, 128], target_memory=pl.Mem.Vec)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(row, [0, 0], out)
        return o'''
    with pytest.raises(PassError, match="both AIV lanes would write the same bytes"):
        lower(program(function("k", body, attrs='{"split": pl.SplitMode.UP_DOWN}')))


def test_an_odd_split_axis_is_refused():
    body = CUBE + '''
        av: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.move(acc, target_memory=pl.Mem.Vec)
        odd: pl.Tile[[63, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0, 0], [63, 128], [63, 128], target_memory=pl.Mem.Vec)
        return out'''
    with pytest.raises(PassError, match=r"odd extent \(63\)"):
        lower(program(function("k", body, attrs='{"split": pl.SplitMode.UP_DOWN}')))
