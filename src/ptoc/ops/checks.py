"""Operand checks shared by op type-inference rules; each failure names the op and the fix."""

from __future__ import annotations

from typing import Any

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import SourceLoc, TypeCheckError
from ptoc.ir.nodes import Call, ConstInt, Expr, ListExpr, Var
from ptoc.ir.types import ScalarType, TensorType, TileType, TileView, Type, TupleType


def describe_type(ty: Type) -> str:
    if isinstance(ty, TileType):
        space = f", {ty.memory_space.value}" if ty.memory_space else ""
        return f"Tile[{dims_text(ty.shape)}, {ty.dtype.value}{space}]"
    if isinstance(ty, TensorType):
        return f"Tensor[{dims_text(ty.shape)}, {ty.dtype.value}]"
    if isinstance(ty, ScalarType):
        return f"Scalar[{ty.dtype.value}]"
    if isinstance(ty, TupleType):
        return f"Tuple[{', '.join(describe_type(t) for t in ty.types)}]"
    return type(ty).__name__


def dims_text(shape) -> str:
    """``[M, 64]``: a pl.dynamic dimension by its name (an expression as printed)."""
    from ptoc.ir.printer import format_node

    return "[" + ", ".join(str(d) if isinstance(d, int) else format_node(d) for d in shape) + "]"


def type_of(value: Any) -> Type | None:
    return value.type if isinstance(value, Expr) else None


def tile(op: str, name: str, value: Any, loc: SourceLoc | None) -> TileType:
    ty = type_of(value)
    if not isinstance(ty, TileType):
        got = describe_type(ty) if ty is not None else repr(value)
        hint = "load it first with pl.load(...)" if isinstance(ty, TensorType) else \
            "pass a Tile value"
        raise TypeCheckError(f"pl.{op} expects a Tile for '{name}', got {got}", loc, hint=hint)
    return ty


def tensor(op: str, name: str, value: Any, loc: SourceLoc | None) -> TensorType:
    ty = type_of(value)
    if not isinstance(ty, TensorType):
        got = describe_type(ty) if ty is not None else repr(value)
        raise TypeCheckError(f"pl.{op} expects a Tensor for '{name}', got {got}", loc,
                             hint="pass a DDR tensor (a function parameter or pl.create_tensor)")
    return ty


def scalar_like(op: str, name: str, value: Any, loc: SourceLoc | None) -> None:
    ty = type_of(value)
    if not isinstance(ty, ScalarType):
        got = describe_type(ty) if ty is not None else repr(value)
        raise TypeCheckError(f"pl.{op} expects a scalar for '{name}', got {got}", loc,
                             hint="pass a number or a pl.Scalar value")


def shape(op: str, name: str, value: Any, loc: SourceLoc | None) -> tuple:
    """A ListExpr of dimensions as a shape tuple (ints for constants, Exprs otherwise)."""
    if not isinstance(value, ListExpr):
        raise TypeCheckError(f"pl.{op} argument '{name}' must be a list like [64, 64]", loc)
    dims = []
    for item in value.items:
        if isinstance(item, ConstInt):
            if item.value <= 0:
                raise TypeCheckError(
                    f"pl.{op} argument '{name}' has a non-positive dimension {item.value}", loc,
                    hint="every dimension must be >= 1")
            dims.append(item.value)
        elif isinstance(item.type, ScalarType) and not item.type.dtype.is_float:
            dims.append(_dim_of(item))
        else:
            raise TypeCheckError(f"pl.{op} argument '{name}' must hold integer dimensions", loc)
    return tuple(dims)


def _dim_of(item: Expr):
    """A shape entry ``pl.tensor.dim(t, k)`` is ``t``'s own dimension ``k`` (its size, or its
    ``pl.dynamic`` symbol, as ``t.shape[k]``): a type must not name the variable ``t``, which
    later passes replace (InitMemRef re-types parameters) without rewriting types."""
    if isinstance(item, Call) and item.op.name == "tensor.dim" and isinstance(item.args[0], Var):
        shape, axis = item.args[0].type.shape, item.args[1]
        if isinstance(axis, int) and -len(shape) <= axis < len(shape):
            return shape[axis]
    return item


