"""Inline ``pl.spmd`` regions in an orchestration body (``@pl.program`` and ``@pl.jit``): a
``with pl.spmd(n) [as tid]:`` body that reads the block index does the per-block work itself
and is outlined into one per-block kernel, as the ``for i in pl.spmd(n):`` form is; tile and
tensor ops inside run on the blocks (against numpy, in order and on the chip, race-free),
a body that neither reads the index nor calls a kernel is refused, and so is one that
calls more than one kernel (as in PyPTO)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PtocError
from ptoc.ir.equality import assert_structural_equal
from ptoc.language.roundtrip import roundtrip
from ptoc.runtime import RunConfig

R = 16   # rows per block


def program(blocks: int, body: str):
    rows = blocks * R
    text = f"""
import ptoc.language as pl

@pl.program
class S:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{rows}, 32], pl.FP32], out: pl.Out[pl.Tensor[[{rows}, 32], pl.FP32]]
             ) -> pl.Tensor[[{rows}, 32], pl.FP32]:
""" + "".join(f"        {line}\n" for line in body.strip("\n").splitlines()) + \
        "        return out\n"
    return pl.parse_program(text, filename="spmd.py")


#: three launches over the same rows: the second and third read what the one before wrote
STAGES = f"""
with pl.spmd({{n}}) as first:
    b = pl.tile.get_block_idx()
    t = pl.load(x, [b * {R}, 0], [{R}, 32])
    out = pl.store(pl.add(t, t), [b * {R}, 0], out)
with pl.spmd({{n}}, deps=[first]) as second:
    k = pl.get_block_idx()
    u = pl.load(out, [k * {R}, 0], [{R}, 32])
    out = pl.store(pl.exp(u), [k * {R}, 0], out)
for i in pl.spmd({{n}}):
    v = pl.load(out, [i * {R}, 0], [{R}, 32])
    out = pl.store(pl.adds(v, 1.0), [i * {R}, 0], out)
"""


@settings(max_examples=6, deadline=None)
@given(blocks=st.sampled_from([1, 2, 3, 8]), chip=st.booleans())
def test_inline_spmd_regions_run_per_block_in_order_and_on_the_chip(blocks, chip):
    prog = program(blocks, STAGES.format(n=blocks))
    x = np.random.default_rng(blocks).uniform(-1, 1, (blocks * R, 32)).astype(np.float32)
    out = np.zeros_like(x)
    result = ir.compile(prog, None).run(x, out, config=RunConfig(sim_mode="fast", chip=chip))
    np.testing.assert_allclose(out, np.exp(2 * x) + 1, rtol=1e-5)
    if chip:
        tasks = result.chip.tasks
        assert len(tasks) == 3 * blocks and result.chip.races == []
        first, second, third = (tasks[k * blocks:(k + 1) * blocks] for k in range(3))
        # every block of a launch waits for every block of the one it reads
        assert all(t.deps == tuple(range(blocks)) for t in second)
        assert all(t.deps == tuple(range(blocks, 2 * blocks)) for t in third)
    else:
        assert len(result.runs) == 3 * blocks


def test_an_inline_spmd_body_becomes_one_kernel_and_round_trips():
    prog = program(2, STAGES.format(n=2))
    assert_structural_equal(roundtrip(prog, label="inline spmd"), prog)
    lowered = ir.compile(prog, None).program
    kernels = [f.name for f in lowered.functions if f.func_type.is_kernel]
    assert len(kernels) == 3
    assert_structural_equal(roundtrip(lowered, label="outlined spmd"), lowered)


@pl.jit
def staged(a: pl.Tensor[[64, 32], pl.FP32], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.spmd(4) as first:                      # tensor-level ops on each block's rows
        i = pl.get_block_idx()
        s = pl.slice(a, [R, 32], [i * R, 0])
        c = pl.assemble(c, pl.mul(s, s), [i * R, 0])
    with pl.spmd(2, deps=[first]) as second:        # two blocks of 32 rows, tile ops
        j = pl.tile.get_block_idx()
        t = pl.load(c, [j * 32, 0], [32, 32])
        c = pl.store(pl.adds(t, 0.5), [j * 32, 0], c)
    return c


@pytest.mark.parametrize("chip", [False, True])
def test_inline_spmd_regions_in_a_jit_function(chip):
    a = np.random.default_rng(3).standard_normal((64, 32)).astype(np.float32)
    c = np.zeros_like(a)
    staged(a, c, config=RunConfig(sim_mode="fast", chip=chip))
    np.testing.assert_allclose(c, a * a + 0.5, rtol=1e-6)


def test_an_spmd_body_that_cannot_tell_its_blocks_apart_is_refused():
    body = """
with pl.spmd(2):
    t = pl.load(x, [0, 0], [16, 32])
    out = pl.store(t, [0, 0], out)
"""
    with pytest.raises(PtocError, match=r"spmd.py:\d+:\d+: `with pl.spmd\(...\)` body neither "
                                        r"reads the per-block index"):
        program(2, body)


TWO_KERNELS = """
import ptoc.language as pl

@pl.program
class S:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]
               ) -> pl.Tensor[[32, 32], pl.FP32]:
        b = pl.tile.get_block_idx()
        t = pl.load(x, [b * 16, 0], [16, 32])
        y = pl.store(pl.add(t, t), [b * 16, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]
             ) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.spmd(2):
            y = self.double(x, y)
{second}
        return y
"""


@pytest.mark.parametrize("second", [
    "            y = self.double(y, y)",
    "            for r in pl.range(2):\n                y = self.double(y, y)",
])
def test_an_spmd_dispatch_body_with_two_kernel_calls_is_refused_as_pypto_does(second):
    """PyPTO launches the first kernel of a dispatch body and refuses a second call site
    rather than drop it. ptoc could run both, but a program it accepted would not run
    under PyPTO, so it refuses too, naming both calls."""
    with pytest.raises(PtocError) as err:
        pl.parse_program(TWO_KERNELS.format(second=second), filename="two.py")
    text = str(err.value)
    assert "`with pl.spmd(...)` dispatch body launches 2 kernels" in text
    assert "self.double at line 18, self.double at line" in text
    assert "one `with pl.spmd(...)` scope per kernel" in text
