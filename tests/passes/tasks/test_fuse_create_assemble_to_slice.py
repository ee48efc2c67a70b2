"""FuseCreateAssembleToSlice: Before -> Expected, the cases left alone, and the same
numbers from the fused program on the simulator."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.tasks import fuse_create_assemble_to_slice

def _head(x: str, chunk: str, out: str) -> str:
    """A program whose kernel fills a ``chunk`` from rows of ``x``; the orchestration body
    (appended) writes ``out``."""
    return f'''import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def fill_row(self, x: pl.Tensor[{x}, pl.FP32], r: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[{chunk}, pl.FP32]]) -> pl.Tensor[{chunk}, pl.FP32]:
        t = pl.load(x, [r, 0], {chunk})
        o = pl.store(pl.adds(t, 1.0), [0, 0], out)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[{x}, pl.FP32], out: pl.Out[pl.Tensor[{out}, pl.FP32]]) -> pl.Tensor[{out}, pl.FP32]:
'''


KERNEL = _head("[4, 8]", "[1, 8]", "[4, 8]")


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


KERNEL_3D = _head("[4, 16]", "[2, 16]", "[2, 4, 16]") + '''        for b in pl.range(2):
            for c in pl.range(2):
                row = c * 2
{body}        return out
'''


BEFORE_3D = '''                chunk = pl.create_tensor([2, 16], dtype=pl.FP32)
                chunk = self.fill_row(x, b + c, chunk)
                out = pl.assemble(out, chunk, [b, row, 0])
'''


def _expected_3d(x):
    out = np.zeros((2, 4, 16), np.float32)
    for b in range(2):
        for c in range(2):
            out[b, 2 * c:2 * c + 2] = x[b + c:b + c + 2] + 1
    return out


def test_a_lower_rank_staging_tensor_becomes_a_slice_padded_with_leading_ones():
    before = pl.parse_program(KERNEL_3D.format(body=BEFORE_3D))
    after = '''                chunk = pl.slice(out, [1, 2, 16], [b, row, 0])
                chunk = self.fill_row(x, b + c, chunk)
'''
    with PassContext():
        fused = fuse_create_assemble_to_slice()(before)
    assert_structural_equal(fused, pl.parse_program(KERNEL_3D.format(body=after)))


@pytest.mark.parametrize("body", [
    BEFORE_3D,                                    # fused: the kernel writes the 3-D target
    BEFORE_3D + "                out = pl.assemble(out, chunk, [b, row, 0])\n",  # two copies
])
def test_a_lower_rank_chunk_lands_in_the_target_at_its_offset(body):
    compiled = ir.compile(pl.parse_program(KERNEL_3D.format(body=body)))
    x = np.arange(64, dtype=np.float32).reshape(4, 16)
    out = np.zeros((2, 4, 16), np.float32)
    compiled(x, out)
    np.testing.assert_array_equal(out, _expected_3d(x))