def rank(op: str, name: str, value: Any, expected: int, loc: SourceLoc | None) -> None:
    if isinstance(value, ListExpr) and len(value.items) != expected:
        raise TypeCheckError(
            f"pl.{op} argument '{name}' has {len(value.items)} entries but the operand has rank "
            f"{expected}", loc, hint=f"give exactly {expected} entries")


def space(op: str, name: str, ty: TileType, allowed: tuple[MemorySpace, ...],
          loc: SourceLoc | None) -> None:
    """A tile's memory space must be one of ``allowed`` (unspecified is fine until inference)."""
    if ty.memory_space is not None and ty.memory_space not in allowed:
        names = ", ".join(f"pl.Mem.{s.value}" for s in allowed)
        raise TypeCheckError(
            f"pl.{op} operand '{name}' is in pl.Mem.{ty.memory_space.value}, but it must be in "
            f"{names}", loc, hint=f"move it with pl.move(x, target_memory=...) into one of {names}")


def same_shape(op: str, a: TileType | TensorType, b: TileType | TensorType,
               loc: SourceLoc | None) -> None:
    if not shapes_equal(a.shape, b.shape):
        raise TypeCheckError(
            f"pl.{op} operands have different shapes: {describe_type(a)} vs {describe_type(b)}",
            loc, hint="slice or reshape one operand so that the shapes agree")


def same_dtype(op: str, a: TileType | TensorType, b: TileType | TensorType,
               loc: SourceLoc | None) -> None:
    if a.dtype is not b.dtype:
        raise TypeCheckError(
            f"pl.{op} operands have different dtypes: {a.dtype.value} vs {b.dtype.value}", loc,
            hint="there is no implicit promotion; convert one operand with pl.cast")


