"""ExpandMixedKernel: AIC + AIV + Group from a mixed InCore function (Before/Expected), the
type change of one-sided kernels, loops on both sides, and what it refuses."""

from __future__ import annotations

import os
import sys

import pytest

from ptoc.errors import PassError
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes.mixed.expand_mixed_kernel import expand_mixed_kernel

sys.path.insert(0, os.path.dirname(__file__))
from _mixed_programs import CUBE, SIG, function, program, run  # noqa: E402

SPLIT = '{"split": pl.SplitMode.UP_DOWN, "split_aiv": True}'
MAIN = function("main", '''
        o: pl.Tensor[[64, 128], pl.FP32] = self.k(a, b, bias, out)
        return o''', kind="Orchestration")
SHARDED = '''
        subblock_idx: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()''' + CUBE + '''
        av: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(acc, split=1)
        bv: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0 + subblock_idx * 32, 0], [32, 128], [32, 128], target_memory=pl.Mem.Vec)
        z: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(av, bv)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(z, [0 + subblock_idx * 32, 0], out)
        return o'''
GROUP = function("k", '''
        self.k_aic(a, b, bias, out)
        self.k_aiv(a, b, bias, out)
        return out''', kind="Group")


def expand(prog, target="a2a3"):
    return run(expand_mixed_kernel, prog, target=target)


def test_a_sharded_kernel_becomes_aic_aiv_and_a_group():
    before = program(function("k", SHARDED, attrs=SPLIT), MAIN)
    aic = function("k_aic", '''
        c2v_peer: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(dir_mask=1, slot_size=32768, slot_num=2, c2v_consumer_buf=c2v_peer, v2c_consumer_buf=0)''' + CUBE + '''
        pl.tile.tpush_to_aiv(acc, split=1)''', kind="AIC", attrs=SPLIT, ret=None)
    aiv = function("k_aiv", '''
        subblock_idx: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()
        c2v_ring: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=65536)
        pl.system.aiv_initialize_pipe(dir_mask=1, slot_size=32768, slot_num=2, c2v_consumer_buf=c2v_ring, v2c_consumer_buf=0)
        av: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([32, 128], pl.FP32, split=1)
        bv: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0 + subblock_idx * 32, 0], [32, 128], [32, 128], target_memory=pl.Mem.Vec)
        z: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(av, bv)
        pl.system.tfree_to_aic(av, split=1)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(z, [0 + subblock_idx * 32, 0], out)
        return o''', kind="AIV", attrs=SPLIT)
    assert_structural_equal(expand(before), program(aic, aiv, GROUP, MAIN))


def test_one_sided_kernels_only_change_type_and_lose_the_split():
    cube = function("k", CUBE + '''
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(acc, [0, 0], out)
        return o''', attrs='{"split": pl.SplitMode.UP_DOWN}')
    after = expand(program(cube, MAIN))
    fn = after.get_function("k")
    assert fn.func_type.value == "AIC" and fn.attrs == {}
    assert [f.name for f in after.functions] == ["k", "main"]


def test_a_vector_to_cube_boundary_pops_into_mat_and_sets_up_both_directions():
    body = '''
        subblock_idx: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()''' + CUBE + '''
        av: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(acc, split=1)
        hv: pl.Tile[[32, 128], pl.BF16, pl.Mem.Vec] = pl.tile.cast(av, pl.BF16, mode="rint")
        hm: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.aic_gather(hv, split=1)
        hl: pl.Tile[[64, 128], pl.BF16, pl.Mem.Left] = pl.tile.move(hm, target_memory=pl.Mem.Left)
        d: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(hl, br)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(d, [0, 0], out)
        return o'''
    after = expand(program(function("k", body, attrs=SPLIT), MAIN))
    aic = function("k_aic", '''
        v2c_ring: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_v2c_slot_buffer", size=65536, location=pl.Mem.Mat)
        c2v_peer: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(dir_mask=3, slot_size=32768, slot_num=2, c2v_consumer_buf=c2v_peer, v2c_consumer_buf=v2c_ring)''' + CUBE + '''
        pl.tile.tpush_to_aiv(acc, split=1)
        hm: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.tpop_from_aiv([64, 128], pl.BF16, split=1)
        hl: pl.Tile[[64, 128], pl.BF16, pl.Mem.Left] = pl.tile.move(hm, target_memory=pl.Mem.Left)
        pl.system.tfree_to_aiv(hm, split=1)
        d: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(hl, br)
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(d, [0, 0], out)''', kind="AIC", attrs=SPLIT,
        ret=None)
    aiv = function("k_aiv", '''
        c2v_ring: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=65536)
        v2c_peer: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_v2c_slot_buffer", peer_func="k_aic")
        pl.system.aiv_initialize_pipe(dir_mask=3, slot_size=32768, slot_num=2, c2v_consumer_buf=c2v_ring, v2c_consumer_buf=v2c_peer)
        av: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([32, 128], pl.FP32, split=1)
        hv: pl.Tile[[32, 128], pl.BF16, pl.Mem.Vec] = pl.tile.cast(av, pl.BF16, mode="rint")
        pl.system.tfree_to_aic(av, split=1)
        pl.tile.tpush_to_aic(hv, split=1)
        return out''', kind="AIV", attrs=SPLIT)
    assert_structural_equal(after, program(aic, aiv, GROUP, MAIN))


def test_a_mixed_loop_is_kept_on_both_sides_and_the_cube_loop_leaves_the_aiv():
    loop = '''
        subblock_idx: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()
        for i, (oc,) in pl.range(2, init_values=(out,)):
            am: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
            bm: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Mat)
            al: pl.Tile[[64, 128], pl.BF16, pl.Mem.Left] = pl.tile.move(am, target_memory=pl.Mem.Left)
            br: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.tile.move(bm, target_memory=pl.Mem.Right)
            acc: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(al, br)
            av: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(acc, split=1)
            o2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(av, [0 + subblock_idx * 32, 0], oc)
            o3: pl.Tensor[[64, 128], pl.FP32] = pl.yield_(o2)
        return o3'''
    after = expand(program(function("k", loop, attrs=SPLIT), MAIN))
    aic = after.get_function("k_aic").as_python()
    aiv = after.get_function("k_aiv").as_python()
    assert "pl.range(2)" in aic and "tpush_to_aiv" in aic and "tile.store" not in aic
    assert "for i, (oc,) in pl.range(2, init_values=(out,))" in aiv
    assert "tpop_from_aic" in aiv and "tfree_to_aic" in aiv and "matmul" not in aiv


def test_the_ring_depth_follows_cross_core_slot_and_is_bounded():
    deep = program(function("k", SHARDED, attrs='{"split": pl.SplitMode.UP_DOWN, '
                                                '"split_aiv": True, "slot_num": 4}'), MAIN)
    aiv = expand(deep).get_function("k_aiv").as_python()
    assert "slot_num=4" in aiv and "size=131072" in aiv
    too_deep = program(function("k", SHARDED, attrs='{"split": pl.SplitMode.UP_DOWN, '
                                                    '"split_aiv": True, "slot_num": 9}'), MAIN)
    with pytest.raises(PassError, match=r"slot_num=9.*exceeds the 8 slots"):
        expand(too_deep)


def test_a_tensor_stored_by_the_cube_and_loaded_by_the_vector_is_refused():
    body = CUBE + '''
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(acc, [0, 0], out)
        back: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(o, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        o2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(pl.tile.exp(back), [0, 0], o)
        return o2'''
    with pytest.raises(PassError, match="loads a tensor the other core stored"):
        expand(program(function("k", body), MAIN))
