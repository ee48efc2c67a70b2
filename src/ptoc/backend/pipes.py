"""The execution pipes of one AI Core and the PTO names they go by.

Every non-scalar instruction runs on exactly one pipe; flags name a (source pipe,
destination pipe) pair. The numeric values are the hardware pipe ids so that a pipe
prints and parses the same way the PTO dialect and the pto-isa headers spell it.
"""

from __future__ import annotations

import enum
from functools import cached_property

from ptoc.errors import PtocError


class PipeError(PtocError, ValueError):
    """A pipe name in PTO text or an API call is not one of the known pipes."""


class Pipe(enum.IntEnum):
    """A hardware pipe (instruction queue) of an AI Core.

    Values are the hardware ids [S] (hw-model.md §2.1: pto-isa include/pto/common/cpu_stub.hpp;
    pypto include/pypto/ir/pipe.h). ``PIPE_ALL`` is only a barrier operand.
    The names are ``cached_property``s (kept in the member's ``__dict__``: the PTO printer
    and the sync passes read them for every flag).
    """

    PIPE_S = 0      # scalar unit: issue, address arithmetic, flags
    PIPE_V = 1      # vector unit: UB -> UB tile ops
    PIPE_MTE1 = 2   # L1 -> L0A / L0B / Bias moves
    PIPE_MTE2 = 3   # GM -> L1 / UB loads
    PIPE_MTE3 = 4   # UB / L1 -> GM stores
    PIPE_M = 5      # cube MAD (trace name CUBE)
    PIPE_ALL = 6    # barrier operand meaning "every pipe"
    PIPE_FIX = 7    # FIXPIPE: L0C drains to GM / L1 / UB

    @cached_property
    def pto_name(self) -> str:
        """Spelling in PTO text, e.g. ``PIPE_MTE2``."""
        return self.name

    @cached_property
    def short(self) -> str:
        """Name without the ``PIPE_`` prefix (``MTE2``, ``M``, ``FIX``)."""
        return self.name[len("PIPE_"):]

    @cached_property
    def lane(self) -> str:
        """Trace lane label, as the PyPTO trace cleaner names the lanes."""
        return _LANES[self]

    @classmethod
    def parse(cls, text: str) -> "Pipe":
        """Accept ``PIPE_MTE2``, ``MTE2`` or ``pipe_mte2``; raise PipeError otherwise."""
        key = text.strip().upper()
        if not key.startswith("PIPE_"):
            key = "PIPE_" + key
        try:
            return cls[key]
        except KeyError:
            valid = ", ".join(p.name for p in cls)
            raise PipeError(f"unknown pipe {text!r}", hint=f"use one of {valid}") from None


_LANES = {
    Pipe.PIPE_S: "SCALAR",
    Pipe.PIPE_V: "VECTOR",
    Pipe.PIPE_MTE1: "MTE1",
    Pipe.PIPE_MTE2: "MTE2",
    Pipe.PIPE_MTE3: "MTE3",
    Pipe.PIPE_M: "CUBE",
    Pipe.PIPE_ALL: "ALL",
    Pipe.PIPE_FIX: "FIXPIPE",
}

#: Pipes that own an in-order instruction queue (everything but scalar and the ALL alias).
QUEUE_PIPES: tuple[Pipe, ...] = (
    Pipe.PIPE_MTE2, Pipe.PIPE_MTE1, Pipe.PIPE_M, Pipe.PIPE_FIX, Pipe.PIPE_V, Pipe.PIPE_MTE3,
)

#: Trace lane order used by the PyPTO trace cleaner (hw-model.md §6.1 "Output"):
#: MTE2 -> MTE1 -> CUBE -> VECTOR -> FIXPIPE -> MTE3.
TRACE_LANE_ORDER: tuple[Pipe, ...] = (
    Pipe.PIPE_MTE2, Pipe.PIPE_MTE1, Pipe.PIPE_M, Pipe.PIPE_V, Pipe.PIPE_FIX, Pipe.PIPE_MTE3,
)

#: Event ids per directed pipe pair: EVENT_ID0..EVENT_ID7 (hw-model.md §3.1 [S],
#: PTOAS docs/PTO_IR_manual.md §3.3; PTOAS kTotalEventIdNum = 8).
NUM_EVENT_IDS = 8
