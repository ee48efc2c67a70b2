"""A compile's output directory: what each compile wrote there (its manifest), and names
that are safe to use as paths.

Why: a user points ``-o DIR`` (or ``output_dir=``) at a directory that may already hold an
earlier compile or files of their own. A compile therefore

* records every file it writes in ``DIR/ptoc_manifest.json``;
* removes the files the previous compile's manifest lists that it did not write again (so
  a stale ``pto/old_kernel.pto`` never looks like part of the new compile), and nothing
  else;
* refuses to overwrite a file no manifest lists (someone else's);
* holds an exclusive lock on ``DIR/.ptoc.lock`` while it runs, so two processes compiling
  into one directory take turns instead of racing over the manifest.

Names that come from programs and functions (which the Python API lets a caller set to
anything, ``../`` included) go through ``safe_name`` before they become path components.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Iterator

from ptoc.errors import PtocError
from ptoc.files import recording, write_json

MANIFEST = "ptoc_manifest.json"
LOCK = ".ptoc.lock"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_DOTS = re.compile(r"\.\.+")


def safe_name(name: str) -> str:
    """``name`` as one path component: itself when it is made of letters, digits, ``_``,
    ``.`` and ``-`` (no leading dot, no ``..``), else a cleaned-up form plus a hash of the
    original (so two different names never map to one file)."""
    cleaned = _DOTS.sub("_", _UNSAFE.sub("_", str(name))).lstrip(".")
    if cleaned == name and cleaned:
        return cleaned
    digest = hashlib.sha256(str(name).encode()).hexdigest()[:8]
    return f"{cleaned[:64] or 'unnamed'}_{digest}"


def listed_files(out: str | os.PathLike) -> list[str] | None:
    """The files the last compile into ``out`` wrote (relative paths), or None when there is
    no manifest. Entries that would leave ``out`` are dropped; a file that is not a ptoc
    manifest is an error (it is someone else's)."""
    path = Path(out) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise _foreign(path, f"cannot be read as a ptoc manifest ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != "ptoc compile manifest" or \
            not isinstance(data.get("files"), list):
        raise _foreign(path, "is not a ptoc manifest")
    return [f for f in data["files"] if isinstance(f, str) and _inside(f)]


@contextlib.contextmanager
def compile_into(out: Path, program: str) -> Iterator[None]:
    """Run a compile that writes into ``out`` (see the module doc)."""
    with _locked(out):
        earlier = set(listed_files(out) or ())
        written: set[str] = set()
        root = os.path.abspath(out)

        def check(path: Path) -> None:
            rel = os.path.relpath(os.path.abspath(path), root)
            if not _inside(rel) or rel in written:
                return
            if rel not in earlier and rel != MANIFEST and os.path.lexists(path):
                raise PtocError(
                    f"{path} exists and no earlier ptoc compile into {out} wrote it; the "
                    "compile will not overwrite it",
                    hint="compile into an empty or new directory, or move the file away")
            written.add(rel)

        complete = False
        try:
            with recording(check):
                yield
            complete = True
        finally:
            for rel in sorted(earlier - written):
                stale = Path(out) / rel
                if stale.is_file() and not stale.is_symlink():
                    stale.unlink()
            write_json(Path(out) / MANIFEST, {"format": "ptoc compile manifest", "version": 1,
                                              "program": program, "complete": complete,
                                              "files": sorted(written)}, indent=1)


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """An exclusive lock on ``out`` for this process (POSIX ``flock``; elsewhere none)."""
    try:
        import fcntl
    except ImportError:     # pragma: no cover - not POSIX
        yield
        return
    try:
        fd = os.open(Path(out) / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise PtocError(f"cannot write into the output directory {out}: {exc.strerror}",
                        hint="choose a directory you can write to") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)        # releases the lock


def _inside(rel: str) -> bool:
    parts = Path(rel).parts
    return bool(parts) and not os.path.isabs(rel) and ".." not in parts and \
        os.path.normpath(rel) == rel


def _foreign(path: Path, why: str) -> PtocError:
    return PtocError(f"{path} {why}; it was not written by ptoc, so the output directory is "
                     "someone else's", hint="compile into an empty or new directory")
