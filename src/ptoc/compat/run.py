"""Run a PyPTO script or module as ``__main__`` with the ``pypto`` aliases installed.

The exit code follows Python's: 0 when the script ends, ``sys.exit``'s code, or 1 (with the
script's traceback on stderr) when the script raises. A ``PtocError`` propagates so the CLI
prints it as one line; any other exception raised inside ptoc propagates as a ptoc bug.
"""

from __future__ import annotations

import contextlib
import os
import re
import runpy
import sys
import traceback
from pathlib import Path

from ptoc.compat.aliases import MODULE_ALIASES, pypto_aliases
from ptoc.errors import MissingApiError, PtocError, RuntimeConfigError
from ptoc.messages import get_log_level, set_log_level

_PTOC_DIR = Path(__file__).resolve().parent.parent
_MACHINERY = ("<frozen runpy>", runpy.__file__, __file__)


def run_path(path: str | os.PathLike, args=()) -> int:
    """``python FILE ARGS...`` with ``pypto`` resolving to ptoc; returns the exit code."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise RuntimeConfigError(f"no such file: {path}", hint="give the path of a PyPTO script")
    script_dir = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    with pypto_aliases(), _process_state([path, *args], script_dir):
        return _exit_code(lambda: runpy.run_path(path, run_name="__main__"))


def run_module(name: str, args=()) -> int:
    """``python -m NAME ARGS...`` (from the current directory) with the aliases installed."""
    with pypto_aliases(), _process_state([name, *args], os.getcwd()):
        return _exit_code(lambda: runpy.run_module(name, run_name="__main__", alter_sys=True))


@contextlib.contextmanager
def _process_state(argv: list[str], path0: str):
    """``sys.argv`` and ``sys.path[0]`` as Python sets them for a script; restored after,
    with the log level (``pypto.set_log_level`` is process-wide)."""
    saved_argv, saved_path, saved_level = sys.argv[:], sys.path[:], get_log_level()
    sys.argv[:] = argv
    sys.path.insert(0, path0)
    try:
        yield
    finally:
        sys.argv[:] = saved_argv
        sys.path[:] = saved_path
        set_log_level(saved_level)


def _exit_code(run) -> int:
    try:
        run()
    except SystemExit as exc:
        return _system_exit_code(exc.code)
    except PtocError:
        raise
    except ImportError as exc:
        missing = _missing_name(exc)
        if missing is not None:
            raise MissingApiError(missing, hint="run this script with PyPTO, or see "
                                  "docs/en/pypto.md for what ptoc provides") from None
        traceback.print_exception(type(exc), exc, _script_frames(exc.__traceback__))
        return 1
    except Exception as exc:
        if _raised_inside_ptoc(exc):
            raise
        traceback.print_exception(type(exc), exc, _script_frames(exc.__traceback__))
        return 1
    return 0


def _missing_name(exc: ImportError) -> str | None:
    """For ``from pypto.X import name`` where ptoc's module for ``pypto.X`` lacks ``name``:
    the message saying so (a user error, not a script bug); None for other ImportErrors."""
    match = re.match(r"cannot import name '(\w+)' from '([\w.]+)'", str(exc))
    if match is None:
        return None
    name, module = match.groups()
    pypto = [alias for alias, target in MODULE_ALIASES.items() if target == module]
    if not pypto:
        return None
    return (f"'from {pypto[0]} import {name}': ptoc does not provide PyPTO's "
            f"{pypto[0]}.{name} (ptoc's {module} has no '{name}')")


def _system_exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _raised_inside_ptoc(exc: BaseException) -> bool:
    """True when the innermost frame is ptoc's own code (outside this compat layer)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    filename = Path(tb.tb_frame.f_code.co_filename).resolve()
    return _PTOC_DIR in filename.parents and filename.parent != Path(__file__).resolve().parent


def _script_frames(tb):
    """The traceback from the script's first frame on (runpy and this module dropped)."""
    while tb is not None and tb.tb_frame.f_code.co_filename in _MACHINERY:
        tb = tb.tb_next
    return tb
