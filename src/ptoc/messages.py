"""The threshold for ptoc's own messages: PyPTO's ``set_log_level`` / ``get_log_level``.

ptoc writes few messages: the one-line diagnostics summary after a compile (``ptoc: 3 perf
hints, see ...``, level INFO) and warnings through the ``ptoc`` logger (level WARN: the PTOAS
planner notice). ``set_log_level`` is a threshold over them, in PyPTO's order (DEBUG < INFO <
WARN < ERROR < FATAL < EVENT < NONE; INFO by default), and sets the ``ptoc`` logger to match.
Python warnings (``DataRaceWarning``, ``SimulatorIgnoredWarning``) are not log messages and
follow Python's ``warnings`` filters, as in PyPTO.
"""

from __future__ import annotations

import logging
import sys
import warnings
from enum import IntEnum

from ptoc.errors import RuntimeConfigError


class LogLevel(IntEnum):
    """PyPTO's log levels (same names and values)."""

    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FATAL = 4
    EVENT = 5
    NONE = 6


class LogLevelWarning(UserWarning):
    """A log level asks for messages ptoc does not have."""


_LOGGING = {LogLevel.DEBUG: logging.DEBUG, LogLevel.INFO: logging.INFO,
            LogLevel.WARN: logging.WARNING, LogLevel.ERROR: logging.ERROR,
            LogLevel.FATAL: logging.CRITICAL, LogLevel.EVENT: logging.CRITICAL + 1,
            LogLevel.NONE: logging.CRITICAL + 2}
_level = LogLevel.INFO


def set_log_level(level: LogLevel) -> None:
    """Show only ptoc's messages at ``level`` or above (``LogLevel.NONE``: none)."""
    global _level
    if isinstance(level, bool) or not isinstance(level, int) or level not in LogLevel._value2member_map_:
        raise RuntimeConfigError(f"set_log_level() takes a LogLevel, got {level!r}",
                                 hint="write set_log_level(LogLevel.WARN) (DEBUG, INFO, WARN, "
                                      "ERROR, FATAL, EVENT or NONE)")
    _level = LogLevel(level)
    logging.getLogger("ptoc").setLevel(_LOGGING[_level])
    if _level is LogLevel.DEBUG:
        warnings.warn("ptoc has no DEBUG messages (PyPTO's come from its C++ passes): DEBUG shows "
                      "what INFO shows; for what a pass did, dump the passes "
                      "(ir.compile(..., dump_passes=True) or PassContext(dump_dir=...))",
                      LogLevelWarning, stacklevel=2)


def get_log_level() -> LogLevel:
    """The threshold ``set_log_level`` set (``LogLevel.INFO`` until then)."""
    return _level


def shows(level: LogLevel) -> bool:
    """Whether a ptoc message at ``level`` is shown under the current threshold."""
    return _level is not LogLevel.NONE and level >= _level


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the calling function name the
    user's line: the first frame outside ptoc, however many ptoc frames lie between (a
    ``@pl.jit`` call, ``ptoc pypto``); the outermost ptoc frame when there is none (the CLI).
    A frame is ptoc's by its module name, so code generated for ptoc's classes (a
    dataclass ``__init__``, whose file is ``<string>``) counts as ptoc's too."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and _is_ptoc(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1
    return level


def _is_ptoc(module: str) -> bool:
    return module == "ptoc" or module.startswith("ptoc.")
