"""``simulate``: run a PTO kernel on the simulated AI Core.

Why one entry point: it wires the stages in their fixed order — bind tensors, let the
scalar unit build the instruction stream, time it, check races, replay the data — and
turns every failure into a ``PtocError`` that says what to fix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptoc.backend import get_profile, get_target
from ptoc.collector import collector_paused
from ptoc.errors import PtocError, SourceLoc

from ptoc.pto.sync_access import has_sync
from ptoc.sim.execute import execute
from ptoc.pto.model import Instruction, walk
from ptoc.pto.ops import VIEW_OPS
from ptoc.sim.core.estimate import estimate
from ptoc.sim.core.binding import Bindings
from ptoc.sim.core.issue import ScalarUnit, SimProgramError, bind_params
from ptoc.sim.core.memory import BufferMemory
from ptoc.sim.errors import SimLimitError
from ptoc.sim.limits import DEFAULT_LIMITS, SimLimits, check, human_bytes, memory_bytes
from ptoc.sim.races import find_races
from ptoc.sim.result import SimResult, build_result
from ptoc.sim.schedule import FLAG_MODES, schedule

MODES = ("reference", "fast", "serial")
LEVEL2_NOTE = ("Level-2 PTO (no set_flag/wait_flag/barrier): synchronised by "
               "ptoc.pto.insert_sync before the timed run")
PLANNED_NOTE = ("tiles without an address were placed by ptoc.pto.plan_memory "
                "(PTOAS-style planner)")


def simulate(pto, tensors, *, target="a2a3", profile=None, mode: str = "reference",
             kernel: str | None = None, flag_mode: str = "bit",
             limits: SimLimits | None = None) -> SimResult:
    """Run ``pto`` (PTO text or a parsed ``ptoc.pto.Module``) with ``tensors`` bound.

    ``tensors``: dict keyed by kernel parameter name (``"arg0"`` or ``"%arg0"``) or a
    sequence in parameter order; numpy arrays (torch tensors accepted) for ``!pto.ptr``
    parameters and Python numbers for scalar parameters. Inputs are copied; the result's
    ``outputs`` hold every GM tensor after the run.

    ``mode``: ``reference`` (pto-isa MAD order, timed), ``fast`` (float64 BLAS MAD, timed)
    or ``serial`` (reference numerics, every instruction after the previous one; flags
    are then only checked for balance by issue order).

    Level-2 input (no sync ops) is synchronised by ``ptoc.pto.insert_sync`` first (except
    in ``serial`` mode), and tiles without an ``addr`` are placed by
    ``ptoc.pto.plan_memory``; both are recorded in ``result.notes``.
    ``profile``: a timing profile name (default: the target's).
    ``flag_mode``: ``bit`` (hardware: a second set before the wait is a protocol error) or
    ``counter`` (sets are counted, as in the pto-isa perf-sim).
    ``limits``: instructions, scalar steps and memory one run may use (``SimLimits``;
    default ``ptoc.sim.limits.DEFAULT_LIMITS``); a run estimated or found to exceed them
    raises ``SimLimitError`` with the numbers.
    """
    with collector_paused():
        return _simulate(pto, tensors, target=target, profile=profile, mode=mode,
                         kernel=kernel, flag_mode=flag_mode, limits=limits or DEFAULT_LIMITS)


@dataclass
class _Prepared:
    """A kernel made ready to issue: synchronised, placed, bound, its scalar unit built."""

    module: object
    kernel: object
    unit: ScalarUnit
    bound: Bindings
    level: int
    notes: list[str]
    tensor_bytes: int
    filename: str


def _resolve(target, profile, mode, flag_mode):
    tgt, prof = resolve_run(target, profile, mode, MODES, flag_mode)
    if prof.target != tgt.name:
        raise SimProgramError(
            f"timing profile {prof.name} describes target {prof.target}, not {tgt.name}",
            hint=f"pass target={prof.target!r} or a profile of {tgt.name}")
    return tgt, prof


@dataclass(frozen=True)
class ReadyKernel:
    """A kernel ready to bind: placed (PTOAS-style planner) and synchronised when it
    needed it; ``level`` is the sync level of the input, ``notes`` say what was done."""

    module: object
    kernel: object
    level: int
    notes: tuple[str, ...]
    filename: str


def ready_kernel(pto, tgt, *, mode: str, kernel: str | None) -> ReadyKernel:
    """Plan addresses and insert sync when needed (what ``simulate`` does first; the chip
    simulator does it once per kernel of a task graph)."""
    module = as_module(pto)
    filename = getattr(module, "filename", "<pto>")
    kern = _kernel(module, kernel)
    notes: list[str] = []
    if needs_addresses(kern):
        from ptoc.pto.planner import plan_memory
        module = plan_memory(module, tgt)
        kern = _kernel(module, kern.name)
        notes.append(PLANNED_NOTE)
    level = 3 if has_sync(kern) else 2  # a user's pto.barrier alone is still Level 2
    if level == 2 and mode != "serial":
        from ptoc.pto import insert_sync
        synced = insert_sync(module, target=tgt)
        module = synced.module
        kern = _kernel(module, kern.name)
        notes.append(LEVEL2_NOTE)
        notes.extend(f"insert_sync: {note}" for note in synced.notes)
    return ReadyKernel(module, kern, level, tuple(notes), filename)


def _prepare(pto, tensors, tgt, prof, *, mode: str, kernel, limits) -> _Prepared:
    """Plan addresses and insert sync when needed, bind ``tensors``, check the limits."""
    ready = ready_kernel(pto, tgt, mode=mode, kernel=kernel)
    module, kern, level, filename = ready.module, ready.kernel, ready.level, ready.filename
    notes = list(ready.notes)
    bound = bind_params(kern, tensors, filename)
    tensor_bytes = sum(region.nbytes for region in bound.regions.values())
    _check_estimate(kern, bound.env, tensor_bytes, limits, filename)
    memory = BufferMemory(dict(tgt.capacities), tgt.address_alignment)
    unit = ScalarUnit(kern, bound.env, tgt, prof, memory, limits=limits,
                      mad_mode="fast" if mode == "fast" else "reference", filename=filename,
                      regions=bound.regions)
    return _Prepared(module, kern, unit, bound, level, notes, tensor_bytes, filename)


def _guarded(prep: _Prepared, run):
    """``run()``, with running out of memory reported as a SimLimitError."""
    try:
        return run()
    except MemoryError:
        used = memory_bytes(len(prep.unit.instrs), prep.tensor_bytes)
        raise SimLimitError(
            f"kernel @{prep.kernel.name} ran out of memory after {len(prep.unit.instrs):,} "
            f"instructions (about {human_bytes(used)} with {human_bytes(prep.tensor_bytes)} "
            f"of tensors)", SourceLoc(prep.filename, prep.kernel.line, 0),
            hint="simulate a smaller problem, or lower SimLimits(max_bytes=...) to fail "
                 "earlier") from None


def _simulate(pto, tensors, *, target, profile, mode, kernel, flag_mode, limits) -> SimResult:
    """The body of ``simulate`` (run with the garbage collector paused)."""
    tgt, prof = _resolve(target, profile, mode, flag_mode)
    prep = _prepare(pto, tensors, tgt, prof, mode=mode, kernel=kernel, limits=limits)
    return _guarded(prep, lambda: _run(prep, tgt, prof, mode, flag_mode))


def _check_estimate(kern, env, tensor_bytes: int, limits: SimLimits, filename: str) -> None:
    """Refuse a run whose static estimate exceeds ``limits`` before anything is built."""
    est = estimate(kern, env)
    check(f"kernel @{kern.name}", limits, instructions=est.instructions,
          scalar_steps=est.scalar_steps, memory=memory_bytes(est.instructions, tensor_bytes),
          detail=est.describe(filename), loc=SourceLoc(filename, kern.line, 0))


def _run(prep: _Prepared, tgt, prof, mode, flag_mode) -> SimResult:
    """Issue, schedule, check races and replay the data of one bound kernel."""
    instrs = prep.unit.run()
    serial = mode == "serial"
    floor = prof.floor_cycles(staged_bytes=prep.tensor_bytes)
    meta = dict(target=tgt.name, profile=prof.name, mode=mode, sync_level=prep.level,
                serial=serial, floor_cycles=floor)

    def partial(sch):
        # the races among the instructions that did run often name the missing flag
        races = [] if serial else find_races(instrs, sch)
        return build_result(instrs, sch, races=races, outputs={}, complete=False, **meta)

    sch = schedule(instrs, serial=serial, issue_cycles=prof.issue_cycles,
                   sync_latency=prof.sync_latency_cycles, flag_mode=flag_mode,
                   make_timeline=partial)
    races = [] if serial else find_races(instrs, sch)
    execute(instrs, sch, timed=bool(races))
    outputs = prep.bound.outputs()
    result = build_result(instrs, sch, races=races, outputs=outputs, **meta)
    result.notes.extend(prep.notes)
    arch = getattr(prep.module, "target_arch", None)
    if arch and arch != tgt.name:
        result.notes.append(f"the module says pto.target_arch = {arch!r} but it ran on target "
                            f"{tgt.name!r}; pass target={arch!r} to use that core's buffers")
    return result


def resolve_run(target, profile, mode: str, modes: tuple[str, ...], flag_mode: str):
    """(Target, TimingProfile) of a run, after checking its mode and flag mode."""
    if flag_mode not in FLAG_MODES:
        raise SimProgramError(f"unknown flag mode {flag_mode!r}",
                              hint=f"use one of {', '.join(FLAG_MODES)}")
    if mode not in modes:
        raise SimProgramError(f"unknown simulation mode {mode!r} for this run",
                              hint=f"use one of {', '.join(modes)}")
    tgt = get_target(target)
    return tgt, get_profile(profile, target=tgt.name)


def _kernel(module, name):
    try:
        return module.kernel(name)
    except (KeyError, IndexError):
        names = ", ".join("@" + k.name for k in module.kernels) or "none"
        raise SimProgramError(f"no kernel {name!r} in the PTO module (kernels: {names})",
                              hint="pass kernel= one of the module's kernel names") from None


def needs_addresses(kernel) -> bool:
    """True when a tile has no ``addr``, a view (PTOAS Level 2) has not been placed, or a
    cross-core ring has no ``base`` (``-1``, AUTO)."""
    return any(isinstance(op, Instruction) and (
        (op.opcode == "pto.alloc_tile" and op.attr("addr") is None)
        or op.opcode in VIEW_OPS
        or (op.opcode == "pto.reserve_buffer" and op.attr("base") == -1))
        for op in walk(kernel.body))


def as_module(pto):
    if isinstance(pto, str):
        try:
            from ptoc.pto import parse
        except ImportError:
            raise PtocError("PTO text parsing is not available in this build (ptoc.pto.parse)",
                            hint="pass a ptoc.pto.Module") from None
        return parse(pto)
    if hasattr(pto, "kernels"):
        return pto
    raise SimProgramError(f"simulate() needs PTO text or a ptoc.pto.Module, got "
                          f"{type(pto).__name__}", hint="pass the .pto file's text")
