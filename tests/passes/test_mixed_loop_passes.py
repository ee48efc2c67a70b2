"""NormalizeReturnOrder and SkewCrossCorePipeline: Before/Expected programs."""

from __future__ import annotations

import os
import sys

from ptoc.dtypes import ForKind
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import ForStmt
from ptoc.passes.mixed.normalize_return_order import normalize_return_order
from ptoc.passes.mixed.skew_cross_core_pipeline import skew_cross_core_pipeline

sys.path.insert(0, os.path.dirname(__file__))
from _mixed_programs import function, program, run  # noqa: E402

TWO = ("x: pl.Tensor[[16, 16], pl.FP32], oa: pl.Out[pl.Tensor[[16, 16], pl.FP32]], "
       "ob: pl.Out[pl.Tensor[[16, 16], pl.FP32]]")
PAIR = "tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]"
PAIR_VAR = "pl.Tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]"
STORES = '''
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Vec)
        sb: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(t, [0, 0], ob)
        sa: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(t, [0, 0], oa)'''


def _caller(first: int, second: int) -> str:
    return function("main", f'''
        r: {PAIR_VAR} = self.k(x, oa, ob)
        a: pl.Tensor[[16, 16], pl.FP32] = r[{first}]
        b: pl.Tensor[[16, 16], pl.FP32] = r[{second}]
        return a, b''', kind="Orchestration", sig=TWO, ret=PAIR)


def test_returns_follow_the_out_parameter_order_and_callers_follow_them():
    before = program(function("k", STORES + "\n        return sb, sa", kind="AIV", sig=TWO,
                              ret=PAIR), _caller(0, 1))
    expected = program(function("k", STORES + "\n        return oa, ob", kind="AIV", sig=TWO,
                                ret=PAIR), _caller(1, 0))
    assert_structural_equal(run(normalize_return_order, before), expected)


def test_returns_already_in_order_are_left_alone():
    before = program(function("k", STORES + "\n        return oa, ob", kind="AIV", sig=TWO,
                              ret=PAIR), _caller(0, 1))
    assert run(normalize_return_order, before) is before


SIG = "out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]"
AIC = "AIC"


def _aic_loop(start: int, stop: int, stage: int = 2) -> str:
    return function("k", f'''
        for i in pl.pipeline({start}, {stop}, 1, stage={stage}):
            s: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.create([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)
            pl.tile.tpush_to_aiv(s)
            p: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.tpop_from_aiv([64, 128], pl.BF16)
            pl.system.tfree_to_aiv(p)''', kind=AIC, sig=SIG, ret=None)


def test_a_producer_loop_runs_two_iterations_ahead():
    before = program(_aic_loop(0, 4))
    produce = '''
        s{n}: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.create([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        pl.tile.tpush_to_aiv(s{n})'''
    consume = '''
        p{n}: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.tpop_from_aiv([64, 128], pl.BF16)
        pl.system.tfree_to_aiv(p{n})'''

    def indent(text: str) -> str:
        return text.replace("\n        ", "\n            ")
    body = (produce.format(n=0) + produce.format(n=1) + '''
        for k in pl.range(2, 4, 2):''' + indent(produce.format(n=2) + produce.format(n=3)
                                              + consume.format(n=4) + consume.format(n=5))
            + consume.format(n=6) + consume.format(n=7))
    expected = program(function("k", body, kind=AIC, sig=SIG, ret=None))
    assert_structural_equal(run(skew_cross_core_pipeline, before), expected)


def test_an_odd_trip_count_skews_one_iteration_ahead():
    after = run(skew_cross_core_pipeline, program(_aic_loop(0, 3)))
    stmts = after.get_function("k").body.stmts
    loops = [s for s in stmts if isinstance(s, ForStmt)]
    assert len(loops) == 1 and loops[0].kind is ForKind.Sequential
    assert (loops[0].start.value, loops[0].stop.value, loops[0].step.value) == (1, 3, 1)
    assert len(stmts) == 2 + 1 + 2          # produce(0); loop; consume(2)


def test_a_consumer_loop_is_made_sequential_unchanged():
    consumer = function("k", '''
        for i in pl.pipeline(0, 4, 1, stage=2):
            t: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([64, 128], pl.FP32)
            e: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            pl.system.tfree_to_aic(t)
            h: pl.Tile[[64, 128], pl.BF16, pl.Mem.Vec] = pl.tile.cast(e, pl.BF16, mode="rint")
            pl.tile.tpush_to_aic(h)''', kind="AIV", sig=SIG, ret=None)
    after = run(skew_cross_core_pipeline, program(consumer))
    expected = program(consumer.replace("pl.pipeline(0, 4, 1, stage=2)", "pl.range(0, 4, 1)"))
    assert_structural_equal(after, expected)


def test_a_same_core_pipeline_is_left_for_lower_pipeline_loops():
    same_core = function("k", '''
        for i in pl.pipeline(0, 4, 1, stage=2):
            s: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.create([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)
            pl.tile.tpush_to_aiv(s)''', kind=AIC, sig=SIG, ret=None)
    before = program(same_core)
    assert run(skew_cross_core_pipeline, before) is before
