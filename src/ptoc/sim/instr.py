"""The simulator's unit of work: one dynamic instruction after loop unrolling.

Why a separate, model-independent record: the scheduler, race checker, data executor
and trace writer all work on this flat stream, so they do not care how the PTO text was
spelled. The scalar unit (``ptoc.sim.core.issue``) produces it from a parsed PTO module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ptoc.backend.pipes import Pipe
from ptoc.errors import SourceLoc
from ptoc.pto.sync_access import ranges_overlap

#: Instruction kinds.
WORK, SET, WAIT, BARRIER = 0, 1, 2, 3


@dataclass(slots=True)
class Access:
    """A byte range [lo, hi) of one buffer that an instruction reads or writes.

    ``buffer`` names the space (``Mat``, ``Acc``, ... or ``GM %arg0``). For GM windows
    ``rect`` = (view key, row0, row1, col0, col1) lets two windows of the same tensor view
    be compared exactly instead of by their byte bounding boxes. ``atomic`` marks the write
    of an atomic-add store. ``box`` = (sizes, element strides, element bytes) of a GM window:
    its exact bytes from ``lo`` (the never-written-read check, ``ptoc.sim.unwritten``, must
    not take a strided window for its bounding range; None: the bytes [lo, hi)).
    """

    buffer: str
    lo: int
    hi: int
    rect: tuple | None = None
    atomic: bool = False     # an atomic-add write: two of them commute (no race)
    box: tuple | None = None

    def overlaps(self, other: "Access") -> bool:
        return ranges_overlap(self, other)

    def intersection(self, other: "Access") -> tuple[int, int]:
        return max(self.lo, other.lo), min(self.hi, other.hi)


@dataclass(slots=True)
class Instr:
    """One issued instruction.

    ``read`` runs at the instruction's start and returns a payload; ``commit`` runs at its
    end with that payload. Either may be None for instructions with no data effect.
    ``static_id`` identifies the PTO op the instruction came from (one op unrolled many
    times shares it), so race reports can be grouped per source pair. ``cost_key`` is the
    profile method and arguments ``cost`` came from, so a stream can be re-timed under
    another profile without being rebuilt (``ptoc.sim.retime``).

    In a core group, ``core`` is the index of the core that issued it and ``unit`` its name
    (``aic``, ``aiv0`` ...); ``deps`` are instructions of other cores that must end before it
    starts (the cross-core pipe protocol: a pop after its push, a push after the free of its
    slot; ``-1`` marks a partner that is never issued) and ``wait_note`` says what they are.
    """

    seq: int
    pipe: Pipe
    kind: int
    name: str
    loc: SourceLoc | None
    cost: int = 0
    reads: tuple[Access, ...] = ()
    writes: tuple[Access, ...] = ()
    flag: tuple[Pipe, Pipe, int] | None = None
    read: Callable[[], Any] | None = None
    commit: Callable[[Any], None] | None = None
    static_id: int = -1
    line: int = 0
    file: str = "<pto>"
    core: int = 0
    unit: str = ""
    deps: tuple[int, ...] = ()
    wait_note: str = ""
    cost_key: tuple | None = None

    def where(self) -> str:
        """``k.pto line 7`` plus the DSL ``loc(...)`` when the op carries one."""
        text = f"{self.file} line {self.line}"
        return f"{text} (loc {self.loc})" if self.loc is not None else text

    @property
    def pto_loc(self) -> SourceLoc:
        """Position of the op in the PTO text (what errors point at)."""
        return SourceLoc(self.file, self.line, 0)

    def tag(self) -> str:
        """``pto.tload #12``, with ``[aiv0]`` after the number in a core group."""
        unit = f" [{self.unit}]" if self.unit else ""
        return f"{self.name} #{self.seq}{unit}"

    def label(self) -> str:
        """Short human name, e.g. ``pto.tload #12 at k.pto line 7``."""
        return f"{self.tag()} at {self.where()}"


def flag_name(flag: tuple[Pipe, Pipe, int]) -> str:
    src, dst, ident = flag
    return f"{src.name}->{dst.name} EVENT_ID{ident}"
