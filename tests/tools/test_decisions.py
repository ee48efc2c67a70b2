"""Decision records: every decision point leaves a structured entry in report/decisions.*."""

import json
import os
import sys

import pytest

from ptoc import ir
from ptoc.calibration.kernels import matmul_program
from ptoc.language import parse_program
from ptoc.passes import L0TileConfig, PassContext, rank_l0_tiles
from ptoc.passes.decisions import (
    DecisionLog, collect_decisions, record_decision, record_pipe_all_fallback, render_markdown,
    write_decisions,
)


def gemm(M=160, K=64, N=160):
    return matmul_program(M, K, N, "FP32", filename="gemm.py")


def decisions(out_dir):
    data = json.loads((out_dir / "report" / "decisions.json").read_text())
    return data, data["decisions"]


def one(records, kind):
    found = [r for r in records if r["kind"] == kind]
    assert len(found) == 1, found
    return found[0]


def test_dbc_off_compile_records_tile_alternatives_and_the_flag_gate(tmp_path):
    ir.compile(gemm(), tmp_path, dump_passes=False)
    data, records = decisions(tmp_path)
    assert data["counts"]["tile_choice"] == 1 and data["counts"]["dbc"] == 1
    tile = one(records, "tile_choice")
    assert (tile["M"], tile["N"], tile["K"]) == (160, 160, 64)
    assert tile["double_buffer_c"] is False
    alts = tile["alternatives"]
    assert 1 < len(alts) <= 5
    # The first alternative is exactly the pick; walls never decrease down the list.
    assert (alts[0]["m"], alts[0]["n"], alts[0]["k"]) == (tile["m"], tile["n"], tile["k"])
    assert alts[0]["wall_cycles"] == tile["estimated_cost_cycles"]
    assert [a["wall_cycles"] for a in alts] == sorted(a["wall_cycles"] for a in alts)
    dbc = one(records, "dbc")
    assert dbc["accepted"] is False and dbc["gate"] == "flag"
    assert "enable_pypto_l0c_double_buffer" in dbc["reason"]
    # The flag gate says what the chooser would have done: dbC=2 is cheaper here.
    assert dbc["dbc_wall_cycles"] < dbc["single_wall_cycles"]
    assert tile["location"].startswith("gemm.py:")


def test_dbc_on_compile_records_the_chooser_accepting_dbc(tmp_path):
    ir.compile(gemm(), tmp_path, dump_passes=False, enable_pypto_l0c_double_buffer=True)
    _, records = decisions(tmp_path)
    tile = one(records, "tile_choice")
    assert tile["double_buffer_c"] is True and tile["tiles"] >= 2
    dbc = one(records, "dbc")
    assert dbc["accepted"] is True and dbc["gate"] == "chooser"
    assert dbc["dbc_wall_cycles"] == tile["estimated_cost_cycles"] < dbc["single_wall_cycles"]
    md = (tmp_path / "report" / "decisions.md").read_text()
    assert "## L0 tile choices (1)" in md and "dbC accepted by the chooser gate" in md
    assert "| rank | m | n | k |" in md


@pytest.mark.parametrize("flag", [False, True], ids=["dbc_off", "dbc_on"])
@pytest.mark.parametrize("shape", [(160, 64, 160), (448, 64, 448), (256, 256, 256)])
def test_alternatives_equal_rank_l0_tiles(tmp_path, flag, shape):
    M, K, N = shape
    ir.compile(gemm(M, K, N), tmp_path, dump_passes=False, enable_pypto_l0c_double_buffer=flag)
    _, records = decisions(tmp_path)
    alts = one(records, "tile_choice")["alternatives"]
    cfg = L0TileConfig.for_target("a2a3", M=M, N=N, K=K, bytes_a=4, bytes_b=4, bytes_c=4,
                                  allow_a_stationary=True, allow_b_stationary=True,
                                  allow_double_buffer_c=flag, allow_k_boundary=True)
    ranked = rank_l0_tiles(cfg, top=5)
    assert [(a["m"], a["n"], a["k"], a["wall_cycles"]) for a in alts] == \
        [(c.m, c.n, c.k, c.wall_cycles) for c in ranked]


