"""Errors the simulator raises for programs it cannot run (hard sync errors use
``ptoc.errors.DeadlockError`` / ``FlagProtocolError``)."""

from __future__ import annotations

from ptoc.errors import PtocError, SimulationError


class SimProgramError(PtocError, RuntimeError):
    """The PTO program cannot run: bad operand, unsupported op, missing address or binding."""


class SimLimitError(SimulationError):
    """The run would exceed the simulator's limits (instructions, scalar steps, memory)."""
