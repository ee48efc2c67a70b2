"""When the IR verifier runs (PyPTO's schedule): at VerificationLevel.BASIC a pipeline is
verified fully on its input and its output, and after each pass only structurally; a pass
that breaks an invariant is still reported, by name. ROUNDTRIP and the test suite's own
instrument verify fully after every pass."""

from __future__ import annotations

import dataclasses

import pytest

from ptoc.errors import InternalError, VerificationError
from ptoc.ir import verifier
from ptoc.ir.nodes import ReturnStmt, SeqStmts, YieldStmt
from ptoc.passes import (
    PassContext, PassManager, VerificationInstrument, VerificationLevel, program_pass,
    suspended_global_instruments,
)
from ptoc.passes.instruments import global_instruments


def _with_body(program, stmts):
    fn = program.functions[0]
    return dataclasses.replace(program, functions=(
        dataclasses.replace(fn, body=SeqStmts(tuple(stmts))),) + tuple(program.functions[1:]))


@program_pass(name="Rebuilds")
def rebuilds(program, ctx):
    """Every function a new object with the same content (each must be checked again)."""
    return dataclasses.replace(program, functions=tuple(dataclasses.replace(f)
                                                        for f in program.functions))


@program_pass(name="DropsDefinition")
def drops_definition(program, ctx):
    """Drops the first statement: a later use is undefined (not a structural fault)."""
    return _with_body(program, program.functions[0].body.stmts[1:])


@program_pass(name="StrayYield")
def stray_yield(program, ctx):
    """A pl.yield_ at function level: a structural fault."""
    stmts = program.functions[0].body.stmts
    return _with_body(program, (*stmts[:-1], YieldStmt(()), stmts[-1]))


@program_pass(name="ReadsFirstDefinition")
def reads_first_definition(program, ctx):
    """A later pass that relies on the invariant the broken pass destroyed."""
    first = program.functions[0].body.stmts[0]
    if isinstance(first, ReturnStmt) or not hasattr(first, "var"):
        raise KeyError("the first statement defines nothing")
    return program


def full_checks(monkeypatch) -> list[str]:
    """Names of functions the full verifier checks (the structural check is not counted)."""
    names: list[str] = []
    real = verifier._FunctionVerifier.run

    def run(self):
        if type(self) is verifier._FunctionVerifier:
            names.append(self.fn.name)
        return real(self)

    monkeypatch.setattr(verifier._FunctionVerifier, "run", run)
    return names


def run(program, passes, **ctx):
    with PassContext(**ctx):
        return PassManager([p() for p in passes]).run_passes(program, write_report=False)


def test_basic_verifies_input_and_output_fully_and_the_passes_structurally(monkeypatch,
                                                                          tiny_program):
    names = full_checks(monkeypatch)
    with suspended_global_instruments():
        run(tiny_program, [rebuilds, rebuilds, rebuilds])
    assert names == ["kernel", "kernel"]          # the input and the output


def test_roundtrip_level_verifies_every_pass_fully(monkeypatch, tiny_program):
    names = full_checks(monkeypatch)
    with suspended_global_instruments():
        run(tiny_program, [rebuilds, rebuilds, rebuilds],
            verification_level=VerificationLevel.ROUNDTRIP)
    assert names == ["kernel"] * 4                # the input and after each pass


def test_the_suite_verifies_every_pass_fully(monkeypatch, tiny_program):
    assert any(isinstance(i, VerificationInstrument) and i.every_pass
               for i in global_instruments())
    names = full_checks(monkeypatch)
    run(tiny_program, [rebuilds, rebuilds, rebuilds])
    assert names == ["kernel"] * 4


def test_basic_names_the_pass_that_broke_an_invariant_at_the_end(tiny_program):
    with suspended_global_instruments(), pytest.raises(
            VerificationError, match="after pass DropsDefinition .found by the check on the "
                                     "pipeline's output.*used before it is defined"):
        run(tiny_program, [rebuilds, drops_definition, rebuilds])


def test_basic_names_the_broken_pass_when_a_later_pass_fails_on_its_output(tiny_program):
    with suspended_global_instruments(), pytest.raises(
            VerificationError, match="after pass DropsDefinition") as info:
        run(tiny_program, [drops_definition, drops_definition, drops_definition,
                           reads_first_definition])
    assert isinstance(info.value.__cause__, InternalError)   # what failed later is kept


def test_a_failure_on_valid_ir_is_raised_as_it_is(tiny_program):
    with suspended_global_instruments(), pytest.raises(InternalError, match="ReadsFirstDefinition"):
        out = tiny_program.functions[0].params[1].var
        run(_with_body(tiny_program, [ReturnStmt((out,))]), [reads_first_definition])


def test_basic_catches_a_structural_fault_right_after_its_pass(tiny_program):
    with suspended_global_instruments(), pytest.raises(
            VerificationError, match="after pass StrayYield: .*outside any loop"):
        run(tiny_program, [stray_yield, drops_definition])


def test_every_pass_mode_stops_at_the_broken_pass(tiny_program):
    ran = []

    @program_pass(name="Later")
    def later(program, ctx):
        ran.append(True)
        return program

    with pytest.raises(VerificationError, match="after pass DropsDefinition: "):
        run(tiny_program, [drops_definition, later])
    assert ran == []


def test_invalid_input_is_reported_as_the_input(tiny_program):
    broken = _with_body(tiny_program, tiny_program.functions[0].body.stmts[1:])
    for level in (VerificationLevel.BASIC, VerificationLevel.ROUNDTRIP):
        with suspended_global_instruments(), pytest.raises(
                VerificationError, match="verification failed on the pipeline's input"):
            run(broken, [rebuilds], verification_level=level)
    with suspended_global_instruments():
        run(broken, [rebuilds], verification_level=VerificationLevel.NONE)


def test_a_standalone_pass_is_verified_fully_after_it(tiny_program):
    with suspended_global_instruments(), PassContext(), pytest.raises(
            VerificationError, match="after pass DropsDefinition: "):
        drops_definition()(tiny_program)


@pytest.mark.parametrize("level, every_pass", [(VerificationLevel.BASIC, False),
                                               (VerificationLevel.ROUNDTRIP, True)])
def test_a_required_property_is_checked_once_per_time_it_is_produced(tiny_program, level,
                                                                     every_pass):
    from ptoc.passes.properties import (
        IRProperty, register_property_checker, unregister_property_checker,
    )

    prop = IRProperty.IOOrderCanonical
    calls = []
    register_property_checker(prop, lambda program: calls.append(program.name) or True)
    try:
        produce = program_pass(name="Produce", produced={prop})(lambda program, ctx: program)
        need = program_pass(name="Need", required={prop})(lambda program, ctx: program)
        lose = program_pass(name="Lose", invalidated={prop})(lambda program, ctx: program)
        with suspended_global_instruments():
            run(tiny_program, [produce, need, need, lose, produce, need],
                verification_level=level)
    finally:
        unregister_property_checker(prop)
    # BASIC: after each Produce only; every pass: also before each Need
    assert len(calls) == (5 if every_pass else 2)
