"""Buffer occupancy in traces: live spans from writes to last reads, on hand-made records."""

import json

from ptoc.backend.pipes import Pipe
from ptoc.sim.instr import Access
from ptoc.sim.occupancy import live_bytes, occupancy
from ptoc.sim.result import InstrRecord

V = Pipe.PIPE_V


def rec(seq, start, end, reads=(), writes=()):
    return InstrRecord(seq, f"op{seq}", V, "work", start, end, seq + 1, None,
                       reads=tuple(reads), writes=tuple(writes), file="k.pto")


def vec(lo, hi):
    return Access("Vec", lo, hi)


def test_a_value_lives_from_its_write_to_its_last_read_and_a_rewrite_starts_anew():
    spans = occupancy([rec(0, 0, 10, writes=[vec(0, 256)]),
                       rec(1, 10, 20, reads=[vec(0, 256)]),
                       rec(2, 12, 30, reads=[vec(0, 128)]),      # a window read keeps it live
                       rec(3, 40, 50, writes=[vec(0, 256)]),     # new value
                       rec(4, 50, 55, reads=[Access("GM %arg0", 0, 256)])])
    assert [(s.start, s.end, s.writer, s.readers) for s in spans["Vec"]] == [
        (0, 30, 0, 2), (40, 50, 3, 0)]
    assert "GM %arg0" not in spans


def test_in_place_update_keeps_one_span():
    spans = occupancy([rec(0, 0, 5, writes=[vec(0, 64)]),
                       rec(1, 5, 9, reads=[vec(0, 64)], writes=[vec(0, 64)]),
                       rec(2, 9, 12, reads=[vec(0, 64)])])
    assert [(s.start, s.end) for s in spans["Vec"]] == [(0, 12)]


def test_live_bytes_counts_overlapping_ranges_once():
    spans = occupancy([rec(0, 0, 10, writes=[vec(0, 256)]),
                       rec(1, 2, 4, writes=[vec(128, 384)]),
                       rec(2, 4, 8, reads=[vec(128, 384)]),
                       rec(3, 10, 12, reads=[vec(0, 128)])])
    assert live_bytes(spans["Vec"]) == [(0, 256), (2, 384), (8, 256), (12, 0)]


def test_occupancy_events_only_when_asked(tmp_path):
    from ptoc.sim.result import SimResult

    records = [rec(0, 0, 10, writes=[vec(0, 256)]), rec(1, 10, 20, reads=[vec(0, 256)])]
    result = SimResult({}, 20.0, {V: 20.0}, V, records, [], target="a2a3", profile="p")
    plain, full = tmp_path / "plain.json", tmp_path / "full.json"
    result.write_trace(plain)
    result.write_trace(full, occupancy=True)
    plain_events = json.loads(plain.read_text())["traceEvents"]
    full_events = json.loads(full.read_text())["traceEvents"]
    assert not [e for e in plain_events if e.get("cat") == "occupancy"]
    live = [e for e in full_events if e["ph"] == "X" and e.get("cat") == "occupancy"]
    assert [(e["ts"], e["dur"], e["args"]["bytes"]) for e in live] == [(0, 20, 256)]
    names = [e["args"]["name"] for e in full_events if e["ph"] == "M"
             and e["name"] == "process_name"]
    assert any(n.startswith("Vec occupancy") for n in names)
    work = [e for e in full_events if e["ph"] == "X" and e["cat"] == "work"]
    assert [e["args"]["pto"] for e in work] == ["k.pto:1", "k.pto:2"]
