"""The decisions report checks the chooser's dbC choice against the simulator (issue 14).

The chooser is PyPTO's algorithm and keeps PyPTO's answers; where its closed form predicts a
dbC win the compiled program does not realise, the report must say so and show the
simulated figure.
"""

from __future__ import annotations

import json

import pytest

from ptoc import ir
from ptoc.passes import MemoryPlanner

from dbc_programs import direct_store


def dbc_records(out):
    data = json.loads((out / "report" / "decisions.json").read_text())["decisions"]
    return [d for d in data if d["kind"] == "dbc"], (out / "report" / "decisions.md").read_text()


def compile_to(tmp_path, M, N, **options):
    out = tmp_path / f"{M}x{N}"
    ir.compile(direct_store(M, N), out, dump_passes=False, **options)
    return out


def test_a_wrong_model_is_reported_with_the_simulated_figure(tmp_path):
    out = compile_to(tmp_path, 32, 256, enable_pypto_l0c_double_buffer=True)  # 144x144 now agrees
    (dbc,), md = dbc_records(out)
    assert dbc["accepted"] and dbc["gate"] == "chooser"
    assert dbc["model_speedup"] == pytest.approx(dbc["single_wall_cycles"]
                                                 / dbc["dbc_wall_cycles"], abs=1e-3)
    assert dbc["model_speedup"] > 1 > dbc["simulated_speedup"]
    off, on = dbc["simulated_cycles"]["dbc_off"], dbc["simulated_cycles"]["dbc_on"]
    assert dbc["simulated_speedup"] == pytest.approx(off / on, abs=1e-3)
    assert dbc["simulated_profile"] == "a2a3-device"
    assert f"{dbc['simulated_speedup']:.2f}x" in dbc["model_disagrees"]
    assert "**the model is wrong here**" in md and f"{dbc['model_speedup']:.2f}x" in md


def test_an_agreeing_model_shows_the_figure_without_a_warning(tmp_path):
    out = compile_to(tmp_path, 256, 256, enable_pypto_l0c_double_buffer=True)
    (dbc,), md = dbc_records(out)
    assert dbc["simulated_speedup"] > 1 and dbc["model_speedup"] > 1
    assert "model_disagrees" not in dbc
    assert "simulated (a2a3-device)" in md and "the model is wrong" not in md


@pytest.mark.parametrize("options", [dict(), dict(enable_pypto_l0c_double_buffer=True,
                                                   check_dbc=False),
                                     dict(memory_planner=MemoryPlanner.PTOAS)])
def test_no_check_without_a_flag_off_baseline_or_when_disabled(tmp_path, options):
    out = compile_to(tmp_path, 144, 144, **options)
    records, md = dbc_records(out)
    assert records and all("simulated_speedup" not in d for d in records)
    assert "simulated (" not in md
