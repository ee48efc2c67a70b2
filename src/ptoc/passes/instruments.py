"""Pass instruments: hooks that run around every pass (verify, round trip, dump, timing).

Hook order: ``before_pass`` in list order, ``after_pass`` in reverse, like nested ``with``
blocks. Instruments a derived context adds on top (dump, timing) are therefore innermost:
timing measures only the pass, and a dump is written before a later check can fail, so
the broken IR is on disk when the error is raised.

The IR printer, parser, verifier and structural equality are imported lazily, on the first
pass that needs them, so this module (and a test session that never runs a pass) costs
nothing extra.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import re
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

from ptoc.errors import PassError, PtocError, VerificationError
from ptoc.files import write_json, write_text
from ptoc.passes.properties import IR_VERIFIER_PROPERTIES, check_property


class PassInstrument:
    """Base class: override any of the four hooks; all default to doing nothing."""

    #: a checking instrument is skipped under VerificationLevel.NONE
    is_check = False

    def before_pipeline(self, program, ctx) -> None:
        """Called once by PassManager.run_passes before the first pass."""

    def before_pass(self, pass_, program, ctx) -> None:
        """Called before every pass, including a pass called on its own."""

    def after_pass(self, pass_, program, ctx) -> None:
        """Called with the pass's output after every pass."""

    def after_pipeline(self, program, ctx) -> None:
        """Called once by PassManager.run_passes after the last pass."""

    def pipeline_failed(self, error: BaseException, ctx) -> BaseException | None:
        """Called once by PassManager.run_passes when the run raised ``error`` after this
        instrument's ``before_pipeline`` (``after_pipeline`` will not be called). May return
        a more precise error to raise instead (chained to ``error``)."""
        return None


class CallbackInstrument(PassInstrument):
    """Wrap plain callables ``before(pass_, program)`` / ``after(pass_, program)``."""

    def __init__(self, before: Callable | None = None, after: Callable | None = None):
        self._before, self._after = before, after

    def before_pass(self, pass_, program, ctx) -> None:
        if self._before is not None:
            self._before(pass_, program)

    def after_pass(self, pass_, program, ctx) -> None:
        if self._after is not None:
            self._after(pass_, program)


# ---- verification -------------------------------------------------------------------------

_MODULES: dict[str, object] = {}


def _optional(module: str, attr: str):
    """``module.attr`` if the module exists yet, else None (other layers land independently).
    The module is looked up once (the instruments ask after every pass); the attribute
    every time, so a patched function is seen."""
    found = _MODULES.get(module)
    if found is None:
        import importlib

        try:
            found = _MODULES[module] = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module.startswith(exc.name):
                return None
            raise
    return getattr(found, attr, None)


class _Trail:
    """What one pipeline run under the BASIC policy has passed through: the input and each
    pass's output, kept until the run ends so a failure found late names its pass."""

    def __init__(self, program):
        self.steps: list[tuple[str | None, object]] = [(None, program)]
        self.open = True


#: the BASIC-policy trails of the pipeline runs in progress in this context, innermost last
_TRAILS: contextvars.ContextVar[tuple] = contextvars.ContextVar("ptoc_verify_trails", default=())


