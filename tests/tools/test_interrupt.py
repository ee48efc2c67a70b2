"""Ctrl-C and interrupted writes: exit 130 with one line, and no file under its final name
is ever left half-written (issue 16, point 10)."""

import json
import os

import numpy as np
import pytest

from ptoc.cli import main
from ptoc.sim import simulate
from ptoc.sim.examples import dbuf_matmul


def test_ctrl_c_exits_130_with_one_line(capsys, monkeypatch):
    import ptoc.tools.explain_cmd as explain_cmd

    def interrupted(entry):
        raise KeyboardInterrupt

    monkeypatch.setattr(explain_cmd, "render", interrupted)
    assert main(["explain", "PH001"]) == 130
    err = capsys.readouterr().err
    assert err == "ptoc: interrupted\n"
    with pytest.raises(KeyboardInterrupt):
        main(["--debug", "explain", "PH001"])


@pytest.fixture(scope="module")
def sim_result():
    rng = np.random.default_rng(0)
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    tensors = {"arg0": rng.standard_normal((64, 128)).astype(bf16),
               "arg1": rng.standard_normal((128, 64)).astype(bf16),
               "arg2": np.zeros((64, 64), np.float32)}
    return simulate(dbuf_matmul(64, 64, 128), tensors)


def test_an_interrupted_trace_write_keeps_the_previous_complete_file(sim_result, tmp_path,
                                                                     monkeypatch):
    path = tmp_path / "t.json"
    sim_result.write_trace(path)
    before = path.read_text()

    def interrupted(self, obj):
        raise KeyboardInterrupt

    monkeypatch.setattr(json.JSONEncoder, "default", interrupted)
    monkeypatch.setattr(sim_result, "wall_cycles", object())   # not JSON: calls default()
    with pytest.raises(KeyboardInterrupt):
        sim_result.write_trace(path)
    assert path.read_text() == before, "the file under its final name is the old, complete one"
    assert os.listdir(tmp_path) == ["t.json"], "no temporary file is left behind"


def test_writes_go_through_a_temporary_name_in_the_same_directory(tmp_path, monkeypatch):
    from ptoc import files

    renames = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append((a, b)), real(a, b)))
    files.write_text(tmp_path / "sub" / "a.txt", "x")
    ((src, dst),) = renames
    assert os.path.dirname(src) == os.path.dirname(dst) == str(tmp_path / "sub")
    assert os.path.basename(src).startswith(".a.txt.") and (tmp_path / "sub" / "a.txt").read_text() == "x"
