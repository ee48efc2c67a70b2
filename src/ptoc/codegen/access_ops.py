"""Lowering of the ops that re-view a tile buffer or touch single elements.

    tile.reshape          an alias: the result's ``alloc_tile`` at the source's address with
    tile.transpose_view   the new shape / transposed (ZN <-> NZ) layout / valid extents /
    tile.set_validshape   dtype — the two declarations at one address are the whole
    tile.reinterpret_view mechanism, as in PyPTO's kernels. Without addresses (PTOAS
                          planner) it is ``%v = pto.treshape %src : T -> T2`` as PyPTO
                          writes it there (the view type has static valid extents), which
                          the PTO planner turns into that same alias once it has placed %src
    tile.read             %v = pto.tgetval ins(tile, flat offset) outs : dtype
    tile.write            pto.tsetval ins(flat offset, value) outs(tile)  (in place)
    tensor.read           %v = pto.load_scalar ins(view, flat offset) outs : dtype
    tensor.write          pto.store_scalar ins(flat offset, value) outs(view)
    tensor.dim            the dimension as an index value (a constant when static)
    tile.max / tile.min   arith.maxsi / arith.maximumf (minsi / minimumf) on two scalars
    scalar.cast           the arith cast the two dtypes need (index_cast, extsi, sitofp ...)

The flat offset of ``[i, j]`` is ``i * cols + j`` over the physical row length.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ptoc.dtypes import DataType
from ptoc.ir.nodes import BinOp, ConstInt, ListExpr
from ptoc.ir.types import ScalarType as IrScalarType
from ptoc.pto.model import Instruction, ScalarType, Value

from ptoc.codegen.errors import CodegenError
from ptoc.codegen.tile_types import tile_buf_type, valid_shape

if TYPE_CHECKING:  # pragma: no cover
    from ptoc.codegen.emitter import KernelEmitter


def alias_view(em: KernelEmitter, var, a, site) -> None:
    """The result declared at the source's address with its own type (see module doc)."""
    if var is None:
        raise CodegenError(f"the result of {site.call.op} must be assigned to a variable",
                           site.op)
    src = em.tile(site.call.args[0], site.op)
    if src in em.row_stride_of:
        raise CodegenError(
            f"{site.call.op} '{var.name}' reinterprets %{src.name}, a column window whose "
            f"rows are {em.row_stride_of[src]} elements apart: its elements are not one dense "
            "range", site.op, hint="apply it to the source tile, or copy the window first")
    if em.options.with_addresses:
        em.alloc_tile(var, site.stmt)
        return
    dims = valid_shape(var.type)
    if not all(isinstance(d, int) for d in dims):
        raise CodegenError(
            f"{site.call.op} '{var.name}' has a run-time valid shape; under the PTOAS planner "
            "a view carries its valid extents in its type, so they must be constants",
            site.op, hint="use constant valid extents, or the PYPTO memory planner")
    buf = dataclasses.replace(tile_buf_type(var.type, f"'{var.name}'", site.stmt),
                              v_row=dims[0], v_col=dims[1])
    value = Value(em.names.var(var), buf)
    em.emit(Instruction("pto.treshape", results=(value,), ins=(src,), loc=site.op))
    em.buffer_key[value] = em.buffer_key.get(src)
    em.valid_of[value] = dims
    em.bind_tile(var, value)


def _flat_offset(em: KernelEmitter, indices, shape, site) -> Value:
    items = indices.items if isinstance(indices, ListExpr) else (indices,)
    if len(items) == 1:
        return em.index(items[0], site.op)
    expr = items[0]
    for dim, item in zip(shape[1:], items[1:]):
        expr = BinOp("+", BinOp("*", expr, ConstInt(dim)), item)
    return em.index(_fold(expr), site.op)


