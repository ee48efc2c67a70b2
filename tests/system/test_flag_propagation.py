"""``enable_pypto_l0c_double_buffer`` reaches every place it must (issue 6, item 2).

PassContext -> AutoTileMatmulL0's gate; ``ir.compile(...)`` alone and together with an
outer context (explicit wins); ``runtime.compile_program``; ``runtime.run`` with a
``RunConfig``; the nested contexts the PassManager makes for dumping, profiling and
verification; the harness hook ``PTOTestCase.get_enable_pypto_l0c_double_buffer()``; under
PTOAS the chooser's dbC is automatic and the flag changes nothing. The observable is always
the behaviour: how many L0C (Acc) buffers the compiled kernel keeps (2 with dbC, 1 without).

With the flag off, the default output for a reference program (160x64x160 FP32) is pinned
byte for byte by ``golden/`` (printed IR after the last pass + the Level-3 PTO text).
Regenerate on purpose only: ``PTOC_UPDATE_GOLDEN=1 pytest tests/system/test_flag_propagation.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.language import parse_program
from ptoc.passes import MemoryPlanner, PassContext, PassManager, VerificationLevel
from ptoc.passes.auto_tile_analysis import allow_double_buffer_c
from ptoc.runtime import RunConfig, compile_program
from ptoc.runtime import run as runtime_run
from ptoc.testing import DataType, PTOTestCase, TensorSpec

import dbc_programs as dp

GOLDEN = Path(__file__).parent / "golden"

# The reference program, parsed from text under a fixed file name so that the ``loc(...)``
# annotations of the PTO text do not depend on where the checkout lives.
REFERENCE = """import ptoc.language as pl

