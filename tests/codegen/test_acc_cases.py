"""All 40 matmul programs of ``acc_cases.json`` (flag off and on): PyPTO's frontend program
-> ptoc's pass pipeline -> codegen -> ``ptoc.pto.verify`` -> ``insert_sync`` -> simulator.

Codegen must produce PTO that verifies for the target, and whose simulated result equals the
matmul with no data race, for every grid shape AutoTileMatmulL0 picks (K-only loops, M/N
grids, tails, dbC pairs). The two programs PyPTO itself rejects for Mat capacity are expected
to fail in the passes, before codegen.
"""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptoc.pto as pto
from ptoc.codegen import generate_kernels
from ptoc.errors import AllocationError
from ptoc.language import parse_program
from ptoc.passes import MemoryPlanner, OptimizationStrategy, PassContext, PassManager
from ptoc.pto.insert_sync import insert_sync
from ptoc.sim.api import simulate
from oracle_data import ORACLE_ROOT

CASES_FILE = (ORACLE_ROOT / "acc_cases.json")
CASES = json.loads(CASES_FILE.read_text())["cases"] if CASES_FILE.exists() else []

_DTYPES = {"fp32": ("FP32", np.float32), "bf16": ("BF16", ml_dtypes.bfloat16),
           "fp16": ("FP16", np.float16)}

_PROGRAM = """import pypto.language as pl

@pl.program
class Mm:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(a: pl.Tensor[[{m}, {k}], pl.{dt}], b: pl.Tensor[[{k}, {n}], pl.{dt}], out: pl.Out[pl.Tensor[[{m}, {n}], pl.FP32]]) -> pl.Tensor[[{m}, {n}], pl.FP32]:
        lm: pl.Tile[[{m}, {k}], pl.{dt}, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [{m}, {k}], [{m}, {k}], target_memory=pl.Mem.Mat)
        rm: pl.Tile[[{k}, {n}], pl.{dt}, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [{k}, {n}], [{k}, {n}], target_memory=pl.Mem.Mat)
        c: pl.Tile[[{m}, {n}], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lm, rm)
        out: pl.Tensor[[{m}, {n}], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out
"""

PARAMS = [pytest.param(case, flag, id=f"{case['m']}x{case['k']}x{case['n']}_{case['dtype']}_"
                       f"dbc{int(flag)}") for case in CASES for flag in (False, True)]


@pytest.mark.skipif(not CASES, reason="acc_cases.json not available")
@pytest.mark.parametrize("case, flag", PARAMS)
def test_codegen_verifies_and_simulates(case, flag):
    m, k, n = case["m"], case["k"], case["n"]
    dt, np_dtype = _DTYPES[case["dtype"]]
    program = parse_program(_PROGRAM.format(m=m, k=k, n=n, dt=dt), "mm.py")
    pypto_rejects = "error" in case["dbc1" if flag else "dbc0"]
    with PassContext(memory_planner=MemoryPlanner.PYPTO, enable_pypto_l0c_double_buffer=flag):
        manager = PassManager.get_strategy(OptimizationStrategy.Default)
        if pypto_rejects:
            with pytest.raises(AllocationError, match="exceeds platform limit"):
                manager.run_passes(program)
            return
        lowered = manager.run_passes(program)
    module = pto.verify(pto.parse(generate_kernels(lowered)["kernel"]), "a2a3")
    synced = insert_sync(module)
    rng = np.random.default_rng(m * 7 + n)
    a = rng.standard_normal((m, k)).astype(np_dtype)
    b = rng.standard_normal((k, n)).astype(np_dtype)
    result = simulate(getattr(synced, "module", synced),
                      [a, b, np.zeros((m, n), np.float32)], mode="fast")
    assert not result.races
    outs = result.outputs
    out = (list(outs.values()) if isinstance(outs, dict) else list(outs))[2]
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-4, atol=1e-3)
