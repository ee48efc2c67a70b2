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
from pathlib import Path
from typing import Callable, Iterator

#: The active write recorders (innermost last); see ``recording``.
_RECORDERS: contextvars.ContextVar[tuple] = contextvars.ContextVar("ptoc_file_recorders",
                                                                  default=())


def write_text(path: str | os.PathLike, text: str, *, private: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; see the module doc."""
    return write_bytes(path, text.encode("utf-8"), private=private)


def write_json(path: str | os.PathLike, data, *, indent: int | None = None,
               private: bool = False) -> Path:
    """Write ``data`` as JSON to ``path`` atomically."""
    text = json.dumps(data, indent=indent)
    return write_text(path, text + ("\n" if indent is not None else ""), private=private)


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
