"""Dispatchers: what runs the tasks the orchestration interpreter submits.

A dispatcher has ``submit(task)`` (called in program order, which is a dependency order),
``runs`` (one ``KernelRun`` per task it keeps a simulator result for; a task whose dispatch
predicate is false runs nothing and has none) and ``finish()``
(the chip's result, or None). ``InOrderDispatcher`` runs each task at once, alone, on one
simulated core (or core group) — the run's time is the sum of the tasks'.
``ChipDispatcher`` hands the tasks to the simulated chip (``ptoc.sim.chip``): data at once,
timing of the whole graph over the chip's cores at the end. Every task reads and writes the
one shared GM, so its results are where the next task looks for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptoc.errors import InternalError, RuntimeConfigError
from ptoc.outputs import safe_name
from ptoc.sim.task import Task, UndeclaredWriteError, check_predicate_read, check_writes
from ptoc.sim.unwritten import DefinedBytes


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
                 limits=None, defined: DefinedBytes | None = None):
        self.target = target
        self.profile = profile
        self.mode = mode
        self.trace_dir = trace_dir
        self.limits = limits
        self.defined = defined or DefinedBytes()
        self.runs: list[KernelRun] = []
        self.skipped: list[Task] = []

    def submit(self, task: Task) -> None:
        if task.predicate is not None:
            check_predicate_read(self.defined, task)
            if not task.predicate.holds():
                self.skipped.append(task)     # every earlier task has run: its dispatch point
                return
        sim = run_task(task, target=self.target, profile=self.profile, mode=self.mode,
                       limits=self.limits)
        try:
            check_writes(task, sim.instructions)
        except UndeclaredWriteError as exc:   # the compiler derived the directions: its bug
            raise InternalError(exc.message, exc.loc, hint=exc.hint) from None
        buffers = self.defined.tracked(task.args)
        if buffers:
            self.defined.task(task.label(), ((r.start, r.end, r) for r in sim.instructions),
                              buffers)
        trace = None
        if self.trace_dir is not None:
            trace = self.trace_dir / f"{safe_name(task.kernel)}_{len(self.runs)}.json"
            sim.write_trace(trace)
        self.runs.append(KernelRun(task.kernel, sim, trace, task))

    def finish(self):
        return None


class ChipDispatcher:
    """Runs the task graph on the simulated chip (``RunConfig(chip=True)``)."""

    def __init__(self, *, target: str, profile, mode: str, clusters: int | None = None,
                 limits=None, defined: DefinedBytes | None = None):
        from ptoc.sim.chip import ChipSimulator

        self.chip = ChipSimulator(target=target, profile=profile, mode=mode, clusters=clusters,
                                  limits=limits, defined=defined)
        self.runs: list[KernelRun] = []

    def submit(self, task: Task) -> None:
        try:
            self.chip.submit(task)
        except UndeclaredWriteError as exc:   # the compiler derived the directions: its bug
            raise InternalError(exc.message, exc.loc, hint=exc.hint) from None

    def finish(self):
        return self.chip.finish()


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
                              mode=mode, limits=limits)
    return simulate(task.module, list(task.args), target=target, profile=profile, mode=mode,
                    kernel=task.kernel, limits=limits)
