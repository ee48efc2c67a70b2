"""The simulated Ascend AI Core: runs PTO assembly with per-pipe timing, exact numerics,
happens-before race detection, deadlock detection and trace export.

Usage::

    from ptoc.sim import simulate
    res = simulate(pto_text, {"arg0": a, "arg1": b, "arg2": c}, target="a2a3", mode="reference")
    res.outputs["arg2"], res.wall_cycles, res.binding_pipe, res.races
    res.write_trace("t.json")            # Chrome / Perfetto, lanes MTE2 MTE1 CUBE VECTOR FIXPIPE MTE3
    print(res.pipe_summary_csv())

Layers: ``core`` holds what belongs to one AI Core (its scalar unit, tile ops and
on-chip buffers); ``group`` runs one AIC and its AIVs with cross-core pipes
(``simulate_group``); the rest is shared by every layer.

Pipeline (one module each): ``core.issue`` (scalar unit: unroll loops, resolve tiles and
GM windows, lower each op via ``core.tileops`` into an ``instr.Instr``) -> ``schedule`` (per-pipe
in-order queues, flags, barriers, deadlock and flag-protocol errors) -> ``races`` (vector
clocks) -> ``execute`` (reads at start, commits at end) -> ``result`` / ``trace``.

Supported ops: ``pto.tload``, ``tstore``, ``textract``, ``tmov``, ``tinsert``, ``tmatmul``,
``tmatmul.acc``, ``tmatmul.bias``; vector ``tadd tsub tmul tdiv tmax tmin``, ``tadds tsubs
tmuls tdivs tmaxs tmins``, ``texp tlog tsqrt trsqrt trecip tabs tneg trelu``, ``tcvt``
(``rmode``), ``trowsum trowmax trowmin``, ``trowexpand`` and ``trowexpand{add,sub,mul,div,
max,min,expdif}``; ``pto.set_flag`` / ``wait_flag`` / ``barrier``; ``scf.for`` (with
``iter_args``), ``scf.if``, ``arith.*`` scalar ops, ``make_tensor_view``,
``partition_view``, ``alloc_tile`` (with ``addr``).

Public API:
    simulate(pto, tensors, *, target="a2a3", profile=None, mode="reference", kernel=None,
             limits=None) -> SimResult
    SimResult, InstrRecord, Race, SimProgramError, MemoryAccessError
    SimLimits (instructions, scalar steps, memory per run), SimLimitError
    ptoc.sim.numerics: mad, convert, fixpipe_convert (the datapath's rounding rules)
    ptoc.sim.examples: hand-written Level-3 kernels (dbuf_matmul, two_acc_matmul)
"""

from ptoc.sim.api import MODES, simulate
from ptoc.sim.group import GroupResult, simulate_group
from ptoc.sim.errors import SimLimitError, SimProgramError
from ptoc.sim.limits import SimLimits
from ptoc.sim.core.memory import MemoryAccessError
from ptoc.sim.races import Race
from ptoc.sim.result import InstrRecord, SimResult

__all__ = ["MODES", "GroupResult", "InstrRecord", "MemoryAccessError", "Race", "SimLimitError",
           "SimLimits", "SimProgramError", "SimResult", "simulate", "simulate_group"]
