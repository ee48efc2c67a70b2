"""The PTO files of a compile output directory, for the tools that re-read one from disk."""

from __future__ import annotations

import os
from pathlib import Path

from ptoc.errors import PtocError

_HINT = ("give the output directory of a compile (ir.compile(..., output_dir=DIR) or "
         "`ptoc compile -o DIR`)")


def pto_files(output_dir: str | os.PathLike, error: type[PtocError] = PtocError) -> list[Path]:
    """``DIR/pto/*.pto`` in name order; ``error`` says which of "no such directory" and "no
    PTO in it" is the case, since the fixes differ (a typo in the path vs the wrong folder)."""
    root = Path(output_dir)
    if not root.is_dir():
        raise error(f"{root}: no such directory", hint=_HINT)
    files = sorted((root / "pto").glob("*.pto")) if (root / "pto").is_dir() else []
    if not files:
        raise error(f"{root} holds no pto/*.pto files", hint=_HINT)
    return files
