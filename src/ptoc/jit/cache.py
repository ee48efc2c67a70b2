"""The compile cache of ``@pl.jit``: a key that covers everything that changes the output,
and entries that are data, checked against that key before use.

The key. A call is specialised first (parsed, with every constant the parser folds —
module constants, closure values, scalar arguments, default arguments, the
``@pl.jit.incore`` functions it calls, wherever they are defined — read as they are at
the time of the call), and the key hashes what came out: the printed IR of that program,
the source location of every node in it (they end up in the PTO's ``loc(...)`` and in
error messages), ptoc's version and every compile option as ``ir.compile`` will resolve
it (RunConfig, else the active PassContext, else the default). Two calls share an entry
only if they would compile the same program the same way; editing the source is not
needed to invalidate anything, and a folded value that changes always does. Shapes enter
through the IR's types, so a dynamic dimension (printed symbolically) keys one entry for
every size it takes.

The entries (``DiskCache``, opt-in with ``@pl.jit(cache_dir=...)`` or
``$PTOC_JIT_CACHE_DIR``) are JSON files ``<key>.json`` holding the key's inputs, the
post-pass IR as text, the Level-3 PTO text per kernel and the metadata (target, planner,
diagnostics); nothing in them is executed. Loading rebuilds the ``CompiledProgram`` by
parsing that text, and uses it only if the entry names the same key, the same inputs
(printed IR, locations, options, version) and its own content digest matches, and its
kernels are exactly the post-pass program's kernels. Entries are written as Triton and
pip write theirs: to a unique temporary file in the cache directory, then renamed over
the final name. The directory is checked as ``ptoc.jit.private_dirs`` describes; an
entry file must be a regular file owned by the user. Any failure to read or write the
cache is a warning and the call continues uncached.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import ptoc
from ptoc.errors import PtocError, SourceLoc
from ptoc.files import write_json
from ptoc.ir.visitor import IRVisitor
from ptoc.jit.private_dirs import private_dir, warn_once

FORMAT = "ptoc jit cache entry"
VERSION = 1


def compile_options(config) -> dict:
    """The ``ir.compile`` keywords of a call (its RunConfig's, else the defaults)."""
    from ptoc.runtime import RunConfig

    return (config if config is not None else RunConfig()).compile_options()


def options_key(options: dict) -> dict:
    """Every compile option as ``ir.compile`` resolves it (explicit, else the active
    PassContext, else the default), in plain data. The dbC flag is normalised as PyPTO's
    JIT key does (``PassContext.compile_options_key``): it changes nothing under PTOAS."""
    from ptoc.passes import MemoryPlanner, PassContext
    from ptoc.passes.context import _coerce_enum
    from ptoc.passes.diagnostics import validate_disabled
    from ptoc.runtime.config import target_of_platform

    ctx = PassContext.current()
    planner = options.get("memory_planner")
    flag = options.get("enable_pypto_l0c_double_buffer")
    disabled = options.get("disabled_diagnostics")
    resolved = ctx.derive(
        memory_planner=_coerce_enum(MemoryPlanner, planner if planner is not None
                                    else ctx.memory_planner, "memory planner"),
        enable_pypto_l0c_double_buffer=bool(flag if flag is not None
                                            else ctx.enable_pypto_l0c_double_buffer),
        target=target_of_platform(options.get("platform", "a2a3sim")),
        profiling=bool(options.get("profiling") or ctx.profiling),
        disabled_diagnostics=validate_disabled(disabled) if disabled is not None
        else ctx.disabled_diagnostics,
        analyze_auto_scopes_for_deps=bool(options.get("analyze_auto_scopes_for_deps")
                                          or ctx.analyze_auto_scopes_for_deps))
    return {**dict(resolved.compile_options_key()), "platform": options.get("platform"),
            "verification_level": resolved.verification_level.name,
            "disabled_diagnostics": sorted(resolved.disabled_diagnostics),
            "profiling": resolved.profiling, "dump_passes": bool(options.get("dump_passes")),
            "instruments": [type(i).__qualname__ for i in resolved.instruments]}


def key_inputs(program, options: dict) -> dict:
    """What the key hashes (see the module doc)."""
    return {"ptoc": ptoc.__version__, "program": program.as_python(),
            "locations": _Locations.of(program), "options": options_key(options)}


def cache_key(inputs: dict) -> str:
    return hashlib.sha256(_canonical(inputs).encode()).hexdigest()


class DiskCache:
    """The on-disk entries, one JSON file per key (see the module doc)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def load(self, key: str, inputs: dict, source_program, output_dir: Path):
        """The CompiledProgram filed under ``key``, or None (missing, stale, damaged,
        or the cache is unusable)."""
        from ptoc.jit.entries import from_entry

        root = private_dir(self.root)
        if root is None:
            return None
        try:
            data = _read_entry(self.path(key))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            warn_once(self.path(key), f"cannot read the cache entry ({exc})")
            return None
        if not _valid(data, key, inputs):
            return None
        try:
            compiled = from_entry(data["entry"], source_program, output_dir)
        except PtocError:
            return None             # parses no more (another ptoc build): compile again
        _write_pto(compiled)
        return compiled

    def store(self, key: str, inputs: dict, compiled) -> None:
        from ptoc.jit.entries import to_entry

        root = private_dir(self.root)
        if root is None:
            return
        entry = to_entry(compiled)
        data = {"format": FORMAT, "version": VERSION, "key": key, "inputs": inputs,
                "entry": entry, "digest": _digest(inputs, entry)}
        try:
            write_json(self.path(key), data, private=True)
        except OSError as exc:
            warn_once(self.root, f"cannot write a cache entry ({exc.strerror})")


def _write_pto(compiled) -> None:
    """Put a cached program's PTO into its output directory, as a compile would."""
    from ptoc.files import write_text
    from ptoc.outputs import compile_into, safe_name

    out = Path(compiled.output_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with compile_into(out, compiled.source_program.name):
            for name, text in compiled.pto_text.items():
                write_text(out / "pto" / f"{safe_name(name)}.pto", text)
    except (OSError, PtocError) as exc:
        warn_once(out, f"cannot write the cached program's PTO there ({exc})")


def _read_entry(path: Path) -> dict:
    """The JSON of an entry file that is a regular file owned by the current user."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            raise ValueError("not a regular file owned by you")
        return json.loads(fh.read().decode("utf-8"))


def _valid(data, key: str, inputs: dict) -> bool:
    return (isinstance(data, dict) and data.get("format") == FORMAT
            and data.get("version") == VERSION and data.get("key") == key
            and data.get("inputs") == inputs and cache_key(data["inputs"]) == key
            and isinstance(data.get("entry"), dict)
            and data.get("digest") == _digest(data["inputs"], data["entry"]))


def _digest(inputs: dict, entry: dict) -> str:
    return hashlib.sha256(_canonical({"inputs": inputs, "entry": entry}).encode()).hexdigest()


def _canonical(data) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


class _Locations(IRVisitor):
    """Every source location in a program, in visiting order, as ``file:line:col``."""

    def __init__(self):
        self.locs: list[str] = []

    @classmethod
    def of(cls, program) -> list[str]:
        collector = cls()
        collector.visit(program)
        return collector.locs

    def visit(self, node) -> None:
        loc = getattr(node, "loc", None)
        if isinstance(loc, SourceLoc):
            self.locs.append(str(loc))
        super().visit(node)
