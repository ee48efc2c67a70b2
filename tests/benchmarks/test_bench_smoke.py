"""Every benchmark runs in its tiny configuration and produces well-formed tables and JSON.

Only the shape of the results is checked, never a speed: numbers belong in the tables.
"""

import json
from pathlib import Path

import pytest

from ptoc.cli import main
from ptoc.tools.bench_cmd import find_bench_dir, load_runner

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
OURS = ["compile_time", "sim_throughput", "gemm_bound", "chooser_vs_sim", "race_scaling",
        "fuzz_robustness", "chip_gemm", "chip_tasks"]


@pytest.fixture(scope="module")
def runner():
    return load_runner(find_bench_dir(str(BENCH_DIR)))


@pytest.mark.parametrize("name", OURS)
def test_benchmark_quick_tables_are_well_formed(runner, tmp_path, name):
    out = tmp_path / "bench.json"
    lines = []
    runner.run([name], BENCH_DIR, quick=True, json_out=out, stream=lines.append)
    doc = json.loads(out.read_text())
    assert doc["quick"] is True and doc["version"] == 1
    (result,) = doc["results"]
    assert result["name"] == name and result["tables"]
    for table in result["tables"]:
        assert table["name"] == name and table["title"] and table["rows"]
        width = len(table["columns"])
        assert all(len(row) == width for row in table["rows"])
        assert table["title"] in result["text"]
    assert lines[0] == f"== {name} ==" and result["text"] in lines


def test_gemm_bound_reports_the_bound_ratio(runner, tmp_path):
    out = tmp_path / "g.json"
    runner.run(["gemm_bound"], BENCH_DIR, quick=True, json_out=out, stream=lambda s: None)
    (table,) = json.loads(out.read_text())["results"][0]["tables"]
    row = dict(zip(table["columns"], table["rows"][0]))
    assert row["races"] == 0 and row["max |err|"] < 1e-3
    assert row["wall/bound"] >= 1.0            # no schedule beats its busiest pipe
    assert row["wall"] >= max(row["MTE2"], row["MTE1"], row["CUBE"], row["FIX"])


def test_chooser_vs_sim_reads_the_estimate_from_the_decisions(runner, tmp_path):
    out = tmp_path / "c.json"
    runner.run(["chooser_vs_sim"], BENCH_DIR, quick=True, json_out=out, stream=lambda s: None)
    (table,) = json.loads(out.read_text())["results"][0]["tables"]
    for row in table["rows"]:
        row = dict(zip(table["columns"], row))
        assert row["estimate"] > 0 and row["sim wall"] > 0 and row["races"] == 0


def test_ptoc_bench_cli(capsys, tmp_path):
    out = tmp_path / "cli.json"
    assert main(["bench", "compile_time", "--quick", "--dir", str(BENCH_DIR),
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "compile time per pass" in text and "total (ir.compile)" in text
    assert json.loads(out.read_text())["results"][0]["name"] == "compile_time"


def test_ptoc_bench_list_and_unknown_name(capsys):
    assert main(["bench", "--list", "--dir", str(BENCH_DIR)]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert set(OURS) <= set(listed)
    assert main(["bench", "nope", "--dir", str(BENCH_DIR)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptoc: error: unknown benchmark(s) nope") and err.count("\n") == 1
