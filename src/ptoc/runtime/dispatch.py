"""Dispatchers: what runs the tasks the orchestration interpreter submits.

A dispatcher has ``submit(task)`` (called in program order, which is a dependency order)
and ``runs`` (one ``KernelRun`` per task). ``InOrderDispatcher`` runs each task at once,
alone, on one simulated core (or core group) — the run's time is the sum of the tasks'.
Every task reads and writes the one shared GM, so its results are where the next task
looks for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptoc.errors import InternalError, RuntimeConfigError
from ptoc.outputs import safe_name
from ptoc.sim.task import Task


@dataclass
class KernelRun:
    """One kernel invocation: its name, the simulator result and the trace file if written."""

    kernel: str
    sim: Any
    trace_path: Path | None = None
    task: Task | None = None


class InOrderDispatcher:
    """Runs each task when it is submitted, on one simulated core (a Group on one core
    group), with the run's target, profile and simulation mode."""

    def __init__(self, *, target: str, profile, mode: str, trace_dir: Path | None = None,
                 limits=None):
        self.target = target
        self.profile = profile
        self.mode = mode
        self.trace_dir = trace_dir
        self.limits = limits
        self.runs: list[KernelRun] = []

    def submit(self, task: Task) -> None:
        sim = run_task(task, target=self.target, profile=self.profile, mode=self.mode,
                       limits=self.limits)
        check_writes(task, sim)
        trace = None
        if self.trace_dir is not None:
            trace = self.trace_dir / f"{safe_name(task.kernel)}_{len(self.runs)}.json"
            sim.write_trace(trace)
        self.runs.append(KernelRun(task.kernel, sim, trace, task))


def run_task(task: Task, *, target: str, profile, mode: str, limits=None):
    """Simulate one task alone: its kernel (or its core group) on its bound GM regions."""
    from ptoc.sim import simulate, simulate_group
    from ptoc.sim.group import is_group_module

    if is_group_module(task.module):
        if mode == "serial":
            raise RuntimeConfigError(
                f"'{task.kernel}' runs on a core group (an AIC and its AIVs), which has no "
                "serial mode", task.loc, hint="use sim_mode='reference' or 'fast'")
        return simulate_group(task.module, list(task.args), target=target, profile=profile,
                              mode=mode)
    return simulate(task.module, list(task.args), target=target, profile=profile, mode=mode,
                    kernel=task.kernel, limits=limits)


def check_writes(task: Task, sim) -> None:
    """Every GM byte the task wrote lies in a region it declared written (``Out``/``InOut``):
    the dependencies of later tasks are inferred from those declarations."""
    declared: dict[str, list[tuple[int, int]]] = {}
    for region in task.writes:
        declared.setdefault(f"GM %{region.name}", []).append(region.byte_span())
    for record in sim.instructions:
        for access in record.writes:
            if not access.buffer.startswith("GM %"):
                continue
            spans = declared.get(access.buffer, ())
            if any(lo <= access.lo and access.hi <= hi for lo, hi in spans):
                continue
            name = _param_of(task, access)
            what = f"its In parameter {name!r}" if name else "GM outside its Out parameters"
            raise InternalError(
                f"kernel '{task.kernel}' wrote {what} ({access.buffer} bytes [{access.lo}, "
                f"{access.hi}), {record.name} at {record.file} line {record.line}); the write "
                "would go unseen by the tasks that depend on it", task.loc,
                hint="declare the parameter pl.Out or pl.InOut")


def _param_of(task: Task, access) -> str | None:
    """The parameter whose region holds ``access`` (for the message)."""
    for name, arg in zip(task.params, task.args):
        span = getattr(arg, "byte_span", None)
        if span is not None and f"GM %{arg.name}" == access.buffer:
            lo, hi = span()
            if lo <= access.lo < hi:
                return name
    return None
