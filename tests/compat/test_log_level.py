"""``pypto.set_log_level`` / ``get_log_level`` / ``LogLevel``: a threshold over ptoc's own
messages (the INFO summary line after a compile, WARN through the ``ptoc`` logger)."""

from __future__ import annotations

import io
import logging

import pytest

from ptoc.cli import main
from ptoc.errors import RuntimeConfigError
from ptoc.messages import LogLevel, LogLevelWarning, get_log_level, set_log_level
from ptoc.passes.diagnostics import Diagnostic, DiagnosticSink, Severity, write_report


@pytest.fixture(autouse=True)
def _restore_level():
    saved = get_log_level()
    yield
    set_log_level(saved)


def _summary(tmp_path) -> str:
    sink = DiagnosticSink()
    sink.add(Diagnostic("PH001", Severity.PerfHint, "P", "one", None))
    stream = io.StringIO()
    write_report(sink, tmp_path, stream=stream)
    return stream.getvalue()


@pytest.mark.parametrize("level, shown", [
    (LogLevel.INFO, True), (LogLevel.WARN, False), (LogLevel.EVENT, False), (LogLevel.NONE, False),
])
def test_the_level_is_a_threshold_over_the_summary_line(tmp_path, level, shown):
    set_log_level(level)
    assert get_log_level() is level
    assert bool(_summary(tmp_path)) is shown
    assert (tmp_path / "report" / "perf_hints.log").read_text()  # the report is always written


@pytest.mark.parametrize("level, python_level", [
    (LogLevel.INFO, logging.INFO), (LogLevel.WARN, logging.WARNING),
    (LogLevel.FATAL, logging.CRITICAL), (LogLevel.NONE, logging.CRITICAL + 2),
])
def test_the_ptoc_logger_follows_the_level(level, python_level):
    set_log_level(level)
    assert logging.getLogger("ptoc").level == python_level


def test_debug_says_that_ptoc_has_no_debug_messages(tmp_path):
    with pytest.warns(LogLevelWarning, match="ptoc has no DEBUG messages"):
        set_log_level(LogLevel.DEBUG)
    assert _summary(tmp_path)  # DEBUG shows what INFO shows


@pytest.mark.parametrize("bad", ["DEBUG", 7, True, None])
def test_a_value_that_is_no_level_is_refused(bad):
    with pytest.raises(RuntimeConfigError, match="takes a LogLevel"):
        set_log_level(bad)


def test_a_pypto_script_sets_the_level_for_its_own_run(tmp_path, capsys):
    script = tmp_path / "levels.py"
    script.write_text("import pypto\n"
                      "pypto.set_log_level(pypto.LogLevel.ERROR)\n"
                      "assert pypto.get_log_level() == pypto.LogLevel.ERROR\n"
                      "print(pypto.get_log_level().name)\n")
    assert main(["pypto", str(script)]) == 0
    assert capsys.readouterr().out == "ERROR\n"
    assert get_log_level() is LogLevel.INFO  # process-wide: restored when the script ends
