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
from ptoc.passes import OptimizationStrategy
from ptoc.runtime import RunConfig, SimulatorIgnoredWarning, run
from ptoc.runtime import config as config_module

ADD = '''
import ptoc.language as pl

@pl.program
class Add:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32],
            c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        x = pl.load(a, [0, 0], [16, 64])
        y = pl.load(b, [0, 0], [16, 64])
        c = pl.store(pl.add(x, y), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        c = self.add(a, b, c)
        return c
'''


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


def test_run_honours_save_kernels_dir_and_codegen_only(tmp_path):
    a = np.ones((16, 64), np.float32)
    c = np.zeros((16, 64), np.float32)
    compiled = run(pl.parse_program(ADD), a, a, c,
                   config=RunConfig(save_kernels_dir=str(tmp_path / "k"), codegen_only=True))
    assert compiled == tmp_path / "k" and not c.any()
    run(pl.parse_program(ADD), a, a, c, config=RunConfig(save_kernels_dir=str(tmp_path / "r")))
    np.testing.assert_array_equal(c, 2 * a)
