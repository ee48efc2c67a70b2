"""Where memory maps go: ``<output_dir>/report/memmap_<kernel>.html``, one per kernel.

Two entry points: ``write_memory_maps(compiled)`` for a ``CompiledProgram`` in hand (its
allocations name each tile's storage, so aliases under the PYPTO planner are exact; they
are saved beside the pages as ``report/allocations.json``), and ``write_dir_memory_maps(dir)``
for a compile output directory on disk (the Level-3 PTO in ``pto/`` plus that file when
present; without it a tile's storage is its exact space, address and size).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ptoc.dtypes import MemorySpace

from ptoc.errors import PtocError
from ptoc.files import write_json, write_text
from ptoc.outputs import safe_name
from ptoc.report.compile_dir import pto_files
from ptoc.report.memmap_html import render_memory_map
from ptoc.report.memmap_model import build_memory_map


class MemoryMapError(PtocError):
    """A memory map cannot be drawn (no compile output, unreadable PTO)."""


def memory_map_path(output_dir, kernel: str) -> Path:
    return Path(output_dir) / "report" / f"memmap_{safe_name(kernel)}.html"


def write_memory_map(module, kernel: str, output_dir, *, target=None, allocations=None,
                     source: str = "") -> Path:
    """Render one kernel of a parsed Level-3 PTO ``module`` and return the page's path."""
    k = module.kernel(kernel)
    mm = build_memory_map(k, target or module.target_arch or "a2a3", allocations=allocations,
                          source=source)
    path = memory_map_path(output_dir, kernel)
    write_text(path, render_memory_map(mm))
    return path


def write_memory_maps(compiled) -> list[Path]:
    """A page per kernel of a ``CompiledProgram`` (what the compile/run path calls)."""
    _save_allocations(compiled.allocations, compiled.output_dir)
    planner = getattr(compiled.memory_planner, "name", compiled.memory_planner)
    note = f" · planner {planner}" if planner else ""
    return [write_memory_map(compiled.pto_module(name), kernel.name, compiled.output_dir,
                             target=compiled.target, allocations=compiled.allocations,
                             source=f"pto/{safe_name(name)}.pto{note}")
            for name in sorted(compiled.pto_text)
            for kernel in compiled.pto_module(name).kernels]   # a group: AIC and AIV


def write_dir_memory_maps(output_dir: str | os.PathLike) -> list[Path]:
    """A page per kernel of every ``pto/*.pto`` of a compile output directory."""
    from ptoc.pto import parse

    root = Path(output_dir)
    files = pto_files(root, MemoryMapError)
    allocations = _load_allocations(root)
    paths = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise MemoryMapError(f"cannot read {file}: {exc.strerror}") from None
        module = parse(text, filename=file.name)
        for kernel in module.kernels:
            paths.append(write_memory_map(module, kernel.name, root, allocations=allocations,
                                          source=f"pto/{file.name}"))
    return paths


_ALLOCATIONS = "allocations.json"


def _save_allocations(allocations, output_dir) -> None:
    rows = [{"function": a.function, "space": a.space.value, "name": a.name, "addr": a.addr,
             "size": a.size} for a in allocations]
    write_json(Path(output_dir) / "report" / _ALLOCATIONS, rows, indent=1)


def _load_allocations(root: Path):
    """The compile's allocations saved by ``write_memory_maps`` (None when absent or bad)."""
    from types import SimpleNamespace

    try:
        rows = json.loads((root / "report" / _ALLOCATIONS).read_text(encoding="utf-8"))
        return [SimpleNamespace(function=r["function"], space=MemorySpace(r["space"]),
                                name=r["name"], addr=r["addr"], size=r["size"]) for r in rows]
    except (OSError, ValueError, KeyError, TypeError):
        return None
