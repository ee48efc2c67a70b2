"""A PTOAS compile logs, as PyPTO's ir.compile does, that MemoryReuse and
AllocateMemoryAddr are skipped and who plans memory instead; other planners log nothing."""

import logging
import runpy
from pathlib import Path

import pytest

from ptoc import ir
from ptoc.passes import MemoryPlanner
from ptoc.runtime.compile import PTOAS_WARNING

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "01_tile_matmul.py"


@pytest.mark.parametrize("planner", [MemoryPlanner.PTOAS, MemoryPlanner.PYPTO])
def test_ptoas_compile_logs_the_planner_warning(caplog, tmp_path, planner):
    with caplog.at_level(logging.WARNING, logger="ptoc"):
        ir.compile(runpy.run_path(str(EXAMPLE))["TileMatmul"], tmp_path, memory_planner=planner, dump_passes=False)
    logged = [r for r in caplog.records if r.name == "ptoc" and r.levelno == logging.WARNING]
    if planner is MemoryPlanner.PTOAS:
        assert [r.getMessage() for r in logged] == [PTOAS_WARNING]
        assert "MemoryReuse and AllocateMemoryAddr are skipped" in PTOAS_WARNING
    else:
        assert not logged
