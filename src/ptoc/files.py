"""Writing files so that a file under its final name is always complete.

Why: a report, trace or cache entry that another process (or a later ptoc command) reads
must never be seen half-written — not after Ctrl-C, not while a concurrent writer of the
same file is busy. Every file ptoc writes therefore goes to a unique temporary name in the
same directory and is renamed onto its final name (``os.replace`` is atomic on POSIX and
Windows within one file system), the practice of pip's and Triton's caches.

``recording(root)`` lets a compile learn which files under its output directory it wrote
(the manifest of ``ptoc.runtime.artifacts``), and refuse to overwrite a file it did not write.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import secrets
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any, Callable, Iterator

#: The active write recorders (innermost last); see ``recording``.
_RECORDERS: contextvars.ContextVar[tuple] = contextvars.ContextVar("ptoc_file_recorders",
                                                                  default=())


def write_text(path: str | os.PathLike, text: str, *, private: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; see the module doc."""
    return write_bytes(path, text.encode("utf-8"), private=private)


def write_json(path: str | os.PathLike, data, *, indent: int | None = None,
               private: bool = False) -> Path:
    """Write ``data`` as JSON to ``path`` atomically."""
    text = json.dumps(data) if indent is None else indented_json(data, indent)
    return write_text(path, text + ("\n" if indent is not None else ""), private=private)


def indented_json(data: Any, indent: int) -> str:
    """``json.dumps(data, indent=indent)``, the same text at a fraction of its cost for plain
    data (dicts with str keys, lists, tuples, str, int, finite float, bool, None): with an
    indent, json uses its pure-Python encoder (the compile's reports are indented). Anything
    else goes to json.dumps itself."""
    out: list[str] = []
    try:
        _indented(data, out, "\n", " " * indent)
    except (_NotPlain, RecursionError):
        return json.dumps(data, indent=indent)
    return "".join(out)


class _NotPlain(Exception):
    pass


def _indented(value: Any, out: list[str], newline: str, step: str) -> None:
    kind = type(value)
    if kind is str:
        out.append(encode_basestring_ascii(value))
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is bool:
        out.append("true" if value else "false")
    elif value is None:
        out.append("null")
    elif kind is float and value - value == 0:     # finite (NaN and infinities: json's words)
        out.append(float.__repr__(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + step
        sep = "{" + inner
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            out.append(sep)
            out.append(encode_basestring_ascii(key))
            out.append(": ")
            _indented(item, out, inner, step)
            sep = "," + inner
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = newline + step
        sep = "[" + inner
        for item in value:
            out.append(sep)
            _indented(item, out, inner, step)
            sep = "," + inner
        out.append(newline + "]")
    else:
        raise _NotPlain


def write_bytes(path: str | os.PathLike, data: bytes, *, private: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically. ``private`` makes the file owner-only (0600),
    else it gets the usual ``0666 & ~umask``."""
    path = Path(path)
    for recorder in _RECORDERS.get():
        recorder(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _unique_temp(path, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:   # Ctrl-C included: never leave the temporary file behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def _unique_temp(path: Path, mode: int) -> tuple[int, str]:
    """A new file beside ``path`` that no other writer can be using (O_EXCL, random name);
    ``mode`` is filtered by the umask as for any new file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = str(path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue


@contextlib.contextmanager
def recording(check: Callable[[Path], None]) -> Iterator[None]:
    """Call ``check(path)`` before every write in this context (it may raise to refuse)."""
    token = _RECORDERS.set(_RECORDERS.get() + (check,))
    try:
        yield
    finally:
        _RECORDERS.reset(token)
