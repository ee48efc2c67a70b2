"""Diagnostics: reporting, filtering, log format, summary line, code registry."""

from __future__ import annotations

import io

import pytest

from ptoc.errors import PassError, SourceLoc
from ptoc.passes import (
    CODES, Diagnostic, DiagnosticSink, PassContext, Severity, explain, program_pass,
    register_diagnostic_code, report_diagnostic, write_report,
)
from ptoc.passes import diagnostics as diag_mod

LOC = SourceLoc("program.py", 60, 51)


def hint_pass(*reports):
    @program_pass(name="AutoTileMatmulL0")
    def run(program, ctx):
        for code, message, loc in reports:
            report_diagnostic(code, message, location=loc)
        return program
    return run()


def test_report_from_a_pass_lands_in_the_context_sink(tiny_program):
    with PassContext() as ctx:
        hint_pass(("PH-AT-007", "K = 40 is not a multiple of 16", LOC))(tiny_program)
    (d,) = list(ctx.diagnostics)
    assert d == Diagnostic("PH-AT-007", Severity.PerfHint, "AutoTileMatmulL0",
                           "K = 40 is not a multiple of 16", LOC)
    assert ctx.diagnostics.with_code("PH-AT-007") == [d]
    assert ctx.diagnostics.with_severity(Severity.Warning) == []


def test_pass_name_defaults_and_overrides():
    with PassContext() as ctx:
        outside = report_diagnostic("PH-MR-001", "m")  # no pass running: the rule name
        explicit = report_diagnostic("W-MR-001", "m", pass_name="Mine", severity=Severity.Info)
    assert outside.pass_name == "MemoryReuse"
    assert explicit.pass_name == "Mine" and explicit.severity is Severity.Info
    assert len(ctx.diagnostics) == 2


@pytest.mark.parametrize("disabled", [{"PH-AT-007"}, {"PH-AT-*"}, {"PerfHint"}, {"perf_hint"}])
def test_disabled_diagnostics_are_dropped(tiny_program, disabled):
    with PassContext(disabled_diagnostics=disabled) as ctx:
        hint_pass(("PH-AT-007", "dropped", None))(tiny_program)
        kept = report_diagnostic("W-MR-001", "kept")
        assert report_diagnostic("PH-AT-007", "dropped too") is None
    assert list(ctx.diagnostics) == [kept]


def test_unknown_code_raises():
    with pytest.raises(PassError, match="'PH-NEW-9' is not registered"):
        report_diagnostic("PH-NEW-9", "x")


def test_derived_context_shares_the_sink(tiny_program):
    with PassContext() as outer:
        with outer.derive():
            report_diagnostic("PH001", "inner")
    assert [d.message for d in outer.diagnostics] == ["inner"]


def test_log_line_format_mirrors_pypto():
    d = Diagnostic("PH001", Severity.PerfHint, "SomePass", "tile.load has innermost dim = 256B", LOC)
    assert d.format() == ("[perf_hint PH001] TileInnermostDimGranularity: tile.load has innermost "
                          "dim = 256B at program.py:60:51")
    assert d.format(2).endswith("(2 occurrences at this source location) at program.py:60:51")
    w = Diagnostic("W-MR-001", Severity.Warning, "MemoryReuse", "fell back", None)
    assert w.format() == "[warning W-MR-001] MemoryReuse: fell back"


def test_repeated_findings_are_merged_in_first_seen_order():
    sink = DiagnosticSink()
    a = Diagnostic("PH001", Severity.PerfHint, "P", "store narrow", SourceLoc("program.py", 62, 13))
    b = Diagnostic("PH-AT-007", Severity.PerfHint, "P", "K", LOC)
    for d in (a, b, a):
        sink.add(d)
    assert sink.log_lines() == [a.format(2), b.format()]


def test_write_report_file_and_summary(tmp_path):
    sink = DiagnosticSink()
    sink.add(Diagnostic("PH001", Severity.PerfHint, "P", "one", LOC))
    sink.add(Diagnostic("PH-MR-001", Severity.PerfHint, "P", "two", None))
    sink.add(Diagnostic("W-MR-001", Severity.Warning, "P", "three", None))
    stream = io.StringIO()
    path = write_report(sink, tmp_path, stream=stream)
    assert path == tmp_path / "report" / "perf_hints.log"
    assert path.read_text().splitlines() == sink.log_lines()
    assert stream.getvalue() == f"ptoc: 1 warning, 2 perf hints, see {path}\n"


def test_empty_report_writes_empty_log_and_no_summary(tmp_path):
    stream = io.StringIO()
    path = write_report(DiagnosticSink(), tmp_path, stream=stream)
    assert path.read_text() == "" and stream.getvalue() == ""


def test_registry_seeds_and_explain():
    seeded = {"PH001", "PH-MR-001", "PH-DSA-001", *(f"PH-AT-{n:03d}" for n in (3, 5, 6, 7, 8, 9, 10, 11))}
    assert seeded <= set(CODES)
    for code, entry in CODES.items():
        assert entry.code == code and entry.rule and entry.title
        assert len(entry.explanation) > 80, code  # a real paragraph
    text = explain("ph-mr-001")
    assert text.startswith("PH-MR-001 (PerfHint, MemoryReuse)") and "stage count" in text
    with pytest.raises(PassError, match="known codes"):
        explain("E0308")


def test_register_code_conflicts_and_replace():
    saved = dict(CODES)
    try:
        entry = register_diagnostic_code("PH-TEST-001", Severity.Info, "TestRule", "t", "explain  it")
        assert entry.explanation == "explain it"
        # identical re-registration (module re-import) is fine; a different one is not
        register_diagnostic_code("PH-TEST-001", Severity.Info, "TestRule", "t", "explain it")
        with pytest.raises(PassError, match="already registered"):
            register_diagnostic_code("PH-TEST-001", Severity.Warning, "Other", "t", "x")
        register_diagnostic_code("PH-TEST-001", Severity.Warning, "Other", "t", "x", replace=True)
        assert CODES["PH-TEST-001"].severity is Severity.Warning
    finally:
        CODES.clear()
        CODES.update(saved)


def test_matches_patterns():
    assert diag_mod.matches("PH-AT-007", "PH-AT-*")
    assert diag_mod.matches("PH-AT-007", "PH-AT-007")
    assert not diag_mod.matches("PH-MR-001", "PH-AT-*")
    assert diag_mod.matches("W-MR-001", "Warning")
    assert not diag_mod.matches("W-MR-001", "PerfHint")
