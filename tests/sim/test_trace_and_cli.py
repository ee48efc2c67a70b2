"""Trace JSON, per-pipe CSV and the ``ptoc sim`` command line."""

from __future__ import annotations

import csv
import io
import json

import ml_dtypes
import numpy as np
import pytest

from ptoc.cli import main
from ptoc.sim import simulate
from ptoc.sim.examples import dbuf_matmul, two_acc_matmul

BF16 = ml_dtypes.bfloat16


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(0)
    t = {"arg0": rng.standard_normal((128, 64)).astype(BF16),
         "arg1": rng.standard_normal((64, 512)).astype(BF16),
         "arg2": np.zeros((128, 512), np.float32)}
    return simulate(two_acc_matmul(), t)


def test_trace_has_lanes_in_pyPTO_order_and_flag_flows(result, tmp_path):
    path = tmp_path / "t.json"
    result.write_trace(path)
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    order = sorted((e["args"]["sort_index"], names[e["tid"]]) for e in events
                   if e["ph"] == "M" and e["name"] == "thread_sort_index")
    assert [n for _, n in order][:6] == ["MTE2", "MTE1", "CUBE", "VECTOR", "FIXPIPE", "MTE3"]
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == len(result.instructions)
    by_lane = {}
    for e in slices:
        by_lane.setdefault(names[e["tid"]], []).append(e["name"])
    assert set(by_lane["CUBE"]) >= {"pto.tmatmul"} and "pto.tstore" in by_lane["FIXPIPE"]
    starts = [e for e in events if e["ph"] == "s"]
    finishes = [e for e in events if e["ph"] == "f"]
    assert len(starts) == len(finishes) == len(result.flows) > 0
    assert {e["id"] for e in starts} == {e["id"] for e in finishes}
    assert doc["otherData"]["wall_cycles"] == result.wall_cycles


def test_csv_summary_matches_the_result(result):
    rows = list(csv.DictReader(io.StringIO(result.pipe_summary_csv())))
    assert [r["lane"] for r in rows] == ["MTE2", "MTE1", "CUBE", "VECTOR", "FIXPIPE", "MTE3"]
    cube = next(r for r in rows if r["lane"] == "CUBE")
    assert int(cube["instructions"]) == 4
    assert float(cube["busy_cycles"]) == pytest.approx(sum(
        r.duration for r in result.on_pipe("M")), abs=0.01)


def test_binding_pipe_is_the_busiest(result):
    busiest = max(result.pipe_busy, key=result.pipe_busy.get)
    assert result.binding_pipe is busiest
    assert result.wall_cycles >= max(result.pipe_busy.values())


def test_cli_runs_a_pto_file_and_writes_trace_and_csv(tmp_path, capsys):
    pto = tmp_path / "k.pto"
    pto.write_text(dbuf_matmul())
    trace, table = tmp_path / "t.json", tmp_path / "p.csv"
    rc = main(["sim", str(pto), "--trace", str(trace), "--csv", str(table), "--mode", "fast",
               "--output-dir", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "binding pipe MTE2" in out and "0 race(s)" in out
    assert json.loads(trace.read_text())["traceEvents"]
    assert table.read_text().startswith("pipe,lane,")
    a = np.load(tmp_path / "out" / "arg0.npy")
    b = np.load(tmp_path / "out" / "arg1.npy")
    c = np.load(tmp_path / "out" / "arg2.npy")
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4,
                               atol=1e-3)


def test_cli_uses_given_inputs_and_reports_errors_without_traceback(tmp_path, capsys):
    pto = tmp_path / "k.pto"
    pto.write_text(dbuf_matmul())
    a = np.ones((128, 256), BF16)
    np.save(tmp_path / "a.npy", a)
    rc = main(["sim", str(pto), "--input", f"arg0={tmp_path / 'a.npy'}",
               "--output-dir", str(tmp_path / "o")])
    assert rc == 0
    b = np.load(tmp_path / "o" / "arg1.npy")
    np.testing.assert_allclose(np.load(tmp_path / "o" / "arg2.npy"),
                               b.astype(np.float64).sum(axis=0, keepdims=True).repeat(128, 0),
                               rtol=1e-4, atol=1e-3)
    bad = tmp_path / "bad.pto"
    bad.write_text(dbuf_matmul().replace("pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]", ""))
    rc = main(["sim", str(bad)])
    err = capsys.readouterr().err
    assert rc == 2 and "ptoc: error:" in err and "Traceback" not in err
    rc = main(["sim", str(tmp_path / "missing.pto")])
    assert rc == 2 and "cannot read" in capsys.readouterr().err


def test_races_are_marked_in_the_trace(tmp_path):
    text = two_acc_matmul().replace("addr = %addr65536", "addr = %addr0")
    rng = np.random.default_rng(0)
    t = {"arg0": rng.standard_normal((128, 64)).astype(BF16),
         "arg1": rng.standard_normal((64, 512)).astype(BF16),
         "arg2": np.zeros((128, 512), np.float32)}
    res = simulate(text, t)
    assert res.races
    res.write_trace(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    marks = [e for e in doc["traceEvents"] if e["ph"] == "i" and e["cat"] == "race"]
    assert len(marks) == len(res.races)
    assert all("race on Acc" in m["args"]["what"] for m in marks)


def test_cli_examples_and_emit(capsys):
    assert main(["sim", "--example", "dbc-barrier"]) == 0
    out = capsys.readouterr().out
    assert "0 race(s)" in out and "binding pipe FIX" in out
    assert main(["sim", "--example", "dbuf", "--emit"]) == 0
    assert capsys.readouterr().out.startswith("module attributes")
    assert main(["sim"]) == 2
    assert "no PTO file given" in capsys.readouterr().err


def test_cli_exits_1_when_the_run_has_races(tmp_path, capsys):
    racy = tmp_path / "racy.pto"
    racy.write_text(two_acc_matmul().replace("addr = %addr65536", "addr = %addr0"))
    assert main(["sim", str(racy), "--mode", "fast"]) == 1
    assert "race" in capsys.readouterr().out.lower()
