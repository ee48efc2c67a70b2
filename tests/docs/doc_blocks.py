"""The command blocks of the docs, and how a quoted output is compared with a real one.

Blocks (``docs/en/**/*.md`` and ``README.md``):

* a *transcript*: a fenced block whose first line starts with ``$ ``; every ``$ command`` is
  run and the lines after it, up to the next ``$``, are its expected output;
* a *command block*: an indented block (four spaces, after a blank line) of ``ptoc`` /
  ``python`` / ``pip`` lines, run without comparing output;
* a *python block*: a fenced ``python`` block, run as a script; a ``# prints: TEXT`` comment
  after a statement says what it prints (compared like a transcript line, in order).

A block that cannot run as written (a synopsis, a fragment of a larger file, an install
step) carries ``<!-- docs-test: skip: REASON -->`` on one of the two lines before it.

Output matching, line by line after collapsing runs of blanks: a line ``...`` stands for any
number of lines, ``...`` inside a line for any text, and a number in scientific notation
(a max error, which depends on the machine's BLAS build, as the docs say) for any such
number.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = re.compile(r"<!--\s*docs-test:\s*skip:\s*(.+?)\s*-->")
COMMAND_START = ("ptoc ", "python ", "pip ", "PTOC_")
_SCI = re.compile(r"[-+]?\d+(?:\.\d+)?e[-+]\d+")


@dataclass
class DocBlock:
    path: Path
    line: int                 # 1-based line of the block's first content line
    kind: str                 # "transcript" | "commands" | "python"
    lines: list[str]
    skip: str | None = None

    @property
    def ident(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def printed(self) -> list[str]:
        """What the ``# prints:`` comments of a python block promise, in order, with any
        other output (progress lines, perf hint summaries) allowed around them."""
        out = ["..."]
        for line in self.lines:
            if "# prints: " in line:
                out += [line.split("# prints: ", 1)[1], "..."]
        return out if len(out) > 1 else []

    def transcript(self) -> list[tuple[str, list[str]]]:
        """(command, expected output lines) per ``$`` line of a transcript."""
        out: list[tuple[str, list[str]]] = []
        for line in self.lines:
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
        return out


def doc_files() -> list[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs" / "en").rglob("*.md"))


def blocks(path: Path) -> list[DocBlock]:
    text = path.read_text(encoding="utf-8").splitlines()
    found: list[DocBlock] = []
    i = 0
    while i < len(text):
        line = text[i]
        skip = _skip_before(text, i)
        if line.strip().startswith("```"):
            lang = line.strip()[3:].strip()
            j = i + 1
            while j < len(text) and not text[j].strip().startswith("```"):
                j += 1
            body = text[i + 1:j]
            if body and body[0].startswith("$ "):
                found.append(DocBlock(path, i + 2, "transcript", body, skip))
            elif lang == "python":
                found.append(DocBlock(path, i + 2, "python", body, skip))
            i = j + 1
            continue
        if line.startswith("    ") and (i == 0 or not text[i - 1].strip()):
            j = i
            while j < len(text) and text[j].startswith("    "):
                j += 1
            body = [t[4:] for t in text[i:j]]
            if body[0].startswith(COMMAND_START):
                found.append(DocBlock(path, i + 1, "commands", body, skip))
            i = j
            continue
        i += 1
    return found


def _skip_before(text: list[str], i: int) -> str | None:
    for k in (i - 1, i - 2):
        if k >= 0:
            match = SKIP.search(text[k])
            if match:
                return match[1]
    return None


def _pattern(expected: str) -> re.Pattern:
    parts = re.split(r"(\.\.\.|" + _SCI.pattern + r"|\s+)", expected.strip())
    regex = ""
    for part in parts:
        if not part:
            continue
        if part == "...":
            regex += ".*"
        elif part.isspace():
            regex += r"\s+"
        elif _SCI.fullmatch(part):
            regex += _SCI.pattern
        else:
            regex += re.escape(part)
    return re.compile(regex + r"\s*$")


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` lines (stdout and stderr, in order) against the quoted ``expected``."""
    exp = [e for e in expected if e.strip()]
    act = [a for a in actual if a.strip()]

    @functools.lru_cache(maxsize=None)
    def match(i: int, j: int) -> bool:
        if i == len(exp):
            return j == len(act)
        if exp[i].strip() == "...":
            return any(match(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and _pattern(exp[i]).match(act[j].strip()) is not None \
            and match(i + 1, j + 1)

    return match(0, 0)


__all__ = ["DocBlock", "blocks", "doc_files", "output_matches", "ROOT"]
