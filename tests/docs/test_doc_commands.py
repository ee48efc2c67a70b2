"""Every command block of the docs runs, and a quoted output matches what the command prints
now (``doc_blocks`` says which blocks and how outputs are compared). Each block runs in a
fresh directory laid out like a clone (``examples/``, ``tests/``, ``benchmarks/`` linked in),
and may leave nothing there but folders git ignores."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from doc_blocks import ROOT, blocks, doc_files, output_matches

ALL = [b for path in doc_files() for b in blocks(path)]
LINKED = ("examples", "tests", "benchmarks")
TIMEOUT_S = 600


def _ignored_dirs() -> set[str]:
    lines = (ROOT / ".gitignore").read_text().splitlines()
    return {line.strip().strip("/") for line in lines if line.strip().endswith("/")}


def _workdir(tmp_path):
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def _run(command: str, cwd) -> tuple[int, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "PTOC_BUILD_DIR"}
    env.update(PYTHONPATH=str(ROOT / "src"), PYTHONUNBUFFERED="1", PY=sys.executable,
               COLUMNS="100")
    script = 'ptoc() { "$PY" -m ptoc.cli "$@"; }\npython() { "$PY" "$@"; }\n' + command
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S)
    return done.returncode, done.stdout.splitlines()


def _leftovers(cwd) -> list[str]:
    allowed = set(LINKED) | _ignored_dirs()
    return sorted(p.name for p in cwd.iterdir() if p.name not in allowed)


@pytest.mark.parametrize("block", [b for b in ALL if b.skip is None], ids=lambda b: b.ident)
def test_doc_block_runs_and_prints_what_the_doc_says(block, tmp_path):
    assert not any(line.lstrip().startswith("pip ") or " pip " in line for line in block.lines), \
        f"{block.ident} installs packages: mark it <!-- docs-test: skip: ... -->"
    cwd = _workdir(tmp_path)
    if block.kind == "python":
        (cwd / "snippet.py").write_text("\n".join(block.lines) + "\n")
        steps = [("python snippet.py", block.printed() or None)]
    elif block.kind == "commands":
        steps = [(line, None) for line in block.lines]
    else:
        steps = block.transcript()
    for command, expected in steps:
        code, out = _run(command, cwd)
        text = "\n".join(out)
        assert "Traceback" not in text, f"{block.ident}: `{command}` raised:\n{text}"
        if expected is None:
            assert code == 0, f"{block.ident}: `{command}` exited {code}:\n{text}"
        else:
            assert output_matches(expected, out), (
                f"{block.ident}: `{command}` printed\n{text}\n--- the doc says ---\n"
                + "\n".join(expected))
    if block.kind == "python":
        (cwd / "snippet.py").unlink()
    assert _leftovers(cwd) == [], (f"{block.ident} leaves {_leftovers(cwd)} in the clone; "
                                   "write under build/ (ignored)")


def test_every_skipped_block_says_why():
    for block in ALL:
        assert block.skip is None or len(block.skip) > 8, block.ident


def test_chinese_pages_quote_the_same_transcripts():
    for block in (b for b in ALL if b.kind == "transcript"):
        rel = block.path.relative_to(ROOT / "docs" / "en") if "docs" in block.path.parts \
            else None
        if rel is None:
            continue
        twin = _uncommented((ROOT / "docs" / "zh-cn" / rel).read_text(encoding="utf-8"))
        body = _uncommented("\n".join(block.lines))
        assert body in twin, f"docs/zh-cn/{rel} does not quote the transcript of {block.ident}"


def _uncommented(text: str) -> str:
    """A transcript without the ``# ...`` remarks after its commands (they are translated)."""
    return "\n".join(line.split("  #")[0].rstrip() if line.startswith("$ ") else line
                     for line in text.splitlines())


def test_matcher():
    assert output_matches(["a  1.5e-05 ok", "...", "z"], ["a 9.9e-06 ok", "b", "c", "z"])
    assert not output_matches(["a 1 ok"], ["a 2 ok"])
    assert output_matches(["see /tmp/x_.../r.log"], ["see /tmp/x_abc/r.log"])
    assert not output_matches(["x", "y"], ["x"])
