"""A tile's bytes must lie inside its MemRef and allocation, and two allocations must not
share bytes (issue 16 point 11): otherwise the next allocation overlaps it and the core
computes wrong numbers — sometimes with a race report, sometimes without."""

import numpy as np
import pytest

from ptoc import ir
from ptoc.codegen import CodegenError, generate_kernels
from ptoc.errors import VerificationError
from ptoc.ir.verifier import verify
from ptoc.language import parse_program
from ptoc.sim import simulate

SRC = """\
import ptoc.language as pl

@pl.program
class Two:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 64], pl.FP32], w: pl.Tensor[[32, 64], pl.FP32],
          y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [32, 64])
        u = pl.load(w, [0, 0], [32, 64])
        s = pl.add(t, u)
        y = pl.store(s, [0, 0], y)
        return y
"""
ALLOC_T = "mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 8192)"
REF_U = "pl.MemRef(mem_vec_4, pl.const(8192, pl.INT64), 8192)"


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    """The post-pass IR text: t and s on mem_vec_3 at [0, 8192), u on mem_vec_4 after it."""
    compiled = ir.compile(parse_program(SRC), tmp_path_factory.mktemp("two"),
                          dump_passes=False)
    text = compiled.program.as_python()
    assert ALLOC_T in text and REF_U in text
    return text


def line_of(text, needle):
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_compiled_program_verifies_and_runs(lowered):
    program = parse_program(lowered)
    verify(program)
    x, w = np.random.default_rng(0).standard_normal((2, 32, 64)).astype(np.float32)
    result = simulate(generate_kernels(program)["k"], [x, w, np.zeros_like(x)])
    np.testing.assert_allclose(result.outputs["arg2"].reshape(32, 64), x + w)


def test_an_allocation_smaller_than_its_tiles_is_rejected(lowered):
    bad = lowered.replace(ALLOC_T, "mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 4096)")
    with pytest.raises(VerificationError) as info:
        verify(parse_program(bad, "two.py"))
    msg = str(info.value)
    assert "span bytes [0, 8192) (8192 bytes), but pl.tile.alloc gave it 4096" in msg
    assert "allocation 'mem_vec_3'" in msg and "fix:" in msg
    assert info.value.loc.line == line_of(bad, "t: pl.Tile")
    with pytest.raises(VerificationError):
        ir.compile(parse_program(bad), dump_passes=False)


def test_a_memref_smaller_than_its_tile_is_rejected(lowered):
    bad = lowered.replace(REF_U, "pl.MemRef(mem_vec_4, pl.const(8192, pl.INT64), 4096)")
    with pytest.raises(VerificationError, match="needs 8192 bytes but its MemRef on "
                                                "'mem_vec_4' gives 4096") as info:
        verify(parse_program(bad))
    assert info.value.loc.line == line_of(bad, "u: pl.Tile")


def test_overlapping_allocations_are_a_codegen_error(lowered):
    """u moved into t's bytes: both loads run on MTE2 (ordered, no race) and the add reads a
    corrupted t — wrong numbers with no report, unless codegen refuses."""
    bad = lowered.replace(REF_U, "pl.MemRef(mem_vec_4, pl.const(4096, pl.INT64), 8192)")
    program = parse_program(bad)
    with pytest.raises(CodegenError) as info:
        generate_kernels(program)
    msg = str(info.value)
    assert "allocation 'mem_vec_4' at Vec bytes [4096, 12288)" in msg
    assert "overlapping allocation 'mem_vec_3' at [0, 8192)" in msg
    assert info.value.loc.line == line_of(bad, "u: pl.Tile")
