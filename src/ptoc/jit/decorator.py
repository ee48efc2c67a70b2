"""``@pl.jit``: plain functions specialised on their arguments, compiled once per signature.

    @pl.jit
    def mm(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[:] = pl.matmul(x, w, out_dtype=pl.FP32)
        return y

    mm(x, w, y)                                  # compile (cached) and run on the simulator
    mm.compile(x, w, y)                          # the CompiledProgram
    mm.lower(x, w, y)                            # the post-pass ir.Program (passes only)

Sub-functions an entry calls by name (discovered from its globals and closure, as in
PyPTO): ``@pl.jit.incore`` (a kernel; ``level=`` is recorded), ``@pl.jit.inline`` (spliced
into each call site by the InlineFunctions pass), ``@pl.jit.opaque`` (a function of its
own that may hold loops and ``pl.at`` scopes). ``@pl.jit.host`` is an entry at the HOST
level (``role=Orchestrator``) that may also call ``@pl.jit`` entries. ``@pl.jit.extern``
(a hand-written C++ kernel) is refused: the simulator runs only DSL kernels.
"""

from __future__ import annotations

import os
from pathlib import Path

from ptoc.dtypes import Level
from ptoc.errors import JitOptionError, PtocError
from ptoc.jit.cache import DiskCache, cache_key, compile_options, key_inputs
from ptoc.jit.source import read_source
from ptoc.jit.specialize import argument_types, specialize


#: jit kinds a function can be: the two entries and the sub-functions entries call
KINDS = ("entry", "host", "incore", "inline", "opaque")


class JITFunction:
    """A jit-compiled function of one of ``KINDS``; ``level`` only for ``incore``."""

    def __init__(self, fn, *, kind: str = "entry", auto_scope: bool = True,
                 cache_dir: str | os.PathLike | None = None, level=None):
        self.fn = fn
        self.name = fn.__name__
        self.kind = kind
        self.level = level
        self.auto_scope = auto_scope
        self.source = read_source(fn)
        cache_dir = cache_dir or os.environ.get("PTOC_JIT_CACHE_DIR")
        self.disk = DiskCache(cache_dir) if cache_dir else None
        self._cache: dict[str, object] = {}
        #: the symbols of the body's own ``M = pl.dynamic("M")`` statements (ptoc.jit.dynamic_dims)
        self.body_symbols: dict[str, object] = {}
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"<pl.jit{'' if self.kind == 'entry' else '.' + self.kind} {self.name}>"

    def bind(self, args: tuple) -> tuple:
        """The call's arguments with the function's default values (as they are now) for
        the trailing parameters not given."""
        params = self.source.node.args.args
        defaults = self.fn.__defaults__ or ()
        missing = len(params) - len(args)
        if 0 < missing <= len(defaults):
            return tuple(args) + tuple(defaults[len(defaults) - missing:])
        return tuple(args)

    def cache_key(self, *args, config=None) -> str:
        """The key this call's compile is cached under (``ptoc.jit.cache``)."""
        program = specialize(self, self.bind(args))
        return cache_key(key_inputs(program, compile_options(config)))

    def specialize(self, *args):
        """The frontend program for these arguments (before any pass)."""
        return specialize(self, self.bind(args))

    def compile(self, *args, config=None):
        """The CompiledProgram for these arguments (from the cache when possible). Its
        artifacts go to ``config.save_kernels_dir`` when set (as PyPTO's), else to a
        private directory named after the key."""
        from ptoc.jit.private_dirs import artifact_root
        from ptoc.outputs import safe_name
        from ptoc.runtime import compile_ir

        options = compile_options(config)
        program = specialize(self, self.bind(args))
        inputs = key_inputs(program, options)
        key = cache_key(inputs)
        saved = config.save_kernels_dir if config is not None else None
        if (key, saved) in self._cache:
            return self._cache[key, saved]
        out = Path(saved) if saved else artifact_root() / f"{safe_name(self.name)}_{key[:16]}"
        compiled = self.disk.load(key, inputs, program, out) if self.disk is not None else None
        if compiled is None:
            compiled = compile_ir(program, out, **options)
            if self.disk is not None:
                self.disk.store(key, inputs, compiled)
        self._cache[key, saved] = compiled
        return compiled

    def lower(self, *args, config=None):
        """The post-pass ``ir.Program`` for these arguments: the pass pipeline only, as
        PyPTO's ``lower`` (no code generation, no cache; ``compile`` does those)."""
        from ptoc.runtime.compile import lower_ir

        return lower_ir(specialize(self, self.bind(args)), **compile_options(config))

    def __call__(self, *args, config=None):
        """Compile (cached) and run on the simulated core; outputs are written in place.
        ``config.codegen_only`` compiles without running (outputs untouched), as
        ``pypto.runtime.run`` does."""
        compiled = self.compile(*args, config=config)
        if config is not None and config.codegen_only:
            return None
        args = self.bind(args)
        _, scalars = argument_types(self, args)
        params = [a.arg for a in self.source.node.args.args]
        tensors = [value for name, value in zip(params, args) if name not in scalars]
        from ptoc.runtime import RunConfig

        return compiled(*tensors, config=config or RunConfig())


_UNSET = object()


class _SubDecorator:
    """``pl.jit.<kind>``, bare or called; ``level=`` / ``auto_scope=`` only where PyPTO
    takes them (a wrong one is a TypeError, as in PyPTO)."""

    def __init__(self, kind: str, *, takes_level: bool = False, takes_auto_scope: bool = False):
        self.kind = kind
        self.takes_level = takes_level
        self.takes_auto_scope = takes_auto_scope

    def __call__(self, fn=None, *, level=None, auto_scope=_UNSET):
        if level is not None and not self.takes_level:
            raise JitOptionError(f"@pl.jit.{self.kind} does not take level=",
                                 hint="only @pl.jit.incore runs at a chosen level")
        if level is not None and not isinstance(level, Level):
            raise JitOptionError(f"@pl.jit.{self.kind}(level=...) takes a pl.Level, got "
                                 f"{level!r}", hint="write level=pl.Level.AIV (or AIC, ...)")
        if auto_scope is not _UNSET and not self.takes_auto_scope:
            raise JitOptionError(f"@pl.jit.{self.kind} does not take auto_scope=",
                                 hint="auto_scope belongs on @pl.jit, @pl.jit.host or "
                                      "@pl.jit.inline (their bodies hold runtime scopes)")
        options = {"kind": self.kind, "level": level,
                   "auto_scope": True if auto_scope is _UNSET else auto_scope}
        if fn is None:
            return lambda f: JITFunction(f, **options)
        return JITFunction(fn, **options)


def _extern(fn=None, **_options):
    raise PtocError("@pl.jit.extern declares a hand-written C++ kernel, which ptoc cannot run: "
                    "its simulator executes kernels written in the DSL",
                    hint="write the kernel as @pl.jit.incore in the DSL, or run this script "
                         "with PyPTO on a device")


class _Jit:
    """``pl.jit``: the entry decorator, with ``pl.jit.<kind>`` for the other kinds."""

    host = _SubDecorator("host", takes_auto_scope=True)
    incore = _SubDecorator("incore", takes_level=True)
    inline = _SubDecorator("inline", takes_auto_scope=True)
    opaque = _SubDecorator("opaque")
    extern = staticmethod(_extern)

    def __call__(self, fn=None, *, auto_scope: bool = True, cache_dir=None):
        if fn is None:
            return lambda f: JITFunction(f, auto_scope=auto_scope, cache_dir=cache_dir)
        return JITFunction(fn, auto_scope=auto_scope, cache_dir=cache_dir)


jit = _Jit()
