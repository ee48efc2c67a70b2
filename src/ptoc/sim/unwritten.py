"""Reads of never-written GM: bytes a task or the host reads before anything wrote them.

Why: on a device, a tensor made by ``pl.create_tensor`` without ``init_value=`` holds
whatever its memory held before, and a kernel's ``pl.Out`` parameter bound to such a tensor
has no defined contents before the kernel writes it. The simulator's GM starts zeroed, so a
program that reads those bytes first computes with zeros here and with garbage on the
device — a silent wrong result. This module finds such reads and reports them the way races
are reported (a list on the run's result, a warning, ``ptoc run``'s report).

What starts undefined: an allocation registered with ``DefinedBytes.undefined`` (the
orchestration registers every ``pl.create_tensor`` without ``init_value=``). Everything
else is defined from the start: a tensor the caller passes is staged from the host (PyPTO's
runtime uploads every host tensor argument, ``Out`` parameters included, and allocates the
outputs of an inputs-only call as zero-filled host tensors), and ``init_value=`` fills one.

How: per tracked allocation, a numpy bitmap of its written bytes. Each GM access is one
vectorised numpy operation on a strided view of that bitmap (the access's exact bytes:
``Access.box``), never a loop over bytes; a tensor whose every byte is written stops being
tracked, so later tasks on it cost nothing. A task's accesses are taken in simulated time —
reads at an instruction's start, writes at its end, writes first at equal times — the
order the data executor replays them in. An atomic-add store reads what it adds to, so it
counts as a read of its bytes too.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from ptoc.errors import SourceLoc, count
from ptoc.sim.instr import Access

#: what to do about a reported read
FIX = ("write the bytes before reading them, give pl.create_tensor an init_value=, or, when "
       "a kernel reads its pl.Out parameter, make it pl.InOut if its prior contents matter "
       "(and pass it a tensor that holds them)")


@dataclass
class UnwrittenRead:
    """A read of bytes ``[lo, hi)`` (the bounding range of the never-written bytes it read;
    ``unwritten`` of them) of allocation ``tensor``, made by ``reader`` at ``where`` in
    ``task`` (``host`` for the orchestration itself). ``count`` is how many dynamic
    instances of this read (one source op, one tensor) found unwritten bytes; the range is
    the union of theirs."""

    tensor: str
    origin: str
    lo: int
    hi: int
    unwritten: int
    elements: str
    reader: str
    where: str
    task: str
    count: int = 1

    def __str__(self) -> str:
        times = f" ({self.count} reads)" if self.count > 1 else ""
        return (f"{self.reader} at {self.where} (task {self.task}) reads '{self.tensor}' "
                f"{self.elements}, bytes [{self.lo}, {self.hi}), {self.unwritten} of them "
                f"never written ('{self.tensor}': {self.origin}){times}")


class _Bits:
    """The written bytes of one tracked allocation, and how to name its elements."""

    __slots__ = ("name", "written", "left", "shape", "dtype", "origin")

    def __init__(self, name: str, nbytes: int, shape: tuple[int, ...], dtype, origin: str):
        self.name = name
        self.written = np.zeros(nbytes, dtype=bool)
        self.left = nbytes
        self.shape, self.dtype, self.origin = shape, dtype, origin

    def view(self, lo: int, hi: int, box) -> tuple[np.ndarray, tuple[int, ...]]:
        """The bitmap bytes an access covers (a view) and their byte strides: [lo, hi), or
        the strided window ``box`` (``Access.box``) when its bytes are not that one run."""
        size = self.written.size
        if box is not None:
            sizes, strides, item = box
            if hi - lo != item * prod(sizes):
                shape = (*sizes, item)
                strides = (*(s * item for s in strides), 1)
                if lo + sum((n - 1) * s for n, s in zip(shape, strides)) < size:
                    return np.ndarray(shape, bool, self.written, lo, strides), strides
        return self.written[lo:min(hi, size)], (1,)

    def describe(self, lo: int, hi: int) -> str:
        """``elements [64, 128) ([1, 0] .. [1, 63])`` of the tensor's own element type."""
        item = self.dtype.nbytes
        first, end = lo // item, -(-hi // item)
        text = f"elements [{first}, {end})"
        if len(self.shape) > 1:
            a = [int(i) for i in np.unravel_index(first, self.shape)]
            b = [int(i) for i in np.unravel_index(end - 1, self.shape)]
            text += f" ({a} .. {b})"
        return text


