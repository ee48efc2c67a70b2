"""``ptoc explain``: every registered diagnostic code has an entry; unknown codes get matches."""

import pytest

from ptoc.cli import main
from ptoc.passes import CODES


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_has_an_entry(capsys, code):
    assert main(["explain", code]) == 0
    out = capsys.readouterr().out
    entry = CODES[code]
    assert out.startswith(f"{code}: {entry.title}\n")
    assert f"severity {entry.severity.name}, reported by {entry.rule}" in out
    # what it means, why it happens and what to do: a real paragraph, not a stub
    assert entry.explanation.count(". ") >= 1 and len(entry.explanation) > 150
    assert f'disabled_diagnostics=["{code}"]' in out


def test_codes_are_case_insensitive(capsys):
    assert main(["explain", "ph-mr-001"]) == 0
    assert capsys.readouterr().out.startswith("PH-MR-001: ")


def test_unknown_code_suggests_close_matches(capsys):
    assert main(["explain", "PH-MR-01"]) == 2
    _, err = capsys.readouterr()
    assert err.startswith("ptoc: error: unknown diagnostic code 'PH-MR-01'")
    assert "PH-MR-001" in err and err.count("\n") == 1


def test_list_prints_every_code(capsys):
    assert main(["explain", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == sorted(CODES)
