"""From PyPTO's frontend program through ptoc's own pass pipeline and codegen, the kernel equals
PyPTO's kernel.pto up to SSA value names (and locs).

Names differ for a reason outside codegen: PyPTO's SSA conversion renames every variable
(``a`` -> ``a__ssa_v0``) and ptoc's does not, so values are compared after renaming each name
to the order of its first appearance. Everything else — instruction sequence, operand order,
tile types, addresses, views, constants — must match exactly. This test exercises the passes
(AutoTileMatmulL0 ... AllocateMemoryAddr) as much as codegen; a failure here with the oracle
conformance test green points at the passes.
"""

from __future__ import annotations

import re

import pytest

from ptoc.codegen import generate_kernels
from ptoc.language import parse_program
from oracle_data import pypto_exact_pipeline
from ptoc.passes import MemoryPlanner, PassContext

from test_oracle_conformance import DUMPS, FOLDERS  # noqa: E402  (same directory)

_LOC = re.compile(r' loc\("[^"]*":\d+:\d+\)')
_SSA = re.compile(r"%[A-Za-z0-9_.$-]+")


def canonical(text: str) -> str:
    names: dict[str, str] = {}

    def rename(m):
        return names.setdefault(m.group(0), f"%v{len(names)}")

    return _SSA.sub(rename, _LOC.sub("", text))


@pytest.mark.skipif(not FOLDERS, reason="PyPTO oracle dumps not available")
@pytest.mark.parametrize("folder", FOLDERS)
def test_pipeline_then_codegen_matches_pypto(folder):
    path = DUMPS / folder
    program = parse_program((path / "00_frontend.py").read_text(), "program.py")
    ptoas = "ptoas" in folder
    planner = MemoryPlanner.PTOAS if ptoas else MemoryPlanner.PYPTO
    with PassContext(memory_planner=planner,
                     enable_pypto_l0c_double_buffer="dbc_on" in folder):
        lowered = pypto_exact_pipeline().run_passes(program)
    ours = generate_kernels(lowered, with_addresses=not ptoas)["kernel"]
    assert canonical(ours) == canonical((path / "kernel.pto").read_text())
