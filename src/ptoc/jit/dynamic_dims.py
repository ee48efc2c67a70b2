"""Which tensor dimensions of a ``@pl.jit`` function are ``pl.dynamic``, as PyPTO's JIT
decides it before specialising: the function's own (a ``pl.Tensor[[M, 128], ...]``
annotation; ``a.bind_dynamic(axis, M)`` with a module-level object, or one the body makes
itself with ``M = pl.dynamic("M")``) and, cascaded from its callees, every dimension of a
bare-tensor argument it passes to a callee parameter whose dimension is dynamic. Such a
dimension is the symbol in the specialised program (and so in the cache key: one entry
serves every size); a dimension the function declares itself wins over a cascaded one.
"""

from __future__ import annotations

import ast
import dataclasses

from ptoc.ir.nodes import DimVar
from ptoc.ir.types import TensorType
from ptoc.language.dynamic import DynVar
from ptoc.language.stmts import bind_dynamic_args

def local_symbols(jit, aliases: frozenset) -> dict[str, DimVar]:
    """The ``name = pl.dynamic("label")`` statements at the top of ``jit``'s body, each one
    symbol for the life of the function (``JITFunction.body_symbols``), so every
    specialisation and every caller cascading it names the same symbol."""
    found = {}
    for node in jit.source.node.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and _is_dynamic_call(node.value, aliases):
            name = node.targets[0].id
            if name not in jit.body_symbols:
                jit.body_symbols[name] = DynVar(node.value.args[0].value).var
            found[name] = jit.body_symbols[name]
    return found


def _is_dynamic_call(value: ast.AST, aliases: frozenset) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
        and value.func.attr == "dynamic" and isinstance(value.func.value, ast.Name) \
        and value.func.value.id in aliases and len(value.args) == 1 \
        and isinstance(value.args[0], ast.Constant) and isinstance(value.args[0].value, str)


def dynamic_dims(jit, ctx, callee_env, seen: frozenset = frozenset()) -> dict[str, dict]:
    """``param -> {axis: symbol}`` for ``jit`` (module doc). ``ctx`` resolves the function's
    names (its env holds the body's own symbols); ``callee_env(callee)`` gives a callee's."""
    params = [a.arg for a in jit.source.node.args.args]
    dims: dict[str, dict] = {}
    for arg in jit.source.node.args.args:
        for axis, symbol in _annotated(arg.annotation, ctx.env):
            dims.setdefault(arg.arg, {})[axis] = symbol
    for node in jit.source.node.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and call.func.attr == "bind_dynamic" and isinstance(call.func.value, ast.Name):
            axis, symbol = bind_dynamic_args(call, ctx)
            dims.setdefault(call.func.value.id, {})[axis] = symbol
    kernels = ctx.kernels or {}
    for node in ast.walk(jit.source.node):
        callee = kernels.get(node.func.id) if isinstance(node, ast.Call) \
            and isinstance(node.func, ast.Name) else None
        if callee is None or id(callee) in seen:
            continue
        callee_dims = dynamic_dims(callee, callee_env(callee), callee_env, seen | {id(jit)})
        callee_params = [a.arg for a in callee.source.node.args.args]
        for param, arg in zip(callee_params, node.args):
            if isinstance(arg, ast.Name) and arg.id in params and param in callee_dims:
                mine = dims.setdefault(arg.id, {})
                for axis, symbol in callee_dims[param].items():
                    mine.setdefault(axis, symbol)
    return {p: d for p, d in dims.items() if d}


def _annotated(annotation: ast.AST | None, env: dict) -> list[tuple[int, DimVar]]:
    """(axis, symbol) of each dimension of a ``pl.Tensor[[...], ...]`` annotation (also inside
    ``pl.Out[...]`` / ``pl.InOut[...]``) that names a ``pl.dynamic`` object."""
    shape = _annotated_shape(annotation)
    return [(axis, env[d.id]) for axis, d in enumerate(shape or ())
            if isinstance(d, ast.Name) and isinstance(env.get(d.id), DimVar)]


def _annotated_shape(annotation: ast.AST | None) -> list | None:
    """The shape list a tensor annotation spells (None for a bare ``pl.Tensor``)."""
    while isinstance(annotation, ast.Subscript):
        inner = annotation.slice
        if isinstance(inner, ast.Tuple) and inner.elts and isinstance(inner.elts[0], ast.List):
            return inner.elts[0].elts
        annotation = inner
    return None


def with_dynamic_dims(jit, types: dict, dims: dict) -> dict:
    """``types`` with each dynamic dimension of a bare-tensor parameter made its symbol (an
    annotation that spells a shape keeps it: its own pl.dynamic dims stay symbolic, its
    static ones pin the size)."""
    out = dict(types)
    bare = {a.arg for a in jit.source.node.args.args if _annotated_shape(a.annotation) is None}
    for name, axes in dims.items():
        ty = out.get(name)
        if name not in bare or not isinstance(ty, TensorType):
            continue
        shape = list(ty.shape)
        for axis, symbol in axes.items():
            if 0 <= axis < len(shape):
                shape[axis] = symbol
        out[name] = dataclasses.replace(ty, shape=tuple(shape))
    return out
