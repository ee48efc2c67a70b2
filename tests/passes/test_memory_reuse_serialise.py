"""When shedding pipeline depth cannot make a space fit because the stages' hoisted loads
keep them co-live, MemoryReuse serialises the stages in chunks of the depth that fits
(``ptoc.passes.pipeline_serialise``), so ``pl.pipeline(stage=F)`` never turns a kernel that
fits at depth 1 into an overflow, and the PH-MR-001 hint describes what happens."""

from __future__ import annotations

import runpy

import numpy as np
import pytest

from ptoc import ir
from ptoc.dtypes import MemorySpace
from ptoc.ir import assert_structural_equal
from ptoc.language import parse_program
from ptoc.passes import PassContext
from ptoc.passes.memory_reuse import memory_reuse

TILE = "pl.Tile[[16, 64], pl.FP32, pl.MemRef({m}, pl.const(0, pl.INT64), 4096), pl.Mem.Vec]"
TENSOR = 'pl.Tensor[[64, 64], pl.FP32, pl.MemRef("{m}", pl.const(0, pl.INT64), 16384)]'
HEAD = f"""\
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: {TENSOR.format(m="mem_ddr_0")}, y: pl.Out[{TENSOR.format(m="mem_ddr_1")}]) -> pl.Tensor[[64, 64], pl.FP32]:
"""
STMTS = {
    "t": "t: {T} = pl.tile.load(x, [i, 0], [16, 64], [16, 64], target_memory=pl.Mem.Vec{a})",
    "t_1": "t_1: {T} = pl.tile.load(x, [i + 16, 0], [16, 64], [16, 64], target_memory=pl.Mem.Vec{a})",
    "e": "e: {T} = pl.tile.exp(t{a})",
    "y_2": "y_2: " + TENSOR.format(m="mem_ddr_1") + " = pl.tile.store(e, [i, 0], y_1)",
    "e_1": "e_1: {T} = pl.tile.exp(t_1{a})",
    "y_3": "y_3: " + TENSOR.format(m="mem_ddr_1") + " = pl.tile.store(e_1, [i + 16, 0], y_2)",
}
STAGE = {"t": 0, "e": 0, "t_1": 1, "e_1": 1}


def program(order: list[str], buffer: dict[str, str], tagged: bool) -> str:
    """The stage=2 loop body of an exp kernel after CanonicalizeIOOrder (loads hoisted)."""
    allocs = list(dict.fromkeys(buffer.values()))
    lines = [f"        {m}: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 4096)" for m in allocs]
    lines.append("        for i, (y_1,) in pl.range(0, 64, 32, init_values=(y,)):")
    for name in order:
        attrs = f', attrs={{"pipeline_membership": "0:{STAGE[name]}"}}' \
            if tagged and name in STAGE else ""
        text = STMTS[name].format(T=TILE.format(m=buffer.get(name, "")), a=attrs)
        lines.append("            " + text)
    lines.append("            y_4: " + TENSOR.format(m="mem_ddr_1") + " = pl.yield_(y_3)")
    lines.append("        return y_4")
    return HEAD + "\n".join(lines) + "\n"


HOISTED = ["t", "t_1", "e", "y_2", "e_1", "y_3"]
BEFORE = program(HOISTED, {"t": "mem_vec_2", "t_1": "mem_vec_3", "e": "mem_vec_4",
                           "e_1": "mem_vec_5"}, tagged=True)
# one stage after the other, everything in one 4 KiB buffer
EXPECTED = program(["t", "e", "y_2", "t_1", "e_1", "y_3"],
                   {n: "mem_vec_2" for n in STAGE}, tagged=False)


def test_stages_are_serialised_when_no_depth_fits_with_hoisted_loads():
    ctx = PassContext()
    with ctx:
        out = memory_reuse(capacities={MemorySpace.Vec: 6144})(parse_program(BEFORE))
    assert_structural_equal(out, parse_program(EXPECTED))
    [hint] = [d.message for d in ctx.diagnostics if d.code == "PH-MR-001"]
    assert "only 1 of 2 buffers fit" in hint and "stages 1 apart share storage and serialize" in hint
    assert not [d for d in ctx.diagnostics if d.code == "W-MR-001"]


def test_nothing_moves_when_the_stages_fit():
    with PassContext():
        out = memory_reuse(capacities={MemorySpace.Vec: 8192})(parse_program(BEFORE))
    assert_structural_equal(out, parse_program(program(
        HOISTED, {"t": "mem_vec_2", "e": "mem_vec_2", "t_1": "mem_vec_3", "e_1": "mem_vec_3"},
        tagged=False)))


BLOCK_SOFTMAX = """\
import ptoc.language as pl

R, C, B = 64, {C}, 16


@pl.program
class BlockSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[R, C], pl.FP32],
          y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        for i in pl.pipeline(0, R, B, stage={F}):
            t = pl.load(x, [i, 0], [B, C])
            scratch = pl.create_tile([B, C], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            e = pl.row_expand_expdif(t, pl.row_max(t, scratch))
            y = pl.store(pl.row_expand_div(e, pl.row_sum(e, scratch)), [i, 0], y)
        return y
"""


@pytest.mark.parametrize("columns,stages,depth", [(1024, 2, 1), (640, 4, 2)])
def test_block_softmax_pipeline_fits_ub_and_is_exact(tmp_path, columns, stages, depth):
    """16-row blocks: 1024 columns at stage=2 overflowed UB (196672 > 188416 B) before; 640
    columns at stage=4 keep depth 2 (chunks {0,1}, {2,3})."""
    path = tmp_path / "softmax.py"
    path.write_text(BLOCK_SOFTMAX.format(C=columns, F=stages))
    compiled = ir.compile(runpy.run_path(str(path))["BlockSoftmax"], tmp_path / "o",
                          dump_passes=False)
    x = np.random.default_rng(5).standard_normal((64, columns)).astype(np.float32)
    y = np.zeros_like(x)
    result = compiled.run(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert not result.races
    [hint] = [d.message for d in compiled.diagnostics if d.code == "PH-MR-001"]
    assert f"only {depth} of {stages} buffers fit" in hint
    assert f"stages {depth} apart share storage and serialize" in hint
