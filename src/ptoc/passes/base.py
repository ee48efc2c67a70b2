"""The Pass protocol: a named Program -> Program rewrite with declared IR properties.

A pass object is callable on its own, ``pass_(program) -> program``; the call reads the
current PassContext and runs its instruments around the rewrite, so a unit test that calls
one pass gets the same verification, round trip and dumps as a full pipeline. Subclass
``Pass`` and implement ``run(program, ctx)``, or write a plain function and wrap it with
``@program_pass(...)`` / ``@function_pass(...)``.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
from typing import Any, Callable, Collection, Iterable

from ptoc.dtypes import FunctionType
from ptoc.errors import InternalError, PassError, PtocError
from ptoc.ir.memo import IdentityMemo
from ptoc.ir.nodes import Function, Program, first_while_loop
from ptoc.passes.properties import IRProperty, check_property, format_properties, to_property_set

_RUNNING: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("ptoc_running_pass", default=())


def current_pass_name() -> str | None:
    """Name of the innermost pass being run, for diagnostics; None outside any pass."""
    running = _RUNNING.get()
    return running[-1] if running else None


class Pass:
    """Base class of every pass.

    Class attributes (or instance attributes set in ``__init__``):
      name         -- shown in dumps (``NN_after_<name>.py``), profiles, errors
      required     -- IRProperty set the input must have
      produced     -- properties that hold after the pass
      invalidated  -- properties the pass may break
      handles_while_loops -- the pass treats ``WhileStmt`` bodies correctly; a pass
                     without it refuses a program holding a while loop (never skips a body)
    ``required``/``produced``/``invalidated`` may be given as IRProperty members or names.
    """

    name: str = ""
    required: frozenset[IRProperty] = frozenset()
    produced: frozenset[IRProperty] = frozenset()
    invalidated: frozenset[IRProperty] = frozenset()
    handles_while_loops: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__ or not cls.__dict__["name"]:
            cls.name = cls.__name__
        for attr in ("required", "produced", "invalidated"):
            if attr in cls.__dict__:
                setattr(cls, attr, to_property_set(cls.__dict__[attr]))

    def run(self, program: Program, ctx) -> Program:
        """The rewrite itself. Must return a Program and must not mutate its input."""
        raise NotImplementedError(f"pass {self.name} does not implement run(program, ctx)")

    def __call__(self, program: Program) -> Program:
        """Run under the current PassContext, with its instruments around the rewrite."""
        return self.run_checked(program)

    def run_checked(self, program: Program, verified: frozenset[IRProperty] = frozenset()
                    ) -> Program:
        """``self(program)``, not re-checking the required properties in ``verified``: a
        PassManager passes those an earlier pass produced, had checked, and no pass since
        invalidated (PyPTO checks a property once per time it is produced)."""
        from ptoc.passes.context import PassContext

        if not isinstance(program, Program):
            raise PassError(f"pass {self.name} expects a ptoc.ir.Program, got {type(program).__name__}",
                            hint="parse the source with ptoc.language.parse_program first")
        ctx = PassContext.current()
        self._check_required_on_ir(program, verified)
        if not self.handles_while_loops:
            _refuse_while_loops(self.name, program)
        instruments = ctx.active_instruments()
        token = _RUNNING.set(_RUNNING.get() + (self.name,))
        try:
            for inst in instruments:
                inst.before_pass(self, program, ctx)
            try:
                result = self.run(program, ctx)
            except PtocError:
                raise
            except Exception as exc:  # a bug in the pass: say which pass, keep the chain
                raise InternalError(f"internal error in pass {self.name}: {type(exc).__name__}: {exc}",
                                hint="this is a ptoc bug; rerun with dump_ir=True and report the "
                                     "last file in passes_dump/") from exc
            if not isinstance(result, Program):
                raise PassError(f"pass {self.name} returned {type(result).__name__}, not a Program",
                                hint="return the (possibly unchanged) program from run()")
            for inst in reversed(instruments):  # innermost first: timing, then dumps, then checks
                inst.after_pass(self, result, ctx)
        finally:
            _RUNNING.reset(token)
        return result

    def _check_required_on_ir(self, program: Program, verified: frozenset[IRProperty]) -> None:
        """Reject input that a registered checker proves lacks a required property."""
        missing = [p for p in self.required - verified if check_property(p, program) is False]
        if missing:
            raise PassError(f"pass {self.name} requires {format_properties(missing)}, "
                            "which the input program does not have",
                            hint=f"run the passes producing {format_properties(missing)} before {self.name}")

    def __repr__(self) -> str:
        return f"<Pass {self.name}>"


#: functions seen to hold no while loop: most passes return most functions unchanged, so
#: each is searched once instead of before every pass
_NO_WHILE = IdentityMemo(512)


def _refuse_while_loops(name: str, program: Program) -> None:
    """A pass not written for while loops must not run over one (it would skip its body)."""
    for fn in program.functions:
        if _NO_WHILE.get(fn) is not True:
            refuse_while_loop(name, fn)
            _NO_WHILE.put(fn, True)


def refuse_while_loop(name: str, fn: Function, what: str = "") -> None:
    """PassError when ``fn`` holds a while loop: pass ``name`` cannot transform ``what``
    (e.g. "a mixed cube+vector kernel") with one in it."""
    loop = first_while_loop(fn.body)
    if loop is not None:
        subject = f"{what} with a while loop" if what else "while loops"
        raise PassError(f"pass {name} does not support {subject} (pl.while_ / while) yet; "
                        f"function '{fn.name}' has one", loop.loc,
                        hint="bound the loop instead: 'for k in pl.range(MAX_TRIPS):' with "
                             "the body under 'if <condition>:' (carried values yielded "
                             "unchanged in the else arm)")


def refuse_orchestration_while_loops(name: str, program: Program) -> None:
    """PassError when a host-side (orchestration) function holds a while loop: pass
    ``name`` rewrites those functions and is written for kernel while loops only."""
    for fn in program.functions:
        if not fn.func_type.is_kernel:
            refuse_while_loop(name, fn, "an orchestration function")


class FunctionPass(Pass):
    """A Pass built from a plain function by ``program_pass``/``function_pass``."""

    def __init__(self, name: str, fn: Callable[..., Program], *, required=(), produced=(),
                 invalidated=(), options: dict | None = None, handles_while_loops: bool = False):
        self.name = name
        self.handles_while_loops = handles_while_loops
        self.fn = fn
        self.required = to_property_set(required)
        self.produced = to_property_set(produced)
        self.invalidated = to_property_set(invalidated)
        self.options = dict(options or {})

    def run(self, program: Program, ctx) -> Program:
        return self.fn(program, ctx, **self.options)


class PassFactory:
    """What the decorators return: ``factory(**options)`` builds a fresh pass object.

    ``factory.pass_name`` is available without building a pass, for registries.
    """

    def __init__(self, name: str, build: Callable[..., Pass], doc: str | None):
        self.pass_name = name
        self._build = build
        self.__doc__ = doc
        self.__name__ = name

    def __call__(self, **options: Any) -> Pass:
        return self._build(**options)

    def __repr__(self) -> str:
        return f"<pass factory {self.pass_name}>"


def with_functions(program: Program, functions) -> Program:
    """``program`` with ``functions`` in place of its own; the same object when every
    function is the same object (passes keep identity where they changed nothing)."""
    functions = tuple(functions)
    if all(a is b for a, b in zip(functions, program.functions)):
        return program
    return dataclasses.replace(program, functions=functions)


def program_pass(*, name: str, required: Iterable = (), produced: Iterable = (),
                 invalidated: Iterable = (), handles_while_loops: bool = False
                 ) -> Callable[[Callable[..., Program]], PassFactory]:
    """Turn ``fn(program, ctx, **options) -> Program`` into a pass factory.

        @program_pass(name="InitMemRef", required={"MemoryInferred"}, produced={"MemRefsAssigned"})
        def init_mem_ref(program, ctx): ...

        init_mem_ref()(program)   # run alone under the current PassContext
    """
    declared = [to_property_set(props) for props in (required, produced, invalidated)]

    def wrap(fn: Callable[..., Program]) -> PassFactory:
        def build(**options: Any) -> Pass:
            return FunctionPass(name, fn, required=declared[0], produced=declared[1],
                                invalidated=declared[2], options=options,
                                handles_while_loops=handles_while_loops)
        return PassFactory(name, build, fn.__doc__)
    return wrap


def function_pass(*, name: str, required: Iterable = (), produced: Iterable = (),
                  invalidated: Iterable = (),
                  func_types: Collection[FunctionType] | None = (FunctionType.InCore,),
                  handles_while_loops: bool = False
                  ) -> Callable[[Callable[..., Function]], PassFactory]:
    """Like ``program_pass`` for ``fn(function, ctx, **options) -> Function`` applied to each
    function whose ``func_type`` is in ``func_types`` (None: every function). Functions the
    callback returns unchanged (same object) keep their identity, and so does the program."""
    wanted = None if func_types is None else frozenset(func_types)

    def wrap(fn: Callable[..., Function]) -> PassFactory:
        def per_program(program: Program, ctx, **options: Any) -> Program:
            new_functions = []
            for f in program.functions:
                new_f = fn(f, ctx, **options) if wanted is None or f.func_type in wanted else f
                if not isinstance(new_f, Function):
                    raise PassError(f"pass {name} returned {type(new_f).__name__} for function "
                                    f"{f.name}, not a Function", hint="return the (possibly unchanged) function")
                new_functions.append(new_f)
            return with_functions(program, new_functions)

        functools.update_wrapper(per_program, fn)
        return program_pass(name=name, required=required, produced=produced,
                            invalidated=invalidated,
                            handles_while_loops=handles_while_loops)(per_program)
    return wrap
