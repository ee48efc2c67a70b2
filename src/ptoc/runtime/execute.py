"""Running a compiled program: what a run returns, and where it starts.

The orchestration interpreter (``ptoc.runtime.orchestration``) turns the entry function's
kernel calls into tasks over one shared GM; a dispatcher (``ptoc.runtime.dispatch``) runs
them. ``run_program`` wires the two for ``CompiledProgram.run``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ptoc.dtypes import FunctionType
from ptoc.errors import RuntimeConfigError
from ptoc.ir.nodes import Function, ReturnStmt, SeqStmts
from ptoc.runtime.config import RunConfig
from ptoc.runtime.dispatch import ChipDispatcher, InOrderDispatcher, KernelRun
from ptoc.runtime.orchestration import Orchestrator
from ptoc.sim.global_memory import GlobalMemory, GMTensor
from ptoc.sim.unwritten import DefinedBytes


@dataclass
class RunResult:
    """What ``CompiledProgram.run`` returns.

    ``cycles`` is the simulated core time of every kernel call (the sum of their walls);
    ``floor_cycles`` what a device adds outside the cores under the run's profile: each
    kernel's launch and the staging of the run's tensors; ``total_cycles`` both.
    On the chip (``RunConfig(chip=True)``), ``chip`` is the ``ChipResult``, ``cycles`` its
    wall (launch and dispatch included) and ``floor_cycles`` the staging alone; ``runs`` is
    empty and ``races`` also holds the races between tasks (as ``("tasks", TaskRace)``).
    ``skipped`` names the tasks whose dispatch predicate was false (``expert#3 at f.py:12``):
    they ran nothing. ``unwritten`` lists the reads of GM bytes nothing had written
    (``ptoc.sim.unwritten.UnwrittenRead``): on a device they read garbage.
    """

    outputs: dict[str, np.ndarray]
    cycles: float
    pipe_busy: dict
    races: list
    runs: list[KernelRun] = field(default_factory=list)
    trace_path: Path | None = None
    floor_cycles: float = 0.0
    chip: object = None
    skipped: list[str] = field(default_factory=list)
    unwritten: list = field(default_factory=list)

    @property
    def total_cycles(self) -> float:
        return self.cycles + self.floor_cycles


def entry_function(program) -> Function:
    """The function a run starts from: the one function no other calls — the orchestration
    (or opaque) function when there is one, else the only kernel."""
    called = _called_functions(program)
    roots = [fn for fn in program.functions if fn.name not in called]
    host = [fn for fn in roots if not fn.func_type.is_kernel]
    if len(host) > 1:
        host = [fn for fn in host if fn.func_type is FunctionType.Orchestration] or host
    if len(host) == 1:
        return host[0]
    kernels = [fn for fn in roots if fn.func_type.is_kernel]
    if not host and len(kernels) == 1:
        return kernels[0]
    names = ", ".join(fn.name for fn in (host or kernels))
    raise RuntimeConfigError(
        f"program '{program.name}' has no single entry function (uncalled: {names})",
        hint="add one @pl.function(type=pl.FunctionType.Orchestration) that calls the kernels")


def _called_functions(program) -> set[str]:
    from ptoc.ir.visitor import IRVisitor

    names: set[str] = set()

    class _Calls(IRVisitor):
        def visit_call(self, node) -> None:
            if node.is_function:
                names.add(node.op)
            super().visit_call(node)

    _Calls().visit(program)
    return names


def run_program(compiled, entry: Function, values: list, memory: GlobalMemory,
                config: RunConfig, dims: dict | None = None
                ) -> tuple[list[KernelRun], object, list[str], list]:
    """Interpret ``entry`` on ``values`` (GM tensors and scalars; ``dims``: the sizes of
    its ``pl.dynamic`` dimensions) and run its tasks; returns (one KernelRun per task run
    alone, the ChipResult or None, the tasks skipped at dispatch, the reads of never-written
    GM)."""
    from ptoc.sim.limits import DEFAULT_LIMITS

    limits = config.sim_limits or DEFAULT_LIMITS
    defined = DefinedBytes()
    if config.chip:
        dispatcher = ChipDispatcher(target=compiled.target, profile=config.profile,
                                    mode=config.sim_mode, clusters=config.chip_clusters,
                                    limits=limits, defined=defined)
    else:
        trace_dir = compiled.output_dir / "trace" if config.trace else None
        dispatcher = InOrderDispatcher(target=compiled.target, profile=config.profile,
                                       mode=config.sim_mode, trace_dir=trace_dir, limits=limits,
                                       defined=defined)
    returned = Orchestrator(compiled, memory, dispatcher, limits=limits,
                            defined=defined).run(entry, values, dims)
    refuse_lost_returns(entry, values, returned)
    chip = dispatcher.finish()
    skipped = [f"{t.name} at {t.where}" for t in chip.tasks if t.skipped] if chip is not None \
        else [task.label() for task in dispatcher.skipped]
    return dispatcher.runs, chip, skipped, defined.reads


def refuse_lost_returns(entry: Function, values: list, returned: list) -> None:
    """The caller gets back the tensors it passed (``Out`` / ``InOut`` parameters, or the
    outputs an inputs-only call allocates for them): a returned tensor none of the
    parameters holds (one the entry made with ``pl.create_tensor``) would be lost, so the
    run stops instead of handing back nothing for it."""
    passed = {id(v.alloc) for v in values if isinstance(v, GMTensor)}
    for i, value in enumerate(returned):
        if isinstance(value, GMTensor) and id(value.alloc) not in passed:
            raise RuntimeConfigError(
                f"'{entry.name}' returns tensor '{value.name}' (return value {i + 1}), which is "
                "none of its parameters: ptoc hands back only the tensors passed for its "
                "parameters, so what the program wrote there would be lost",
                _return_loc(entry),
                hint=f"add an output parameter ('{value.name}_out: pl.Out[pl.Tensor[...]]') and "
                     "write the result into it (x = self.kernel(..., x)) instead of returning a "
                     "pl.create_tensor")


def _return_loc(entry: Function):
    """Where ``entry`` returns (its return statement may sit in a runtime scope)."""
    stack = list(entry.body.stmts)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ReturnStmt):
            return stmt.loc or entry.loc
        if isinstance(getattr(stmt, "body", None), SeqStmts):
            stack.extend(stmt.body.stmts)
    return entry.loc


__all__ = ["KernelRun", "RunResult", "entry_function", "refuse_lost_returns", "run_program"]
