"""PH001 (TileInnermostDimGranularity) fires where PyPTO's does: after the pipeline, on
every narrow tile.load / tile.store, with PyPTO's text (pypto-dsl.md §4.4, §6.2)."""

from __future__ import annotations

import re

import pytest

from oracle_data import DUMPS
from ptoc.language import parse_program
from ptoc.passes import MemoryPlanner, PassContext, PassManager

FOLDERS = sorted(p.parent.name for p in DUMPS.glob("*/perf_hints.log")) if DUMPS.is_dir() else []


def _ph001(ctx) -> set[str]:
    return {d.message for d in ctx.diagnostics if d.code == "PH001"}


@pytest.mark.skipif(not FOLDERS, reason="PyPTO oracle dumps not available")
@pytest.mark.parametrize("folder", FOLDERS)
def test_ph001_matches_pypto_perf_hints(folder):
    expected = set()
    for line in (DUMPS / folder / "perf_hints.log").read_text().splitlines():
        found = re.match(r"\[perf_hint PH001\] TileInnermostDimGranularity: (.*?)"
                         r"( \(\d+ occurrences at this source location\))? at \S+$", line)
        if found:
            expected.add(found[1])
    planner = MemoryPlanner.PTOAS if folder.endswith("ptoas") else MemoryPlanner.PYPTO
    with PassContext(memory_planner=planner,
                     enable_pypto_l0c_double_buffer=folder.endswith("dbc_on")) as ctx:
        program = parse_program((DUMPS / folder / "15_after_LegalizeTileCast.py").read_text())
        PassManager.get_strategy().run_passes(program, write_report=False)
    assert expected and _ph001(ctx) == expected


TRANSFER = """\
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, {C}], pl.{D}], y: pl.Out[pl.Tensor[[64, {C}], pl.{D}]]) -> pl.Tensor[[64, {C}], pl.{D}]:
        t = pl.load(x, [0, 0], [64, {C}])
        y = pl.store(t, [0, 0], y)
        return y
"""


@pytest.mark.parametrize("target,dtype,cols,hinted", [
    ("a2a3", "FP32", 128, False),   # 512 B rows: at the a2a3 threshold
    ("a2a3", "FP32", 64, True),     # 256 B < 512 B
    ("a5", "FP32", 64, False),      # a5 recommends 128 B
    ("a5", "BF16", 32, True),       # 64 B < 128 B
])
def test_threshold_is_the_target_s(target, dtype, cols, hinted):
    with PassContext(target=target) as ctx:
        PassManager.get_strategy().run_passes(parse_program(TRANSFER.format(C=cols, D=dtype)),
                                              write_report=False)
    messages = sorted(_ph001(ctx))
    assert bool(messages) is hinted
    if hinted:
        row = cols * (4 if dtype == "FP32" else 2)
        assert messages[0].startswith(f"tile.load has innermost dim = {row}B")
        assert f"moves {64 * row}B as 64 x {row}B rows" in messages[0]


def test_ph001_can_be_disabled():
    with PassContext(disabled_diagnostics={"PH001"}) as ctx:
        PassManager.get_strategy().run_passes(parse_program(TRANSFER.format(C=32, D="FP32")),
                                              write_report=False)
    assert not _ph001(ctx)