@pl.program
class Reference:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[160, 64], pl.FP32], b: pl.Tensor[[64, 160], pl.FP32], out: pl.Out[pl.Tensor[[160, 160], pl.FP32]]) -> pl.Tensor[[160, 160], pl.FP32]:
        lm: pl.Tile[[160, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [160, 64], [160, 64], target_memory=pl.Mem.Mat)
        rm: pl.Tile[[64, 160], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 160], [64, 160], target_memory=pl.Mem.Mat)
        c: pl.Tile[[160, 160], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lm, rm)
        out: pl.Tensor[[160, 160], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out
"""


def reference():
    return parse_program(REFERENCE, "reference.py")


def n_acc(compiled) -> int:
    return len(dp.acc_buffers(compiled))


def dbc_marker_count(program) -> int:
    return program.as_python().count('"pipeline_double_buffer_c": True')


# ---- the gate --------------------------------------------------------------------------------

def test_pass_context_default_is_off_and_gate_follows_planner_and_flag():
    assert PassContext().enable_pypto_l0c_double_buffer is False
    assert PassContext().get_enable_pypto_l0c_double_buffer() is False
    assert not allow_double_buffer_c(PassContext())
    assert allow_double_buffer_c(PassContext(enable_pypto_l0c_double_buffer=True))
    # Off the PYPTO planner the chooser's dbC is automatic, flag or not.
    assert allow_double_buffer_c(PassContext(memory_planner=MemoryPlanner.PTOAS))
    assert allow_double_buffer_c(PassContext(memory_planner=MemoryPlanner.PTOAS,
                                             enable_pypto_l0c_double_buffer=True))


@pytest.mark.parametrize("flag", [False, True])
def test_auto_tile_reads_the_flag_from_the_context_it_runs_in(flag):
    with PassContext(enable_pypto_l0c_double_buffer=flag):
        out = PassManager.get_strategy().run_passes(dp.direct_store(160, 160),
                                                    write_report=False)
    acc = {s.var.name for fn in out.functions if fn.func_type.is_kernel
           for s in fn.body.stmts if getattr(getattr(s, "value", None), "op", "") == "tile.alloc"
           and s.value.args[0] is pl.Mem.Acc}
    assert len(acc) == (2 if flag else 1)


# ---- ir.compile, alone and with an outer context ---------------------------------------------

@pytest.mark.parametrize("outer", [None, False, True], ids=["no_ctx", "ctx_off", "ctx_on"])
@pytest.mark.parametrize("explicit", [None, False, True], ids=["arg_none", "arg_off", "arg_on"])
def test_ir_compile_explicit_argument_wins_over_outer_context(tmp_path, outer, explicit):
    def build():
        return ir.compile(dp.direct_store(160, 160), tmp_path, dump_passes=False,
                          enable_pypto_l0c_double_buffer=explicit)
    if outer is None:
        compiled = build()
    else:
        with PassContext(enable_pypto_l0c_double_buffer=outer):
            compiled = build()
        # The outer context itself is left as it was.
    expected = explicit if explicit is not None else bool(outer)
    assert compiled.enable_pypto_l0c_double_buffer is expected
    assert n_acc(compiled) == (2 if expected else 1)


def test_runtime_compile_program_forwards_the_flag(tmp_path):
    on = compile_program(dp.direct_store(160, 160), tmp_path / "on",
                         enable_pypto_l0c_double_buffer=True)
    off = compile_program(dp.direct_store(160, 160), tmp_path / "off")
    assert (n_acc(on), n_acc(off)) == (2, 1)
    with PassContext(enable_pypto_l0c_double_buffer=True):
        ctx = compile_program(dp.direct_store(160, 160), tmp_path / "ctx")
    assert n_acc(ctx) == 2


def test_runtime_run_takes_the_flag_from_run_config(tmp_path, monkeypatch):
    monkeypatch.setenv("PTOC_BUILD_DIR", str(tmp_path))
    inputs, golden = dp.direct_store_inputs(160, 160)
    compiled = runtime_run(dp.direct_store(160, 160), *inputs,
                           config=RunConfig(enable_pypto_l0c_double_buffer=True, sim_mode="fast"))
    assert n_acc(compiled) == 2
    np.testing.assert_allclose(inputs[2], golden, rtol=1e-3, atol=1e-3)


# ---- nested contexts: dump, profile, verify --------------------------------------------------

@pytest.mark.parametrize("via", ["argument", "outer_context"])
def test_dump_and_profiling_keep_the_flag(tmp_path, via):
    """The dump and timing instruments run the passes in nested contexts; each must copy the
    planner and the flag (PyPTO's past bug silently reset dbC here)."""
    kwargs = dict(dump_passes=True, profiling=True, verification_level=VerificationLevel.BASIC)
    if via == "argument":
        compiled = ir.compile(dp.direct_store(160, 160), tmp_path,
                              enable_pypto_l0c_double_buffer=True, **kwargs)
    else:
        with PassContext(enable_pypto_l0c_double_buffer=True):
            compiled = ir.compile(dp.direct_store(160, 160), tmp_path, **kwargs)
    assert n_acc(compiled) == 2
    assert [a for a, _ in dp.acc_buffers(compiled)] == [0, 40960]
    dump = next((tmp_path / "passes_dump").glob("*_after_AutoTileMatmulL0.py")).read_text()
    assert dump.count('"pipeline_double_buffer_c": True') == 1
    assert compiled.profile  # profiling really ran


def test_dump_and_profiling_without_the_flag_keep_one_accumulator(tmp_path):
    compiled = ir.compile(dp.direct_store(160, 160), tmp_path, dump_passes=True, profiling=True)
    assert n_acc(compiled) == 1
    dump = next((tmp_path / "passes_dump").glob("*_after_AutoTileMatmulL0.py")).read_text()
    assert "pipeline_double_buffer_c" not in dump


# ---- the harness hook ------------------------------------------------------------------------

class _Grid160(PTOTestCase):
    def __init__(self, flag):
        self.flag = flag

    def get_name(self):
        return f"dbc_160x160_{self.flag}"

    def define_tensors(self):
        return [TensorSpec("a", [160, 64], DataType.FP32), TensorSpec("b", [64, 160], DataType.FP32),
                TensorSpec("out", [160, 160], DataType.FP32, is_output=True)]

    def get_program(self):
        return dp.direct_store(160, 160)

    def compute_expected(self, t, params=None):
        t["out"][:] = t["a"].astype(np.float64) @ t["b"].astype(np.float64)

    def get_enable_pypto_l0c_double_buffer(self):
        return self.flag

    def get_rtol(self):
        return 1e-3

    get_atol = get_rtol

    def get_sim_mode(self):
        return "fast"


def test_base_harness_hook_defers_to_the_context():
    """The base hook returns None: the active PassContext (else off) decides."""
    assert PTOTestCase.get_enable_pypto_l0c_double_buffer(_Grid160(True)) is None


def test_harness_hook_none_inherits_an_outer_context(tmp_path):
    with PassContext(enable_pypto_l0c_double_buffer=True):
        outcome = _Grid160(None).run(tmp_path)
    assert n_acc(outcome.compiled) == 2


@pytest.mark.parametrize("flag,buffers", [(True, 2), (False, 1), (None, 1)])
def test_harness_hook_reaches_the_compiler(tmp_path, flag, buffers):
    outcome = _Grid160(flag).run(tmp_path)
    assert n_acc(outcome.compiled) == buffers
    assert outcome.result.races == []


# ---- PTOAS: automatic ------------------------------------------------------------------------

def test_ptoas_dbc_is_automatic_and_the_flag_changes_nothing(tmp_path):
    off = ir.compile(dp.direct_store(160, 160), tmp_path / "off", dump_passes=True,
                     memory_planner=MemoryPlanner.PTOAS)
    on = ir.compile(dp.direct_store(160, 160), tmp_path / "on", dump_passes=True,
                    memory_planner=MemoryPlanner.PTOAS, enable_pypto_l0c_double_buffer=True)
    assert off.pto_text == on.pto_text
    # Every accumulator (the dbC pair and the 80x32 tail tiles) fits L0C at once, so each
    # has its own placement, as ptoas plans a space that fits without reuse.
    assert len({addr for addr, _ in dp.acc_buffers(off)}) == 4
    dump = next((tmp_path / "off" / "passes_dump").glob("*_after_AutoTileMatmulL0.py"))
    assert dump.read_text().count('"pipeline_double_buffer_c": True') == 1


# ---- the golden: default output is unchanged -------------------------------------------------

def _golden_check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("PTOC_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.is_file(), f"missing golden {path}; run with PTOC_UPDATE_GOLDEN=1 once"
    assert text == path.read_text(), (
        f"default (flag off) output for the reference program changed: {path}. If on "
        "purpose, regenerate with PTOC_UPDATE_GOLDEN=1 and review the diff")


@pytest.mark.parametrize("flag", [None, False], ids=["default", "flag_off"])
def test_default_output_is_pinned_by_the_golden(tmp_path, flag):
    compiled = ir.compile(reference(), tmp_path, dump_passes=False,
                          enable_pypto_l0c_double_buffer=flag)
    assert n_acc(compiled) == 1
    assert dbc_marker_count(compiled.program) == 0
    _golden_check("matmul_160x64x160_fp32.ir.py", compiled.program.as_python())
    _golden_check("matmul_160x64x160_fp32.pto", compiled.pto_text["kernel"])


def test_flag_on_output_differs_from_the_golden(tmp_path):
    compiled = ir.compile(reference(), tmp_path, dump_passes=False,
                          enable_pypto_l0c_double_buffer=True)
    assert compiled.pto_text["kernel"] != (GOLDEN / "matmul_160x64x160_fp32.pto").read_text()
    assert [a for a, _ in dp.acc_buffers(compiled)] == [0, 40960]
