"""The trace bundle: one Perfetto-loadable JSON per run, every kernel call on one timeline.

Why a bundle and not one file per kernel call: a run is what a user times, so its trace
shows the kernel calls back to back (each call's cycles offset by the calls before it), each
with its six pipe tracks (MTE2 -> MTE1 -> CUBE -> VECTOR -> FIXPIPE -> MTE3), flag flows,
race markers and buffer occupancy per memory space, occupied byte ranges named after the
tiles the kernel's ``alloc_tile`` ops place there. The per-kernel events come from the
simulator's own trace writer (``ptoc.sim.trace``).

Process ids: call ``i`` owns the block ``[100 * i + 1, 100 * i + 99]`` (its core, then one
process per memory space); thread ids are unique in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from ptoc.files import write_json
from ptoc.sim.trace import chrome_trace_events

_PID_BLOCK = 100
_TID_BLOCK = 10_000


def tile_namer(module, kernel: str):
    """``names(buffer, lo, hi)``: the tiles of ``kernel`` whose bytes hold [lo, hi)."""
    from ptoc.errors import PtocError
    from ptoc.pto.planner import kernel_lifetimes

    try:
        lives = kernel_lifetimes(module.kernel(kernel), module.target_arch or "a2a3")
    except PtocError:  # names are a nicety: the trace is complete without them
        return None
    tiles = [(t.space.value, t.fixed, t.fixed + t.nbytes, t.name) for t in lives
             if t.fixed is not None]

    def names(buffer: str, lo: int, hi: int) -> str | None:
        hits = sorted({"%" + name for space, a, b, name in tiles if space == buffer and a <= lo
                       and hi <= b})
        if not hits:
            return None
        return " ".join(hits[:6]) + (f" +{len(hits) - 6}" if len(hits) > 6 else "")
    return names


def _core_namer(module):
    """``namer(core)``: tile names of the kernel a core of a group runs (AIC first)."""
    if module is None:
        return None
    from ptoc.sim.group import group_kernels

    aic, aiv = group_kernels(module)
    return lambda core: tile_namer(module, aic.name if core == "aic" else aiv.name)


def run_trace_events(calls) -> tuple[list[dict], list[dict]]:
    """Events of ``calls`` = [(kernel, SimResult, pto module or None)], and a call summary."""
    events: list[dict] = []
    summary: list[dict] = []
    offset = 0.0
    for index, (kernel, sim, module) in enumerate(calls):
        pid = _PID_BLOCK * index + 1
        if hasattr(sim, "cores"):           # a core group: a process per core
            events.extend(sim.trace_events(
                occupancy=True, pid=pid, ts_offset=offset, tid_base=_TID_BLOCK * index,
                label=f"#{index} {kernel} · ", region_names=_core_namer(module)))
            unit, pipe = sim.binding or (None, None)
            binding = f"{unit}/{pipe.short}" if pipe else None
        else:
            namer = tile_namer(module, kernel) if module is not None else None
            label = f"#{index} {kernel} · AI Core ({sim.target}, {sim.profile})"
            events.extend(chrome_trace_events(
                sim, pid=pid, ts_offset=offset, tid_base=_TID_BLOCK * index, label=label,
                region_names=namer, pto_file=f"pto/{kernel}.pto", occupancy=True))
            binding = sim.binding_pipe.short if sim.binding_pipe else None
        summary.append({"call": index, "kernel": kernel, "start_cycle": offset,
                        "wall_cycles": sim.wall_cycles, "pid": pid,
                        "binding_pipe": binding, "races": [str(r) for r in sim.races]})
        offset += sim.wall_cycles
    return events, summary


def write_run_trace(runs, path, *, compiled=None, modules=None) -> Path:
    """Write the bundle of one run and return its path.

    ``runs`` is a ``RunResult`` (its ``runs``), or a list of ``KernelRun`` or of
    ``(kernel, SimResult)``. PTO modules for tile names come from ``compiled`` (a
    ``CompiledProgram``) or ``modules`` ({kernel: module}).
    """
    runs = getattr(runs, "runs", runs)
    calls = []
    for run in runs:
        kernel, sim = (run.kernel, run.sim) if hasattr(run, "sim") else run
        module = None
        if modules and kernel in modules:
            module = modules[kernel]
        elif compiled is not None and kernel in compiled.pto_text:
            module = compiled.pto_module(kernel)
        calls.append((kernel, sim, module))
    events, summary = run_trace_events(calls)
    doc = {"traceEvents": events, "displayTimeUnit": "ns",
           "otherData": {"format": "ptoc run trace bundle v1", "time_unit": "cycle",
                         "wall_cycles": sum(c["wall_cycles"] for c in summary),
                         "calls": summary}}
    return write_json(path, doc)


def run_trace_path(output_dir) -> Path:
    """Where a compile output directory's run trace lives: ``<dir>/trace/run.json``."""
    return Path(output_dir) / "trace" / "run.json"


def trace_compile_dir(output_dir, *, kernels=None, seed: int = 0, scalars=None,
                      profile: str | None = None, mode: str = "reference") -> tuple[Path, list]:
    """Simulate each kernel of ``<dir>/pto/*.pto`` once, in name order, with seeded random
    inputs, and write the bundle to ``run_trace_path(dir)``.

    Timing does not depend on the data, so the timeline is the one a real run has for each
    kernel (a run calling a kernel several times repeats it). Returns (path, SimResults).
    """
    from ptoc.errors import PtocError
    from ptoc.pto import parse
    from ptoc.report.compile_dir import pto_files
    from ptoc.sim import simulate, simulate_group
    from ptoc.sim.group import group_kernels, is_group_module
    from ptoc.sim.inputs import random_inputs

    root = Path(output_dir)
    files = pto_files(root)
    calls, modules = [], {}
    for file in files:
        module = parse(file.read_text(encoding="utf-8"), filename=file.name)
        if is_group_module(module):          # an AIC and its AIVs run as one core group
            name = file.stem
            if kernels and name not in kernels:
                continue
            tensors = random_inputs(list(group_kernels(module)), seed=seed, scalars=scalars)
            calls.append((name, simulate_group(module, tensors,
                                               target=module.target_arch or "a2a3",
                                               profile=profile, mode=mode)))
            modules[name] = module
            continue
        for kernel in module.kernels:
            if kernels and kernel.name not in kernels:
                continue
            tensors = random_inputs(kernel, seed=seed, scalars=scalars)
            sim = simulate(module, tensors, target=module.target_arch or "a2a3",
                           profile=profile, mode=mode, kernel=kernel.name)
            calls.append((kernel.name, sim))
            modules[kernel.name] = module
    if not calls:
        raise PtocError(f"no kernel named {', '.join(kernels)} in {root}/pto",
                        hint="ptoc trace DIR without --kernel traces every kernel")
    return write_run_trace(calls, run_trace_path(root), modules=modules), [s for _, s in calls]
