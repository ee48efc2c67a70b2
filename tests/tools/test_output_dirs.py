"""A compile's output directory (issue 16 points 9 and 12): each compile records what it
wrote, a later compile removes only its own earlier artifacts and never touches files it
did not write, and names from programs and functions cannot leave the directory."""

import dataclasses
import json
from pathlib import Path

import pytest

from ptoc import ir
from ptoc.cli import main
from ptoc.errors import PtocError
from ptoc.language import parse_program
from ptoc.outputs import MANIFEST, listed_files, safe_name
from ptoc.report.compile_dir import pto_files

SRC = """\
import ptoc.language as pl

@pl.program
class {name}:
    @pl.function(type=pl.FunctionType.InCore)
    def {kernel}(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
               ) -> pl.Tensor[[16, 64], pl.FP32]:
        y = pl.store(pl.relu(pl.load(x, [0, 0], [16, 64])), [0, 0], y)
        return y
"""


def program(name="Prog", kernel="first"):
    return parse_program(SRC.format(name=name, kernel=kernel))


def test_a_later_compile_removes_its_own_stale_artifacts(tmp_path):
    out = tmp_path / "o"
    ir.compile(program(kernel="first"), out)
    assert (out / "pto" / "first.pto").is_file()
    ir.compile(program(kernel="second"), out)
    assert not (out / "pto" / "first.pto").exists()
    assert not (out / "report" / "memmap_first.html").exists()
    assert [f.name for f in pto_files(out)] == ["second.pto"]
    listed = listed_files(out)
    assert "pto/second.pto" in listed and all(not f.startswith("..") for f in listed)
    assert json.loads((out / MANIFEST).read_text())["complete"] is True


def test_files_it_did_not_write_are_never_touched(tmp_path):
    out = tmp_path / "o"
    (out / "pto").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    (out / "pto" / "first.pto").write_text("someone else's")
    with pytest.raises(PtocError, match="no earlier ptoc compile into .* wrote it"):
        ir.compile(program(), out)
    assert (out / "pto" / "first.pto").read_text() == "someone else's"
    (out / "pto" / "first.pto").unlink()
    ir.compile(program(), out)
    (out / "pto" / "mine.pto").write_text("hand-written")
    ir.compile(program(kernel="second"), out)
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "pto" / "mine.pto").read_text() == "hand-written"
    assert [f.name for f in pto_files(out)] == ["second.pto"], "only the compile's own PTO"


def test_a_tampered_manifest_cannot_delete_outside_the_directory(tmp_path):
    out, outside = tmp_path / "o", tmp_path / "precious.txt"
    outside.write_text("keep")
    ir.compile(program(), out)
    data = json.loads((out / MANIFEST).read_text())
    data["files"] += ["../precious.txt", str(outside), "pto/../../precious.txt"]
    (out / MANIFEST).write_text(json.dumps(data))
    ir.compile(program(kernel="second"), out)
    assert outside.read_text() == "keep"


def test_a_foreign_manifest_file_is_refused(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / MANIFEST).write_text('{"something": "else"}')
    with pytest.raises(PtocError, match="is not a ptoc manifest"):
        ir.compile(program(), out)


def test_cli_compile_then_memmap_sees_only_the_new_compile(tmp_path, capsys):
    out = tmp_path / "o"
    for kernel in ("first", "second"):
        path = tmp_path / f"{kernel}.py"
        path.write_text(SRC.format(name="Prog", kernel=kernel))
        assert main(["compile", str(path), "-o", str(out), "--no-dump"]) == 0
    capsys.readouterr()
    assert main(["memmap", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "memmap_second.html" in printed and "memmap_first" not in printed


@pytest.mark.no_roundtrip      # a class named '../escape' does not print as Python
def test_a_program_name_cannot_leave_the_build_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("PTOC_BUILD_DIR", str(tmp_path / "build"))
    evil = dataclasses.replace(program(), name="../../escape")
    compiled = ir.compile(evil)
    out = Path(compiled.output_dir)
    assert out.parent == tmp_path / "build" and ".." not in out.name
    assert not (tmp_path / "escape").exists()


@pytest.mark.parametrize("name", ["../x", "a/b", "..", ".", "", "x/../../y", "a\\b", "é"])
def test_unsafe_names_become_one_harmless_component(name):
    safe = safe_name(name)
    assert safe and "/" not in safe and "\\" not in safe and ".." not in safe
    assert not safe.startswith(".")
    assert safe_name("kernel_1") == "kernel_1" and safe_name("a/b") != safe_name("a_b")


def test_an_output_directory_that_cannot_be_made_is_a_ptoc_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(PtocError, match="cannot create the output directory"):
        ir.compile(program(), blocker / "out")
