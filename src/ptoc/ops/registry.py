"""The op registry: one ``OpDef`` per op, consulted by the parser, printer, verifier and passes.

An entry says how arguments are canonicalised (``ParamSpec``), how the result type is
inferred, which memory spaces each operand may be in, which pipe the op runs on, and the
facts memory planning needs (view ops, outputs that reuse an input's buffer).
Canonical form: positional parameters are IR expressions (numbers become ``ConstInt``/
``ConstFloat``, lists become ``ListExpr``); keyword parameters keep plain Python values
(enums, dtypes, strings, numbers) unless they are expressions; keywords equal to their
default are not stored, so a call prints the same whether a default was spelled out or not.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

from ptoc.errors import SourceLoc, TypeCheckError, count, were_given
from ptoc.ops.catalog import NotRunError, not_run_reason
from ptoc.ir.nodes import Call, ConstBool, ConstFloat, ConstInt, Expr, ListExpr
from ptoc.ir.types import Type

REQUIRED = object()


@dataclass(frozen=True)
class PtoForm:
    """How codegen writes an op: one destination-passing PTO instruction
    ``<opcode> ins(<ins>...) outs(<result>)``.

    ``ins`` are bound-argument names in operand order (an optional argument that is None is
    left out); tile arguments become tile buffers, the others scalars of ``scalar_dtype``
    (None: the dtype of the first tile operand). ``attrs(bound)`` gives the instruction's
    attributes as ``(key, enum kind or None, value)``.
    """

    opcode: str
    ins: tuple[str, ...]
    attrs: Callable[[dict], tuple[tuple[str, str | None, Any], ...]] | None = None
    scalar_dtype: Any = None


@dataclass(frozen=True)
class TileForm:
    """How ConvertTensorToTileOps lowers a tensor-level op: the tile op it becomes, with the
    tensor operands loaded into Vec (positional arguments in order) and one scratch tile
    of the first operand's shape and dtype appended per name in ``scratch``."""

    op: str
    scratch: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: its name, whether it is positional, its default and its value kind.

    kind: ``expr`` (an IR expression; numbers become constants), ``list`` (a list of
    expressions), ``static`` (a plain Python value such as an enum, dtype or string), or
    ``any`` (expression or static value, kept as given).
    """

    name: str
    kind: str = "expr"
    positional: bool = True
    default: Any = REQUIRED
    also_positional: bool = False  # a keyword that callers may also pass by position


@dataclass(frozen=True)
class OpDef:
    """A registered op.

    ``infer(args: dict, loc) -> Type`` receives the bound, canonical arguments by name.
    ``pipe`` is a pipe name (``"MTE2"``, ``"MTE1"``, ``"M"``, ``"FIX"``, ``"V"``, ``"MTE3"``,
    ``"S"``) or a callable of the bound arguments returning one. ``dsl_names`` are the
    top-level ``pl.*`` spellings that reach this op (several ops may share a name; the
    parser dispatches on the first argument's type, Tile vs Tensor). ``pto`` is the PTO
    instruction codegen writes (ops without one have a lowering of their own in
    ``ptoc.codegen.tile_ops``), ``tile_form`` the tile op a tensor-level op becomes,
    ``scalar_variant`` the op ``pl.<name>`` reaches when the second operand is a scalar,
    ``numerics`` the one-line numerics contract the op page shows, ``compiler_scratch`` the
    scratch-tile parameters the compiler fills in when the user leaves them out, and
    ``composite(call, let)`` the expansion of an op with no instruction of its own into
    other ops (``let(name_hint, call)`` binds one and returns its value). A tensor op is
    ``row_local`` when each result row depends only on the same row of its [R, x] operands
    (and on whole [1, C] operands): ChunkTensorOps may then compute it a block of rows at a
    time.
    """

    name: str
    params: tuple[ParamSpec, ...]
    infer: Callable[[dict, SourceLoc | None], Type]
    pipe: str | Callable[[dict], str] | None = None
    dsl_names: tuple[str, ...] = ()
    level: str = "tile"  # "tile", "tensor" or "system"
    view: bool = False
    reuses_input: int | None = None
    forbid_output_alias: tuple[int, ...] = ()
    normalize: Callable[[dict], dict] | None = None
    doc: str = ""
    pto: PtoForm | None = None
    tile_form: TileForm | None = None
    scalar_variant: str | None = None
    numerics: str = ""
    compiler_scratch: tuple[str, ...] = ()
    composite: Callable | None = None
    row_local: bool = False

    @property
    def family(self) -> str:
        """The op family: the ``ptoc.ops`` module that registers the op."""
        return self.infer.__module__.rsplit(".", 1)[-1]

    @property
    def namespace(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def short_name(self) -> str:
        return self.name.split(".", 1)[-1]

    @cached_property
    def _positional(self) -> tuple[ParamSpec, ...]:
        """The parameters a call may give by position (worked out once: every call made
        or verified binds its arguments)."""
        return tuple(p for p in self.params if p.positional or p.also_positional)

    @cached_property
    def _by_name(self) -> dict[str, ParamSpec]:
        by_name: dict[str, ParamSpec] = {}
        for spec in self.params:
            by_name.setdefault(spec.name, spec)
        return by_name

    def bind(self, args: tuple, kwargs: dict, loc: SourceLoc | None = None) -> dict:
        """Match call arguments to parameters and canonicalise them; returns name -> value."""
        positional = self._positional
        if len(args) > len(positional):
            raise TypeCheckError(
                f"pl.{self.name} takes at most {count(len(positional), 'positional argument')} "
                f"({', '.join(p.name for p in positional)}) but {were_given(len(args))}", loc,
                hint=self.signature())
        bound: dict[str, Any] = {}
        for spec, value in zip(positional, args):
            bound[spec.name] = value
        for name, value in kwargs.items():
            spec = self.param(name)
            if spec is None:
                known = [p.name for p in self.params]
                close = difflib.get_close_matches(name, known, n=1)
                extra = f"; did you mean '{close[0]}'?" if close else ""
                raise TypeCheckError(
                    f"pl.{self.name} has no parameter '{name}'{extra}", loc, hint=self.signature())
            if name in bound:
                raise TypeCheckError(f"pl.{self.name} got parameter '{name}' twice", loc,
                                     hint=self.signature())
            bound[name] = value
        result: dict[str, Any] = {}
        for spec in self.params:
            if spec.name in bound:
                value = bound[spec.name]
                kind = spec.kind
                if kind == "any" or (kind == "expr" and isinstance(value, Expr)) or (
                        kind == "list" and isinstance(value, ListExpr)):
                    result[spec.name] = value  # canonical as given (a stored call's args)
                else:
                    result[spec.name] = _canonical(self, spec, value, loc)
            elif spec.default is REQUIRED:
                raise TypeCheckError(
                    f"pl.{self.name} is missing its required argument '{spec.name}'", loc,
                    hint=self.signature())
            else:
                result[spec.name] = spec.default
        return self.normalize(result) if self.normalize else result

    def param(self, name: str) -> ParamSpec | None:
        return self._by_name.get(name)

    def signature(self) -> str:
        parts, star = [], False
        for spec in self.params:
            if not spec.positional and not star:
                parts.append("*")
                star = True
            parts.append(spec.name if spec.default is REQUIRED else f"{spec.name}={spec.default!r}")
        return f"pl.{self.name}({', '.join(parts)})"

    def split(self, bound: dict) -> tuple[tuple, tuple[tuple[str, Any], ...]]:
        """Bound arguments back to the canonical (args, kwargs) stored on a Call.

        Trailing optional positionals that are None are dropped; keywords equal to their
        default are not stored.
        """
        positional = [p for p in self.params if p.positional]
        args = [bound[p.name] for p in positional]
        while args and args[-1] is None and positional[len(args) - 1].default is not REQUIRED:
            args.pop()
        kwargs = tuple((p.name, bound[p.name]) for p in self.params
                       if not p.positional and bound[p.name] is not None
                       and not _same_default(bound[p.name], p.default))
        return tuple(args), kwargs

    def infer_type(self, args: tuple, kwargs, loc: SourceLoc | None = None) -> Type:
        """Infer the result type of a call given canonical args/kwargs (as stored on a Call)."""
        return self.infer(self.bind(tuple(args), dict(kwargs), loc), loc)

    def pipe_for(self, call: Call) -> str | None:
        if callable(self.pipe):
            return self.pipe(self.bind(call.args, dict(call.kwargs), call.loc))
        return self.pipe


def _same_default(value: Any, default: Any) -> bool:
    return default is not REQUIRED and type(value) is type(default) and value == default


def _canonical(op: OpDef, spec: ParamSpec, value: Any, loc: SourceLoc | None) -> Any:
    if value is None and spec.default is None:
        return None
    if spec.kind == "expr":
        return to_expr(value, f"pl.{op.name} argument '{spec.name}'", loc)
    if spec.kind == "list":
        if isinstance(value, ListExpr):
            return value
        if isinstance(value, (list, tuple)):
            return ListExpr(tuple(to_expr(v, f"pl.{op.name} argument '{spec.name}'", loc)
                                  for v in value))
        raise TypeCheckError(
            f"pl.{op.name} argument '{spec.name}' must be a list such as [0, 0], got {_describe(value)}",
            loc, hint=op.signature())
    if spec.kind == "static":
        if isinstance(value, Expr) and not isinstance(value, (ConstInt, ConstFloat, ConstBool)):
            raise TypeCheckError(
                f"pl.{op.name} argument '{spec.name}' must be a compile-time constant, got a "
                f"runtime value", loc, hint=op.signature())
        if isinstance(value, (ConstInt, ConstFloat, ConstBool)):
            return value.value
        return value
    return value


def to_expr(value: Any, what: str, loc: SourceLoc | None = None) -> Expr:
    """A Python number/bool or IR expression as an IR expression."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return ConstBool(value)
    if isinstance(value, int):
        return ConstInt(value)
    if isinstance(value, float):
        return ConstFloat(value)
    if isinstance(value, (list, tuple)):
        return ListExpr(tuple(to_expr(v, what, loc) for v in value))
    raise TypeCheckError(f"{what} must be a value or a number, got {_describe(value)}", loc)


def _describe(value: Any) -> str:
    if isinstance(value, Expr):
        return f"an expression of type {type(value.type).__name__}"
    return repr(value)


_REGISTRY: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    """Add one op; a second registration of the same name is a programming error."""
    if op.name in _REGISTRY:
        raise ValueError(f"op {op.name} registered twice")
    _REGISTRY[op.name] = op
    return op


def get_op(name: str, loc: SourceLoc | None = None) -> OpDef:
    """Look up an op by its full name (``tile.load``); unknown names get a did-you-mean."""
    try:
        return _REGISTRY[name]
    except KeyError:
        reason = not_run_reason(name)
        if reason is not None:
            raise NotRunError(f"pl.{name} is in PyPTO's operator catalog but ptoc does not run "
                              f"it: {reason}", loc, hint="see docs/en/ops.md") from None
        close = difflib.get_close_matches(name, list(_REGISTRY), n=3)
        hint = (f"did you mean {', '.join('pl.' + c for c in close)}?" if close else
                "see the op catalogue in docs/en/dsl.md")
        raise TypeCheckError(f"unknown op 'pl.{name}'", loc, hint=hint) from None


def has_op(name: str) -> bool:
    return name in _REGISTRY


def all_ops() -> tuple[OpDef, ...]:
    return tuple(_REGISTRY.values())


def ops_for_dsl_name(name: str) -> tuple[OpDef, ...]:
    """Every op reachable through the top-level spelling ``pl.<name>``."""
    return tuple(op for op in _REGISTRY.values() if name in op.dsl_names)


def make_call(name: str, args: tuple = (), kwargs: dict | None = None, *, loc: SourceLoc | None = None,
              attrs: dict | None = None, result_type: Type | None = None) -> Call:
    """Build a canonical Call of a registered op, inferring its type unless one is given."""
    op = get_op(name, loc)
    bound = op.bind(tuple(args), dict(kwargs or {}), loc)
    inferred = op.infer(bound, loc)
    c_args, c_kwargs = op.split(bound)
    return Call(name, c_args, c_kwargs, result_type or inferred, dict(attrs or {}), loc=loc)
