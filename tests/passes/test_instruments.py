"""Instruments: hook order, verification, round trip, dumps, timing, process-wide instruments."""

from __future__ import annotations

import dataclasses
import importlib.util

import pytest

from ptoc.errors import InternalError, PassError, VerificationError
from ptoc.ir.nodes import ReturnStmt, SeqStmts, Var
from ptoc.passes import (
    CallbackInstrument, IRDumpInstrument, IRProperty, Pass, PassContext, PassInstrument, PassManager,
    RoundTripInstrument, TimingInstrument, VerificationLevel, current_pass_name, function_pass,
    install_global_instrument, program_pass, remove_global_instrument,
    suspended_global_instruments,
)
from ptoc.passes.instruments import global_instruments, instruments_for

HAVE_ROUNDTRIP = all(importlib.util.find_spec(m) is not None
                     for m in ("ptoc.language", "ptoc.ir.printer", "ptoc.ir.equality"))


class Recorder(PassInstrument):
    def __init__(self, tag, log):
        self.tag, self.log = tag, log

    def before_pipeline(self, program, ctx):
        self.log.append((self.tag, "begin", program.name))

    def before_pass(self, pass_, program, ctx):
        self.log.append((self.tag, "before", pass_.name, program.name))

    def after_pass(self, pass_, program, ctx):
        self.log.append((self.tag, "after", pass_.name, program.name))

    def after_pipeline(self, program, ctx):
        self.log.append((self.tag, "end", program.name))


def suffix(s):
    @program_pass(name=f"Add{s}")
    def run(program, ctx):
        return dataclasses.replace(program, name=program.name + s)
    return run()


def test_hook_order_nests_like_with_blocks(tiny_program):
    log = []
    with PassContext([Recorder("outer", log), Recorder("inner", log)]):
        PassManager([suffix("A")]).run_passes(tiny_program)
    assert log == [
        ("outer", "begin", "Tiny"), ("inner", "begin", "Tiny"),
        ("outer", "before", "AddA", "Tiny"), ("inner", "before", "AddA", "Tiny"),
        ("inner", "after", "AddA", "TinyA"), ("outer", "after", "AddA", "TinyA"),
        ("inner", "end", "TinyA"), ("outer", "end", "TinyA"),
    ]


def test_standalone_pass_call_runs_context_instruments(tiny_program):
    seen = []
    inst = CallbackInstrument(before=lambda p, prog: seen.append(("before", p.name, prog.name)),
                              after=lambda p, prog: seen.append(("after", p.name, prog.name)))
    with PassContext([inst]):
        out = suffix("A")(tiny_program)
    assert out.name == "TinyA"
    assert seen == [("before", "AddA", "Tiny"), ("after", "AddA", "TinyA")]
    seen.clear()
    suffix("A")(tiny_program)  # outside the context: its instrument is gone
    assert seen == []


def test_current_pass_name_inside_a_pass(tiny_program):
    names = []

    @program_pass(name="Outer")
    def outer(program, ctx):
        names.append(current_pass_name())
        return suffix("I")(program)

    inner_seen = CallbackInstrument(before=lambda p, prog: names.append(current_pass_name()))
    with PassContext([inner_seen]):
        outer()(tiny_program)
    assert names == ["Outer", "Outer", "AddI"]
    assert current_pass_name() is None


def test_pass_must_return_a_program(tiny_program):
    @program_pass(name="Broken")
    def broken(program, ctx):
        return None

    with pytest.raises(PassError, match="Broken returned NoneType"):
        broken()(tiny_program)
    with pytest.raises(PassError, match="expects a ptoc.ir.Program"):
        broken()("text")


def test_function_pass_maps_incore_functions(tiny_program):
    touched = []

    @function_pass(name="Touch")
    def touch(function, ctx, tag="x"):
        touched.append((function.name, tag))
        return dataclasses.replace(function, attrs={"tag": tag}) if tag != "same" else function

    out = touch(tag="y")(tiny_program)
    assert touched == [("kernel", "y")] and out.functions[0].attrs == {"tag": "y"}
    assert touch(tag="same")(tiny_program) is tiny_program
    assert touch.pass_name == "Touch" and touch().name == "Touch"


