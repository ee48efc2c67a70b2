"""Specialisation: a ``@pl.jit`` function plus concrete arguments -> an ``ir.Program``.

Tensor parameters take the shape and dtype of their argument (a bare ``pl.Tensor``
annotation is allowed); scalar arguments are specialisation constants folded into the
body. ``pl.at`` scopes stay in the body (the OutlineIncoreScopes pass makes them kernels),
and calls of jit sub-functions (incore, inline, opaque; from a host entry also ``@pl.jit``
entries) become functions of their kind specialised on their argument types.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ptoc.dtypes import DataType, Direction, FunctionType, Level, Role
from ptoc.errors import PtocError, count, were_given
from ptoc.ir.nodes import Program
from ptoc.ir.types import TensorType, Type
from ptoc.ir.visitor import IRVisitor
from ptoc.jit.dynamic_dims import dynamic_dims, local_symbols, with_dynamic_dims
from ptoc.language.context import ParseContext
from ptoc.language.stmts import FunctionParser
from ptoc.runtime.tensors import to_numpy


def argument_types(jit, args: tuple) -> tuple[dict[str, Type], dict[str, Any]]:
    """Tensor argument types and scalar specialisation values, by parameter name.

    With no arguments at all (``kernel.compile()``) the signature is the specialisation,
    as in PyPTO: tensors take their annotated types (which must then be complete) and a
    scalar with a default takes that value; one without stays a run-time scalar."""
    params = [a.arg for a in jit.source.node.args.args]
    if not args and params:
        defaults = jit.fn.__defaults__ or ()
        given = dict(zip(params[len(params) - len(defaults):], defaults))
        return {}, {name: value for name, value in given.items()
                    if isinstance(value, (bool, int, float))}
    if len(args) != len(params):
        raise PtocError(f"{jit.name} takes {count(len(params), 'argument')} "
                        f"({', '.join(params)}) but {were_given(len(args))}")
    types: dict[str, Type] = {}
    scalars: dict[str, Any] = {}
    for name, value in zip(params, args):
        if isinstance(value, (bool, int, float, np.integer, np.floating)):
            scalars[name] = value.item() if hasattr(value, "item") else value
            continue
        array = to_numpy(value, name)
        try:
            dtype = DataType.from_numpy(array.dtype)
        except KeyError:
            raise PtocError(f"argument '{name}' of {jit.name} has dtype {array.dtype}, which ptoc "
                            "does not support", hint="use float32/float16/bfloat16/int8/int32"
                            ) from None
        types[name] = TensorType(tuple(int(d) for d in array.shape), dtype)
    return types, scalars


#: the IR function type of each jit kind
FUNCTION_TYPES = {"entry": FunctionType.Orchestration, "host": FunctionType.Orchestration,
                  "incore": FunctionType.InCore, "inline": FunctionType.Inline,
                  "opaque": FunctionType.Opaque}

#: the jit kinds a function of each kind may call by name (PyPTO: only a host entry
#: reaches other entries, the chip orchestrators it dispatches)
CALLEE_KINDS = {"host": frozenset({"entry", "incore", "inline", "opaque"})}
_SUB_FUNCTIONS = frozenset({"incore", "inline", "opaque"})


def specialize(jit, args: tuple) -> Program:
    """The program for one call signature (see the module docstring)."""
    if jit.kind in ("inline", "opaque"):
        raise PtocError(f"@pl.jit.{jit.kind} function {jit.name} is a sub-function: it runs "
                        "when a @pl.jit entry calls it", hint=f"call {jit.name}(...) from a "
                        "@pl.jit function and call that one")
    types, scalars = argument_types(jit, args)
    builder = _ProgramBuilder()
    entry_type = FUNCTION_TYPES[jit.kind]
    entry = builder.parse(jit, types, scalars, entry_type)
    if jit.kind == "entry" and not builder.kernels and not _has_scopes(entry.body):
        if not jit.auto_scope:
            raise PtocError(f"@pl.jit(auto_scope=False) function {jit.name} has no pl.at scope "
                            "and calls no @pl.jit.incore kernel",
                            hint="wrap the tile code in 'with pl.at(level=pl.Level.CORE_GROUP):'")
        builder = _ProgramBuilder()
        entry = builder.parse(jit, types, scalars, FunctionType.InCore)
    return Program(jit.name, tuple(builder.kernels) + (entry,), entry.loc)


def _has_scopes(body) -> bool:
    """Whether a body holds a ``with`` region (pl.at, pl.spmd, ...)."""
    found = False

    class _Find(IRVisitor):
        def visit_scope_stmt(self, node) -> None:
            nonlocal found
            found = True

    _Find().visit(body)
    return found


class _ProgramBuilder:
    """Collects the kernels a specialisation makes (incore callees)."""

    def __init__(self):
        self.kernels: list = []
        self.signatures: dict = {}
        self.specialized: dict[tuple, str] = {}
        self.joined: dict = {}  # module-level @pl.inline / @pl.function callees, added once

    def parse(self, jit, types: dict, scalars: dict, func_type: FunctionType):
        env, aliases, kernels, externals = _names(jit)

        def resolve(callee, arg_types: list, node: ast.AST, signatures: dict) -> str:
            if callee.kind not in CALLEE_KINDS.get(jit.kind, _SUB_FUNCTIONS):
                raise ctx.error(node, f"@pl.jit{_spelling(jit)} function {jit.name} cannot call "
                                f"the @pl.jit{_spelling(callee)} function {callee.name}: only a "
                                "@pl.jit.host entry calls other entries (as in PyPTO)",
                                hint=f"make {callee.name} @pl.jit.opaque or @pl.jit.incore, or "
                                     f"call both from a @pl.jit.host function")
            return self.resolve(callee, arg_types, node, signatures)

        ctx = ParseContext(jit.source.filename, env, aliases, specialization=dict(scalars),
                           kernels=kernels, resolve_kernel=resolve, externals=externals,
                           joined=self.joined)
        parser = FunctionParser(ctx, self.signatures, self.kernels)
        types = with_dynamic_dims(jit, types, dynamic_dims(jit, ctx, _callee_context))
        function = parser.function_from_def(jit.source.node, func_type, _attrs(jit), types)
        if func_type is FunctionType.Orchestration:
            _check_directions(jit, function)
        return function

    def resolve(self, kernel, arg_types: list, node: ast.AST, signatures: dict) -> str:
        """Specialise a callee on its argument types; returns its function's name."""
        key = (id(kernel), tuple(_type_key(t) for t in arg_types))
        if key in self.specialized:
            return self.specialized[key]
        params = [a.arg for a in kernel.source.node.args.args]
        if len(params) != len(arg_types):
            raise PtocError(f"{kernel.name} takes {count(len(params), 'argument')} but "
                            f"{were_given(len(arg_types))}")
        types = {p: t for p, t in zip(params, arg_types) if isinstance(t, TensorType)}
        function = self.parse(kernel, types, {}, FUNCTION_TYPES[kernel.kind])
        name = function.name
        suffix = 1
        while name in self.signatures:
            name, suffix = f"{function.name}_{suffix}", suffix + 1
        if name != function.name:
            from dataclasses import replace

            function = replace(function, name=name)
        self.kernels.append(function)
        self.signatures[name] = ([(p.var.name, p.var.type) for p in function.params],
                                 function.return_types)
        self.specialized[key] = name
        return name


