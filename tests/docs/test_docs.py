"""The docs stay true: the diagnostics page matches the registry, every relative link
resolves, and every English page has its Chinese twin."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EN, ZH = DOCS / "en", DOCS / "zh-cn"
# [text](target) and [text]: target; images too. Code spans and fenced blocks are skipped.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_diagnostics", DOCS / "gen_diagnostics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def markdown_files() -> list[Path]:
    return sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]


def relative_links(path: Path) -> list[tuple[int, str]]:
    links, in_fence = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line.strip()):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto: ...
            links.append((number, target))
    return links


@pytest.mark.parametrize("lang", ["en", "zh-cn"])
def test_diagnostics_page_is_up_to_date(lang):
    gen = load_generator()
    page = gen.PAGES[lang]
    assert page.exists(), f"{page} is missing: run python docs/gen_diagnostics.py"
    assert page.read_text(encoding="utf-8") == gen.render(lang), (
        f"{page.relative_to(ROOT)} is out of date with ptoc.passes.diagnostics.CODES: "
        "run python docs/gen_diagnostics.py")


def test_diagnostics_page_lists_every_code():
    gen = load_generator()
    text = gen.PAGES["en"].read_text(encoding="utf-8")
    for code in gen._codes():
        assert f"\n## {code}\n" in text, code


def test_every_code_has_a_chinese_translation():
    gen = load_generator()
    missing = sorted(set(gen._codes()) - set(gen.ZH))
    assert not missing, (f"add Chinese title and explanation for {missing} to ZH in "
                         "docs/gen_diagnostics.py, then rerun it")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out, in_fence = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            in_fence = not in_fence
        elif not in_fence and (m := re.match(r"#{1,6}\s+(.*)", line)):
            out.add(slug(m.group(1)))
    return out


def test_relative_links_resolve():
    broken = []
    for path in markdown_files():
        for number, target in relative_links(path):
            file_part, _, anchor = target.partition("#")
            resolved = path.parent / file_part if file_part else path
            if not resolved.exists():
                broken.append(f"{path.relative_to(ROOT)}:{number}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{path.relative_to(ROOT)}:{number}: {target} (no heading "
                              f"#{anchor} in {resolved.relative_to(ROOT)})")
    assert not broken, "broken relative links:\n" + "\n".join(broken)


def test_slug_matches_github():
    assert slug("Reading a trace in Perfetto") == "reading-a-trace-in-perfetto"
    assert slug("`ptoc sim`") == "ptoc-sim"
    assert slug("在 Perfetto 中阅读 trace") == "在-perfetto-中阅读-trace"


def test_every_english_page_has_a_chinese_page():
    missing = [str(p.relative_to(EN)) for p in sorted(EN.rglob("*.md"))
               if not (ZH / p.relative_to(EN)).exists()]
    assert not missing, f"docs/zh-cn/ lacks: {missing}"


def test_link_extraction_skips_code_and_urls(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("see [a](a.md) and `[b](b.md)` and [c](https://x.y) and [d](#e)\n"
                    "```\n[f](f.md)\n```\n![img](pic.png)\n", encoding="utf-8")
    assert relative_links(page) == [(1, "a.md"), (1, "#e"), (5, "pic.png")]
