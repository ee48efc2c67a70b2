"""PyPTO's Acc allocations for 40 random matmuls, flag off and on (data/pypto-oracle/acc_cases.json).

Each program is the oracle kernel (Mat loads, one matmul, one store) run through ptoc's
default pipeline under the PYPTO planner; the Acc (L0C) buffers MemoryReuse keeps and the
addresses AllocateMemoryAddr gives them must be PyPTO's, and where PyPTO fails with a
capacity error ptoc must fail with the same text. With the flag on, a dbC grid must end
with exactly two co-live accumulators and no PH-MR-001 about Acc (issue 6, item 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptoc.dtypes import MemorySpace
from ptoc.errors import PtocError
from ptoc.language import parse_program
from ptoc.passes import PassContext, PassManager, default_pipeline_entries
from ptoc.passes.memref_rewrite import defined_vars, is_alloc, memref_of
from oracle_data import ORACLE_ROOT

CASES_FILE = (ORACLE_ROOT / "acc_cases.json")
CASES = json.loads(CASES_FILE.read_text())["cases"] if CASES_FILE.is_file() else []

KERNEL = """import ptoc.language as pl

@pl.program
class OracleMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[{M}, {K}], pl.{D}], b: pl.Tensor[[{K}, {N}], pl.{D}], out: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        lm: pl.Tile[[{M}, {K}], pl.{D}, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [{M}, {K}], [{M}, {K}], target_memory=pl.Mem.Mat)
        rm: pl.Tile[[{K}, {N}], pl.{D}, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [{K}, {N}], [{K}, {N}], target_memory=pl.Mem.Mat)
        c: pl.Tile[[{M}, {N}], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lm, rm)
        o: pl.Tensor[[{M}, {N}], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return o
"""

PARAMS = [pytest.param(case, key, id=f"{case['m']}x{case['k']}x{case['n']}_{case['dtype']}_{key}")
          for case in CASES for key in ("dbc0", "dbc1")]


@pytest.mark.skipif(not CASES, reason="acc_cases.json not available")
@pytest.mark.parametrize("case,key", PARAMS)
def test_acc_buffers_and_addresses_match_pypto(case, key):
    names = {e.name for e in default_pipeline_entries()}
    if "AutoTileMatmulL0" not in names:
        pytest.skip("AutoTileMatmulL0 is not registered")
    expected = case[key]
    dtype = {"fp32": "FP32", "bf16": "BF16"}[case["dtype"]]
    prog = parse_program(KERNEL.format(M=case["m"], K=case["k"], N=case["n"], D=dtype))
    ctx = PassContext(enable_pypto_l0c_double_buffer=(key == "dbc1"))
    if "error" in expected:
        message = expected["error"].split(": ", 1)[1]
        with ctx, pytest.raises(PtocError) as err:
            PassManager.get_strategy().run_passes(prog, write_report=False)
        assert message in str(err.value)
        return
    with ctx:
        out = PassManager.get_strategy().run_passes(prog, write_report=False)
    fn = out.get_function("kernel")
    acc_allocs = [s for s in fn.body.stmts if is_alloc(s) and s.value.args[0] is MemorySpace.Acc]
    addrs = sorted({memref_of(v).offset.value for v in defined_vars(fn)
                    if getattr(v.type, "memory_space", None) is MemorySpace.Acc})
    assert len(acc_allocs) == expected["acc_buffers"]
    assert addrs == expected["acc_addrs"]
    assert not [d for d in ctx.diagnostics
                if d.code == "W-MR-001" or (d.code == "PH-MR-001" and " in Acc," in d.message)]