def _names(jit) -> tuple[dict, frozenset, dict, dict]:
    """What ``jit``'s body can name: its constants (with the ``pl.dynamic`` symbols the body
    makes itself), DSL aliases, the jit functions and the module-level @pl.inline /
    @pl.function helpers it can call."""
    from ptoc.jit.source import environment

    env, aliases, kernels, externals = environment(jit.source)
    return {**env, **local_symbols(jit, aliases)}, aliases, kernels, externals


def _callee_context(callee) -> ParseContext:
    """A context resolving a callee's names (for its dynamic dimensions)."""
    env, aliases, kernels, externals = _names(callee)
    return ParseContext(callee.source.filename, env, aliases, kernels=kernels, externals=externals)


def _spelling(jit) -> str:
    return "" if jit.kind == "entry" else f".{jit.kind}"


def _attrs(jit) -> dict:
    """Function attributes of a jit kind: a host entry is the HOST-level orchestrator; an
    incore kernel records the ``level=`` it was declared with; ``auto_scope=False`` lets
    the body place its own ``pl.scope()`` regions."""
    attrs = {}
    if jit.kind == "host":
        attrs = {"level": Level.HOST.value, "role": Role.Orchestrator.value}
    elif jit.level is not None:
        attrs = {"level": jit.level.value}
    if not jit.auto_scope:
        attrs["auto_scope"] = False
    return attrs


def _type_key(ty: Type) -> tuple:
    """Kernels specialise on tensor types only; a scalar parameter's type is its annotation."""
    if isinstance(ty, TensorType):
        return ("tensor", tuple(ty.shape), ty.dtype.value)
    return (type(ty).__name__,)


def _check_directions(jit, function) -> None:
    if not any(p.direction is not Direction.In for p in function.params):
        raise PtocError(f"@pl.jit function {jit.name} has no pl.Out parameter, so nothing it "
                        "computes can be returned", hint="annotate the output as "
                        "y: pl.Out[pl.Tensor] and write it with pl.store or y[:] = ...")