class DefinedBytes:
    """Which bytes of each undefined-at-start GM allocation a run has written so far, and
    the reads of bytes it had not (``reads``)."""

    def __init__(self):
        self._bits: dict[str, _Bits] = {}
        self._found: dict[tuple, UnwrittenRead] = {}

    @property
    def reads(self) -> list[UnwrittenRead]:
        return list(self._found.values())

    def undefined(self, tensor, origin: str) -> None:
        """Track ``tensor``'s allocation (a ``GMTensor`` that is all of it), which holds no
        defined bytes yet; ``origin`` says where it was made (for reports)."""
        alloc = tensor.alloc
        self._bits[alloc.name] = _Bits(alloc.name, alloc.nbytes, tensor.shape, tensor.dtype, origin)

    def tracked(self, regions) -> dict[str, tuple[_Bits, int]]:
        """{``GM %name``: (bits, 0)} for the tracked allocations among ``regions``."""
        if not self._bits:
            return {}
        found = {}
        for region in regions:
            bits = self._bits.get(getattr(getattr(region, "alloc", None), "name", None))
            if bits is not None:
                found[f"GM %{region.alloc.name}"] = (bits, 0)
        return found

    def replayed(self, recorded, regions) -> dict[str, tuple[_Bits, int]]:
        """Like ``tracked`` for instructions issued on the ``recorded`` task's regions and
        replayed on ``regions`` (aliased alike): each recorded allocation maps to the new
        one, with the byte shift between the two regions."""
        found = {}
        for old, new in zip(recorded, regions):
            bits = self._bits.get(getattr(getattr(new, "alloc", None), "name", None))
            if bits is not None:
                found[f"GM %{old.alloc.name}"] = (bits, new.start - old.start)
        return found

    def task(self, label: str, timed, buffers: dict[str, tuple[_Bits, int]]) -> None:
        """Check one task's accesses: ``timed`` yields (start, end, instruction) with the
        instruction's ``reads``/``writes`` (Access) in the task's time; ``buffers`` maps the
        GM buffers to track (``tracked``/``replayed``). A load of never-written bytes into
        a tile that nothing reads before it is overwritten or the task ends is not
        reported: the garbage is never used (a kernel that loads an accumulator on every
        iteration but uses it only after the first)."""
        if not buffers:
            return
        order = _in_time(timed)
        loads = []
        for phase, ins in order:
            for access in ins.reads if phase else ins.writes:
                if access.buffer in buffers:
                    self._task_access(buffers, phase, access, ins, label, loads)
        if loads:
            for ins, _, bits, holes in _used(loads, order):
                self._report(bits, holes, ins.name, _where(ins), label)

    def _task_access(self, buffers, phase: int, access: Access, ins, label: str, loads: list):
        """One GM access of a task (``phase`` 1: a read, 0: a write): check, then mark it. A
        load's report waits in ``loads`` until ``_used`` says its tile is read."""
        bits, shift = buffers[access.buffer]
        if phase == 1 or access.atomic:
            holes = _holes(bits, access, shift)
            if holes is not None:
                local = [w for w in ins.writes if w.buffer not in buffers]
                if local and not access.atomic:
                    loads.append((ins, local, bits, holes))   # reported if used
                else:
                    self._report(bits, holes, ins.name, _where(ins), label)
        self._mark(bits, access, shift)

    def host_read(self, region, reader: str, loc: SourceLoc | None) -> None:
        """The orchestration (or the dispatch point) reads ``region`` (a ``GMTensor``)."""
        bits = self._bits.get(region.alloc.name)
        if bits is not None:
            self._check(bits, _region_access(region), 0, reader,
                        str(loc) if loc is not None else "the orchestration", "host")

    def host_write(self, region) -> None:
        """The orchestration writes ``region`` (a ``GMTensor``)."""
        bits = self._bits.get(region.alloc.name)
        if bits is not None:
            self._mark(bits, _region_access(region), 0)

    def _mark(self, bits: _Bits, access: Access, shift: int) -> None:
        view, _ = bits.view(access.lo + shift, access.hi + shift, access.box)
        bits.left -= view.size - int(np.count_nonzero(view))
        view[...] = True
        if bits.left <= 0 and bits.written.all():   # every byte defined: stop tracking
            self._bits.pop(bits.name, None)

    def _check(self, bits: _Bits, access: Access, shift: int, reader: str, where: str,
               task: str) -> None:
        holes = _holes(bits, access, shift)
        if holes is not None:
            self._report(bits, holes, reader, where, task)

    def _report(self, bits: _Bits, holes: tuple[int, int, int], reader: str, where: str,
                task: str) -> None:
        first, end, count = holes
        key = (reader, where, bits.name)
        found = self._found.get(key)
        if found is None:
            self._found[key] = UnwrittenRead(bits.name, bits.origin, first, end, count,
                                             bits.describe(first, end), reader, where, task)
            return
        found.count += 1
        found.lo, found.hi = min(found.lo, first), max(found.hi, end)
        found.unwritten = max(found.unwritten, count)
        found.elements = bits.describe(found.lo, found.hi)