def test_whole_problem_in_l0_is_rejected_by_the_chooser_with_its_reason(tmp_path):
    ir.compile(gemm(64, 64, 64), tmp_path, dump_passes=False, enable_pypto_l0c_double_buffer=True)
    _, records = decisions(tmp_path)
    dbc = one(records, "dbc")
    assert dbc["accepted"] is False and dbc["gate"] == "chooser"
    assert "fits L0" in dbc["reason"]


def test_user_pipeline_dbc_records_the_profitability_gate():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "passes"))
    from test_auto_tile_matmul_l0_pipeline_dbc import pipeline_kernel

    from ptoc.passes import auto_tile_matmul_l0

    prog = parse_program(pipeline_kernel())
    with collect_decisions() as log, PassContext():
        auto_tile_matmul_l0()(prog)
    loops = [d for d in log.of_kind("dbc") if "loop" in d.fields]
    assert loops and all(d.fields["gate"] in ("profitability", "capacity") for d in loops)
    assert any(d.fields["accepted"] for d in loops)


def test_capacity_shed_is_recorded():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "passes"))
    from _memory_programs import Operand, cube_program, run_memory_passes

    ops = [Operand(f"r{i}", 128, 128, tag) for i, tag in enumerate(["0:0", "0:1"])]
    with collect_decisions() as log:
        run_memory_passes(cube_program(ops, blocker=Operand("blocker", 128, 128)), PassContext())
    (shed,) = log.of_kind("capacity_shed")
    assert shed.pass_name == "MemoryReuse"
    assert (shed.fields["space"], shed.fields["depth_from"], shed.fields["depth_to"]) == \
        ("Right", 2, 1)
    assert shed.fields["footprint_bytes"] > shed.fields["capacity_bytes"]


def test_pipe_all_fallback_is_recorded():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "pto"))
    from test_insert_sync import many_live_pairs

    from ptoc.pto import parse
    from ptoc.pto.insert_sync import insert_sync

    (note,) = insert_sync(parse(many_live_pairs(9))).fallbacks
    with collect_decisions() as log:
        record_pipe_all_fallback(note)
    (d,) = log.of_kind("pipe_all_fallback")
    assert d.pass_name == "InsertSync" and d.fields["kernel"] == "k"
    assert (d.fields["src_pipe"], d.fields["dst_pipe"]) == ("PIPE_MTE2", "PIPE_V")
    assert d.fields["producer"]["opcode"] == "pto.tload"
    assert "barrier(PIPE_ALL)" in d.summary


def test_outside_a_compile_nothing_is_recorded():
    assert record_decision("dbc", "nobody listens") is None


def test_unknown_kind_is_rejected():
    with collect_decisions(), pytest.raises(ValueError):
        record_decision("guess", "no such kind")


def test_writers_handle_an_empty_log(tmp_path):
    json_path, md_path = write_decisions(DecisionLog(), tmp_path)
    assert json.loads(json_path.read_text())["decisions"] == []
    assert "No decision points" in md_path.read_text()
    assert render_markdown(DecisionLog()).startswith("# Compile decisions")


def test_compile_sync_step_reports_ph_sync_001_and_records_the_fallback():
    """The InsertSync step of ir.compile turns each PIPE_ALL fallback note into a PH-SYNC-001
    perf hint and a pipe_all_fallback decision."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "pto"))
    from test_insert_sync import many_live_pairs

    from ptoc.pto import parse
    from ptoc.runtime.compile import _insert_sync

    ctx = PassContext()
    with ctx, collect_decisions() as log:
        _insert_sync(parse(many_live_pairs(9)), "a2a3")
    (diag,) = [d for d in ctx.diagnostics if d.code == "PH-SYNC-001"]
    assert "barrier(PIPE_ALL)" in diag.message and diag.pass_name == "InsertSync"
    (d,) = log.of_kind("pipe_all_fallback")
    assert d.summary == diag.message