class VerificationInstrument(PassInstrument):
    """The IR verifier and the produced-property checkers, on PyPTO's schedule.

    ``every_pass=False`` (VerificationLevel.BASIC, PyPTO's pipeline policy): inside
    ``PassManager.run_passes`` the full verifier runs on the pipeline's input and on its
    output; after each pass only the statement structure (``verify(structure_only=True)``:
    yields, loop and branch result counts, pipeline attrs) of the functions the pass
    changed, the full check when the pass declares it produces SSAForm, UseAfterDef or
    TypeChecked, and the checkers of the properties the pass produces. A failure found at
    the end, or a later pass failing, re-verifies the kept outputs in order, so the error
    still names the first pass whose output is invalid. A pass called on its own is
    verified fully after it.

    ``every_pass=True`` (ROUNDTRIP, and the test suite's process-wide instrument): the
    full verifier after every pass.

    Either way, a function a pass returned untouched (the same object) in a program whose
    function signatures (parameters and return types) are the same objects as at the
    previous full check is not verified again; only the last checked program is
    remembered."""

    is_check = True

    def __init__(self, *, every_pass: bool = False):
        self.every_pass = every_pass
        self._checked: tuple = ((), {})   # (signature key, {id(fn): fn}) of the last check

    # ---- hooks -------------------------------------------------------------------------
    def before_pipeline(self, program, ctx) -> None:
        self._verify(program, "on the pipeline's input",
                     "the program given to the pipeline is not valid IR (built by hand?): "
                     "fix the code that built it")
        if not self.every_pass:
            _TRAILS.set(_TRAILS.get() + (_Trail(program),))

    def after_pass(self, pass_, program, ctx) -> None:
        trail = self._trail()
        if trail is None:
            self._verify_after(pass_, program)
        else:
            self._structure_after(pass_, program, trail)
            trail.steps.append((pass_.name, program))
        self._check_produced(pass_, program)

    def after_pipeline(self, program, ctx) -> None:
        trail = self._close()
        if trail is None:
            return
        try:
            self._verify(program, "on the pipeline's output", "")
        except VerificationError as exc:
            raise self._first_failure(trail) or exc from None

    def pipeline_failed(self, error, ctx) -> BaseException | None:
        trail = self._close()
        if trail is None or not isinstance(error, Exception) or isinstance(error, VerificationError):
            return None
        return self._first_failure(trail)

    # ---- checks ------------------------------------------------------------------------
    def _verify(self, program, where: str, hint: str) -> None:
        """The full verifier on the functions changed since the last full check."""
        verify = _optional("ptoc.ir.verifier", "verify")
        if verify is None:
            return
        functions = getattr(program, "functions", None)
        key = tuple((f.name, f.func_type, *map(id, f.params), None,
                     *map(id, f.return_types)) for f in functions) \
            if functions is not None else None
        last_key, last = self._checked
        seen = last if key is not None and key == last_key else {}
        try:
            problems = verify(program, verified=lambda f: seen.get(id(f)) is f) \
                if functions is not None else verify(program)
        except PtocError as exc:
            raise VerificationError(f"IR verification failed {where}: {exc.message}",
                                    exc.loc, hint=exc.hint or hint) from exc
        if problems:  # a verifier that returns a list instead of raising
            listed = "; ".join(str(p) for p in problems)
            raise VerificationError(f"IR verification failed {where}: {listed}", hint=hint)
        if functions is not None:
            self._checked = (key, {id(f): f for f in functions})

    def _verify_after(self, pass_, program) -> None:
        self._verify(program, f"after pass {pass_.name}", f"this is a bug in pass {pass_.name}")

    def _structure_after(self, pass_, program, trail: _Trail) -> None:
        if pass_.produced & IR_VERIFIER_PROPERTIES:
            self._verify_after(pass_, program)
            return
        previous = trail.steps[-1][1]
        if program is previous:
            return   # the pass returned its input, checked when it was made
        verify = _optional("ptoc.ir.verifier", "verify")
        functions = getattr(program, "functions", None)
        if verify is None or functions is None:
            return
        before = {id(f) for f in getattr(previous, "functions", ())}
        try:
            verify(program, verified=lambda f: id(f) in before, structure_only=True)
        except PtocError as exc:
            raise VerificationError(f"IR verification failed after pass {pass_.name}: {exc.message}",
                                    exc.loc, hint=exc.hint or f"this is a bug in pass {pass_.name}"
                                    ) from exc

    def _check_produced(self, pass_, program) -> None:
        for prop in sorted(pass_.produced, key=lambda p: p.value):
            if check_property(prop, program) is False:
                raise VerificationError(f"pass {pass_.name} declares it produces {prop.value}, "
                                        "but the property does not hold on its output",
                                        hint=f"fix pass {pass_.name} or its produced set")

    def _first_failure(self, trail: _Trail) -> VerificationError | None:
        """Re-verify the pipeline's outputs in pass order; the first failure, naming its pass.
        Runs only when something already went wrong."""
        for name, program in trail.steps[1:]:
            try:
                self._verify(program, f"after pass {name} (found by the check on the pipeline's "
                             "output)", f"this is a bug in pass {name}")
            except VerificationError as exc:
                return exc
        return None

    # ---- trail -------------------------------------------------------------------------
    def _trail(self) -> _Trail | None:
        if self.every_pass:
            return None
        trails = _TRAILS.get()
        return trails[-1] if trails and trails[-1].open else None

    def _close(self) -> _Trail | None:
        trail = self._trail()
        if trail is not None:
            trail.open = False
            _TRAILS.set(_TRAILS.get()[:-1])
        return trail