def _holes(bits: _Bits, access: Access, shift: int) -> tuple[int, int, int] | None:
    """(first, end, count) of the never-written bytes ``access`` covers, or None."""
    lo = access.lo + shift
    view, strides = bits.view(lo, access.hi + shift, access.box)
    if view.all():
        return None
    holes = np.nonzero(~view)
    addr = lo + sum(i * s for i, s in zip(holes, strides))
    return int(addr.min()), int(addr.max()) + 1, int(addr.size)


def _in_time(timed) -> list[tuple[int, object]]:
    """(phase, instruction) for each instruction's reads (phase 1, at its start) and writes
    (phase 0, at its end) of ``timed`` (start, end, instruction), in simulated time, writes
    first at equal times, then in issue order: the order the data executor replays them."""
    events = []
    for start, end, ins in timed:
        if ins.reads:
            events.append((start, 1, len(events), ins))
        if ins.writes:
            events.append((end, 0, len(events), ins))
    events.sort(key=lambda e: e[:3])
    return [(phase, ins) for _, phase, _, ins in events]


def _used(loads: list, order: list):
    """The loads (instruction, its on-chip destinations, ...) whose destination bytes a
    later instruction of the task reads before a write covers them (``order``: the task's
    ``_in_time``, the order its GM accesses were checked in)."""
    position = {id(ins): k for k, (phase, ins) in enumerate(order) if phase == 0}
    for load in loads:
        ins, local = load[0], list(load[1])
        for phase, other in order[position[id(ins)] + 1:]:
            if phase == 1 and any(r.overlaps(d) for r in other.reads for d in local):
                yield load
                break
            if phase == 0:
                local = [d for d in local if not any(_covers(w, d) for w in other.writes)]
                if not local:
                    break


def _covers(write: Access, dest: Access) -> bool:
    """Whether ``write`` overwrites every byte of ``dest``. A tile access is the bounding
    byte range of a window of a possibly wider tile (``TileOps._access``), so a write whose
    range merely contains ``dest``'s (a column of more rows) may miss most of its bytes;
    only the same window (same buffer, range and GM box) is known to rewrite them all."""
    return (write.buffer, write.lo, write.hi, write.box) == (dest.buffer, dest.lo, dest.hi,
                                                             dest.box)


def _where(ins) -> str:
    """``k.pto line 7`` plus the DSL location when the op carries one (an Instr or its
    record)."""
    text = f"{ins.file} line {ins.line}"
    return f"{text} (loc {ins.loc})" if ins.loc is not None else text


def _region_access(region) -> Access:
    """A ``GMTensor``'s bytes as an Access (its exact bytes when it is strided)."""
    lo, hi = region.byte_span()
    return Access(f"GM %{region.alloc.name}", lo, hi,
                  box=(region.shape, region.strides, region.dtype.nbytes))


def unwritten_message(reads: list[UnwrittenRead]) -> str:
    """One line per read (the first three) under a count, and the fix."""
    shown = "\n".join(f"  {read}" for read in reads[:3])
    more = f"\n  ... and {len(reads) - 3} more" if len(reads) > 3 else ""
    return (f"the run reads GM that nothing wrote ({count(len(reads), 'read')}): ptoc's GM "
            f"starts zeroed, a device's holds whatever was there, so the outputs may differ on "
            f"a device\n{shown}{more}\n  fix: {FIX}")


__all__ = ["FIX", "DefinedBytes", "UnwrittenRead", "unwritten_message"]
