"""User-facing errors.

Every mistake a user can make raises a ``PtocError`` subclass whose message names the
variable or instruction, the numbers involved and the fix, and which carries the source
location, so that no raw Python traceback escapes from inside ptoc for bad input.

Each subclass also derives from the builtin exception PyPTO raises in the same situation
(``ValueError`` for a rejected program or option, ``TypeError`` as well for ill-typed op
arguments, ``RuntimeError`` for ptoc's own internal failures and for the simulator), so
PyPTO code written as ``except ValueError:`` keeps catching what ptoc raises. ``Error`` and
``InternalError`` are PyPTO's names for the catch-all and the internal-bug class.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A position in user source: file, 1-based line and 0-based column.

    Also PyPTO's ``ir.Span``: ``Span(filename, begin_line, begin_column, end_line=-1,
    end_column=-1)`` with the same field names readable, ``Span.unknown()``, ``is_valid()``.
    """

    file: str = "<unknown>"
    line: int = 0
    col: int = 0
    end_line: int = -1
    end_column: int = -1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    @property
    def filename(self) -> str:
        return self.file

    @property
    def begin_line(self) -> int:
        return self.line

    @property
    def begin_column(self) -> int:
        return self.col

    @staticmethod
    def unknown() -> "SourceLoc":
        return SourceLoc("", -1, -1)

    def is_valid(self) -> bool:
        return self.line > 0 and self.col >= 0

    def to_string(self) -> str:
        return str(self)


def count(n: int, noun: str) -> str:
    """``1 argument``, ``3 arguments``: messages count things in correct English."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def were_given(n: int) -> str:
    """``1 was given``, ``2 were given``."""
    return f"{n} {'was' if n == 1 else 'were'} given"


class PtocError(Exception):
    """Base class of every error ptoc reports to a user."""

    def __init__(self, message: str, loc: SourceLoc | None = None, *, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self.render())

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc is not None else None

    def render(self) -> str:
        where = f"{self.loc}: " if self.loc is not None else ""
        fix = f" (fix: {self.hint})" if self.hint else ""
        return f"{where}{self.message}{fix}"


#: PyPTO's name for the base of its own errors (``pypto.Error``).
Error = PtocError


class ParserError(PtocError, ValueError):
    """Base of the errors a program can raise while it is parsed (PyPTO's ``ParserError``)."""


#: PyPTO's specific parser errors: ptoc does not split parse errors that finely, so each name
#: catches every parse-time error (an ``except ParserSyntaxError`` never misses one)
ParserSyntaxError = ParserTypeError = UndefinedVariableError = SSAViolationError = ParserError
UnsupportedFeatureError = InvalidOperationError = ScopeIsolationError = ParserError


class ParseError(ParserError, ValueError):
    """The DSL or printed-IR source could not be turned into IR."""


class InvalidSyntaxError(ParseError, SyntaxError):
    """The source is not valid Python. Also a ``SyntaxError``, the class PyPTO's ``pl.parse``
    raises there, with ``filename``/``lineno``/``offset`` set as Python's own."""

    def __init__(self, message: str, loc: SourceLoc | None = None, *, hint: str | None = None):
        super().__init__(message, loc, hint=hint)
        self.msg = message
        if loc is not None:
            self.filename, self.lineno, self.offset = loc.file, loc.line, loc.col + 1

    def __str__(self) -> str:
        return self.render()


class TypeCheckError(ParserError, ValueError, TypeError):
    """An op's operands have the wrong shape, dtype, memory space or arity.

    PyPTO raises ``ValueError`` for most rejected operands and ``TypeError`` for some; this
    class is both, so either ``except`` clause catches it.
    """


class VerificationError(PtocError, ValueError):
    """The IR violates an invariant (SSA, types, loop attributes)."""


class PassError(PtocError, ValueError):
    """A pass cannot transform the program (bad options, unsupported form)."""


class PartialCodegenError(PtocError, RuntimeError):
    """A program PyPTO's code generator refuses (PyPTO's ``pypto.backend.pto_backend`` class, a
    ``RuntimeError`` its ``ir.compile`` raises): every refusal of ptoc's codegen
    (``ptoc.codegen.errors.CodegenError``) and the ones ptoc finds earlier that PyPTO's
    codegen would. ``files`` is what PyPTO had generated before the failure; ptoc writes
    none (empty)."""

    @property
    def files(self) -> dict[str, str]:
        return {}


class UnwrittenOutputError(PassError, PartialCodegenError):
    """An output parameter's name rebound to a value computed elsewhere: nothing writes the
    caller's tensor (PyPTO's code generator is where PyPTO refuses it)."""


class AllocationError(PtocError, ValueError):
    """On-chip buffers do not fit their memory space."""


class PtoError(PtocError, ValueError):
    """PTO assembly text is malformed or ill-typed."""


class SimulationError(PtocError, RuntimeError):
    """The simulated core hit a hard error (deadlock, flag protocol violation)."""

    def __init__(self, message: str, loc: SourceLoc | None = None, *, hint: str | None = None,
                 timeline=None):
        self.timeline = timeline
        super().__init__(message, loc, hint=hint)


class DeadlockError(SimulationError):
    """A wait_flag can never be satisfied."""


class FlagProtocolError(SimulationError):
    """A flag was set twice before its wait, or left set at kernel end."""


class PipeProtocolError(SimulationError):
    """A cross-core pipe was misused: tiles pushed but never popped, popped but never freed,
    freed out of order, or the two sides set the pipe up differently."""


class DataRaceError(SimulationError):
    """A run whose outputs are returned without their report had data races: the numbers
    depend on timing the simulator fixed one way, so they are not given as an answer."""


class DataRaceWarning(UserWarning):
    """A run returned its report (``RunResult.races``) with data races in it."""


class UnwrittenReadWarning(UserWarning):
    """A run read GM bytes that nothing had written (``RunResult.unwritten``): ptoc's GM
    starts zeroed, a device's holds garbage there, so the outputs may differ on a device."""


class RuntimeConfigError(PtocError, ValueError):
    """Bad options or tensors passed to compile/run."""


class JitOptionError(PtocError, TypeError):
    """A ``@pl.jit.<kind>`` option that kind does not take (a TypeError, as in PyPTO)."""


class MissingApiError(PtocError, AttributeError):
    """A DSL name (``pl.X``) ptoc does not provide; still an ``AttributeError`` for ``hasattr``."""


class InternalError(PtocError, RuntimeError):
    """ptoc broke one of its own guarantees (a ptoc bug): raised instead of a wrong result.

    A ``RuntimeError``, as PyPTO's ``InternalError`` is."""

    def render(self) -> str:
        return super().render() + " [internal error: this is a ptoc bug, please report it]"