def test_pass_subclass_declares_properties():
    class InitMemRef(Pass):
        required = {"MemoryInferred"}
        produced = [IRProperty.MemRefsAssigned]

        def run(self, program, ctx):
            return program

    p = InitMemRef()
    assert p.name == "InitMemRef"
    assert p.required == frozenset({IRProperty.MemoryInferred})
    assert p.produced == frozenset({IRProperty.MemRefsAssigned}) and p.invalidated == frozenset()
    with pytest.raises(PassError, match="unknown IR property 'MemRefsAsigned'"):
        class Typo(Pass):
            produced = {"MemRefsAsigned"}


def test_every_property_is_found_by_its_name_and_value():
    from ptoc.passes.properties import to_property

    for prop in IRProperty:
        assert to_property(prop.name) is prop and to_property(prop.value) is prop
        assert to_property(prop) is prop
    for bad in ("", "ssaform", 3, None):
        with pytest.raises(PassError, match="unknown IR property"):
            to_property(bad)


# ---- verification -----------------------------------------------------------------------------

def drop_return_value_pass():
    """Returns a variable that is never defined: the IR verifier must reject it."""
    @program_pass(name="Dangling")
    def run(program, ctx):
        fn = program.functions[0]
        ghost = Var("ghost", fn.return_types[0])
        body = SeqStmts(fn.body.stmts[:-1] + (ReturnStmt((ghost,)),))
        return dataclasses.replace(program, functions=(dataclasses.replace(fn, body=body),))
    return run()


@pytest.mark.no_roundtrip
def test_verification_names_the_pass(tiny_program):
    if importlib.util.find_spec("ptoc.ir.verifier") is None:
        pytest.skip("IR verifier not built yet")
    with pytest.raises(VerificationError, match="after pass Dangling"):
        drop_return_value_pass()(tiny_program)
    with PassContext(verification_level=VerificationLevel.NONE):
        drop_return_value_pass()(tiny_program)  # no checking at all


def test_produced_property_is_checked(tiny_program):
    # the tiny program's tile has no MemRef: the built-in MemRefsAssigned checker says no
    liar = program_pass(name="Liar", produced={"MemRefsAssigned"})(lambda program, ctx: program)()
    with pytest.raises(VerificationError, match="Liar declares it produces MemRefsAssigned"):
        liar(tiny_program)
    with PassContext(verification_level="NONE"):
        assert liar(tiny_program) is tiny_program


def test_level_implied_instruments():
    none = instruments_for(PassContext(verification_level="NONE"))
    basic = instruments_for(PassContext())
    rt = instruments_for(PassContext(verification_level="ROUNDTRIP"))
    assert not any(i.is_check for i in none)
    assert [type(i).__name__ for i in basic if i.is_check][-1] == "VerificationInstrument"
    strict = [i for i in rt if isinstance(i, RoundTripInstrument)]
    assert len(strict) == 1 and not strict[0].skip_if_unavailable


# ---- round trip -------------------------------------------------------------------------------

@pytest.mark.skipif(not HAVE_ROUNDTRIP, reason="printer/parser not built yet")
def test_roundtrip_level_accepts_printable_ir(tiny_program):
    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):
        assert suffix("A")(tiny_program).name == "TinyA"


@pytest.mark.skipif(not HAVE_ROUNDTRIP, reason="printer/parser not built yet")
def test_roundtrip_failure_names_the_pass(tiny_program, make_program, monkeypatch):
    import ptoc.language

    # A parser that loses information: it always gives back a program with other shapes.
    monkeypatch.setattr(ptoc.language, "parse_program", lambda text, filename=None: make_program(rows=32))
    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):
        with pytest.raises(VerificationError, match="round trip failed after pass AddA"):
            suffix("A")(tiny_program)


@pytest.mark.skipif(not HAVE_ROUNDTRIP, reason="printer/parser not built yet")
def test_suite_roundtrip_is_on_by_default(tiny_program, make_program, monkeypatch):
    import ptoc.language

    assert any(isinstance(i, RoundTripInstrument) for i in global_instruments())
    monkeypatch.setattr(ptoc.language, "parse_program", lambda text, filename=None: make_program(rows=32))
    with pytest.raises(VerificationError, match="round trip failed after pass AddA"):
        suffix("A")(tiny_program)  # default PassContext: the conftest instrument caught it
    with suspended_global_instruments():
        suffix("A")(tiny_program)


