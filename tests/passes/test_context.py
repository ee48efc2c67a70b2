"""PassContext: validation, scoping, getters and the one derive method."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from ptoc.errors import PassError, PtocError
from ptoc.passes import (
    CallbackInstrument, MemoryPlanner, OptimizationStrategy, PassContext, PassManager,
    VerificationLevel, program_pass,
)
from ptoc.passes.diagnostics import DiagnosticSink

# One non-default value per PassContext field. A new field without an entry here fails
# test_every_field_has_a_non_default_value, which forces its author to extend the derive test.
NON_DEFAULT = {
    "instruments": (CallbackInstrument(),),
    "verification_level": VerificationLevel.ROUNDTRIP,
    "memory_planner": MemoryPlanner.DSA_RP,
    "enable_pypto_l0c_double_buffer": True,
    "target": "a5",
    "disabled_diagnostics": frozenset({"PH001", "PH-AT-*"}),
    "dump_dir": Path("/tmp/ptoc-dump"),
    "profiling": True,
    "analyze_auto_scopes_for_deps": True,
    "diagnostics": DiagnosticSink(),
}


def full_context() -> PassContext:
    instruments = NON_DEFAULT["instruments"]
    rest = {k: v for k, v in NON_DEFAULT.items() if k != "instruments"}
    return PassContext(instruments, **rest)


def test_every_field_has_a_non_default_value():
    names = {f.name for f in dataclasses.fields(PassContext)}
    assert names == set(NON_DEFAULT), "extend NON_DEFAULT (and check derive) for new PassContext fields"
    default = PassContext()
    for f in dataclasses.fields(PassContext):
        if f.name != "diagnostics":  # a fresh sink is never identical anyway
            assert getattr(default, f.name) != NON_DEFAULT[f.name], f.name


def test_derive_copies_every_field():
    ctx = full_context()
    derived = ctx.derive()
    assert derived is not ctx
    for f in dataclasses.fields(PassContext):
        assert getattr(derived, f.name) == getattr(ctx, f.name), f.name
    assert derived.diagnostics is ctx.diagnostics  # one sink for the whole compile


def test_derive_appends_instruments_on_top_and_applies_overrides():
    ctx = full_context()
    extra = CallbackInstrument()
    derived = ctx.derive(extra_instruments=[extra], profiling=False)
    assert derived.instruments == NON_DEFAULT["instruments"] + (extra,)
    assert derived.profiling is False
    for f in dataclasses.fields(PassContext):
        if f.name not in ("instruments", "profiling"):
            assert getattr(derived, f.name) == getattr(ctx, f.name), f.name


def test_derive_rejects_unknown_options_and_instrument_replacement():
    with pytest.raises(PassError, match="memory_plan"):
        PassContext().derive(memory_plan=MemoryPlanner.PTOAS)
    with pytest.raises(PassError, match="extra_instruments"):
        PassContext().derive(instruments=())


def test_getter_for_every_field():
    ctx = full_context()
    for f in dataclasses.fields(PassContext):
        getter = getattr(ctx, f"get_{f.name}")
        assert getter() is getattr(ctx, f.name), f.name


def test_defaults():
    ctx = PassContext()
    assert ctx.get_verification_level() is VerificationLevel.BASIC
    assert ctx.get_memory_planner() is MemoryPlanner.PYPTO
    assert ctx.get_enable_pypto_l0c_double_buffer() is False
    assert ctx.get_target() == "a2a3"
    assert ctx.get_instruments() == ()
    assert ctx.get_disabled_diagnostics() == frozenset()
    assert ctx.get_dump_dir() is None and ctx.get_profiling() is False
    assert len(ctx.diagnostics) == 0
    assert [m.name for m in MemoryPlanner] == ["PYPTO", "PTOAS", "DSA_RP"]
    assert [m.name for m in VerificationLevel] == ["NONE", "BASIC", "ROUNDTRIP"]
    assert OptimizationStrategy.Default.name == "Default"


def test_current_is_innermost_and_restored():
    outer = PassContext(memory_planner=MemoryPlanner.PTOAS)
    inner = PassContext(target="a5")
    assert not PassContext.is_active()
    default = PassContext.current()
    assert default is PassContext.current()  # one process-wide default
    with outer as entered:
        assert entered is outer and PassContext.current() is outer and PassContext.is_active()
        with inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current() is default


def test_fresh_nested_context_inherits_nothing():
    # As in PyPTO: only derive() copies; a context built from scratch has defaults.
    with PassContext(memory_planner=MemoryPlanner.PTOAS, enable_pypto_l0c_double_buffer=True):
        with PassContext():
            assert PassContext.current().memory_planner is MemoryPlanner.PYPTO
        with PassContext.current().derive():
            cur = PassContext.current()
            assert cur.memory_planner is MemoryPlanner.PTOAS and cur.enable_pypto_l0c_double_buffer


def test_exit_out_of_order_raises():
    a, b = PassContext(), PassContext()
    a.__enter__()
    b.__enter__()
    with pytest.raises(PassError, match="out of order"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    assert not PassContext.is_active()


def test_contexts_are_per_thread():
    seen = []
    with PassContext(memory_planner=MemoryPlanner.PTOAS):
        t = threading.Thread(target=lambda: seen.append(PassContext.current().memory_planner))
        t.start()
        t.join()
    assert seen == [MemoryPlanner.PYPTO]


@pytest.mark.parametrize("value, expected", [
    ("PTOAS", MemoryPlanner.PTOAS), ("ptoas", MemoryPlanner.PTOAS), ("dsa_rp", MemoryPlanner.DSA_RP),
    (2, MemoryPlanner.DSA_RP), (MemoryPlanner.PYPTO, MemoryPlanner.PYPTO),
])
def test_planner_coercion(value, expected):
    assert PassContext(memory_planner=value).memory_planner is expected


def test_unknown_planner_lists_valid_ones():
    with pytest.raises(PtocError) as info:
        PassContext(memory_planner="LINEAR")
    text = str(info.value)
    assert "memory_planner" in text and "'LINEAR'" in text
    for name in ("PYPTO", "PTOAS", "DSA_RP"):
        assert name in text


@pytest.mark.parametrize("kwargs, words", [
    ({"verification_level": "PARANOID"}, ["verification_level", "PARANOID", "ROUNDTRIP"]),
    ({"verification_level": True}, ["verification_level"]),
    ({"target": "h100"}, ["target", "h100", "a2a3"]),
    ({"enable_pypto_l0c_double_buffer": 1}, ["enable_pypto_l0c_double_buffer", "True or False"]),
    ({"profiling": "yes"}, ["profiling"]),
    ({"disabled_diagnostics": ["PH-NOPE-1"]}, ["PH-NOPE-1", "PH-MR-001"]),
    ({"disabled_diagnostics": [3]}, ["disabled_diagnostics"]),
    ({"dump_dir": 42}, ["dump_dir"]),
    ({"diagnostics": []}, ["DiagnosticSink"]),
])
def test_bad_options_name_option_value_and_fix(kwargs, words):
    with pytest.raises(PassError) as info:
        PassContext(**kwargs)
    for word in words:
        assert word in str(info.value)
    assert info.value.hint


def test_bad_instruments():
    with pytest.raises(PassError, match="not a PassInstrument"):
        PassContext([object()])
    with pytest.raises(PassError, match="sequence"):
        PassContext("verify")


def test_normalisation():
    ctx = PassContext(target="a2a3sim", dump_dir="build/x", disabled_diagnostics="PH001",
                      verification_level="none")
    assert ctx.target == "a2a3"
    assert ctx.dump_dir == Path("build/x")
    assert ctx.disabled_diagnostics == frozenset({"PH001"})
    assert ctx.verification_level is VerificationLevel.NONE
    assert ctx.get_backend().name == "a2a3"


def test_internal_nested_contexts_keep_every_option(tmp_path, tiny_program, rename):
    """Dumping and profiling run in a derived context: a pass sees the outer options."""
    seen = []

    @program_pass(name="Probe")
    def probe(program, ctx):
        assert ctx is PassContext.current()
        seen.append(ctx)
        return rename(program, "P")

    outer = PassContext(memory_planner=MemoryPlanner.DSA_RP, enable_pypto_l0c_double_buffer=True,
                        target="a5", disabled_diagnostics={"PH001"}, profiling=True,
                        verification_level=VerificationLevel.BASIC)
    with outer:
        PassManager([probe()]).run_passes(tiny_program, dump_ir=True, output_dir=tmp_path)
    (inner,) = seen
    assert inner is not outer  # the manager added dump and timing instruments
    for f in dataclasses.fields(PassContext):
        if f.name != "instruments":
            assert getattr(inner, f.name) == getattr(outer, f.name), f.name
    assert inner.instruments[:len(outer.instruments)] == outer.instruments


def test_resolve_context_precedence():
    from ptoc.passes import resolve_context

    # no active context: explicit, else default
    ctx = resolve_context(memory_planner="PTOAS", enable_pypto_l0c_double_buffer=None)
    assert ctx.memory_planner is MemoryPlanner.PTOAS and ctx.enable_pypto_l0c_double_buffer is False
    assert ctx.diagnostics is not PassContext.current().diagnostics  # never the process default's
    # active context: explicit, else the context's value
    with PassContext(memory_planner="DSA_RP", enable_pypto_l0c_double_buffer=True, target="a5") as outer:
        ctx = resolve_context(memory_planner=None, target="a2a3sim", profiling=True)
        assert ctx.memory_planner is MemoryPlanner.DSA_RP and ctx.enable_pypto_l0c_double_buffer
        assert ctx.target == "a2a3" and ctx.profiling
        with ctx:
            from ptoc.passes import report_diagnostic
            report_diagnostic("PH001", "seen by both")
    assert [d.message for d in ctx.diagnostics] == ["seen by both"]
    assert [d.message for d in outer.diagnostics] == ["seen by both"]
    with pytest.raises(PassError, match="unknown"):
        resolve_context(planner="PTOAS")


def test_compile_options_key():
    key = dict(PassContext(enable_pypto_l0c_double_buffer=True).compile_options_key())
    assert key == {"memory_planner": "PYPTO", "enable_pypto_l0c_double_buffer": True,
                   "target": "a2a3", "analyze_auto_scopes_for_deps": False}
    # other planners do dbC by themselves: the flag does not split their key
    on = PassContext(memory_planner="PTOAS", enable_pypto_l0c_double_buffer=True)
    off = PassContext(memory_planner="PTOAS")
    assert on.compile_options_key() == off.compile_options_key()


def test_library_code_never_builds_a_context_from_scratch():
    """Inside ptoc, nested contexts come from derive()/resolve_context() only; a context
    built from scratch would silently reset every option the user set (PyPTO's dbC bug)."""
    import ast

    import ptoc

    root = Path(ptoc.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name == "PassContext":
                    offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    # the single allowed construction: the process-wide default in PassContext.current()
    assert offenders == ["passes/context.py:" + str(_default_line())], (
        "build nested contexts with PassContext.current().derive(...) or resolve_context(...): "
        + ", ".join(offenders))


def _default_line() -> int:
    import inspect

    lines, start = inspect.getsourcelines(PassContext.current)
    return start + next(i for i, line in enumerate(lines) if "PassContext()" in line)
