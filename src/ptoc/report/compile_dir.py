"""The PTO files of a compile output directory, for the tools that re-read one from disk."""

from __future__ import annotations

import os
from pathlib import Path

from ptoc.errors import PtocError
from ptoc.outputs import listed_files

_HINT = ("give the output directory of a compile (ir.compile(..., output_dir=DIR) or "
         "`ptoc compile -o DIR`)")


def pto_files(output_dir: str | os.PathLike, error: type[PtocError] = PtocError) -> list[Path]:
    """The compile's ``DIR/pto/*.pto`` in name order: those its manifest lists (a file left
    by someone else, or by an earlier compile, is not part of it), or every one when the
    directory has no manifest. ``error`` says which of "no such directory" and "no PTO in
    it" is the case, since the fixes differ (a typo in the path vs the wrong folder)."""
    root = Path(output_dir)
    if not root.is_dir():
        raise error(f"{root}: no such directory", hint=_HINT)
    files = sorted((root / "pto").glob("*.pto")) if (root / "pto").is_dir() else []
    listed = listed_files(root)
    if listed is not None:
        ours = {Path(rel) for rel in listed}
        files = [f for f in files if Path("pto", f.name) in ours]
    if not files:
        raise error(f"{root} holds no pto/*.pto files", hint=_HINT)
    return files