class RoundTripInstrument(PassInstrument):
    """After every pass: print the IR, parse the text back, require structural equality.

    This proves the printer prints valid DSL for everything passes build. With
    ``skip_if_unavailable`` (the test-suite default) it does nothing until the printer and
    parser modules exist.
    """

    is_check = True

    def __init__(self, *, skip_if_unavailable: bool = False):
        self.skip_if_unavailable = skip_if_unavailable

    def after_pass(self, pass_, program, ctx) -> None:
        parse = _optional("ptoc.language", "parse_program")
        equal = _optional("ptoc.ir.equality", "assert_structural_equal")
        printer = _optional("ptoc.ir.printer", "print_program")
        if parse is None or equal is None or printer is None:
            if self.skip_if_unavailable:
                return
            raise PassError("verification_level=ROUNDTRIP needs ptoc.ir.printer, ptoc.language."
                            "parse_program and ptoc.ir.equality, which are not available",
                            hint="use VerificationLevel.BASIC")
        name = pass_.name
        text = program.as_python()
        try:
            reparsed = parse(text, filename=f"<after {name}>")
        except PtocError as exc:
            raise VerificationError(f"round trip failed after pass {name}: the printed IR does not "
                                    f"parse: {exc}", hint=_excerpt(text, exc.line)) from exc
        try:
            equal(program, reparsed)
        except (PtocError, AssertionError, ValueError) as exc:
            raise VerificationError(f"round trip failed after pass {name}: printed and re-parsed IR "
                                    f"differ: {exc}", hint="the printer or parser loses information "
                                    f"that pass {name} put into the IR") from exc


def _excerpt(text: str, line: int | None, radius: int = 2) -> str:
    """A few numbered lines of printed IR around ``line``, for error hints."""
    lines = text.splitlines()
    if not line or line > len(lines):
        return "see program.as_python()"
    lo, hi = max(1, line - radius), min(len(lines), line + radius)
    return "printed IR: " + " | ".join(f"{i}: {lines[i - 1].strip()}" for i in range(lo, hi + 1))


# ---- dumps ---------------------------------------------------------------------------------

_DUMP_NAME = re.compile(r"^\d{2,}_(frontend|after_\w+)\.py$")


class PassDumpLevel(enum.Enum):
    """PyPTO's ``dump_passes`` levels. ptoc prints one form of the IR (every binding with
    its full type), so CONCISE and EXPLICIT both dump it; NONE dumps nothing. A level is
    true exactly when it dumps, so ``dump_passes=`` takes a bool or a level alike."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2

    def __bool__(self) -> bool:
        return self is not PassDumpLevel.NONE


class IRDumpInstrument(PassInstrument):
    """Write ``NN_after_<Pass>.py`` into ``directory`` after every pass.

    ``before_pipeline`` removes earlier dumps (only files named like dumps) and writes
    ``00_frontend.py``; passes are numbered from 01 in the order they run.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self._index = 0
        self.written: list[Path] = []

    def before_pipeline(self, program, ctx) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        for old in self.directory.iterdir():
            if old.is_file() and _DUMP_NAME.match(old.name):
                old.unlink()
        self._index = 0
        self._write("00_frontend.py", program)

    def after_pass(self, pass_, program, ctx) -> None:
        self._index += 1
        self._write(f"{self._index:02d}_after_{pass_.name}.py", program)

    def _write(self, filename: str, program) -> None:
        path = write_text(self.directory / filename, program.as_python())
        self.written.append(path)


# ---- timing --------------------------------------------------------------------------------

class TimingInstrument(PassInstrument):
    """Measure each pass; ``after_pipeline`` writes ``pipeline_profile.{txt,json}``.

    ``records`` holds ``(name, seconds, depth)`` in completion order; depth > 0 marks a
    pass run from inside another pass.
    """

    def __init__(self, report_dir: str | Path | None = None):
        self.report_dir = Path(report_dir) if report_dir is not None else None
        self.records: list[tuple[str, float, int]] = []
        self._starts: list[float] = []

    def before_pipeline(self, program, ctx) -> None:
        self.records.clear()
        self._starts.clear()

    def before_pass(self, pass_, program, ctx) -> None:
        self._starts.append(time.perf_counter())

    def after_pass(self, pass_, program, ctx) -> None:
        start = self._starts.pop()
        self.records.append((pass_.name, time.perf_counter() - start, len(self._starts)))

    def after_pipeline(self, program, ctx) -> None:
        if self.report_dir is not None:
            self.write(self.report_dir)

    def profile(self) -> dict:
        """The profile as plain data (the JSON file's content)."""
        top = [r for r in self.records if r[2] == 0]
        total = sum(seconds for _, seconds, _ in top)
        passes = [{"index": i, "name": name, "ms": round(seconds * 1e3, 3), "depth": depth,
                   "percent": round(100.0 * seconds / total, 1) if total > 0 else 0.0}
                  for i, (name, seconds, depth) in enumerate(self.records, start=1)]
        return {"total_ms": round(total * 1e3, 3), "pass_count": len(top), "passes": passes}

    def write(self, report_dir: str | Path) -> tuple[Path, Path]:
        data = self.profile()
        report_dir = Path(report_dir)
        txt, js = report_dir / "pipeline_profile.txt", report_dir / "pipeline_profile.json"
        width = max([len("pass")] + [len(p["name"]) + 2 * p["depth"] for p in data["passes"]])
        lines = [f"ptoc pass pipeline profile: {data['pass_count']} passes, {data['total_ms']:.3f} ms",
                 f"{'#':>3}  {'pass':<{width}}  {'ms':>10}  {'%':>6}"]
        for p in data["passes"]:
            label = "  " * p["depth"] + p["name"]
            lines.append(f"{p['index']:>3}  {label:<{width}}  {p['ms']:>10.3f}  {p['percent']:>6.1f}")
        write_text(txt, "\n".join(lines) + "\n")
        write_json(js, data, indent=2)
        return txt, js