def _fold(expr):
    """Fold an all-constant offset expression to one constant."""
    if isinstance(expr, BinOp):
        lhs, rhs = _fold(expr.lhs), _fold(expr.rhs)
        if isinstance(lhs, ConstInt) and isinstance(rhs, ConstInt):
            value = lhs.value + rhs.value if expr.op == "+" else lhs.value * rhs.value
            return ConstInt(value)
        return BinOp(expr.op, lhs, rhs)
    return expr


def _result_name(em: KernelEmitter, var, site) -> str:
    if var is None:
        raise CodegenError(f"the result of {site.call.op} must be assigned to a variable",
                           site.op)
    return em.names.var(var)


def _result(em: KernelEmitter, var, dtype: DataType, site) -> Value:
    value = Value(_result_name(em, var, site), ScalarType(dtype))
    em.scalars[var] = value
    return value


def _physical(shape) -> tuple:
    dims = tuple(shape)
    return dims if len(dims) > 1 else (1, dims[0])


def tile_read(em: KernelEmitter, var, a, site) -> None:
    tile = em.tile(a["tile"], site.op)
    ty = a["tile"].type
    offset = _flat_offset(em, a["indices"], (tile.type.rows, tile.type.cols)
                          if len(ty.shape) > 1 else _physical(ty.shape), site)
    value = _result(em, var, ty.dtype, site)
    em.emit(Instruction("pto.tgetval", results=(value,), ins=(tile, offset), loc=site.op))


def tile_write(em: KernelEmitter, var, a, site) -> None:
    tile = em.tile(a["tile"], site.op)
    ty = a["tile"].type
    offset = _flat_offset(em, a["indices"], (tile.type.rows, tile.type.cols)
                          if len(ty.shape) > 1 else _physical(ty.shape), site)
    value = em.scalar(a["value"], ty.dtype, site.op)
    em.emit(Instruction("pto.tsetval", ins=(offset, value), outs=(tile,), loc=site.op))
    em.bind_tile(var, tile)


def tensor_read(em: KernelEmitter, var, a, site) -> None:
    view = em.tensor(a["tensor"], site.op)
    ty = a["tensor"].type
    offset = _flat_offset(em, a["indices"], tuple(ty.shape), site)
    value = _result(em, var, ty.dtype, site)
    em.emit(Instruction("pto.load_scalar", results=(value,), ins=(view, offset), loc=site.op))


def tensor_write(em: KernelEmitter, var, a, site) -> None:
    view = em.tensor(a["tensor"], site.op)
    ty = a["tensor"].type
    offset = _flat_offset(em, a["indices"], tuple(ty.shape), site)
    value = em.scalar(a["value"], ty.dtype, site.op)
    em.emit(Instruction("pto.store_scalar", ins=(offset, value), outs=(view,), loc=site.op))
    if var is not None:
        em.tensors[var] = view


def tensor_dim(em: KernelEmitter, var, a, site) -> None:
    ty = a["tensor"].type
    dim = ty.shape[a["axis"] % len(ty.shape)]
    if var is None:
        raise CodegenError("the result of tensor.dim must be assigned to a variable", site.op)
    em.scalars[var] = em.index(dim, site.op)


def scalar_cast(em: KernelEmitter, var, a, site) -> None:
    if var is None:
        raise CodegenError("the result of pl.cast must be assigned to a variable", site.op)
    em.scalars[var] = em.scalar(a["value"], a["target_type"], site.op)


def scalar_extreme(em: KernelEmitter, var, a, site) -> None:
    em.scalars[var] = em.extreme(site.call, _result_name(em, var, site), site.op)


LOWERINGS = {
    "tile.reshape": alias_view, "tile.transpose_view": alias_view,
    "tile.set_validshape": alias_view, "tile.reinterpret_view": alias_view,
    "tile.read": tile_read, "tile.write": tile_write,
    "tensor.read": tensor_read, "tensor.write": tensor_write, "tensor.dim": tensor_dim,
    "tile.max": scalar_extreme, "tile.min": scalar_extreme, "scalar.cast": scalar_cast,
}
