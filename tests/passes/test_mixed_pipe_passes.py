"""InjectGMPipeBuffer, SplitVectorKernel and StampTfreeSplit: Before/Expected programs."""

from __future__ import annotations

import os
import sys

import pytest

from ptoc.errors import PassError
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes.mixed.inject_gm_pipe_buffer import inject_gm_pipe_buffer
from ptoc.passes.mixed.split_vector_kernel import split_vector_kernel
from ptoc.passes.mixed.stamp_tfree_split import stamp_tfree_split

sys.path.insert(0, os.path.dirname(__file__))
from _mixed_programs import SIG, function, program, run  # noqa: E402

GM = ", __gm_pipe_buffer: pl.Out[pl.Tensor[[16384], pl.FP32]]"
AIV_BODY = '''
        ring: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=65536)
        pl.system.aiv_initialize_pipe(dir_mask=1, slot_size=32768, slot_num=2, c2v_consumer_buf=ring, v2c_consumer_buf=0{gm})
        t: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([64, 128], pl.FP32{split})
        e: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
        pl.system.tfree_to_aic(t{split})
        o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(e, [0, 0], out)
        return o'''
AIC_BODY = '''
        peer: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(dir_mask=1, slot_size=32768, slot_num=2, c2v_consumer_buf=peer, v2c_consumer_buf=0{gm})
        acc: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.create([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        pl.tile.tpush_to_aiv(acc{split})'''


def _group(gm: str = "") -> str:
    args = "a, b, bias, out" + (", __gm_pipe_buffer" if gm else "")
    return function("k", f'''
        self.k_aic({args})
        self.k_aiv({args})
        return out''', kind="Group", sig=SIG + gm)


def _main(gm: bool) -> str:
    alloc = ('''
        __gm_pipe_buffer: pl.Tensor[[16384], pl.FP32] = pl.tensor.create([16384], dtype=pl.FP32)'''
             if gm else "")
    extra = ", __gm_pipe_buffer" if gm else ""
    return function("main", alloc + f'''
        o: pl.Tensor[[64, 128], pl.FP32] = self.k(a, b, bias, out{extra})
        return o''', kind="Opaque")


def _pair(gm: str = "", split: str = "", aiv_attrs: str = "") -> tuple[str, str]:
    gm_arg = ", gm_slot_buffer=__gm_pipe_buffer" if gm else ""
    aic = function("k_aic", AIC_BODY.format(gm=gm_arg, split=split), kind="AIC", sig=SIG + gm,
                   ret=None)
    aiv = function("k_aiv", AIV_BODY.format(gm=gm_arg, split=split), kind="AIV", sig=SIG + gm,
                   attrs=aiv_attrs)
    return aic, aiv


def test_a2a3_threads_a_gm_pipe_buffer_from_the_host_to_both_kernels():
    before = program(*_pair(), _group(), _main(False))
    expected = program(*_pair(GM), _group(GM), _main(True))
    assert_structural_equal(run(inject_gm_pipe_buffer, before, target="a2a3"), expected)


def test_a5_keeps_its_rings_on_chip_and_adds_nothing():
    before = program(*_pair(), _group(), _main(False))
    assert run(inject_gm_pipe_buffer, before, target="a5") is before


def test_a_split_vector_kernel_is_dispatched_to_both_lanes():
    split = '{"split": pl.SplitMode.UP_DOWN, "split_aiv": True}'
    aic, aiv = _pair(aiv_attrs=split)
    after = run(split_vector_kernel, program(aic, aiv, _group(), _main(False)))
    expected = function("k_aiv", AIV_BODY.format(gm="", split=""), kind="AIV",
                        attrs='{"split": pl.SplitMode.UP_DOWN, "split_aiv": True, '
                              '"dual_aiv_dispatch": True}')
    assert_structural_equal(after, program(aic, expected, _group(), _main(False)))


def test_an_unsplit_vector_kernel_replays_only_the_handshakes_on_lane_1():
    aic, aiv = _pair()
    after = run(split_vector_kernel, program(aic, aiv, _group(), _main(False)))
    expected_aiv = function("k_aiv", '''
        subblock_idx: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()
        ring: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=65536)
        pl.system.aiv_initialize_pipe(dir_mask=1, slot_size=32768, slot_num=2, c2v_consumer_buf=ring, v2c_consumer_buf=0)
        if subblock_idx == 0:
            t: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([64, 128], pl.FP32)
            e: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            pl.system.tfree_to_aic(t)
            o: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(e, [0, 0], out)
        else:
            t2: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([64, 128], pl.FP32)
            pl.system.tfree_to_aic(t2)
        return out''', kind="AIV", attrs='{"dual_aiv_dispatch": True}')
    assert_structural_equal(after, program(aic, expected_aiv, _group(), _main(False)))


