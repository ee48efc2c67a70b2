"""Directories ``@pl.jit`` may trust: its compile cache and its artifact directories.

Why: a cache entry decides what runs, and an artifact path decides what gets written, so a
directory another user can write to (or swap for a symlink) would let them choose either.
As pip does for its cache (``check_path_owner``: a directory not owned by the current user
disables the cache with a warning), a directory is used only when it is a real directory
(not a symlink), owned by the current user and not writable by group or others; ptoc
creates its directories 0700. A directory that fails is reported once per process with a
warning and the call goes on without it: an unusable cache never fails a kernel call.
"""

from __future__ import annotations

import os
import stat
import tempfile
import warnings
from pathlib import Path

from ptoc.errors import PtocError
from ptoc.messages import user_stacklevel
from ptoc.outputs import safe_name


class JitCacheWarning(UserWarning):
    """A ``@pl.jit`` cache or artifact directory was refused or could not be used."""


_warned: set[str] = set()
_fallback: Path | None = None


def warn_once(path, why: str) -> None:
    """Report ``path`` as unusable (once per path and process)."""
    key = str(path)
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(f"ptoc: @pl.jit does not use {path}: {why}; running without it",
                  JitCacheWarning, stacklevel=user_stacklevel())


def private_dir(path: str | os.PathLike) -> Path | None:
    """``path`` created 0700 if missing, and checked (see the module doc); None, with a
    warning, when it cannot be used."""
    path = Path(path)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(path)
    except OSError as exc:
        warn_once(path, f"cannot create it ({exc.strerror})")
        return None
    why = refusal(st)
    if why is not None:
        warn_once(path, why)
        return None
    return path


def refusal(st: os.stat_result) -> str | None:
    """Why a directory with status ``st`` (from ``lstat``) must not be trusted, or None."""
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"it is owned by user id {st.st_uid}, not by you ({os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others can write to it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def artifact_root() -> Path:
    """This user's root for jit artifact directories: ``$TMPDIR/ptoc-jit-<user>`` when it
    can be trusted, else a fresh private directory for this process (``mkdtemp``)."""
    global _fallback
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    root = private_dir(Path(tempfile.gettempdir()) / f"ptoc-jit-{safe_name(str(user))}")
    if root is not None:
        return root
    if _fallback is None:
        try:
            _fallback = Path(tempfile.mkdtemp(prefix="ptoc-jit-"))
        except OSError as exc:
            raise PtocError(f"@pl.jit cannot create a private directory for its artifacts in "
                            f"{tempfile.gettempdir()}: {exc.strerror}",
                            hint="set TMPDIR to a directory you can write to") from None
    return _fallback
