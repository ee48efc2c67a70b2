"""Trace bundle: one Perfetto-loadable JSON per run with pipe tracks in order, flag flows,
occupancy per memory space and PTO/DSL line args; ``ptoc trace DIR``."""

import json
from pathlib import Path

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.cli import main
from ptoc.runtime.config import RunConfig

LANES = ["MTE2", "MTE1", "CUBE", "VECTOR", "FIXPIPE", "MTE3"]
HERE = Path(__file__).resolve()


def cube_then_vector():
    @pl.program
    class CubeVec:
        @pl.function(type=pl.FunctionType.InCore)
        def cube(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                 c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            ta = pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat),
                         target_memory=pl.Mem.Left)
            tb = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat),
                         target_memory=pl.Mem.Right)
            c = pl.store(pl.matmul(ta, tb), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.InCore)
        def vec(self, x: pl.Tensor[[64, 64], pl.FP32], bias: pl.Tensor[[64, 64], pl.FP32],
                y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            s = pl.add(pl.load(x, [0, 0], [64, 64]), pl.load(bias, [0, 0], [64, 64]))
            y = pl.store(pl.relu(s), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                 bias: pl.Tensor[[64, 64], pl.FP32],
                 y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
            tmp = self.cube(a, b, tmp)
            y = self.vec(tmp, bias, y)
            return y
    return CubeVec


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle")
    compiled = ir.compile(cube_then_vector(), output_dir=out, dump_passes=False)
    rng = np.random.default_rng(0)
    a, b, bias = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(3))
    result = compiled.run(a, b, bias, config=RunConfig(trace=True))
    doc = json.loads(Path(result.trace_path).read_text())
    return compiled, result, doc


def processes(doc):
    return {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
            if e["ph"] == "M" and e["name"] == "process_name"}


def threads(doc, pid):
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid}
    order = {e["tid"]: e["args"]["sort_index"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_sort_index" and e["pid"] == pid}
    return [names[t] for t in sorted(names, key=lambda t: order[t])], names


def core_pids(doc):
    return [c["pid"] for c in doc["otherData"]["calls"]]


def test_one_bundle_per_run_in_the_output_dir(run):
    compiled, result, doc = run
    assert Path(result.trace_path) == compiled.output_dir / "trace" / "run.json"
    calls = doc["otherData"]["calls"]
    assert [c["kernel"] for c in calls] == ["cube", "vec"]
    assert calls[1]["start_cycle"] == pytest.approx(calls[0]["wall_cycles"])
    assert doc["otherData"]["wall_cycles"] == pytest.approx(result.cycles)
    for e in doc["traceEvents"]:       # every event is well formed for Perfetto's importer
        assert isinstance(e["pid"], int) and e["ph"] in "MXCsfi"
        if e["ph"] != "M":
            assert e["ts"] >= 0
        if e["ph"] == "X":
            assert e["dur"] >= 0 and isinstance(e["tid"], int)


def test_six_pipe_tracks_in_dataflow_order_per_call(run):
    _, result, doc = run
    for pid, kernel_run in zip(core_pids(doc), result.runs):
        order, names = threads(doc, pid)
        assert order[:6] == LANES
        slices = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == pid]
        assert len(slices) == len(kernel_run.sim.instructions)
        lanes = {names[e["tid"]] for e in slices if e["cat"] == "work"}
        assert lanes <= set(LANES)
    cube_lanes = {threads(doc, core_pids(doc)[0])[1][e["tid"]] for e in doc["traceEvents"]
                  if e["ph"] == "X" and e["pid"] == core_pids(doc)[0] and e["cat"] == "work"}
    assert {"MTE2", "MTE1", "CUBE", "FIXPIPE"} <= cube_lanes


def test_flows_connect_each_set_flag_to_the_wait_it_releases(run):
    _, result, doc = run
    events = doc["traceEvents"]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts.keys() == ends.keys()
    assert len(starts) == sum(len(r.sim.flows) for r in result.runs) > 0
    slices = {(e["pid"], e["args"]["seq"]): e for e in events
              if e["ph"] == "X" and e["cat"] != "occupancy"}
    for fid, s in starts.items():
        f = ends[fid]
        assert s["pid"] == f["pid"]
        setter = slices[(s["pid"], s["args"]["set_seq"])]
        waiter = slices[(f["pid"], f["args"]["wait_seq"])]
        assert setter["name"].startswith("pto.set_flag") and setter["cat"] == "set_flag"
        assert waiter["name"].startswith("pto.wait_flag") and waiter["cat"] == "wait_flag"
        # same event: the wait names the set's src->dst pipes and id
        assert setter["args"]["flag"] == waiter["args"]["flag"]
        assert (s["tid"], s["ts"]) == (setter["tid"], setter["ts"])
        assert (f["tid"], f["ts"]) == (waiter["tid"], waiter["ts"] + waiter["dur"])
        assert s["ts"] <= f["ts"]
        # flow v2: the set slice and the wait slice carry the same bind_id
        assert setter["flow_out"] and waiter["flow_in"]
        assert setter["bind_id"] == waiter["bind_id"]
    bound = [e["bind_id"] for e in events if e["ph"] == "X" and "bind_id" in e]
    assert len(bound) == 2 * len(set(bound)) == 2 * len(starts)


def test_occupancy_tracks_per_used_space(run):
    compiled, result, doc = run
    procs = processes(doc)
    events = doc["traceEvents"]
    used = {"cube": {"Mat", "Left", "Right", "Acc"}, "vec": {"Vec"}}
    from ptoc.backend import get_target
    cap = {s.value: c for s, c in get_target(compiled.target).capacities.items()}
    for call in doc["otherData"]["calls"]:
        mine = {pid: name for pid, name in procs.items()
                if name.startswith(f"#{call['call']} ") and "occupancy" in name}
        spaces = {name.split(" · ")[-1].split()[0]: pid for pid, name in mine.items()}
        assert set(spaces) == used[call["kernel"]]
        start, end = call["start_cycle"], call["start_cycle"] + call["wall_cycles"]
        for space, pid in spaces.items():
            counter = [e for e in events if e["ph"] == "C" and e["pid"] == pid]
            live = [e for e in events if e["ph"] == "X" and e["pid"] == pid]
            assert counter and live and all(e["cat"] == "occupancy" for e in live)
            assert max(e["args"]["bytes"] for e in counter) <= cap[space]
            assert max(e["args"]["bytes"] for e in counter) > 0
            assert all(start <= e["ts"] and e["ts"] + e["dur"] <= end + 1e-6 for e in live)
            order, names = threads(doc, pid)
            # one thread per byte range, sorted by address, named after its tiles
            lows = [int(n.split("[")[1].split(",")[0], 16) for n in order]
            assert lows == sorted(lows) and all("%" in n for n in order)
            by_tid = {}
            for e in live:
                by_tid.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
            for spans in by_tid.values():     # slices of one thread never overlap
                spans.sort()
                assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:]))


