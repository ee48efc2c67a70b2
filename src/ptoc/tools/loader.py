"""Load the program a user's ``FILE.py`` defines, for ``ptoc compile`` and ``ptoc run``.

The file conventions (documented in ``ptoc compile --help``):

* a module-level ``@pl.program`` class (an ``ir.Program``), or a ``@pl.jit`` function;
* for a ``@pl.jit`` function, ``example_inputs()`` returning the arguments to specialise on
  (a tuple or list of arrays, outputs included, in parameter order);
* optionally ``golden(inputs) -> outputs`` for ``ptoc run``: ``inputs`` maps every entry
  parameter name to its numpy array, the result maps output names to expected arrays (or is
  one array when the program has one output).

The file is executed as a Python module, so anything it does at import time happens. A
failure while executing it becomes one ``LoadError`` line that names the file, the line and
the exception; ``ptoc --debug`` shows the original traceback.
"""

from __future__ import annotations

import os
import runpy
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from ptoc.errors import PtocError


class LoadError(PtocError):
    """The user's file could not be read, executed, or holds no usable program."""


@dataclass
class LoadedFile:
    """What a user's file provides: the program (before passes) and its optional hooks."""

    path: str
    name: str
    program: Any                    # ir.Program
    jit: Any = None                 # the JITFunction when the program came from @pl.jit
    example_args: dict | None = None  # jit parameter name -> example value
    golden: Callable | None = None


def _where(exc: BaseException, path: str) -> str:
    """``FILE:LINE`` of the innermost frame of ``exc`` inside the user's file."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"{path}:{exc.lineno}"
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == os.path.abspath(path):
            line = frame.lineno
    return f"{path}:{line}" if line else path


def load_namespace(path: str) -> dict[str, Any]:
    """Execute ``path`` as a module and return its globals."""
    if not os.path.isfile(path):
        raise LoadError(f"cannot read {path}: no such file",
                        hint="give the path of a .py file that defines a @pl.program or @pl.jit")
    if path.lower().endswith(".pto"):
        raise LoadError(f"{path} is PTO assembly, not a Python file with a @pl.program or "
                        "@pl.jit", hint=f"run PTO text on the simulator with `ptoc sim {path}`")
    try:
        return runpy.run_path(path, run_name="__ptoc_user__")
    except PtocError:
        raise
    except (Exception, SystemExit) as exc:  # the user's code: report, never a traceback
        text = str(exc).splitlines()[0] if str(exc) else ""
        raise LoadError(f"{_where(exc, path)}: {type(exc).__name__}"
                        + (f": {text}" if text else "") + " while executing the file",
                        hint=f"run `python {path}` to see the full error, or add ptoc --debug"
                        ) from exc


def find_program(path: str, name: str | None = None) -> LoadedFile:
    """The one program of ``path`` (or the one called ``name``)."""
    from ptoc.ir.nodes import Program
    from ptoc.jit.decorator import JITFunction

    namespace = load_namespace(path)
    found = {k: v for k, v in namespace.items() if not k.startswith("__")
             and (isinstance(v, Program) or (isinstance(v, JITFunction) and v.kind == "entry"))}
    if name is not None:
        if name not in found:
            raise LoadError(f"{path} defines no @pl.program or @pl.jit called {name!r}",
                            hint="found: " + (", ".join(sorted(found)) or "none"))
        found = {name: found[name]}
    if not found:
        raise LoadError(f"{path} defines no @pl.program class and no @pl.jit function",
                        hint="decorate a module-level class with @pl.program (or a function "
                             "with @pl.jit and add example_inputs())")
    if len(found) > 1:
        raise LoadError(f"{path} defines {len(found)} programs ({', '.join(sorted(found))})",
                        hint="choose one with --program NAME")
    key, value = next(iter(found.items()))
    golden = namespace.get("golden") if callable(namespace.get("golden")) else None
    if isinstance(value, Program):
        return LoadedFile(path, key, value, golden=golden)
    return _from_jit(path, key, value, namespace, golden)


def _from_jit(path: str, key: str, jit, namespace: dict, golden) -> LoadedFile:
    make = namespace.get("example_inputs")
    if not callable(make):
        raise LoadError(f"{path}: @pl.jit function {key!r} needs example inputs to specialise on",
                        hint="define example_inputs() returning a tuple of arrays, outputs "
                             "included, in parameter order")
    try:
        args = make()
    except PtocError:
        raise
    except Exception as exc:
        raise LoadError(f"{_where(exc, path)}: example_inputs() raised {type(exc).__name__}: "
                        f"{exc}", hint="fix example_inputs()") from exc
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    names = [a.arg for a in jit.source.node.args.args]
    if len(args) != len(names):
        raise LoadError(f"{path}: example_inputs() returned {len(args)} values but {key}() takes "
                        f"{len(names)} ({', '.join(names)})",
                        hint="return one value per parameter, outputs included, in order")
    return LoadedFile(path, key, jit.specialize(*args), jit=jit,
                      example_args=dict(zip(names, args)), golden=golden)
