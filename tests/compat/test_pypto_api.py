"""PyPTO's API conventions on ptoc's objects: RunConfig fields, BackendType, ir.compile."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.backend import BackendType, get_target
from ptoc.errors import PtocError
from ptoc.passes import OptimizationStrategy
from ptoc.runtime import RunConfig, SimulatorIgnoredWarning, run
from ptoc.runtime import config as config_module

from add_program import ADD


@pytest.fixture
def fresh_reports(monkeypatch):
    monkeypatch.setattr(config_module, "_reported", set())


@pytest.mark.parametrize("platform, target", [("a2a3", "a2a3"), ("a2a3sim", "a2a3"),
                                              ("a5", "a5"), ("a5sim", "a5")])
def test_pypto_platforms_map_to_targets(platform, target):
    config = RunConfig(platform=platform)
    assert config.target == target and config.backend_type is BackendType(target)


def test_backend_type_names_a_target():
    assert get_target(BackendType.Ascend910B).name == "a2a3"
    assert get_target(BackendType.Ascend950).name == "a5"


def test_device_only_fields_are_reported_once(fresh_reports):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        RunConfig(device_id=3, enable_pmu=2, ring_heap=4096)
        RunConfig(device_id=5)
        RunConfig()
    messages = [str(w.message) for w in caught if w.category is SimulatorIgnoredWarning]
    assert len(messages) == 3
    assert any("RunConfig.device_id=3 does not apply to the simulator" in m for m in messages)
    assert Path(caught[0].filename) == Path(__file__)  # points at the user's line


def test_pypto_fields_are_accepted_and_kept():
    config = RunConfig(save_kernels=True, save_kernels_dir="out", codegen_only=True,
                       compile_profiling=True, backend_type=BackendType.Ascend950)
    assert config.save_kernels_dir == "out" and config.codegen_only
    assert config.backend_type is BackendType.Ascend910B  # the platform decides, as in PyPTO


def test_compiled_program_names_its_platform_and_parameters():
    compiled = run(pl.parse_program(ADD), config=RunConfig(platform="a5sim"))
    assert compiled.platform == "a5sim" and compiled.target == "a5"
    assert compiled.param_names == ["a", "b", "c"] and compiled.output_indices == [2]


def test_compiled_program_is_its_output_directory(tmp_path):
    compiled = ir.compile(pl.parse_program(ADD), tmp_path / "out", dump_passes=False)
    assert os.fspath(compiled) == str(tmp_path / "out") == str(compiled)
    assert os.path.isdir(os.path.join(compiled, "pto"))
    assert compiled == str(tmp_path / "out") and compiled == tmp_path / "out"
    assert Path(compiled, "pto", "add.pto").is_file()


def test_ir_compile_takes_pypto_keywords(tmp_path, fresh_reports):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = ir.compile(pl.parse_program(ADD), str(tmp_path), dump_passes=False,
                              backend_type=BackendType.Ascend950, skip_ptoas=True,
                              strategy=OptimizationStrategy.Default,
                              dump_ptoas_passes=True)
    assert compiled.target == "a5"
    assert [str(w.message) for w in caught
            if w.category is SimulatorIgnoredWarning][0].startswith(
        "ptoc: ir.compile.dump_ptoas_passes=True")


@pytest.mark.parametrize("level, dumps", [("NONE", False), ("CONCISE", True), ("EXPLICIT", True)])
def test_pass_dump_levels(level, dumps, tmp_path):
    from ptoc.passes import PassDumpLevel

    ir.compile(pl.parse_program(ADD), str(tmp_path), dump_passes=getattr(ir.PassDumpLevel, level))
    assert (tmp_path / "passes_dump" / "00_frontend.py").is_file() is dumps
    assert ir.PassDumpLevel is PassDumpLevel and bool(PassDumpLevel[level]) is dumps


def test_run_honours_save_kernels_dir_and_codegen_only(tmp_path):
    a = np.ones((16, 64), np.float32)
    c = np.zeros((16, 64), np.float32)
    compiled = run(pl.parse_program(ADD), a, a, c,
                   config=RunConfig(save_kernels_dir=str(tmp_path / "k"), codegen_only=True))
    assert compiled == tmp_path / "k" and not c.any()
    run(pl.parse_program(ADD), a, a, c, config=RunConfig(save_kernels_dir=str(tmp_path / "r")))
    np.testing.assert_array_equal(c, 2 * a)


BF16_IN = ADD.replace("pl.Tensor[[16, 64], pl.FP32], b", "pl.Tensor[[16, 64], pl.BF16], b") \
    .replace("x = pl.load(a, [0, 0], [16, 64])", "x = pl.cast(pl.load(a, [0, 0], [16, 64]), pl.FP32)")


def test_inputs_only_call_returns_torch_tensors_for_torch_inputs():
    import torch

    compiled = run(pl.parse_program(BF16_IN))
    a = torch.randn(16, 64, dtype=torch.bfloat16)
    b = torch.randn(16, 64)
    c = compiled(a, b)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.float32 and c.shape == (16, 64)
    torch.testing.assert_close(c, a.float() + b)
    assert isinstance(compiled(np.zeros((16, 64), ir.BF16.numpy), b.numpy()), np.ndarray)
    assert compiled(a, b, torch.zeros(16, 64)) is None  # in place: nothing returned


def test_tensor_spec_makes_the_tensors_pypto_scripts_describe():
    import torch

    from ptoc.runtime import TensorSpec

    assert torch.equal(TensorSpec("z", [2, 3], torch.float32).create_tensor(), torch.zeros(2, 3))
    full = TensorSpec("f", [4], torch.int32, init_value=7).create_tensor()
    assert full.dtype == torch.int32 and full.tolist() == [7, 7, 7, 7]
    given = TensorSpec("g", [2], torch.bfloat16, init_value=torch.tensor([1.5, 2.0]))
    assert given.create_tensor().dtype == torch.bfloat16
    rand = TensorSpec("r", [8, 8], torch.float16, init_value=torch.randn).create_tensor()
    assert rand.shape == (8, 8) and rand.dtype == torch.float16 and rand.std() > 0
    made = TensorSpec("m", [3], torch.float32, init_value=lambda: [1, 2, 3]).create_tensor()
    assert made.tolist() == [1.0, 2.0, 3.0]
    assert TensorSpec("o", [1], torch.float32, is_output=True).is_output
    with pytest.raises(PtocError, match="init_value is a str"):
        TensorSpec("bad", [1], torch.float32, init_value="ones").create_tensor()


def test_ir_module_has_pypto_names_from_later_layers_without_importing_them():
    import subprocess
    import sys

    code = ("import sys, ptoc.ir as ir; assert 'ptoc.passes' not in sys.modules; "
            "from ptoc.passes import OptimizationStrategy, PassManager; "
            "from ptoc.runtime import CompiledProgram; "
            "assert ir.OptimizationStrategy is OptimizationStrategy and ir.PassManager is "
            "PassManager and ir.CompiledProgram is CompiledProgram and ir.FP32 is ir.DataType.FP32")
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError):
        ir.NoSuchName  # noqa: B018


def test_program_functions_mapping_views_are_sorted_by_name_like_pypto():
    program = pl.parse_program(ADD)
    assert [f.name for f in program.functions] == ["add", "main"]
    reordered = pl.parse_program(ADD.replace("def add(", "def zadd(").replace("self.add(", "self.zadd("))
    assert [f.name for f in reordered.functions] == ["zadd", "main"]  # program order
    assert [f.name for f in reordered.functions.values()] == ["main", "zadd"]
    assert [gv.name for gv in reordered.functions.keys()] == ["main", "zadd"]
    assert len(reordered.functions) == 2 and reordered["zadd"].name == "zadd"


FORWARD = '''
import ptoc.language as pl

@pl.program
class Forward:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        mid = pl.create_tensor([16, 64], dtype=pl.FP32)
        mid = self.twice(a, mid)
        c = self.twice(mid, c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, a: pl.Tensor[[16, 64], pl.FP32], c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        c = pl.store(pl.mul(pl.load(a, [0, 0], [16, 64]), 2.0), [0, 0], c)
        return c
'''


def test_unannotated_function_called_before_its_definition_returns_its_body_type():
    program = pl.parse_program(FORWARD)
    def described(types):
        return [(tuple(t.shape), t.dtype) for t in types]

    assert described(program.functions["twice"].return_types) == [((16, 64), ir.FP32)]
    assert described(program.functions["main"].return_types) == [((16, 64), ir.FP32)]
    assert described([program.functions["main"].body.stmts[1].var.type]) == [((16, 64), ir.FP32)]
    assert [f.name for f in program.functions] == ["main", "twice"]  # source order kept
    a = np.random.default_rng(2).standard_normal((16, 64)).astype(np.float32)
    c = np.zeros_like(a)
    run(program, a, c)
    np.testing.assert_allclose(c, 4 * a)


@pytest.mark.parametrize("field, value, match", [
    ("ring_heap", 64, "ring_heap must be a power of 2 >= 1024"),
    ("ring_heap", 3000, "ring_heap must be a power of 2"),
    ("ring_task_window", True, "ring_task_window must be a power of 2 >= 4"),
    ("ring_dep_pool", [4, 8, 16], "must have 4 entries"),
    ("ring_task_window", [4, 0, 6, 8], "entries must be a power of 2 >= 4 .*got 6"),
])
def test_ring_sizes_are_checked_as_pypto_checks_them(field, value, match):
    with pytest.raises(PtocError, match=match):
        RunConfig(**{field: value})


def test_valid_ring_sizes_are_accepted(fresh_reports):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatorIgnoredWarning)
        config = RunConfig(ring_heap=1 << 20, ring_task_window=[4, 0, 8, 16], ring_dep_pool=4)
    assert config.ring_task_window == [4, 0, 8, 16]