@pytest.mark.no_roundtrip
def test_marker_opts_out_of_suite_roundtrip():
    assert not any(isinstance(i, RoundTripInstrument) for i in global_instruments())


def test_roundtrip_skips_or_fails_when_parser_missing(tiny_program, monkeypatch):
    import ptoc.passes.instruments as instruments

    monkeypatch.setattr(instruments, "_optional", lambda module, attr: None)
    RoundTripInstrument(skip_if_unavailable=True).after_pass(suffix("A"), tiny_program, PassContext())
    with pytest.raises(PassError, match="ROUNDTRIP needs"):
        RoundTripInstrument().after_pass(suffix("A"), tiny_program, PassContext())


def test_global_instruments_install_and_suspend(tiny_program):
    log = []
    inst = install_global_instrument(Recorder("g", log))
    try:
        with PassContext(memory_planner="PTOAS"):  # any context: global ones still run
            suffix("A")(tiny_program)
        with suspended_global_instruments():
            suffix("B")(tiny_program)
    finally:
        remove_global_instrument(inst)
    suffix("C")(tiny_program)
    assert [entry[2] for entry in log] == ["AddA", "AddA"]


# ---- dumps and timing ---------------------------------------------------------------------------

def test_dump_instrument_standalone_numbering(tmp_path, tiny_program):
    dump = IRDumpInstrument(tmp_path / "d")
    with PassContext([dump]):
        out = suffix("B")(suffix("A")(tiny_program))
    assert [p.name for p in dump.written] == ["01_after_AddA.py", "02_after_AddB.py"]
    assert (tmp_path / "d" / "02_after_AddB.py").read_text() == out.as_python()


def test_dump_written_before_verification_fails(tmp_path, tiny_program):
    if importlib.util.find_spec("ptoc.ir.verifier") is None:
        pytest.skip("IR verifier not built yet")
    with PassContext(dump_dir=tmp_path):
        with pytest.raises(VerificationError):
            PassManager([suffix("A"), drop_return_value_pass()]).run_passes(tiny_program, dump_ir=True)
    names = sorted(p.name for p in (tmp_path / "passes_dump").iterdir())
    assert names == ["00_frontend.py", "01_after_AddA.py", "02_after_Dangling.py"]
    assert "ghost" in (tmp_path / "passes_dump" / "02_after_Dangling.py").read_text()


def test_timing_records_nested_passes(tmp_path, tiny_program):
    timing = TimingInstrument()

    @program_pass(name="Composite")
    def composite(program, ctx):
        return suffix("X")(program)

    with PassContext([timing]):
        composite()(tiny_program)
    assert [(name, depth) for name, _, depth in timing.records] == [("AddX", 1), ("Composite", 0)]
    txt, js = timing.write(tmp_path)
    assert txt.name == "pipeline_profile.txt" and js.name == "pipeline_profile.json"
    assert "  AddX" in txt.read_text() and timing.profile()["pass_count"] == 1


def test_internal_error_in_a_pass_names_the_pass(tiny_program):
    @program_pass(name="Buggy")
    def buggy(program, ctx):
        return {}["missing"]

    with pytest.raises(InternalError, match="internal error in pass Buggy: KeyError") as info:
        buggy()(tiny_program)
    assert isinstance(info.value.__cause__, KeyError)
    assert isinstance(info.value, RuntimeError)  # PyPTO's InternalError is a RuntimeError

    @program_pass(name="Refuses")
    def refuses(program, ctx):
        raise VerificationError("tile 't' has no memory space")

    with pytest.raises(VerificationError, match="no memory space"):  # user errors pass through
        refuses()(tiny_program)


@pytest.mark.skipif(not HAVE_ROUNDTRIP, reason="printer/parser not built yet")
def test_roundtrip_parse_failure_quotes_the_printed_line(tiny_program, monkeypatch):
    import ptoc.language
    from ptoc.errors import ParseError, SourceLoc

    def refuse(text, filename=None):
        raise ParseError("unknown op", SourceLoc(filename, 4, 0))

    monkeypatch.setattr(ptoc.language, "parse_program", refuse)
    with PassContext(verification_level="ROUNDTRIP"):
        with pytest.raises(VerificationError, match="after pass AddA: the printed IR does not parse") as info:
            suffix("A")(tiny_program)
    assert "4: @pl.program" in info.value.hint and "<after AddA>" in str(info.value)
