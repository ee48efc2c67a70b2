"""Codegen on PyPTO's own codegen input reproduces PyPTO's kernel.pto.

For every folder of ``shared/data/pypto-oracle/dumps`` the input is the last IR dump before
PyPTO's codegen (``35_after_AllocateMemoryAddr.py``; for the PTOAS folder, whose planner skips
MemoryReuse/AllocateMemoryAddr, ``35_after_FuseCreateAssembleToSlice.py``), generated without
addresses under PTOAS.

What is compared, and what is not:
* the full text with every ``loc(...)`` removed must be identical, byte for byte — opcodes,
  operand order, SSA names, tile types (loc/dtype/rows/cols/blayout/slayout/fractal/pad),
  addresses, partition-view offsets and sizes, constants and their order;
* the parsed models must be equal once locs are dropped (so the comparison does not depend on
  the printer);
* locs must be present on exactly the same lines. Their *values* cannot match: PyPTO's locs
  point into the original ``program.py``, which is not part of the oracle — the dumps we start
  from are printed IR, so our locs point at the dump's lines.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import ptoc.pto as pto
from ptoc.codegen import generate_kernels
from ptoc.language import parse_program
from ptoc.pto.model import ForOp, IfOp, Instruction, Kernel, Module
from oracle_data import ORACLE_ROOT

DUMPS = ORACLE_ROOT / "dumps"
FOLDERS = sorted(p.name for p in DUMPS.iterdir() if p.is_dir()) if DUMPS.is_dir() else []

_LOC = re.compile(r' loc\("[^"]*":\d+:\d+\)')


def _input_dump(folder: Path) -> Path:
    dumps = sorted(folder.glob("[0-9][0-9]_after_*.py"))
    return dumps[-1]


def _generate(folder: Path) -> tuple[str, str]:
    ptoas = "ptoas" in folder.name
    program = parse_program(_input_dump(folder).read_text(), "program.py")
    ours = generate_kernels(program, with_addresses=not ptoas, loc_file="program.py")["kernel"]
    return ours, (folder / "kernel.pto").read_text()


def _strip_locs(ops):
    out = []
    for op in ops:
        if isinstance(op, ForOp):
            op = dataclasses.replace(op, body=_strip_locs(op.body), loc=None)
        elif isinstance(op, IfOp):
            op = dataclasses.replace(op, then_body=_strip_locs(op.then_body),
                                     else_body=_strip_locs(op.else_body), loc=None)
        elif isinstance(op, Instruction):
            op = dataclasses.replace(op, loc=None)
        out.append(op)
    return tuple(out)


def _model_without_locs(text: str) -> Module:
    module = pto.parse(text)
    kernels = tuple(dataclasses.replace(k, body=_strip_locs(k.body), loc=None)
                    for k in module.kernels)
    return dataclasses.replace(module, kernels=kernels)


pytestmark = pytest.mark.skipif(not FOLDERS, reason="PyPTO oracle dumps not available")


@pytest.mark.parametrize("folder", FOLDERS)
def test_text_identical_up_to_loc(folder):
    ours, theirs = _generate(DUMPS / folder)
    assert _LOC.sub("", ours) == _LOC.sub("", theirs)


@pytest.mark.parametrize("folder", FOLDERS)
def test_parsed_models_equal_without_locs(folder):
    ours, theirs = _generate(DUMPS / folder)
    a, b = _model_without_locs(ours), _model_without_locs(theirs)
    ka, kb = a.kernel("kernel"), b.kernel("kernel")
    assert isinstance(ka, Kernel)
    assert [op.opcode for op in ka.walk()] == [op.opcode for op in kb.walk()]
    assert a == b


@pytest.mark.parametrize("folder", FOLDERS)
def test_locs_on_the_same_lines(folder):
    ours, theirs = _generate(DUMPS / folder)
    mark = lambda t: _LOC.sub(" loc(X)", t)  # noqa: E731
    assert mark(ours) == mark(theirs)


@pytest.mark.parametrize("folder", FOLDERS)
def test_output_verifies_for_the_target(folder):
    ours, _ = _generate(DUMPS / folder)
    pto.verify(pto.parse(ours), "a2a3")


def test_ptoas_folder_has_no_addresses_and_pypto_folders_do():
    for folder in FOLDERS:
        ours, _ = _generate(DUMPS / folder)
        allocs = [ln for ln in ours.splitlines() if "pto.alloc_tile" in ln]
        assert allocs
        if "ptoas" in folder:
            assert not any("addr =" in ln for ln in allocs)
        else:
            assert all("addr =" in ln for ln in allocs)


def test_dbc_on_gives_two_accumulators_at_distinct_addresses():
    ours, _ = _generate(DUMPS / "matmul_160x64x160_fp32_dbc_on")
    kernel = pto.parse(ours).kernel("kernel")
    acc_addrs = {op.attr("addr").name for op in kernel.walk()
                 if op.opcode == "pto.alloc_tile" and op.results[0].type.loc.value == "Acc"}
    assert acc_addrs == {"c0_i64", "c40960_i64"}
