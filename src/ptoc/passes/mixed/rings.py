"""Where a kernel's cross-core rings sit in its memory.

A consumer reserves each ring with ``system.reserve_buffer`` (ExpandMixedKernel writes
``base=-1``: "place it"). The rings take the bottom of their space, one after the other
(32-byte aligned), and tiles are allocated above them (PyPTO's ``ResolveReserveBufferBases``:
"the first N bytes of that space are reserved by system.reserve_buffer, so tiles are
allocated above them"). MemoryReuse and AllocateMemoryAddr read ``reserved_bytes``;
AllocateMemoryAddr writes the bases with ``resolve_ring_bases``.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import MemorySpace
from ptoc.ir.nodes import AssignStmt, Call, Function, SeqStmts
from ptoc.ops import make_call

RESERVE = "system.reserve_buffer"


def _align32(n: int) -> int:
    return (n + 31) // 32 * 32


def ring_layout(fn: Function) -> list[tuple[AssignStmt, MemorySpace, int, int]]:
    """(statement, space, base, size) of each reservation, in program order."""
    cursor: dict[MemorySpace, int] = {}
    out = []
    for s in fn.body.stmts:
        if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == RESERVE:
            space = s.value.kwarg("location", MemorySpace.Vec)
            size = s.value.kwarg("size")
            base = s.value.kwarg("base", -1)
            if base is None or base < 0:
                base = cursor.get(space, 0)
            out.append((s, space, base, size))
            cursor[space] = max(cursor.get(space, 0), _align32(base + size))
    return out


def reserved_bytes(fn: Function) -> dict[MemorySpace, int]:
    """Bytes at the bottom of each space the kernel's rings take."""
    out: dict[MemorySpace, int] = {}
    for _, space, base, size in ring_layout(fn):
        out[space] = max(out.get(space, 0), _align32(base + size))
    return out


def resolve_ring_bases(fn: Function) -> Function:
    """``fn`` with every ``base=-1`` reservation given its address."""
    placed = {id(s): base for s, _, base, _ in ring_layout(fn)
              if s.value.kwarg("base", -1) in (None, -1)}
    if not placed:
        return fn
    stmts = []
    for s in fn.body.stmts:
        if id(s) in placed:
            kwargs = {**dict(s.value.kwargs), "base": placed[id(s)]}
            s = replace(s, value=make_call(RESERVE, (), kwargs, loc=s.value.loc))
        stmts.append(s)
    return replace(fn, body=SeqStmts(tuple(stmts), fn.body.loc))


def auto_ring_names(fn: Function) -> tuple[str, ...]:
    """The ring names ExpandMixedKernel gives ``fn``'s pipes (``<kernel>_c2v_slot_buffer`` /
    ``<kernel>_v2c_slot_buffer``, the kernel being ``fn``'s name without ``_aic``/``_aiv``)."""
    base = fn.name.removesuffix("_aic").removesuffix("_aiv")
    return (f"{base}_c2v_slot_buffer", f"{base}_v2c_slot_buffer")


def has_auto_ring(fn: Function, space: MemorySpace) -> bool:
    """True when a ring in ``space`` is one ExpandMixedKernel made (its depth is then
    ``pl.cross_core_slot``; a hand-written ``pl.reserve_buffer`` is not resized by it)."""
    names = auto_ring_names(fn)
    return any(sp is space and s.value.kwarg("name") in names for s, sp, _, _ in ring_layout(fn))
