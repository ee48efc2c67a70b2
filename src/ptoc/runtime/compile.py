"""``compile``: run the pass pipeline, generate PTO per kernel, plan (PTOAS), insert sync.

Options resolve as: explicit argument, else the active PassContext, else the default;
the compile runs in a context derived from the current one, so nothing an outer
context set is dropped. Artifacts go to ``output_dir``: ``passes_dump/`` (when
``dump_passes``), ``pto/<kernel>.pto`` (Level 3), ``report/`` and ``ptoc_manifest.json``
(what this compile wrote; ``ptoc.outputs``).
"""

from __future__ import annotations

import datetime
import logging
import os
from pathlib import Path

from ptoc.errors import PtocError, RuntimeConfigError
from ptoc.files import write_text
from ptoc.outputs import compile_into, safe_name
from ptoc.ir.nodes import Program
from ptoc.runtime.allocations import Allocation, allocations_from_ir
from ptoc.runtime.compiled import CompiledProgram
from ptoc.runtime.config import target_of_platform

#: logged on every PTOAS compile, as PyPTO's ir.compile does: who plans memory on this path
PTOAS_WARNING = (
    "memory_planner=PTOAS: MemoryReuse and AllocateMemoryAddr are skipped; the PTO-level "
    "planner (ptoc.pto.plan_memory, standing in for ptoas PlanMemory at --pto-level=level2) "
    "does lifetime reuse and assigns addresses. MaterializeSemanticAliases still runs, so "
    "aliasing the semantics need (loop-carried accumulators, in-place ops) stays one shared "
    "tile buffer.")


def compile_ir(program: Program, output_dir: str | os.PathLike | None = None, *,
               platform: str = "a2a3sim", memory_planner=None,
               enable_pypto_l0c_double_buffer: bool | None = None, dump_passes: bool = True,
               verification_level=None, profiling: bool = False,
               disabled_diagnostics=None, check_dbc: bool = True,
               analyze_auto_scopes_for_deps: bool | None = None) -> CompiledProgram:
    """Compile ``program`` for ``platform``; see the module docstring for option resolution.

    ``check_dbc``: when the chooser takes dbC=2 under PYPTO with the flag on, also compile
    the flag-off baseline and write both simulated speed-ups into the decisions report
    (``ptoc.runtime.dbc_check``).
    """
    from ptoc.passes import MemoryPlanner, PassManager, resolve_context, write_report
    from ptoc.passes.decisions import collect_decisions, write_decisions

    if not isinstance(program, Program):
        raise RuntimeConfigError(f"compile() needs an ir.Program (from @pl.program or "
                                 f"pl.parse_program), got {type(program).__name__}")
    target = target_of_platform(platform)
    out = resolve_output_dir(output_dir, program.name)
    with compile_into(out, program.name):  # manifest; removes this dir's stale artifacts
        ctx = resolve_context(memory_planner=memory_planner,
                              enable_pypto_l0c_double_buffer=enable_pypto_l0c_double_buffer,
                              verification_level=verification_level, target=target,
                              profiling=profiling or None, dump_dir=out,
                              disabled_diagnostics=disabled_diagnostics,
                              analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)
        if ctx.memory_planner is MemoryPlanner.PTOAS:
            logging.getLogger("ptoc").warning(PTOAS_WARNING)
        with ctx, collect_decisions() as decisions:
            manager = PassManager.get_strategy()
            lowered = manager.run_passes(program, dump_ir=bool(dump_passes), output_dir=out,
                                         write_report=False)
            planner = ctx.memory_planner
            kernels, modules, allocations = _kernels(lowered, target,
                                                     planner is MemoryPlanner.PYPTO)
            for name, text in kernels.items():
                write_text(out / "pto" / f"{safe_name(name)}.pto", text)
            write_report(ctx.diagnostics, out)
        if check_dbc and planner is MemoryPlanner.PYPTO and ctx.enable_pypto_l0c_double_buffer:
            from ptoc.runtime.dbc_check import check_chooser_dbc

            # outside the compile's context: the baseline compile reports to its own sink
            check_chooser_dbc(program, modules, target, decisions, platform=platform)
        write_decisions(decisions, out)
        compiled = CompiledProgram(program=lowered, source_program=program, pto_text=kernels,
                                   allocations=allocations, diagnostics=list(ctx.diagnostics),
                                   output_dir=out, target=target,
                                   memory_planner=planner,
                                   enable_pypto_l0c_double_buffer=ctx.enable_pypto_l0c_double_buffer,
                                   profile=manager.last_profile, platform=platform,
                                   _modules=modules)
        from ptoc.report.memmap_write import write_memory_maps

        write_memory_maps(compiled)  # report/memmap_<kernel>.html
        return compiled