# ---- process-wide instruments (the test suite's round trip) --------------------------------

_GLOBAL: list[PassInstrument] = []
_GLOBAL_LOCK = threading.Lock()
_SUSPENDED = threading.local()


def install_global_instrument(inst: PassInstrument) -> PassInstrument:
    """Run ``inst`` on every pass call in this process, whatever PassContext is current.

    Meant for test suites (tests/conftest.py turns round trip on this way), not for
    compiles: options of a compile belong on its PassContext.
    """
    with _GLOBAL_LOCK:
        if inst not in _GLOBAL:
            _GLOBAL.append(inst)
    return inst


def remove_global_instrument(inst: PassInstrument) -> None:
    with _GLOBAL_LOCK:
        if inst in _GLOBAL:
            _GLOBAL.remove(inst)


def global_instruments() -> tuple[PassInstrument, ...]:
    """Process-wide instruments in effect for this thread (empty while suspended)."""
    if getattr(_SUSPENDED, "depth", 0):
        return ()
    return tuple(_GLOBAL)


@contextlib.contextmanager
def suspended_global_instruments() -> Iterator[None]:
    """Turn process-wide instruments off in this thread for a block (a test's opt-out)."""
    _SUSPENDED.depth = getattr(_SUSPENDED, "depth", 0) + 1
    try:
        yield
    finally:
        _SUSPENDED.depth -= 1


_VERIFY = VerificationInstrument()
_VERIFY_EVERY_PASS = VerificationInstrument(every_pass=True)
_ROUNDTRIP = RoundTripInstrument()


def produced_checks_trusted(ctx, instruments) -> bool:
    """True at VerificationLevel.BASIC without an every-pass verifier: a property a pass
    produced was checked after it, so a later pass that requires it need not check it
    again unless a pass in between invalidated it (PyPTO's schedule). ROUNDTRIP and the
    test suite check every required property before every pass."""
    from ptoc.passes.context import VerificationLevel

    return ctx.verification_level is VerificationLevel.BASIC and not any(
        isinstance(i, VerificationInstrument) and i.every_pass for i in instruments)


def instruments_for(ctx) -> tuple[PassInstrument, ...]:
    """Instruments one pass call runs under ``ctx``, outermost first.

    Round trip (level ROUNDTRIP), process-wide instruments, verification, then the
    context's own; ``after_pass`` runs in reverse, so after a pass the verifier reports
    before the slower round trip. Verification is PyPTO's pipeline schedule at BASIC and
    the full verifier after every pass at ROUNDTRIP; a process-wide verifier that checks
    every pass (the test suite's) takes the level's place. Under VerificationLevel.NONE no
    checking instrument runs, process-wide ones included.
    """
    from ptoc.passes.context import VerificationLevel

    level = ctx.verification_level
    out: list[PassInstrument] = []
    if level is VerificationLevel.ROUNDTRIP:
        out.append(_ROUNDTRIP)
    every_pass = False
    for inst in global_instruments():
        if level is VerificationLevel.NONE and inst.is_check:
            continue
        if level is VerificationLevel.ROUNDTRIP and isinstance(inst, RoundTripInstrument):
            continue  # the strict one already runs
        every_pass = every_pass or (isinstance(inst, VerificationInstrument) and inst.every_pass)
        out.append(inst)
    if level is not VerificationLevel.NONE and not every_pass:
        out.append(_VERIFY_EVERY_PASS if level is VerificationLevel.ROUNDTRIP else _VERIFY)
    out.extend(ctx.instruments)
    return tuple(out)
