"""``simulate_group``: run one AIC kernel and its AIV kernel (on every AIV lane) together.

Why a layer of its own: the cores share GM and talk through cross-core pipes, so they must
be issued, scheduled, race-checked and replayed as one run — but each core is exactly the
``ptoc.sim.core`` scalar unit with its own buffers. A chip layer runs many of these groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.cross_core import cluster_model
from ptoc.collector import collector_paused
from ptoc.errors import SourceLoc
from ptoc.pto.model import EnumAttr, Module
from ptoc.pto.sync_access import has_sync

from ptoc.sim.api import LEVEL2_NOTE, as_module, needs_addresses, resolve_run
from ptoc.sim.core.binding import bind_params
from ptoc.sim.core.estimate import estimate
from ptoc.sim.core.issue import ScalarUnit
from ptoc.sim.core.memory import BufferMemory
from ptoc.sim.errors import SimProgramError
from ptoc.sim.execute import execute
from ptoc.sim.group.pipes import PipeNetwork
from ptoc.sim.group.result import GroupResult, build_group_result
from ptoc.sim.limits import DEFAULT_LIMITS, SimLimits, check, memory_bytes
from ptoc.sim.races import find_races
from ptoc.sim.schedule import schedule

GROUP_MODES = ("reference", "fast")


def group_kernels(module: Module, aic: str | None = None, aiv: str | None = None):
    """(AIC kernel, AIV kernel) of a module: by name, else its one cube and one vector
    kernel (``pto.kernel_kind``)."""
    def kind(k):
        value = k.attr("pto.kernel_kind")
        return value.value if isinstance(value, EnumAttr) else None

    picked = []
    for name, want in ((aic, "cube"), (aiv, "vector")):
        if name is not None:
            try:
                picked.append(module.kernel(name))
            except KeyError:
                names = ", ".join("@" + k.name for k in module.kernels)
                raise SimProgramError(f"no kernel {name!r} in the PTO module ({names})",
                                      hint="name one of the module's kernels") from None
            continue
        found = [k for k in module.kernels if kind(k) == want]
        if len(found) != 1:
            raise SimProgramError(
                f"a core group needs exactly one {want} kernel, the module has {len(found)} "
                f"({', '.join('@' + k.name for k in module.kernels)})",
                hint=f"mark it attributes {{pto.kernel_kind = #pto.kernel_kind<{want}>}} or "
                     "pass aic= / aiv= kernel names")
        picked.append(found[0])
    return tuple(picked)


def is_group_module(module: Module) -> bool:
    """True when the module holds a cube kernel and a vector kernel (one core group)."""
    kinds = [getattr(k.attr("pto.kernel_kind"), "value", None) for k in module.kernels]
    return kinds.count("cube") == 1 and kinds.count("vector") == 1


def simulate_group(pto, tensors, *, target="a2a3", profile=None, mode: str = "reference",
                   aic: str | None = None, aiv: str | None = None,
                   flag_mode: str = "bit", limits: SimLimits | None = None) -> GroupResult:
    """Run a core group: the AIC kernel on the cube core, the AIV kernel on each AIV lane
    (``pto.get_subblock_idx`` tells them apart), sharing the GM ``tensors``.

    Both kernels take the same parameters (PyPTO's shared group ABI), so ``tensors`` is
    bound once, as for ``simulate``. ``mode`` is ``reference`` or ``fast`` (a serial run of
    cores that wait on each other is not defined). Level-2 kernels are synchronised by
    ``ptoc.pto.insert_sync`` first. ``limits`` (``SimLimits``) bound the whole group: the
    static estimates of its cores are summed and checked before anything runs.
    """
    with collector_paused():
        return _simulate_group(pto, tensors, target=target, profile=profile, mode=mode,
                               aic=aic, aiv=aiv, flag_mode=flag_mode,
                               limits=limits or DEFAULT_LIMITS)


@dataclass(frozen=True)
class ReadyGroup:
    """A core group's kernels ready to bind (synchronised when they needed it)."""

    module: Module
    aic: object
    aiv: object
    notes: tuple[str, ...]
    filename: str


def ready_group(pto, tgt, *, aic: str | None = None, aiv: str | None = None) -> ReadyGroup:
    """Check a group module's kernels and insert sync when needed (once per module)."""
    module = as_module(pto)
    filename = getattr(module, "filename", "<pto>")
    aic_k, aiv_k = group_kernels(module, aic, aiv)
    notes: list[str] = []
    if needs_addresses(aic_k) or needs_addresses(aiv_k):
        raise SimProgramError("a core group's tiles need addresses (pto.alloc_tile addr = ...)",
                              hint="compile with memory_planner=PYPTO, which places them")
    if not (has_sync(aic_k) and has_sync(aiv_k)):
        from ptoc.pto import insert_sync
        synced = insert_sync(module, target=tgt)
        module = synced.module
        aic_k, aiv_k = (module.kernel(k.name) for k in (aic_k, aiv_k))
        notes.append(LEVEL2_NOTE)
        notes.extend(f"insert_sync: {note}" for note in synced.notes)
    if [(p.name, p.type) for p in aic_k.params] != [(p.name, p.type) for p in aiv_k.params]:
        raise SimProgramError(
            f"@{aic_k.name} and @{aiv_k.name} take different parameters; a core group's "
            "kernels share one argument list", hint="give both kernels the same parameters")
    return ReadyGroup(module, aic_k, aiv_k, tuple(notes), filename)


def issue_group(ready: ReadyGroup, bound, tgt, prof, *, mode: str,
                limits: SimLimits | None = None):
    """The group's instruction stream (every core's, one ``seq`` numbering), its unit names
    and its pipe network (linked: pops know their pushes)."""
    model = cluster_model(tgt)
    units = ["aic"] + [f"aiv{i}" for i in range(model.aiv_per_aic)]
    kernels = [ready.aic] + [ready.aiv] * model.aiv_per_aic
    memories = [BufferMemory(dict(tgt.capacities), tgt.address_alignment, label=u) for u in units]
    net = PipeNetwork(model, prof, memories, units, [ready.aic, ready.aiv])
    instrs: list = []
    for core, (unit, kernel) in enumerate(zip(units, kernels)):
        ScalarUnit(kernel, bound.env, tgt, prof, memories[core],
                   mad_mode="fast" if mode == "fast" else "reference", filename=ready.filename,
                   core=core, unit=unit, subblock=max(core - 1, 0), port=net.port(core),
                   instrs=instrs, regions=bound.regions,
                   limits=limits or DEFAULT_LIMITS).run()
    net.link()
    return instrs, units, net


def _simulate_group(pto, tensors, *, target, profile, mode, aic, aiv, flag_mode,
                    limits) -> GroupResult:
    tgt, prof = resolve_run(target, profile, mode, GROUP_MODES, flag_mode)
    ready = ready_group(pto, tgt, aic=aic, aiv=aiv)
    module, notes = ready.module, list(ready.notes)
    model = cluster_model(tgt)
    bound = bind_params(ready.aic, tensors, ready.filename)
    _check_group_estimate([ready.aic] + [ready.aiv] * model.aiv_per_aic, bound, limits,
                          ready.filename)
    instrs, units, net = issue_group(ready, bound, tgt, prof, mode=mode, limits=limits)
    meta = dict(target=tgt.name, profile=prof.name, mode=mode)

    def partial(sch):
        races = find_races(instrs, sch)
        return build_group_result(instrs, sch, units, races=races, outputs={},
                                  complete=False, **meta)

    sch = schedule(instrs, issue_cycles=prof.issue_cycles, sync_latency=prof.sync_latency_cycles,
                   flag_mode=flag_mode, make_timeline=partial,
                   dep_latency=model.flag_latency_cycles)
    net.check_balanced(lambda: partial(sch))
    races = find_races(instrs, sch)
    execute(instrs, sch, timed=bool(races))
    outputs = bound.outputs()
    arch = getattr(module, "target_arch", None)
    if arch and arch != tgt.name:
        notes.append(f"the module says pto.target_arch = {arch!r} but it ran on target "
                     f"{tgt.name!r}; pass target={arch!r} to use that core's buffers")
    return build_group_result(instrs, sch, units, races=races, outputs=outputs, notes=notes,
                              **meta)


def _check_group_estimate(kernels, bound, limits: SimLimits, filename: str) -> None:
    """Refuse a group run whose summed static estimate (every core) exceeds ``limits``."""
    tensor_bytes = sum(region.nbytes for region in bound.regions.values())
    ests = [estimate(k, bound.env) for k in kernels]
    instructions = sum(e.instructions for e in ests)
    check(f"core group @{kernels[0].name}", limits, instructions=instructions,
          scalar_steps=sum(e.scalar_steps for e in ests),
          memory=memory_bytes(instructions, tensor_bytes), detail=ests[0].describe(filename),
          loc=SourceLoc(filename, kernels[0].line, 0))