def shapes_equal(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    return all((x == y) if isinstance(x, int) and isinstance(y, int) else (x is y)
               for x, y in zip(a, b))


def dtype_arg(op: str, name: str, value: Any, loc: SourceLoc | None) -> DataType:
    if not isinstance(value, DataType):
        raise TypeCheckError(f"pl.{op} argument '{name}' must be a dtype such as pl.FP32, got "
                             f"{value!r}", loc)
    return value


def space_arg(op: str, name: str, value: Any, loc: SourceLoc | None) -> MemorySpace | None:
    if value is None or isinstance(value, MemorySpace):
        return value
    raise TypeCheckError(f"pl.{op} argument '{name}' must be a memory space such as pl.Mem.Vec, "
                         f"got {value!r}", loc)


def accumulator_dtype(op: str, lhs: DataType, rhs: DataType, loc: SourceLoc | None) -> DataType:
    """The cube's fixed accumulator type: FP32 for float operands, INT32 for INT8."""
    if lhs is not rhs:
        raise TypeCheckError(f"pl.{op} operands have different dtypes: {lhs.value} vs {rhs.value}",
                             loc, hint="cast both operands to the same dtype")
    if lhs in (DataType.FP16, DataType.BF16, DataType.FP32):
        return DataType.FP32
    if lhs is DataType.INT8:
        return DataType.INT32
    raise TypeCheckError(f"pl.{op} does not support {lhs.value} operands", loc,
                         hint="use FP16, BF16, FP32 or INT8 operands")


def dtype_kind(op: str, name: str, dtype: DataType, kind: str, loc: SourceLoc | None) -> None:
    """``kind`` ``float`` / ``int`` restricts an operand to float or integer dtypes."""
    if kind == "float" and not dtype.is_float:
        raise TypeCheckError(f"pl.{op} needs a float operand for '{name}', got {dtype.value}",
                             loc, hint="convert it with pl.cast(x, pl.FP32)")
    if kind == "int" and not dtype.is_int:
        raise TypeCheckError(f"pl.{op} is a bitwise op and needs an integer operand for "
                             f"'{name}', got {dtype.value}", loc,
                             hint="convert it with pl.cast(x, pl.INT32)")


def value(op: str, level: str, name: str, v: Any, loc: SourceLoc | None) -> TileType | TensorType:
    """The operand of a ``tile.*`` (a Tile) or ``tensor.*`` (a Tensor) op, by ``level``."""
    return tile(op, name, v, loc) if level == "tile" else tensor(op, name, v, loc)


#: Element types a GM tensor can be atomically added into, on some target (PyPTO's op-level
#: rule: the hardware atomic-add dtypes; which of them a target's store pipe combines is the
#: target's ``atomic_add_dtypes``, checked when the kernel is generated).
ATOMIC_ADD_DTYPES = (DataType.FP32, DataType.BF16, DataType.FP16, DataType.INT32,
                     DataType.INT16, DataType.INT8)


def atomic(op: str, value: Any, target_dtype: DataType, loc: SourceLoc | None) -> None:
    """``atomic=`` is None, ``pl.AtomicType.None_`` or ``pl.AtomicType.Add`` into a tensor of
    a hardware atomic-add dtype."""
    from ptoc.dtypes import AtomicType

    if value is None or value is AtomicType.None_:
        return
    if value is not AtomicType.Add:
        raise TypeCheckError(f"pl.{op} atomic must be pl.AtomicType.None_ or pl.AtomicType.Add, "
                             f"got {value!r}", loc, hint="pass atomic=pl.AtomicType.Add")
    if target_dtype not in ATOMIC_ADD_DTYPES:
        names = "/".join(d.value for d in ATOMIC_ADD_DTYPES)
        raise TypeCheckError(
            f"pl.{op} with atomic=pl.AtomicType.Add requires a {names} destination (the "
            f"hardware atomic-add dtypes), but it is {target_dtype.value}", loc,
            hint="accumulate into an FP32 tensor and cast after the reduction")


def valid_of(ty: TileType) -> tuple | None:
    """A tile's valid extents when they are narrower than its shape (else None)."""
    valid = ty.view.get("valid_shape") if ty.view is not None else None
    if valid is None:
        return None
    valid = tuple(valid)
    return None if shapes_equal(valid, tuple(ty.shape)) else valid


def window_valid(src: TileType, offsets, window: tuple) -> tuple | None:
    """The valid extents of a ``window``-shaped read of tile ``src`` at ``offsets``, as PyPTO
    infers a window read (``tile.extract``): ``window_read_valid`` over its valid region.
    None: fully valid."""
    return window_read_valid(tuple(src.shape), valid_of(src), offsets, window)


def window_read_valid(shape: tuple, valid: tuple | None, offsets, window: tuple) -> tuple | None:
    """The valid extents of a ``window``-shaped read at ``offsets`` of a tile or tensor of
    ``shape`` holding data over its leading ``valid`` extents (PyPTO's window-read inference:
    ``tile.extract``, ``tensor.slice``, ``tile.load``): per axis ``clamp(valid - offset, 0,
    window)``, the window itself where the source is fully valid. Constants fold; a run-time
    extent gives the scalar ``min``/``max`` expression (offset 0: ``min(valid, window)``).
    None: fully valid."""
    from ptoc.ir.nodes import BinOp
    from ptoc.ir.visitor import fold_constants
    from ptoc.ops.registry import make_call

    if valid is None:
        return None
    out = []
    for dim, v, off, w in zip(shape, valid, offsets, window):
        dim, v, off, w = _int(dim), _int(v), _int(off), _int(w)
        if shapes_equal((v,), (dim,)):
            out.append(w)
        elif isinstance(v, int) and isinstance(off, int) and isinstance(w, int):
            out.append(max(0, min(v - off, w)))
        elif isinstance(off, int) and off == 0:
            out.append(v if shapes_equal((w,), (dim,)) else make_call("tile.min", (v, w)))
        else:
            v, off = (x if isinstance(x, Expr) else ConstInt(x) for x in (v, off))
            left = fold_constants(BinOp("-", make_call("tile.max", (v, off)), off))
            out.append(make_call("tile.min", (left, w)))
    return tuple(out)


def _int(x):
    return x.value if isinstance(x, ConstInt) else x


def with_valid(valid: tuple | None, shape: tuple) -> TileView | None:
    """The TileView giving a result the valid extents ``valid`` (None: fully valid), as PyPTO
    propagates them so an op never computes on (or a reduction never reads) invalid data."""
    if valid is None or shapes_equal(tuple(valid), tuple(shape)):
        return None
    return TileView((("valid_shape", tuple(valid)),))
