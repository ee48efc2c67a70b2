"""``@pl.jit``: plain functions specialised on their arguments, compiled once per signature.

    @pl.jit
    def mm(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[:] = pl.matmul(x, w, out_dtype=pl.FP32)
        return y

    mm(x, w, y)                                  # compile (cached) and run on the simulator
    mm.compile(x, w, y)                          # the CompiledProgram
    mm.lower(x, w, y)                            # the post-pass ir.Program

``@pl.jit.incore`` marks a kernel that jit entries call by name.
"""

from __future__ import annotations

import os

from ptoc.jit.cache import DiskCache, cache_key, compile_options, key_inputs
from ptoc.jit.source import read_source
from ptoc.jit.specialize import argument_types, specialize


class JITFunction:
    """A jit-compiled function: ``kind`` is ``entry`` or ``incore``."""

    def __init__(self, fn, *, kind: str = "entry", auto_scope: bool = True,
                 cache_dir: str | os.PathLike | None = None):
        self.fn = fn
        self.name = fn.__name__
        self.kind = kind
        self.auto_scope = auto_scope
        self.source = read_source(fn)
        cache_dir = cache_dir or os.environ.get("PTOC_JIT_CACHE_DIR")
        self.disk = DiskCache(cache_dir) if cache_dir else None
        self._cache: dict[str, object] = {}
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"<pl.jit{'.incore' if self.kind == 'incore' else ''} {self.name}>"

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
        """The CompiledProgram for these arguments (from the cache when possible)."""
        from ptoc.jit.private_dirs import artifact_root
        from ptoc.outputs import safe_name
        from ptoc.runtime import compile_ir

        options = compile_options(config)
        program = specialize(self, self.bind(args))
        inputs = key_inputs(program, options)
        key = cache_key(inputs)
        if key in self._cache:
            return self._cache[key]
        out = artifact_root() / f"{safe_name(self.name)}_{key[:16]}"
        compiled = self.disk.load(key, inputs, program, out) if self.disk is not None else None
        if compiled is None:
            compiled = compile_ir(program, out, **options)
            if self.disk is not None:
                self.disk.store(key, inputs, compiled)
        self._cache[key] = compiled
        return compiled

    def lower(self, *args, config=None):
        """The post-pass ``ir.Program`` for these arguments."""
        return self.compile(*args, config=config).program

    def __call__(self, *args, config=None):
        """Compile (cached) and run on the simulated core; outputs are written in place."""
        compiled = self.compile(*args, config=config)
        args = self.bind(args)
        _, scalars = argument_types(self, args)
        params = [a.arg for a in self.source.node.args.args]
        tensors = [value for name, value in zip(params, args) if name not in scalars]
        from ptoc.runtime import RunConfig

        return compiled(*tensors, config=config or RunConfig())


class _Jit:
    """``pl.jit``: the decorator, with ``pl.jit.incore`` for kernels called by name."""

    def __call__(self, fn=None, *, auto_scope: bool = True, cache_dir=None):
        if fn is None:
            return lambda f: JITFunction(f, auto_scope=auto_scope, cache_dir=cache_dir)
        return JITFunction(fn, auto_scope=auto_scope, cache_dir=cache_dir)

    def incore(self, fn=None, **_options):
        if fn is None:
            return lambda f: JITFunction(f, kind="incore")
        return JITFunction(fn, kind="incore")


jit = _Jit()
