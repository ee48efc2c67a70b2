"""PassManager: an ordered list of passes, checked and run under the current PassContext.

The default pipeline is not written down here: each pass module registers itself with
``register_default_pass`` at import, and its place comes from ``PIPELINE_ORDER`` (PyPTO's
order), so adding a pass never means editing this file. The memory planner decides which
entries take part, when the manager is *built* (as in PyPTO); running a manager under a
different planner than it was built under is an error, because its pass list would be
wrong for that planner.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from ptoc.errors import PassError
from ptoc.passes.base import Pass
from ptoc.passes.context import MemoryPlanner, OptimizationStrategy, PassContext, _coerce_enum
from ptoc.passes.diagnostics import write_report as _write_report
from ptoc.passes.instruments import IRDumpInstrument, TimingInstrument, produced_checks_trusted
from ptoc.passes.perf_checks import run_post_pipeline_checks
from ptoc.passes.properties import IRProperty, checked_properties, has_checker, to_property_set

#: PyPTO's pass order (reference/pypto-passes.md §0, pypto-dsl.md §4.1). ptoc implements a
#: subset; a registered pass takes the slot of its name.
PIPELINE_ORDER: tuple[str, ...] = (
    "InlineFunctions", "UnrollLoops", "ConvertToSSA", "OutlineHierarchyScopes",
    "OutlineIncoreScopes", "OutlineClusterScopes",
    "ConvertTensorToTileOps", "LowerCompositeOps", "FlattenTileNdTo2D", "LegalizeTileCast",
    "AutoTileMatmulL0", "CanonicalizeTileSlice", "InferTileMemorySpace", "InsertMxScaleAddr",
    "ResolveBackendOpLayouts", "LowerAutoVectorSplit", "ExpandMixedKernel", "InjectGMPipeBuffer",
    "SplitVectorKernel", "StampTfreeSplit", "NormalizeReturnOrder", "SkewCrossCorePipeline",
    "LowerPipelineToSlots", "LowerPipelineLoops", "CanonicalizeIOOrder", "MaterializeTensorStrides",
    "InitMemRef", "MaterializeSemanticAliases", "MemoryReuse", "AllocateMemoryAddr",
    "FoldNoOpReshape", "FuseCreateAssembleToSlice", "DeriveCallDirections",
    "AutoDeriveTaskDependencies", "ExpandManualPhaseFence", "MaterializeRuntimeScopes",
    "ClassifyIterArgCarry", "MaterializeValidShapeSymbols",
)

#: Planners under which a pass of that name runs, when its registration does not say.
#: MemoryReuse is PyPTO-planner only; PTOAS also skips AllocateMemoryAddr (§0, §12.2).
DEFAULT_PLANNERS: dict[str, frozenset[MemoryPlanner]] = {
    "MemoryReuse": frozenset({MemoryPlanner.PYPTO}),
    "AllocateMemoryAddr": frozenset({MemoryPlanner.PYPTO, MemoryPlanner.DSA_RP}),
}

#: What the parser guarantees about a program before the first pass.
FRONTEND_PROPERTIES: frozenset[IRProperty] = frozenset({IRProperty.SSAForm})


@dataclass(frozen=True)
class DefaultPassEntry:
    """One registered default-pipeline pass."""

    name: str
    factory: Callable[[], Pass]
    order: int
    planners: Callable[[MemoryPlanner], bool]

    def runs_under(self, planner: MemoryPlanner) -> bool:
        return bool(self.planners(planner))


_REGISTRY: dict[str, DefaultPassEntry] = {}


def _planner_predicate(name: str, planners) -> Callable[[MemoryPlanner], bool]:
    if planners is None:
        planners = DEFAULT_PLANNERS.get(name)
        if planners is None:
            return lambda planner: True
    if callable(planners):
        return planners
    allowed = frozenset(_coerce_enum(MemoryPlanner, p, f"planner of pass {name}") for p in planners)
    return lambda planner: planner in allowed


def register_default_pass(factory: Callable[[], Pass], *, name: str | None = None,
                          order: int | str | None = None, planners=None,
                          replace: bool = False) -> Callable[[], Pass]:
    """Add ``factory`` (called with no arguments per manager) to the default pipeline.

    ``name`` defaults to ``factory.pass_name`` (set by ``@program_pass``) or to the name of
    a pass the factory builds. ``order`` is an int or a name from ``PIPELINE_ORDER``
    (default: the pass's own name). ``planners`` is a set of MemoryPlanner (or names) or a
    predicate ``planner -> bool``; by default ``DEFAULT_PLANNERS`` applies. Returns the
    factory, so it can be used as a decorator.
    """
    if name is None:
        name = getattr(factory, "pass_name", None) or factory().name
    if order is None:
        order = name
    if isinstance(order, str):
        if order not in PIPELINE_ORDER:
            raise PassError(f"cannot place pass {name} in the default pipeline: {order!r} is not in "
                            "PIPELINE_ORDER", hint="pass order=<int> (slot i of PIPELINE_ORDER is 10*i)")
        order = 10 * PIPELINE_ORDER.index(order)
    if name in _REGISTRY and not replace:
        raise PassError(f"pass {name} is already registered in the default pipeline",
                        hint="pass replace=True to override it")
    _REGISTRY[name] = DefaultPassEntry(name, factory, int(order), _planner_predicate(name, planners))
    return factory


def unregister_default_pass(name: str) -> None:
    _REGISTRY.pop(name, None)


def default_pipeline_entries() -> tuple[DefaultPassEntry, ...]:
    """Registered entries sorted by order (ties by registration order)."""
    return tuple(sorted(_REGISTRY.values(), key=lambda e: e.order))


class PassManager:
    """An ordered pass list plus the memory planner it was built under."""

    def __init__(self, passes: Iterable[Pass], *,
                 initial_properties: Iterable[IRProperty | str] = FRONTEND_PROPERTIES,
                 strategy: OptimizationStrategy | None = None):
        self.passes: tuple[Pass, ...] = tuple(passes)
        for p in self.passes:
            if not isinstance(p, Pass):
                raise PassError(f"PassManager got {p!r} ({type(p).__name__}), which is not a Pass",
                                hint="build passes with their factory, e.g. init_mem_ref(), not init_mem_ref")
        self.initial_properties = to_property_set(initial_properties)
        self.strategy = strategy
        self.construction_planner: MemoryPlanner = PassContext.current().memory_planner
        self.last_profile: dict | None = None

    @classmethod
    def get_strategy(cls, strategy: OptimizationStrategy | str = OptimizationStrategy.Default,
                     *, analyze_auto_scopes_for_deps: bool | None = None) -> "PassManager":
        """The registered default pipeline, filtered by the current context's memory planner.
        ``analyze_auto_scopes_for_deps`` (PyPTO's keyword) fixes AutoDeriveTaskDependencies'
        switch for this pipeline; left None, the pass reads it from the PassContext."""
        strategy = _coerce_enum(OptimizationStrategy, strategy, "optimization strategy")
        planner = PassContext.current().memory_planner
        options = {} if analyze_auto_scopes_for_deps is None else {
            "AutoDeriveTaskDependencies": {"analyze_auto_scopes": analyze_auto_scopes_for_deps}}
        passes = [e.factory(**options.get(e.name, {})) for e in default_pipeline_entries()
                  if e.runs_under(planner)]
        return cls(passes, strategy=strategy)

    def get_pass_names(self) -> list[str]:
        return [p.name for p in self.passes]

    def validate(self) -> None:
        """Check, before anything runs, that each pass's required properties are available.

        A property counts as available when an earlier pass produced it and no pass since
        invalidated it, or it was in ``initial_properties``. One that is missing but has a
        registered checker is left to the check on real IR when the pass is called.
        """
        available = set(self.initial_properties)
        lost_by: dict[IRProperty, str] = {}
        previous: str | None = None
        for index, p in enumerate(self.passes, start=1):
            for prop in sorted(p.required - available, key=lambda q: q.value):
                if has_checker(prop):
                    continue
                if prop in lost_by:
                    why = f"pass {lost_by[prop]} invalidated it and no pass since re-established it"
                elif previous is None:
                    why = "the input program is not known to have it and it is the first pass"
                else:
                    why = f"no pass up to {previous} produces it"
                producers = [q.name for q in self.passes if prop in q.produced]
                raise PassError(
                    f"pass {p.name} (#{index}) requires {prop.value}, but {why}",
                    hint=(f"run {' or '.join(producers)} before {p.name}" if producers
                          else f"add a pass producing {prop.value} before {p.name}"))
            for prop in p.invalidated:
                if prop in available or prop not in lost_by:
                    lost_by[prop] = p.name
            available -= p.invalidated
            available |= p.produced
            for prop in p.produced:
                lost_by.pop(prop, None)
            previous = p.name

    def available_properties(self) -> frozenset[IRProperty]:
        """Properties the pipeline's output is declared to have."""
        available = set(self.initial_properties)
        for p in self.passes:
            available = (available - p.invalidated) | p.produced
        return frozenset(available)

    def run_passes(self, program, dump_ir: bool = False, output_dir: str | Path | None = None,
                   *, write_report: bool = True):
        """Run every pass in order under the current PassContext; returns the new program.

        ``output_dir`` (default: the context's ``dump_dir``) receives ``passes_dump/`` when
        ``dump_ir``, ``report/pipeline_profile.{txt,json}`` when the context has
        ``profiling``, and ``report/perf_hints.log`` unless ``write_report`` is False.
        Extra instruments run in a context derived from the current one, so every option
        (planner, dbC flag, target, ...) is kept.
        """
        ctx = PassContext.current()
        if ctx.memory_planner is not self.construction_planner:
            raise PassError(
                f"PassManager was built under memory_planner={self.construction_planner.name} but is "
                f"being run under memory_planner={ctx.memory_planner.name}",
                hint="build the PassManager (PassManager.get_strategy) inside the same PassContext "
                     "you run it in")
        self.validate()
        out_dir = Path(output_dir) if output_dir is not None else ctx.dump_dir
        extra = []
        if dump_ir:
            if out_dir is None:
                raise PassError("run_passes(dump_ir=True) has nowhere to write the dumps",
                                hint="pass output_dir=... or set PassContext(dump_dir=...)")
            extra.append(IRDumpInstrument(out_dir / "passes_dump"))
        timing = None
        if ctx.profiling:
            timing = TimingInstrument(out_dir / "report" if out_dir is not None else None)
            extra.append(timing)
        run_ctx = ctx.derive(extra_instruments=extra) if extra else ctx
        with run_ctx:
            program = self._run_instrumented(program, run_ctx)
        self.last_profile = timing.profile() if timing is not None else None
        if write_report and out_dir is not None:
            _write_report(ctx.diagnostics, out_dir)
        return program

    def _run_instrumented(self, program, run_ctx):
        """The passes between the instruments' pipeline hooks. An instrument whose
        ``before_pipeline`` ran and whose ``after_pipeline`` did not is told of a failure
        (``pipeline_failed``); the first more precise error one returns is raised."""
        instruments = run_ctx.active_instruments()
        open_: list = []
        try:
            for inst in instruments:
                inst.before_pipeline(program, run_ctx)
                open_.append(inst)
            verified: frozenset[IRProperty] = frozenset()
            trusted = produced_checks_trusted(run_ctx, instruments)
            for p in self.passes:
                program = p.run_checked(program, verified)
                if trusted:
                    verified = (verified - p.invalidated) | (p.produced & checked_properties())
            if self.passes:  # PyPTO's PostPipeline diagnostic phase
                run_post_pipeline_checks(program, run_ctx.get_backend())
            for inst in reversed(instruments):
                try:
                    inst.after_pipeline(program, run_ctx)
                finally:
                    open_.remove(inst)
        except BaseException as exc:
            better = [b for inst in reversed(open_)
                      if (b := inst.pipeline_failed(exc, run_ctx)) is not None]
            if better:
                raise better[0] from exc
            raise
        return program

    def __repr__(self) -> str:
        return f"PassManager([{', '.join(self.get_pass_names())}], planner={self.construction_planner.name})"
