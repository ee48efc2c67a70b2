"""FoldNoOpReshape: a reshape onto its source's own buffer and type becomes ``b = a``;
real reshapes stay; a program with a no-op reshape now also compiles under PTOAS."""

import numpy as np

import ptoc.language as pl
from ptoc import ir
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import MemoryPlanner, PassContext, PassManager
from ptoc.passes.fold_no_op_reshape import fold_no_op_reshape


@pl.program
class Reshapes:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        a = pl.load(x, [0, 0], [16, 64])
        b = pl.reshape(a, [16, 64])
        c = pl.reshape(a, [64, 16])
        d = pl.reshape(c, [16, 64])
        e = pl.add(b, d)
        o = pl.store(e, [0, 0], out)
        return o


@pl.program
class OnlyNoOp:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        a = pl.load(x, [0, 0], [16, 64])
        b = pl.reshape(a, [16, 64])
        e = pl.add(a, b)
        o = pl.store(e, [0, 0], out)
        return o


def before_fold():
    """The program as the planner's memory stage leaves it (the passes before this one)."""
    with PassContext():
        full = PassManager.get_strategy()
        names = full.get_pass_names()
        upto = PassManager(full.passes[:names.index("FoldNoOpReshape")])
        return upto.run_passes(Reshapes)


def test_a_no_op_reshape_becomes_an_alias_and_real_ones_stay():
    before = before_fold()
    text = before.as_python()
    assert text.count("pl.tile.reshape(") == 3
    expected = pl.parse_program(text.replace("= pl.tile.reshape(a, [16, 64])", "= a"))
    with PassContext():
        after = fold_no_op_reshape()(before)
    assert_structural_equal(after, expected)
    assert after.as_python().count("pl.tile.reshape(") == 2


def test_nothing_to_fold_returns_the_same_program():
    with PassContext():
        after = fold_no_op_reshape()(before_fold())
        again = fold_no_op_reshape()(after)
    assert again is after


def test_folded_programs_run_exact_and_a_no_op_reshape_compiles_under_ptoas():
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    runs = [(Reshapes, MemoryPlanner.PYPTO), (OnlyNoOp, MemoryPlanner.PYPTO),
            (OnlyNoOp, MemoryPlanner.PTOAS)]   # PTOAS: a real reshape has no spelling
    for program, planner in runs:
        compiled = ir.compile(program, memory_planner=planner)
        out = np.zeros((16, 64), np.float32)
        compiled(x, out)
        np.testing.assert_array_equal(out, x + x)
