"""Passes over while loops: the ones that rewrite loop bodies rewrite a while's body
(Before/Expected), the ones written for other loops only refuse a while with a PassError
naming the pass, and every pass of the default pipeline declares which it does."""

from __future__ import annotations

import re

import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PassError
from ptoc.passes import PassContext
from ptoc.passes.convert_tensor_to_tile_ops import convert_tensor_to_tile_ops
from ptoc.passes.infer_tile_memory_space import infer_tile_memory_space
from ptoc.passes.manager import default_pipeline_entries
from ptoc.runtime import compile_program


@pl.program
class TensorCarry:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], x: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc = pl.add(x, x)
        for (i, a) in pl.while_(init_values=(0, acc)):
            pl.cond(i < n)
            a2 = pl.add(a, x)
            i2, a3 = pl.yield_(i + 1, a2)
        out = pl.assemble(out, a3, [0, 0])
        return out


@pl.program
class TileCarry:
    """TensorCarry after ConvertTensorToTileOps: the carried sum lives in a Vec tile."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], x: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        xv = pl.tile.load(x, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Vec)
        acc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(xv, xv)
        for (i, a) in pl.while_(init_values=(0, acc)):
            pl.cond(i < n)
            xv1 = pl.tile.load(x, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Vec)
            a2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(a, xv1)
            i2, a3 = pl.yield_(i + 1, a2)
        out = pl.tile.store(a3, [0, 0], out)
        return out


def test_convert_tensor_to_tile_ops_carries_the_tile_through_the_while():
    with PassContext(target="a2a3"):
        after = convert_tensor_to_tile_ops()(TensorCarry)
    ir.assert_structural_equal(after, TileCarry)


@pl.program
class SpacesUnset:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], x: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc = pl.tile.create([16, 16], pl.FP32)
        for (i, a) in pl.while_(init_values=(0, acc)):
            pl.cond(i < n)
            t = pl.load(x, [0, 0], [16, 16])
            a2 = pl.add(a, t)
            i2, a3 = pl.yield_(i + 1, a2)
        out = pl.store(a3, [0, 0], out)
        return out


@pl.program
class SpacesSet:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, n: pl.Scalar[pl.INDEX], x: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc = pl.tile.create([16, 16], pl.FP32, target_memory=pl.Mem.Vec)
        for (i, a) in pl.while_(init_values=(0, acc)):
            pl.cond(i < n)
            t = pl.load(x, [0, 0], [16, 16])
            a2 = pl.add(a, t)
            i2, a3 = pl.yield_(i + 1, a2)
        out = pl.store(a3, [0, 0], out)
        return out


def test_infer_tile_memory_space_retypes_the_carry_and_its_condition_keeps_reading_it():
    with PassContext(target="a2a3"):
        after = infer_tile_memory_space()(SpacesUnset)
    ir.assert_structural_equal(after, SpacesSet)
    loop = after.functions[0].body.stmts[1]
    assert loop.cond.lhs is loop.iter_args[0]


@pl.program
class MixedWhileOnTileData:
    """The condition tests a value read out of a Vec tile: only the vector core has it."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP16],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        v = 0.0
        while v < 1.0:
            x = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
            p = pl.matmul(pl.move(x, target_memory=pl.Mem.Left),
                          pl.move(x, target_memory=pl.Mem.Right))
            e = pl.exp(pl.move(p, target_memory=pl.Mem.Vec))
            out = pl.store(e, [0, 0], out)
            v = pl.tile.read(e, [0, 0])
        return out


@pl.program
class OrchestrationWhile:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, a: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        out = pl.store(pl.add(t, t), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, n: pl.Scalar[pl.INDEX], a: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        i = 0
        while i < n:
            out = self.double(a, out)
            i = i + 1
        return out


def test_a_while_in_an_orchestration_function_is_refused_by_the_pass(tmp_path):
    what = "pass FuseCreateAssembleToSlice does not support an orchestration function with a while"
    with pytest.raises(PassError, match=re.escape(what)):
        compile_program(OrchestrationWhile, tmp_path)


def test_a_mixed_while_whose_condition_only_one_core_has_is_refused(tmp_path):
    with pytest.raises(PassError, match="the while condition tests 'v', whose next value only "
                                        "the other core computes"):
        compile_program(MixedWhileOnTileData, tmp_path)


def test_every_default_pass_declares_while_loops():
    """A new pass must say whether it handles while loops; this lists the ones that say so
    (each was audited), so adding a pass without deciding fails here."""
    declared = {e.name for e in default_pipeline_entries() if e.factory().handles_while_loops}
    assert declared == {e.name for e in default_pipeline_entries()}
