"""The PTO program model: frozen dataclasses for a parsed (or built) PTO module.

The text form is the MLIR ``pto`` dialect PyPTO emits (see ``ptoc.pto.parser`` for the
grammar). The model is deliberately small and generic:

* Every SSA value is a ``Value`` (name without ``%`` plus its type).
* Every non-control-flow, non-sync operation is one ``Instruction`` whose ``opcode`` is the
  full dialect name (``"pto.tload"``, ``"arith.addi"``). Operands are split into ``ins``
  (read) and ``outs`` (destination-passing outputs, written); structured operands such as
  ``shape = [...]`` or ``addr = %x`` live in ``attrs``. The per-opcode layout of these
  fields is documented in ``ptoc.pto.ops`` (the op table).
* ``SyncOp`` is ``pto.set_flag`` / ``pto.wait_flag`` / ``pto.barrier`` (Level 3).
* ``ForOp`` / ``IfOp`` / ``YieldOp`` are ``scf.for`` / ``scf.if`` / ``scf.yield``;
  ``WhileOp`` / ``ConditionOp`` are ``scf.while`` / ``scf.condition`` (a loop whose trip
  count is known only at run time; ``LOOP_OPS`` holds both loop kinds).

Equality ignores ``line`` (the 1-based line in the PTO text the op came from), so a module
equals its own print-then-parse round trip; ``loc`` (the ``loc("file":line:col)`` annotation
naming the DSL source) is part of equality because it must survive round trips.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator, Union

from ptoc.backend.pipes import Pipe
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import SourceLoc


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScalarType:
    """A scalar SSA type: ``index``, ``i1``, ``i32``, ``i64``, ``f32``, ``f16``, ``bf16`` ..."""

    dtype: DataType

    def __str__(self) -> str:
        return self.dtype.pto_name


@dataclass(frozen=True)
class PtrType:
    """A GM pointer kernel parameter: ``!pto.ptr<f32>``."""

    dtype: DataType

    def __str__(self) -> str:
        return f"!pto.ptr<{self.dtype.pto_name}>"


@dataclass(frozen=True)
class TensorViewType:
    """A GM tensor descriptor ``!pto.tensor_view<?x?xf32>``; ``None`` dims print as ``?``."""

    shape: tuple[int | None, ...]
    dtype: DataType

    def __str__(self) -> str:
        return f"!pto.tensor_view<{_dims(self.shape)}x{self.dtype.pto_name}>"


@dataclass(frozen=True)
class PartitionViewType:
    """A static window of a tensor view: ``!pto.partition_tensor_view<160x64xf32>``."""

    shape: tuple[int | None, ...]
    dtype: DataType

    def __str__(self) -> str:
        return f"!pto.partition_tensor_view<{_dims(self.shape)}x{self.dtype.pto_name}>"

    @property
    def rows(self) -> int | None:
        return self.shape[-2] if len(self.shape) >= 2 else 1

    @property
    def cols(self) -> int | None:
        return self.shape[-1] if self.shape else 1


@dataclass(frozen=True)
class TileBufType:
    """An on-chip tile buffer ``!pto.tile_buf<loc=..., dtype=..., rows=..., cols=..., ...>``.

    Fields:
        loc: memory space (``mat``, ``left``, ``right``, ``acc``, ``vec``, ``bias`` in text).
        dtype: element type.
        rows, cols: physical (allocated) shape in elements.
        v_row, v_col: static valid shape, or ``None`` for ``?`` (dynamic: then the valid
            extents come from the ``valid_row`` / ``valid_col`` operands of ``pto.alloc_tile``).
        blayout, slayout: block / scatter layout names (``row_major``, ``col_major``, ``none_box``).
        fractal: fractal box size in bytes (512; 1024 for Acc).
        pad: pad value code (0 = none).
        compact: optional ``compact=`` flag of Acc tiles (None when absent).
    """

    loc: MemorySpace
    dtype: DataType
    rows: int
    cols: int
    v_row: int | None = None
    v_col: int | None = None
    blayout: str = "row_major"
    slayout: str = "none_box"
    fractal: int = 512
    pad: int = 0
    compact: int | None = None

    def __str__(self) -> str:
        return self._text

    @cached_property
    def _text(self) -> str:
        """The text, made once per type object: a buffer's type is printed at its
        ``alloc_tile`` and again with every operand list that reads or writes it."""
        v_row = "?" if self.v_row is None else str(self.v_row)
        v_col = "?" if self.v_col is None else str(self.v_col)
        text = (f"!pto.tile_buf<loc={self.loc.lower}, dtype={self.dtype.pto_name}, "
                f"rows={self.rows}, cols={self.cols}, v_row={v_row}, v_col={v_col}, "
                f"blayout={self.blayout}, slayout={self.slayout}, fractal={self.fractal}, "
                f"pad={self.pad}")
        if self.compact is not None:
            text += f", compact={self.compact}"
        return text + ">"

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def nbytes(self) -> int:
        """rows * cols * element bytes (the L0C row padding is ``Target.tile_bytes``)."""
        return self.rows * self.cols * self.dtype.nbytes


PtoType = Union[ScalarType, PtrType, TensorViewType, PartitionViewType, TileBufType]


def _dims(shape: tuple[int | None, ...]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape)


# ---------------------------------------------------------------------------------------------
# Values and attributes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """An SSA value: ``name`` without the ``%`` and its type.

    At a use site the type is the one written there (``ins(%a : T)``) or, where the text gives
    none (``arith.addi %a, %b``), the type of the definition.
    """

    name: str
    type: PtoType

    def __str__(self) -> str:
        return f"%{self.name}"

    def __hash__(self) -> int:
        # values equal only if their names are: hashing the name alone (Python caches a
        # string's hash) spares hashing the whole type, which sets and dicts of values in
        # InsertSync, the planner and the memory map did for every operand
        return hash(self.name)


#: A kernel parameter is an SSA value of ``PtrType`` (GM tensor) or ``ScalarType``.
Param = Value


@dataclass(frozen=True)
class EnumAttr:
    """A dialect enum attribute ``#<kind><<value>>``, e.g. ``#pto.layout<nd>`` is
    ``EnumAttr("pto.layout", "nd")`` and ``#pto.kernel_kind<cube>`` is
    ``EnumAttr("pto.kernel_kind", "cube")``."""

    kind: str
    value: str

    def __str__(self) -> str:
        return f"#{self.kind}<{self.value}>"


#: Attribute values: int, float, bool, str (a quoted string, or a bare keyword for fields the
#: op table marks as keywords such as the ``cmpi`` predicate), EnumAttr, a Value, a tuple of
#: Values (``shape = [...]``), or None (an optional operand that is absent).
Attr = Union[int, float, bool, str, EnumAttr, Value, tuple, None]


def _attr_get(attrs: tuple[tuple[str, Attr], ...], name: str, default: Attr = None) -> Attr:
    for key, value in attrs:
        if key == name:
            return value
    return default


# ---------------------------------------------------------------------------------------------
# Operations
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Instruction:
    """One operation (everything except control flow and sync).

    Fields:
        opcode: full op name, e.g. ``"pto.tmatmul.acc"``, ``"arith.constant"``.
        results: SSA values defined by the op (``%x = ...``).
        ins: values read, in text order. For DPS tile ops, the ``ins(...)`` list (tiles,
            views and scalar operands such as ``textract``'s row/col offsets); for
            ``arith`` binary ops, the two operands; for ``make_tensor_view`` /
            ``partition_view``, the pointer / source view.
        outs: values written by a DPS tile op (``outs(...)``); empty for other ops.
        attrs: named attributes in text order, e.g. ``("value", 0)`` of ``arith.constant``,
            ``("predicate", "eq")`` of ``arith.cmpi``, ``("shape", (v, ...))`` and
            ``("strides", ...)`` and ``("layout", EnumAttr)`` of ``make_tensor_view``,
            ``("offsets", ...)`` / ``("sizes", ...)`` of ``partition_view``,
            ``("addr", Value|None)`` / ``("valid_row", Value|None)`` / ``("valid_col", ...)``
            [/ ``("row_stride", Value)``: a strided column window] of ``alloc_tile``, ``("rmode", EnumAttr)`` of ``tcvt``.
        loc: the ``loc("file":line:col)`` annotation (source of the DSL), or None.
        line: 1-based line of the op in the PTO text (0 when built in code); not compared.
    """

    opcode: str
    results: tuple[Value, ...] = ()
    ins: tuple[Value, ...] = ()
    outs: tuple[Value, ...] = ()
    attrs: tuple[tuple[str, Attr], ...] = ()
    loc: SourceLoc | None = None
    line: int = field(default=0, compare=False)

    def attr(self, name: str, default: Attr = None) -> Attr:
        """The attribute called ``name`` (``default`` when absent)."""
        return _attr_get(self.attrs, name, default)

    @property
    def result(self) -> Value:
        """The single result (raises IndexError when the op has none)."""
        return self.results[0]

    @property
    def uses(self) -> tuple[Value, ...]:
        """Every value the op reads or writes, in text order: ins, outs, then values held in
        attributes (shape/offsets/addr/valid sizes ...)."""
        out: list[Value] = [*self.ins, *self.outs]
        for _, value in self.attrs:
            if isinstance(value, Value):
                out.append(value)
            elif isinstance(value, tuple):
                out.extend(v for v in value if isinstance(v, Value))
        return tuple(out)


SYNC_KINDS = ("set_flag", "wait_flag", "barrier")


@dataclass(frozen=True)
class SyncOp:
    """Level-3 synchronisation.

    ``kind`` is ``"set_flag"`` / ``"wait_flag"`` (then ``src``, ``dst`` and ``event`` are set;
    text ``pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]``) or ``"barrier"`` (then ``pipe`` is
    set; text ``pto.barrier <PIPE_ALL>``). ``event`` is an int 0..7 or an index ``Value``
    (``%ev``) chosen at run time, e.g. a double-buffer slot.
    """

    kind: str
    src: Pipe | None = None
    dst: Pipe | None = None
    event: "int | Value | None" = None
    pipe: Pipe | None = None
    loc: SourceLoc | None = None
    line: int = field(default=0, compare=False)

    @property
    def opcode(self) -> str:
        return f"pto.{self.kind}"

    @property
    def uses(self) -> tuple[Value, ...]:
        return (self.event,) if isinstance(self.event, Value) else ()


@dataclass(frozen=True)
class YieldOp:
    """``scf.yield %a, %b : index, index`` ending a ForOp/IfOp body that has results."""

    values: tuple[Value, ...] = ()
    loc: SourceLoc | None = None
    line: int = field(default=0, compare=False)

    @property
    def opcode(self) -> str:
        return "scf.yield"

    @property
    def uses(self) -> tuple[Value, ...]:
        return self.values


@dataclass(frozen=True)
class ForOp:
    """``scf.for %iv = %lower to %upper step %step [iter_args(%a = %init) -> (T)] { body }``.

    Bounds are index Values (constants or kernel scalar parameters, or values computed from
    them). ``iter_args`` pairs each region argument with its initial value; ``results`` are
    the loop's results (one per iter arg); the body then ends in a ``YieldOp``.
    ``line`` is the line of the ``scf.for`` header; ``end_line`` that of its closing brace.
    """

    iv: Value
    lower: Value
    upper: Value
    step: Value
    body: tuple["Op", ...]
    iter_args: tuple[tuple[Value, Value], ...] = ()
    results: tuple[Value, ...] = ()
    loc: SourceLoc | None = None
    line: int = field(default=0, compare=False)
    end_line: int = field(default=0, compare=False)

    @property
    def opcode(self) -> str:
        return "scf.for"

    @property
    def uses(self) -> tuple[Value, ...]:
        return (self.lower, self.upper, self.step, *(init for _, init in self.iter_args))


@dataclass(frozen=True)
class IfOp:
    """``[%r = ] scf.if %cond [-> (T)] { then } [else { else }]`` on an ``i1`` condition."""

    cond: Value
    then_body: tuple["Op", ...]
    else_body: tuple["Op", ...] = ()
    results: tuple[Value, ...] = ()
    has_else: bool = False
    loc: SourceLoc | None = None
    line: int = field(default=0, compare=False)
    end_line: int = field(default=0, compare=False)

    @property
    def opcode(self) -> str:
        return "scf.if"

    @property
    def uses(self) -> tuple[Value, ...]:
        return (self.cond,)


@dataclass(frozen=True)
class ConditionOp:
    """``scf.condition(%c) %a, %b : index, f32`` ending the condition region of a WhileOp:
    the loop goes on while ``%c`` holds, handing ``values`` to the body (or, when it does
    not hold, to the loop's results)."""

    cond: Value
    values: tuple[Value, ...] = ()
    loc: SourceLoc | None = None
    line: int = field(default=0, compare=False)

    @property
    def opcode(self) -> str:
        return "scf.condition"

    @property
    def uses(self) -> tuple[Value, ...]:
        return (self.cond, *self.values)


@dataclass(frozen=True)
class WhileOp:
    """``%r = scf.while (%b = %init) : (T) -> (T) { cond } do { ^bb0(%a: T): body }``.

    ``iter_args`` pair each condition-region argument with its initial value; ``cond`` is
    the condition region (scalar ops only, ending in a ``ConditionOp``), run before every
    trip; ``body_args`` are the body's block arguments (the values the condition handed
    on) and ``body`` the loop body (ending in a ``YieldOp`` of the next values when there
    are carries). ``results`` are the values the condition handed on when it failed.
    Without carries the header is ``scf.while : () -> ()``.
    """

    cond: tuple["Op", ...]
    body: tuple["Op", ...]
    iter_args: tuple[tuple[Value, Value], ...] = ()
    body_args: tuple[Value, ...] = ()
    results: tuple[Value, ...] = ()
    loc: SourceLoc | None = None
    line: int = field(default=0, compare=False)
    end_line: int = field(default=0, compare=False)

    @property
    def opcode(self) -> str:
        return "scf.while"

    @property
    def uses(self) -> tuple[Value, ...]:
        return tuple(init for _, init in self.iter_args)

    @property
    def condition(self) -> ConditionOp:
        return self.cond[-1]


Op = Union[Instruction, SyncOp, ForOp, WhileOp, IfOp, YieldOp, ConditionOp]
#: the loops: a body that runs a number of times (known at compile time or not)
LOOP_OPS = (ForOp, WhileOp)
#: the ops holding regions of ops
REGION_OPS = (ForOp, WhileOp, IfOp)


@dataclass(frozen=True)
class Kernel:
    """``func.func @name(%arg0: !pto.ptr<f32>, %n: index) attributes {...} { body return }``.

    ``params`` are GM pointers (``PtrType``) or scalars (``ScalarType``); ``attrs`` holds the
    function attributes such as ``("pto.kernel_kind", EnumAttr("pto.kernel_kind", "cube"))``.
    """

    name: str
    params: tuple[Value, ...]
    body: tuple[Op, ...]
    attrs: tuple[tuple[str, Attr], ...] = ()
    loc: SourceLoc | None = None
    line: int = field(default=0, compare=False)

    def attr(self, name: str, default: Attr = None) -> Attr:
        return _attr_get(self.attrs, name, default)

    def param(self, name: str) -> Value:
        """The parameter called ``name`` (with or without ``%``); KeyError if absent."""
        key = name.removeprefix("%")
        for p in self.params:
            if p.name == key:
                return p
        raise KeyError(name)

    def walk(self) -> Iterator[Op]:
        """Every op in program order, recursing into loop and branch bodies."""
        return walk(self.body)


@dataclass(frozen=True)
class Module:
    """``module attributes {pto.target_arch = "a2a3"} { kernels }``.

    ``filename`` names the PTO text the module was parsed from (used in error locations).
    """

    kernels: tuple[Kernel, ...]
    attrs: tuple[tuple[str, Attr], ...] = ()
    filename: str = field(default="<pto>", compare=False)

    def attr(self, name: str, default: Attr = None) -> Attr:
        return _attr_get(self.attrs, name, default)

    @property
    def target_arch(self) -> str | None:
        """The ``pto.target_arch`` module attribute (``"a2a3"``, ``"a5"``), if given."""
        value = self.attr("pto.target_arch")
        return value if isinstance(value, str) else None

    def kernel(self, name: str | None = None) -> Kernel:
        """The kernel called ``name``; with no name, the only (or first) kernel."""
        if name is None:
            return self.kernels[0]
        for k in self.kernels:
            if k.name == name.removeprefix("@"):
                return k
        raise KeyError(name)


def walk(body: tuple[Op, ...]) -> Iterator[Op]:
    """Yield each op of ``body`` in program order, recursing into regions (pre-order)."""
    for op in body:
        yield op
        kind = type(op)   # the op classes have no subclasses; most ops are leaves
        if kind is ForOp:
            yield from walk(op.body)
        elif kind is IfOp:
            yield from walk(op.then_body)
            yield from walk(op.else_body)
        elif kind is WhileOp:
            yield from walk(op.cond)
            yield from walk(op.body)
