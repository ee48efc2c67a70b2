"""FuseCreateAssembleToSlice: Before -> Expected, the cases left alone, and the same
numbers from the fused program on the simulator."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.tasks import fuse_create_assemble_to_slice

KERNEL = '''import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def fill_row(self, x: pl.Tensor[[4, 8], pl.FP32], r: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[1, 8], pl.FP32]]) -> pl.Tensor[[1, 8], pl.FP32]:
        t = pl.load(x, [r, 0], [1, 8])
        o = pl.store(pl.adds(t, 1.0), [0, 0], out)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
'''


def fuse(body: str):
    with PassContext():
        return fuse_create_assemble_to_slice()(pl.parse_program(KERNEL + body))


BEFORE = '''        for r in pl.range(4):
            row = pl.create_tensor([1, 8], dtype=pl.FP32)
            row = self.fill_row(x, r, row)
            out = pl.assemble(out, row, [r, 0])
        return out
'''

AFTER = '''        for r in pl.range(4):
            row = pl.slice(out, [1, 8], [r, 0])
            row = self.fill_row(x, r, row)
        return out
'''


def test_create_assembled_once_becomes_a_slice_and_the_carry_goes():
    assert_structural_equal(fuse(BEFORE), pl.parse_program(KERNEL + AFTER))


def test_a_carry_with_real_state_stays():
    before = '''        acc = pl.create_tensor([1, 8], dtype=pl.FP32)
        for r in pl.range(4):
            row = pl.create_tensor([1, 8], dtype=pl.FP32)
            row = self.fill_row(x, r, row)
            out = pl.assemble(out, row, [r, 0])
            acc = self.fill_row(x, r, acc)
        return out
'''
    after = '''        acc = pl.create_tensor([1, 8], dtype=pl.FP32)
        for r in pl.range(4):
            row = pl.slice(out, [1, 8], [r, 0])
            row = self.fill_row(x, r, row)
            acc = self.fill_row(x, r, acc)
        return out
'''
    assert_structural_equal(fuse(before), pl.parse_program(KERNEL + after))


@pytest.mark.parametrize("body", [
    # assembled twice: both copies are needed
    '''        row = pl.create_tensor([1, 8], dtype=pl.FP32)
        row = self.fill_row(x, 0, row)
        out = pl.assemble(out, row, [0, 0])
        out = pl.assemble(out, row, [1, 0])
        return out
''',
    # the source is a slice, not a create
    '''        row = pl.slice(x, [1, 8], [0, 0])
        out = pl.assemble(out, row, [2, 0])
        return out
''',
    # the offset is computed after the create: the slice could not stand there
    '''        for r in pl.range(4):
            row = pl.create_tensor([1, 8], dtype=pl.FP32)
            row = self.fill_row(x, r, row)
            k = 3 - r
            out = pl.assemble(out, row, [k, 0])
        return out
''',
])
def test_cases_left_alone(body):
    program = pl.parse_program(KERNEL + body)
    with PassContext():
        assert fuse_create_assemble_to_slice()(program) is program


def test_fused_program_gives_the_same_numbers():
    compiled = ir.compile(pl.parse_program(KERNEL + BEFORE))
    assert "tensor.assemble" not in compiled.program.as_python()
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = np.zeros((4, 8), np.float32)
    compiled(x, out)
    np.testing.assert_array_equal(out, x + 1)
