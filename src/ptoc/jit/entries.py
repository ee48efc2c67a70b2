"""A ``CompiledProgram`` as plain data (a jit cache entry) and back.

Why data: an entry is text that ptoc parses — the post-pass IR as printed DSL, each
kernel's Level-3 PTO — plus JSON metadata, so loading one can never run code, and what it
rebuilds passes the same parsers and checks as any program a user writes. Placements are
not stored: they are derived again from the IR (PYPTO planner) or the PTO (PTOAS), as a
compile derives them.
"""

from __future__ import annotations

from pathlib import Path

from ptoc.errors import PtocError, SourceLoc


def to_entry(compiled) -> dict:
    planner = compiled.memory_planner
    return {
        "program": compiled.program.as_python(),
        "pto": dict(compiled.pto_text),
        "target": compiled.target,
        "platform": compiled.platform,
        "memory_planner": getattr(planner, "name", planner),
        "enable_pypto_l0c_double_buffer": bool(compiled.enable_pypto_l0c_double_buffer),
        "diagnostics": [_diagnostic(d) for d in compiled.diagnostics],
        "profile": compiled.profile,
    }


def from_entry(entry: dict, source_program, output_dir: Path):
    """The CompiledProgram an entry describes; ``PtocError`` when it does not hold together
    (its PTO kernels must be exactly the program's kernels, with matching parameters)."""
    from ptoc.codegen import group_members
    from ptoc.ir.verifier import verify
    from ptoc.language import parse_program
    from ptoc.passes import MemoryPlanner
    from ptoc.passes.context import _coerce_enum
    from ptoc.pto import parse
    from ptoc.runtime.compile import kernel_allocations
    from ptoc.runtime.compiled import CompiledProgram

    try:
        lowered = parse_program(entry["program"], f"<jit cache {source_program.name}>")
        verify(lowered)
        planner = _coerce_enum(MemoryPlanner, entry["memory_planner"], "memory planner")
        kernels = {fn.name: fn for fn in lowered.functions if fn.func_type.is_kernel}
        groups = group_members(lowered)     # a core group's kernels share one PTO module
        members = {k for names in groups.values() for k in names}
        modules_of = {name: (name,) for name in kernels if name not in members} | groups
        texts = entry["pto"]
        if not isinstance(texts, dict) or set(texts) != set(modules_of):
            raise PtocError("the entry's PTO kernels are not the program's kernels")
        modules, allocations = {}, []
        for name, text in texts.items():
            module = modules[name] = parse(text, filename=f"{name}.pto")
            for kernel in modules_of[name]:
                if len(module.kernel(kernel).params) != len(kernels[kernel].params):
                    raise PtocError(f"kernel {kernel}: PTO and IR parameters differ")
                allocations.extend(kernel_allocations(lowered, kernel, module,
                                                      planner is MemoryPlanner.PYPTO))
        compiled = CompiledProgram(
            program=lowered, source_program=source_program, pto_text=dict(texts),
            allocations=allocations, diagnostics=[_rebuild(d) for d in entry["diagnostics"]],
            output_dir=output_dir, target=str(entry["target"]), memory_planner=planner,
            enable_pypto_l0c_double_buffer=bool(entry["enable_pypto_l0c_double_buffer"]),
            profile=entry["profile"], platform=str(entry["platform"]))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise PtocError(f"malformed jit cache entry ({type(exc).__name__}: {exc})") from None
    compiled._modules.update(modules)
    return compiled


def _diagnostic(d) -> dict:
    loc = d.location
    return {"code": d.code, "severity": d.severity.value, "pass_name": d.pass_name,
            "message": d.message,
            "location": [loc.file, loc.line, loc.col] if loc is not None else None}


def _rebuild(data: dict):
    from ptoc.passes.diagnostics import Diagnostic, Severity

    loc = data["location"]
    return Diagnostic(str(data["code"]), Severity(data["severity"]), str(data["pass_name"]),
                      str(data["message"]),
                      SourceLoc(str(loc[0]), int(loc[1]), int(loc[2])) if loc else None)
