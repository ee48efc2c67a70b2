"""PassContext: every compile option in one immutable object, scoped with ``with``.

Passes read options from ``PassContext.current()`` when they run. Contexts nest as a stack
and a context built from scratch inherits nothing (as in PyPTO), so an internal helper
that needs extra instruments must call ``ctx.derive(...)``, the single method that copies
every field. PyPTO once dropped the planner and the dbC flag in such a nested context and
silently disabled a feature; making ``derive`` the only way rules that out here.
"""

from __future__ import annotations

import contextvars
import dataclasses
import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ptoc.errors import PassError
from ptoc.passes.diagnostics import DiagnosticSink, matches, validate_disabled


class MemoryPlanner(enum.Enum):
    """Who assigns on-chip addresses (values as in PyPTO)."""

    PYPTO = 0   # MemoryReuse + AllocateMemoryAddr bake addresses
    PTOAS = 1   # both skipped; ptoc.pto's planner assigns addresses at Level 2
    DSA_RP = 2  # MemoryReuse skipped; capacity-constrained allocation


class VerificationLevel(enum.Enum):
    """How much checking runs after every pass."""

    NONE = 0       # nothing
    BASIC = 1      # the IR verifier and property checkers
    ROUNDTRIP = 2  # BASIC plus print -> parse -> structural equality


class OptimizationStrategy(enum.Enum):
    """Named pass pipelines; PyPTO has only ``Default``."""

    Default = "Default"


def _coerce_enum(enum_cls: type[enum.Enum], value: Any, option: str) -> enum.Enum:
    """Accept a member, its name (any case) or its value; otherwise raise listing valid names."""
    if isinstance(value, enum_cls):
        return value
    for member in enum_cls:
        if (isinstance(value, str) and value.upper() == member.name.upper()) or (
                not isinstance(value, (str, bool)) and value == member.value):
            return member
    valid = ", ".join(f"{enum_cls.__name__}.{m.name}" for m in enum_cls)
    raise PassError(f"unknown {option} {value!r}", hint=f"use one of {valid}")


def _check_target(value: Any) -> str:
    """Normalise a target or platform name (``a2a3sim`` -> ``a2a3``) using ptoc.backend."""
    try:
        from ptoc.backend import get_target
    except ModuleNotFoundError as exc:  # backend not built yet: accept the known names
        if exc.name not in ("ptoc.backend", "ptoc"):
            raise
        known = {"a2a3": "a2a3", "a2a3sim": "a2a3", "a5": "a5", "a5sim": "a5"}
        if isinstance(value, str) and value.lower() in known:
            return known[value.lower()]
        raise PassError(f"unknown target {value!r}", hint="use one of a2a3, a2a3sim, a5, a5sim") from None
    if not isinstance(value, str) and not hasattr(value, "name"):
        raise PassError(f"target must be a name such as 'a2a3', got {value!r}", hint="pass target='a2a3'")
    try:
        return get_target(value).name
    except Exception as exc:  # TargetError is a PtocError; re-raise as an option error
        raise PassError(f"unknown target {value!r} for PassContext(target=...)",
                        hint=getattr(exc, "hint", None) or str(exc)) from None


def _check_instrument(inst: Any) -> Any:
    if not (callable(getattr(inst, "before_pass", None)) and callable(getattr(inst, "after_pass", None))):
        raise PassError(f"PassContext instrument {inst!r} ({type(inst).__name__}) is not a PassInstrument",
                        hint="subclass ptoc.passes.instruments.PassInstrument "
                             "(methods before_pass/after_pass)")
    return inst


_STACK: contextvars.ContextVar[tuple["PassContext", ...]] = contextvars.ContextVar(
    "ptoc_pass_context_stack", default=())
_DEFAULT: "PassContext | None" = None