def test_slices_link_to_pto_and_dsl_lines(run):
    compiled, _, doc = run
    source = HERE.read_text().splitlines()
    by_pid = {c["pid"]: c["kernel"] for c in doc["otherData"]["calls"]}
    seen_dsl = 0
    for e in doc["traceEvents"]:
        if e["ph"] != "X" or e["cat"] != "work" or e["pid"] not in by_pid:
            continue
        kernel = by_pid[e["pid"]]
        pto_lines = compiled.pto_text[kernel].splitlines()
        args = e["args"]
        assert args["pto"] == f"pto/{kernel}.pto:{args['pto_line']}"
        assert e["name"] in pto_lines[args["pto_line"] - 1]     # the op on that line
        if "dsl" in args:
            seen_dsl += 1
            assert Path(args["dsl"].rsplit(":", 1)[0]) == HERE
            assert "pl." in source[args["dsl_line"] - 1]
        if e["name"] == "pto.tload":
            assert "pl.load" in source[args["dsl_line"] - 1]
    assert seen_dsl > 5


def test_cli_trace_creates_then_reports_the_bundle(tmp_path, capsys):
    ir.compile(cube_then_vector(), output_dir=tmp_path, dump_passes=False)
    bundle = tmp_path / "trace" / "run.json"
    assert main(["trace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{bundle} (open in https://ui.perfetto.dev)" in out and "wall" in out
    doc = json.loads(bundle.read_text())
    assert sorted(c["kernel"] for c in doc["otherData"]["calls"]) == ["cube", "vec"]
    assert main(["trace", str(tmp_path)]) == 0
    assert "existing trace of 2 kernel call(s)" in capsys.readouterr().out
    assert main(["trace", str(tmp_path), "--rerun", "--kernel", "vec"]) == 0
    capsys.readouterr()
    doc = json.loads(bundle.read_text())
    assert [c["kernel"] for c in doc["otherData"]["calls"]] == ["vec"]
    order, _ = threads(doc, doc["otherData"]["calls"][0]["pid"])
    assert order[:6] == LANES


def test_cli_trace_errors_are_one_line(tmp_path, capsys):
    assert main(["trace", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptoc: error:") and err.count("\n") == 1
    ir.compile(cube_then_vector(), output_dir=tmp_path, dump_passes=False)
    assert main(["trace", str(tmp_path), "--kernel", "nope"]) == 2
    assert "no kernel named nope" in capsys.readouterr().err