def test_an_unsplit_kernel_that_pushes_back_to_the_cube_is_refused():
    aic, _ = _pair()
    aiv = function("k_aiv", '''
        t: pl.Tile[[64, 128], pl.BF16, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        pl.tile.tpush_to_aic(t)
        return out''', kind="AIV")
    with pytest.raises(PassError, match="cannot replay that push.*pl.split"):
        run(split_vector_kernel, program(aic, aiv, _group(), _main(False)))


def test_a_free_takes_the_split_and_pipe_of_its_pop():
    aiv = function("k_aiv", '''
        t: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([32, 128], pl.FP32, split=1, id=3)
        pl.system.tfree_to_aic(t)
        return out''', kind="AIV")
    expected = function("k_aiv", '''
        t: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([32, 128], pl.FP32, split=1, id=3)
        pl.system.tfree_to_aic(t, split=1, id=3)
        return out''', kind="AIV")
    assert_structural_equal(run(stamp_tfree_split, program(aiv)), program(expected))


@pytest.mark.parametrize("free, message", [
    ("pl.system.tfree_to_aic(t, id=2)", "says id=2 but the tile was popped from pipe id=3"),
    ("pl.system.tfree_to_aic(v)", "'v' in 'k_aiv': that tile is not a tile.tpop_from_aic result"),
])
def test_a_free_that_does_not_match_its_pop_is_refused(free, message):
    aiv = function("k_aiv", f'''
        t: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([32, 128], pl.FP32, split=1, id=3)
        v: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
        {free}
        return out''', kind="AIV")
    with pytest.raises(PassError, match=message):
        run(stamp_tfree_split, program(aiv))


def test_a_pop_written_as_pypto_writes_it_takes_its_type_from_the_annotation():
    """PyPTO spells a pop without shape and dtype (``t: pl.Tile[...] = pl.tpop_from_aic(split=1)``);
    ptoc reads them off the annotation and prints its own form, which parses back equal."""
    pypto = AIV_BODY.replace("pl.tile.tpop_from_aic([64, 128], pl.FP32{split})",
                             "pl.tpop_from_aic({split})")
    assert "tpop_from_aic(split=1)" in pypto.format(gm="", split="split=1")
    ours = program(function("k_aiv", AIV_BODY.format(gm="", split=", split=1"), kind="AIV",
                            sig=SIG))
    theirs = program(function("k_aiv", pypto.format(gm="", split="split=1").replace(
        "tfree_to_aic(tsplit=1)", "tfree_to_aic(t, split=1)"), kind="AIV", sig=SIG))
    assert_structural_equal(theirs, ours)


@pytest.mark.parametrize("ring, knob", [("k_c2v_slot_buffer", True), ("scratch", False)])
def test_an_overflow_above_a_ring_names_it_and_only_an_automatic_ring_gets_the_slot_knob(
        ring, knob):
    """PyPTO's note: the reserved bytes are named as the allocation floor; the
    pl.cross_core_slot remedy only for the ring ExpandMixedKernel made (exact name)."""
    from ptoc.errors import AllocationError
    from ptoc.passes.allocate_memory_addr import allocate_memory_addr
    from ptoc.passes.init_mem_ref import init_mem_ref

    body = f'''
        r: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="{ring}", size=131072)
        t: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Vec)
        o: pl.Tensor[[128, 128], pl.FP32] = pl.tile.store(t, [0, 0], out)
        return o'''
    sig = ("a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], "
           "bias: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]")
    prog = program(function("k_aiv", body, kind="AIV", sig=sig,
                            ret="pl.Tensor[[128, 128], pl.FP32]"))
    with pytest.raises(AllocationError) as err:
        run(allocate_memory_addr, run(init_mem_ref, prog))
    text = str(err.value)
    assert "the first 131072 bytes are" in text and "reserved by system.reserve_buffer" in text
    assert ("cross-core pipe ring" in text) is knob
    assert ("pl.cross_core_slot" in (err.value.hint or "")) is knob
    assert "add pl.split" not in (err.value.hint or "")  # a split does not shrink the ring