@dataclass(frozen=True, eq=False)
class PassContext:
    """All options one compile runs under.

    Use ``with PassContext(...):`` to make it current; ``PassContext.current()`` returns the
    innermost entered context or, outside any, one process-wide default. ``diagnostics`` is
    the sink passes report to; derived contexts share it with their parent.
    """

    instruments: tuple = ()
    _: dataclasses.KW_ONLY
    verification_level: VerificationLevel = VerificationLevel.BASIC
    memory_planner: MemoryPlanner = MemoryPlanner.PYPTO
    enable_pypto_l0c_double_buffer: bool = False
    target: str | None = None  # None: the configured backend (ptoc.backend.set_backend_type)
    disabled_diagnostics: frozenset = frozenset()
    dump_dir: Path | None = None
    profiling: bool = False
    analyze_auto_scopes_for_deps: bool = False  # AutoDeriveTaskDependencies analyses AUTO regions
    diagnostics: DiagnosticSink = field(default_factory=DiagnosticSink)

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        if isinstance(self.instruments, (str, bytes)) or not isinstance(self.instruments, Iterable):
            raise PassError(f"PassContext instruments must be a sequence, got {self.instruments!r}",
                            hint="pass a list such as [IRDumpInstrument(path)] or []")
        set_("instruments", tuple(_check_instrument(i) for i in self.instruments))
        set_("verification_level", _coerce_enum(VerificationLevel, self.verification_level,
                                                "verification_level"))
        set_("memory_planner", _coerce_enum(MemoryPlanner, self.memory_planner, "memory_planner"))
        for flag in ("enable_pypto_l0c_double_buffer", "profiling", "analyze_auto_scopes_for_deps"):
            if not isinstance(getattr(self, flag), bool):
                raise PassError(f"PassContext({flag}=...) must be True or False, "
                                f"got {getattr(self, flag)!r}", hint=f"pass {flag}=True or False")
        if self.target is None:
            from ptoc.backend import default_target_name

            set_("target", default_target_name())
        set_("target", _check_target(self.target))
        set_("disabled_diagnostics", validate_disabled(self.disabled_diagnostics or ()))
        if self.dump_dir is not None:
            if not isinstance(self.dump_dir, (str, Path)):
                raise PassError(f"PassContext(dump_dir=...) must be a path, got {self.dump_dir!r}",
                                hint="pass a directory such as 'build/my_kernel' or None")
            set_("dump_dir", Path(self.dump_dir))
        if not isinstance(self.diagnostics, DiagnosticSink):
            raise PassError(f"PassContext(diagnostics=...) must be a DiagnosticSink, got {self.diagnostics!r}",
                            hint="leave diagnostics unset; derived contexts share their parent's sink")

    # ---- the one way to make a nested context ------------------------------------------

    def derive(self, extra_instruments: Iterable = (), **overrides: Any) -> "PassContext":
        """A copy of this context with every field kept, ``extra_instruments`` appended
        after the existing ones and ``overrides`` applied. The diagnostics sink is shared."""
        unknown = set(overrides) - {f.name for f in dataclasses.fields(self)}
        if unknown or "instruments" in overrides:
            raise PassError(f"PassContext.derive got unknown or disallowed option(s) "
                            f"{', '.join(sorted(unknown | ({'instruments'} & set(overrides))))}",
                            hint="add instruments with extra_instruments=...; valid options: "
                                 + ", ".join(f.name for f in dataclasses.fields(self) if f.name != "instruments"))
        return dataclasses.replace(self, instruments=self.instruments + tuple(extra_instruments),
                                   **overrides)

    # ---- scoping ----------------------------------------------------------------------

    def __enter__(self) -> "PassContext":
        _STACK.set(_STACK.get() + (self,))
        return self

    def __exit__(self, *exc_info) -> None:
        stack = _STACK.get()
        if not stack or stack[-1] is not self:
            raise PassError("PassContext exited out of order",
                            hint="leave nested `with PassContext(...)` blocks innermost first")
        _STACK.set(stack[:-1])

    @staticmethod
    def current() -> "PassContext":
        """The innermost entered context, else the process-wide default context."""
        stack = _STACK.get()
        if stack:
            return stack[-1]
        global _DEFAULT
        if _DEFAULT is None:
            _DEFAULT = PassContext()
        return _DEFAULT

    @staticmethod
    def is_active() -> bool:
        """Whether any context has been entered (``ir.compile`` rejects conflicting options then)."""
        return bool(_STACK.get())

    # ---- derived views -----------------------------------------------------------------

    def compile_options_key(self) -> tuple[tuple[str, Any], ...]:
        """The options that change compiled output, canonicalised for a compile cache key.

        As in PyPTO's JIT key, the dbC flag only distinguishes PYPTO-planner builds: the
        other planners turn dbC on by themselves, so it is normalised to False for them.
        """
        dbc = self.enable_pypto_l0c_double_buffer and self.memory_planner is MemoryPlanner.PYPTO
        return (("memory_planner", self.memory_planner.name),
                ("enable_pypto_l0c_double_buffer", dbc),
                ("target", self.target),
                ("analyze_auto_scopes_for_deps", self.analyze_auto_scopes_for_deps))

    def is_diagnostic_enabled(self, code: str) -> bool:
        return not any(matches(code, pattern) for pattern in self.disabled_diagnostics)

    def active_instruments(self) -> tuple:
        """Instruments a pass call runs: level-implied ones, process-wide ones, then ours."""
        from ptoc.passes.instruments import instruments_for

        return instruments_for(self)

    def get_backend(self):
        """The ``ptoc.backend.Target`` for ``target``."""
        from ptoc.backend import get_target

        return get_target(self.target)

    # ---- getters (one per field, PyPTO style) -----------------------------------------

    def get_instruments(self) -> tuple:
        return self.instruments

    def get_verification_level(self) -> VerificationLevel:
        return self.verification_level

    def get_memory_planner(self) -> MemoryPlanner:
        return self.memory_planner

    def get_enable_pypto_l0c_double_buffer(self) -> bool:
        return self.enable_pypto_l0c_double_buffer

    def get_target(self) -> str:
        return self.target

    def get_disabled_diagnostics(self) -> frozenset:
        return self.disabled_diagnostics

    def get_dump_dir(self) -> Path | None:
        return self.dump_dir

    def get_profiling(self) -> bool:
        return self.profiling

    def get_analyze_auto_scopes_for_deps(self) -> bool:
        return self.analyze_auto_scopes_for_deps

    def get_diagnostics(self) -> DiagnosticSink:
        return self.diagnostics

    def __repr__(self) -> str:
        parts = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)]
        return f"PassContext({', '.join(parts)})"


def resolve_context(**explicit: Any) -> PassContext:
    """The context one compile runs under: each option is the explicit argument when not
    None, else the active PassContext's value, else the default.

    Built with ``derive`` from ``PassContext.current()``, so nothing is dropped. The result
    gets a child diagnostics sink: it holds this compile's findings only, and forwards them
    to the enclosing context's sink when a context is active.
    """
    overrides = {name: value for name, value in explicit.items() if value is not None}
    base = PassContext.current()
    sink = base.diagnostics.child() if PassContext.is_active() else DiagnosticSink()
    return base.derive(diagnostics=sink, **overrides)
