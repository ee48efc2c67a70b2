"""The simulated Ascend AI Core: runs PTO assembly with per-pipe timing, exact numerics,
happens-before race detection, deadlock detection and trace export.

Public API:
    simulate(pto, tensors, *, target="a2a3", profile=None, mode="reference", kernel=None)
        -> SimResult
    SimResult, InstrRecord, Race
    numerics: mad, convert, fixpipe_convert (the datapath's rounding rules)
"""

from ptoc.sim.api import MODES, simulate
from ptoc.sim.issue import SimProgramError
from ptoc.sim.memory import MemoryAccessError
from ptoc.sim.races import Race
from ptoc.sim.result import InstrRecord, SimResult

__all__ = ["MODES", "InstrRecord", "MemoryAccessError", "Race", "SimProgramError", "SimResult",
           "simulate"]