def lower_ir(program: Program, *, platform: str = "a2a3sim", memory_planner=None,
             enable_pypto_l0c_double_buffer: bool | None = None, verification_level=None,
             disabled_diagnostics=None, analyze_auto_scopes_for_deps: bool | None = None,
             **_artifact_options) -> Program:
    """The pass pipeline alone (PyPTO's ``lower``): no code generation, nothing written.
    Options resolve as in ``compile_ir``; its artifact options (dumps, profiling) do not apply."""
    from ptoc.passes import PassManager, resolve_context

    if not isinstance(program, Program):
        raise RuntimeConfigError(f"lower() needs an ir.Program, got {type(program).__name__}")
    ctx = resolve_context(memory_planner=memory_planner,
                          enable_pypto_l0c_double_buffer=enable_pypto_l0c_double_buffer,
                          verification_level=verification_level,
                          target=target_of_platform(platform),
                          disabled_diagnostics=disabled_diagnostics,
                          analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)
    with ctx:
        return PassManager.get_strategy().run_passes(program, write_report=False)


def _kernels(lowered: Program, target: str, baked: bool):
    """Level-3 PTO text and module per kernel (the module as parsing the text gives it, line
    numbers included), and the final buffer placements."""
    from ptoc.codegen import generate_modules
    from ptoc.pto.printer import print_numbered

    # the Level-2 model goes straight to the planner and InsertSync (printing it and parsing
    # the text back cost a third of a compile and gave the same model)
    level2 = generate_modules(lowered, target=target, with_addresses=baked)
    texts: dict[str, str] = {}
    modules: dict = {}
    allocations: list[Allocation] = []
    for name, module in level2.items():
        if not baked:
            module = _plan_ptoas(module, target)
        module = _insert_sync(module, target)
        texts[name], modules[name] = print_numbered(module, f"{name}.pto")
        for kernel in module.kernels:           # a core group's module holds AIC and AIV
            allocations.extend(kernel_allocations(lowered, kernel.name, module, baked))
    return texts, modules, allocations


def kernel_allocations(lowered: Program, name: str, module, baked: bool) -> list[Allocation]:
    """One kernel's placements: from the IR when addresses were baked (PYPTO), else from
    the addresses the PTO planner wrote into its Level-3 ``module``."""
    if baked:
        return allocations_from_ir(lowered.get_function(name))
    return _allocations_from_pto(name, module)


def _plan_ptoas(module, target):
    """Plan like ptoas: the lifetimes as the passes left them. PyPTO's PTOAS path has no
    capacity gate either (MemoryReuse, which sheds pipeline depth, does not run), so a
    program whose pipeline copies are live together past capacity fails here as it would
    in ptoas; the error says which planner fits it."""
    from ptoc.pto.planner import PlanCapacityError, plan_memory

    try:
        return plan_memory(module, target)
    except PlanCapacityError as exc:
        raise PlanCapacityError(
            f"{exc.message} (memory_planner=PTOAS plans these lifetimes as written, as ptoas "
            "does: nothing reduces pipeline depth to fit)", exc.loc,
            hint=f"{exc.hint}; or compile with memory_planner=PYPTO, whose MemoryReuse sheds "
                 "pipeline depth until the stages fit (PH-MR-001)") from None


def _insert_sync(module, target):
    from ptoc.passes import report_diagnostic
    from ptoc.passes.decisions import record_pipe_all_fallback
    from ptoc.pto.insert_sync import insert_sync

    result = insert_sync(module, target)
    for note in getattr(result, "notes", ()):
        if note.kind == "pipe_all_fallback":
            report_diagnostic("PH-SYNC-001", str(note), location=note.producer_loc,
                              pass_name="InsertSync")
            record_pipe_all_fallback(note)
    return getattr(result, "module", result)


def _allocations_from_pto(kernel: str, module) -> list[Allocation]:
    """One buffer per (space, address) of a PTO kernel's ``alloc_tile`` ops, as large as the
    largest tile the planner placed there (smaller tail tiles reuse the same buffer)."""
    from ptoc.pto import Instruction, walk

    ops = list(walk(module.kernel(kernel).body))
    constants = {op.result.name: op.attr("value") for op in ops
                 if isinstance(op, Instruction) and op.opcode == "arith.constant"}
    seen: dict[tuple, Allocation] = {}
    for op in ops:
        if isinstance(op, Instruction) and op.opcode == "pto.alloc_tile":
            ty = op.result.type
            addr_value = op.attr("addr")
            addr = constants.get(addr_value.name) if addr_value is not None else None
            key = (ty.loc, addr if addr is not None else op.result.name)
            if key not in seen or seen[key].size < ty.nbytes:
                seen[key] = Allocation(kernel, ty.loc, op.result.name, addr, ty.nbytes)
    return list(seen.values())


def resolve_output_dir(output_dir, program_name: str) -> Path:
    """The artifact directory: the argument, else $PTOC_BUILD_DIR or build_output, timestamped."""
    if output_dir is not None:
        out = Path(output_dir)
    else:
        root = Path(os.environ.get("PTOC_BUILD_DIR", "build_output"))
        stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S_%f")
        out = root / f"{safe_name(program_name)}_{stamp}"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RuntimeConfigError(f"cannot create the output directory {out}: {exc.strerror}",
                                 hint="choose a directory you can write to") from None
    return out
