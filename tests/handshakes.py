"""Mutants of a core group's PTO text with one cross-core handshake removed.

A handshake is a line of the pipe protocol: ``*_initialize_pipe``, ``tpush_to_*``,
``tfree_from_*`` (each deleted), or ``tpop_from_*`` — replaced by a plain tile at the start
of the consumer's ring (the consumer reads its ring without waiting) with the free of that
tile deleted too. Every mutant must be reported: a ``PtocError`` (deadlock, protocol error,
bad program), a race, or numbers that differ from the golden.
"""

from __future__ import annotations

import re

import numpy as np

from ptoc.errors import PtocError

_POP = re.compile(r"^(\s*)(%[\w.]+) = pto\.tpop_from_(aic|aiv) .*-> (!pto\.tile_buf<[^>]*>)")
_RING = re.compile(r"pto\.reserve_buffer \{.*location = #pto\.address_space<(vec|mat)>, "
                   r"base = (\d+)\}")


def handshake_mutants(text: str):
    """(label, mutated text) for every handshake line of ``text``."""
    lines = text.splitlines()
    kernel_start = 0
    for i, line in enumerate(lines):
        if "func.func" in line:
            kernel_start = i
        stripped = line.strip()
        label = f"line {i + 1}: {stripped[:70]}"
        if re.search(r"pto\.(tpush_to_\w+|tfree_from_\w+|\w+_initialize_pipe)\b", stripped):
            yield label, "\n".join(lines[:i] + lines[i + 1:]) + "\n"
            continue
        pop = _POP.match(line)
        if pop is None:
            continue
        indent, name, _, ty = pop.groups()
        loc = re.search(r"loc=(\w+)", ty).group(1)
        base = _ring_base(lines, kernel_start, loc)
        addr = f"%ring_base_{i}"
        out = list(lines)
        out[i] = (f"{indent}{addr} = arith.constant {base} : i64\n"
                  f"{indent}{name} = pto.alloc_tile addr = {addr} : {ty}")
        out = [x for x in out if not re.search(rf"pto\.tfree_from_\w+\({re.escape(name)} ", x)]
        yield label + " (read the ring without popping)", "\n".join(out) + "\n"


def _ring_base(lines, start: int, loc: str) -> int:
    for line in lines[start:]:
        found = _RING.search(line)
        if found and found.group(1) == loc:
            return int(found.group(2))
    return 0


def reported(run, golden: dict, *, rtol=1e-3, atol=1e-3) -> str | None:
    """How a mutant run is reported (None when it is not): ``run()`` returns a result with
    ``races`` and ``outputs``; ``golden`` maps output names to expected arrays."""
    try:
        result = run()
    except PtocError as exc:
        return f"{type(exc).__name__}"
    if result.races:
        return f"{len(result.races)} race(s)"
    for name, want in golden.items():
        got = np.asarray(result.outputs[name], dtype=np.float64)
        if not np.allclose(got, np.asarray(want, dtype=np.float64), rtol=rtol, atol=atol):
            return f"wrong numbers in {name}"
    return None
