"""Acc (L0C) conformance with PyPTO through the whole compile path (issue 6, item 6).

For each of the 40 random matmul programs of ``pypto-oracle/acc_cases.json`` (PyPTO's own
frontend program: two Mat loads, ``tile.matmul``, one store; FP32 or BF16), compiled by
``ptoc.ir.compile`` under the PYPTO planner with the flag off and on: the number of Acc
buffers in ``CompiledProgram.allocations`` and their addresses equal PyPTO's, and so does the
number of ``pipeline_double_buffer_c`` markers AutoTileMatmulL0 emits. With the flag on, a
dbC program keeps exactly two buffers at ``{0, align32(physical Acc bytes)}`` and no
``PH-MR-001`` is reported for Acc. The pass-level version of this check (MemoryReuse +
AllocateMemoryAddr only) is ``test_memory_reuse_acc_cases.py``.

PyPTO fails two programs with a capacity error. Both are Mat overflows of the program's own
operand loads (``M*K + K*N`` elements loaded whole into L1 before any tiling), which no L0
tile choice can avoid; ptoc therefore fails them with PyPTO's exact message rather than doing
better. ``test_pypto_capacity_errors_are_not_tile_choice_failures`` pins that reasoning.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.backend import get_target
from ptoc.dtypes import MemorySpace
from ptoc.errors import PtocError
from ptoc.language import parse_program
from oracle_data import ORACLE_ROOT

CASES_FILE = (ORACLE_ROOT / "acc_cases.json")
CASES = json.loads(CASES_FILE.read_text())["cases"] if CASES_FILE.is_file() else []
A2A3 = get_target("a2a3")

KERNEL = """import ptoc.language as pl

@pl.program
class AccCase:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[{M}, {K}], pl.{D}], b: pl.Tensor[[{K}, {N}], pl.{D}], out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        lm: pl.Tile[[{M}, {K}], pl.{D}, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [{M}, {K}], [{M}, {K}], target_memory=pl.Mem.Mat)
        rm: pl.Tile[[{K}, {N}], pl.{D}, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [{K}, {N}], [{K}, {N}], target_memory=pl.Mem.Mat)
        c: pl.Tile[[{M}, {N}], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lm, rm)
        o: pl.Tensor[[{M}, {N}], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return o
"""

_DTYPE = {"fp32": ("FP32", 4), "bf16": ("BF16", 2)}


def program(case):
    name, _ = _DTYPE[case["dtype"]]
    return parse_program(KERNEL.format(M=case["m"], K=case["k"], N=case["n"], D=name), "acc.py")


def case_id(case, key):
    return f"{case['m']}x{case['k']}x{case['n']}_{case['dtype']}_{key}"


PARAMS = [pytest.param(case, key, id=case_id(case, key)) for case in CASES
          for key in ("dbc0", "dbc1")]


@pytest.mark.skipif(not CASES, reason="acc_cases.json not available")
@pytest.mark.parametrize("case,key", PARAMS)
def test_acc_buffers_match_pypto_through_ir_compile(tmp_path, case, key):
    expected = case[key]
    flag = key == "dbc1"
    if "error" in expected:
        message = expected["error"].split(": ", 1)[1]
        with pytest.raises(PtocError) as err:
            ir.compile(program(case), tmp_path, dump_passes=False,
                       enable_pypto_l0c_double_buffer=flag)
        assert message in str(err.value)
        return
    compiled = ir.compile(program(case), tmp_path, dump_passes=True,
                          enable_pypto_l0c_double_buffer=flag)
    acc = compiled.allocations_in(pl.Mem.Acc)
    assert len(acc) == expected["acc_buffers"]
    assert sorted(a.addr for a in acc) == expected["acc_addrs"]
    dump = next((tmp_path / "passes_dump").glob("*_after_AutoTileMatmulL0.py")).read_text()
    assert dump.count('"pipeline_double_buffer_c": True') == expected["dbc_markers"]
    assert not [d for d in compiled.diagnostics
                if d.code == "PH-MR-001" and " in Acc," in d.message]
    if expected["dbc_markers"]:
        # The pair: both the same size, the second at align32(physical Acc bytes).
        sizes = {a.size for a in acc}
        assert len(sizes) == 1
        assert sorted(a.addr for a in acc) == [0, (sizes.pop() + 31) // 32 * 32]
    if not flag:
        assert expected["acc_buffers"] == 1


@pytest.mark.skipif(not CASES, reason="acc_cases.json not available")
def test_pypto_capacity_errors_are_not_tile_choice_failures():
    """Every capacity error in the oracle is the Mat (L1) footprint of the two whole-operand
    loads, fixed before AutoTileMatmulL0 runs: no L0 tile, stationarity or dbC choice changes
    it, so there is no case where ptoc may legitimately do better than PyPTO here."""
    errors = [(case, key) for case in CASES for key in ("dbc0", "dbc1") if "error" in case[key]]
    assert errors, "the oracle has capacity-error cases"
    mat_cap = A2A3.capacity(MemorySpace.Mat)
    for case, key in errors:
        text = case[key]["error"]
        match = re.search(r"(\w+) buffer usage \((\d+) bytes\) exceeds platform limit \((\d+)", text)
        assert match, text
        space, used, limit = match.group(1), int(match.group(2)), int(match.group(3))
        _, nbytes = _DTYPE[case["dtype"]]
        loads = (case["m"] * case["k"] + case["k"] * case["n"]) * nbytes
        assert (space, used, limit) == ("Mat", loads, mat_cap)
        # Both flag settings fail the same way: the error does not depend on dbC.
        other = case["dbc1" if key == "dbc0" else "dbc0"]
        assert other.get("error") == text
