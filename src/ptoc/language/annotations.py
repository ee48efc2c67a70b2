"""Type annotations: ``pl.Tensor[...]``, ``pl.Tile[...]``, ``pl.Scalar[...]``, ``pl.Out[...]``, ...

Annotations are parsed from the AST like the rest of a kernel; dimensions fold closure
constants and may name scalar parameters (dynamic dimensions).
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

from ptoc.dtypes import DataType, Direction, MemorySpace
from ptoc.ir.nodes import ConstInt, Expr, Var
from ptoc.ir.types import (
    ArrayType, MemRef, PtrType, ScalarType, TensorLayout, TensorType, TensorView, TileType,
    TileView, TupleType, Type,
)
from ptoc.language.context import DslPath

_DIRECTIONS = {"Out": Direction.Out, "InOut": Direction.InOut}


class SlotPlacementIgnoredWarning(UserWarning):
    """A tile annotation asks for PyPTO's explicit slot placement; ptoc's planner places it."""


class AnnotationParser:
    """Mixin: annotation AST -> IR type (needs ``self.expr`` and ``self.ctx``)."""

    def annotation(self, node: ast.AST, *, allow_direction: bool = False) -> tuple[Type, Direction]:
        head, items = self._split_subscript(node)
        if head in _DIRECTIONS:
            if not allow_direction:
                raise self.ctx.error(node, f"pl.{head}[...] marks a parameter direction and is only "
                                     "allowed on function parameters")
            if len(items) != 1:
                raise self.ctx.error(node, f"pl.{head}[...] wraps exactly one type")
            inner, _ = self.annotation(items[0])
            return inner, _DIRECTIONS[head]
        return self._plain_type(node, head, items), Direction.In

    def return_annotation(self, node: ast.AST) -> tuple[Type, ...]:
        if isinstance(node, ast.Constant) and node.value is None:
            return ()
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                node.value.id in ("tuple", "Tuple"):
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return tuple(self.annotation(e)[0] for e in elts)
        return (self.annotation(node)[0],)

    def _split_subscript(self, node: ast.AST) -> tuple[str | None, list[ast.AST]]:
        target = node.value if isinstance(node, ast.Subscript) else node
        known = isinstance(target, ast.Attribute) or (
            isinstance(target, ast.Name) and (target.id in self.ctx.dsl_aliases
                                              or target.id in self.ctx.env))
        base = self.expr(target) if known else None
        if isinstance(base, DataType):
            return "dtype", [node]
        if not isinstance(base, DslPath) or len(base.parts) != 1:
            raise self.ctx.error(node, f"'{ast.unparse(node)}' is not a ptoc type",
                                 hint="annotate with pl.Tensor[[M, N], pl.FP32], "
                                      "pl.Tile[[r, c], dtype], or pl.Scalar[dtype]")
        if not isinstance(node, ast.Subscript):
            return base.parts[0], []
        sl = node.slice
        items = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        return base.parts[0], items

    def _plain_type(self, node: ast.AST, head: str | None, items: list[ast.AST]) -> Type:
        if head == "dtype":
            return ScalarType(self.expr(items[0]))
        if head == "Ptr" and not items:
            return PtrType()
        if head == "Tuple":
            return TupleType(tuple(self.annotation(item)[0] for item in items))
        if head == "Array":
            if len(items) != 2 or not isinstance(self.expr(items[1]), DataType):
                raise self.ctx.error(node, "pl.Array[...] takes a size and a dtype, e.g. "
                                     "pl.Array[4, pl.TASK_ID]")
            return ArrayType(self.expr(items[0]), self.expr(items[1]))
        if head == "Scalar":
            dtype = self.expr(items[0]) if len(items) == 1 else None
            if not isinstance(dtype, DataType):
                raise self.ctx.error(node, "pl.Scalar[...] takes one dtype, e.g. pl.Scalar[pl.INDEX]")
            return ScalarType(dtype)
        if head in ("Tensor", "Tile"):
            if len(items) < 2:
                raise self.ctx.error(node, f"pl.{head}[...] needs a shape and a dtype, e.g. "
                                     f"pl.{head}[[64, 64], pl.FP32]")
            shape = self._shape(items[0])
            dtype = self.expr(items[1])
            if not isinstance(dtype, DataType):
                raise self.ctx.error(items[1], f"'{ast.unparse(items[1])}' is not a dtype",
                                     hint="use pl.FP32, pl.FP16, pl.BF16, pl.INT8, ...")
            return self._shaped(node, head, shape, dtype, items[2:])
        raise self.ctx.error(node, f"'{ast.unparse(node)}' is not a ptoc type",
                             hint="annotate with pl.Tensor[...], pl.Tile[...] or pl.Scalar[...]")

    def _shaped(self, node, head, shape, dtype, extras) -> Type:
        memref = space = view = None
        for extra in extras:
            if isinstance(extra, ast.Call) and _call_name(extra) == "MemRef":
                memref = self._memref(extra)
                continue
            if isinstance(extra, ast.Subscript) and isinstance(extra.value, ast.Call) and \
                    _call_name(extra.value) == "MemRef":
                self._slot_memref(extra, head)
                continue
            if isinstance(extra, ast.Call) and _call_name(extra) == "TileView":
                view = self._tile_view(extra)
                continue
            if isinstance(extra, ast.Call) and _call_name(extra) == "TensorView" \
                    and head == "Tensor":
                view = self._tensor_view(extra, shape)
                continue
            value = self.expr(extra)
            if isinstance(value, MemorySpace) and head == "Tile":
                space = value
            else:
                raise self.ctx.error(extra, f"unexpected '{ast.unparse(extra)}' in pl.{head}[...]",
                                     hint="after shape and dtype come an optional pl.MemRef(...), "
                                          "pl.Mem.X and pl.TileView(...)")
        if head == "Tensor":
            return TensorType(shape, dtype, memref, view)
        return TileType(shape, dtype, space, memref, view)

    def _shape(self, node: ast.AST) -> tuple:
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.ctx.error(node, f"shape '{ast.unparse(node)}' must be a list like [64, 64]")
        dims = []
        for item in node.elts:
            value = self.expr(item)
            if isinstance(value, bool) or not isinstance(value, (int, Expr)):
                raise self.ctx.error(item, f"dimension '{ast.unparse(item)}' must be an integer")
            if isinstance(value, ConstInt):
                value = value.value
            if isinstance(value, int) and value <= 0:
                raise self.ctx.error(item, f"dimension {value} must be >= 1")
            dims.append(value)
        return tuple(dims)

    def _memref(self, node: ast.Call) -> MemRef:
        if len(node.args) != 3 or node.keywords:
            raise self.ctx.error(node, "pl.MemRef takes (base, offset, size)",
                                 hint='write pl.MemRef("mem_vec_0", pl.const(0, pl.INT64), 4096)')
        base = self.expr(node.args[0])
        if not isinstance(base, (str, Var)):
            raise self.ctx.error(node.args[0], "a MemRef base is a name string or a pl.Ptr variable")
        offset = self.runtime(node.args[1], "MemRef offset")
        if isinstance(offset, ConstInt) and offset.dtype is DataType.INDEX:
            offset = ConstInt(offset.value, DataType.INT64)  # byte offsets are INT64 (as PyPTO)
        size = self.expr(node.args[2])
        if not isinstance(size, int) or isinstance(size, bool):
            raise self.ctx.error(node.args[2], "a MemRef size must be an integer byte count")
        return MemRef(base, offset, size)

    def _tensor_view(self, node: ast.Call, shape: tuple) -> TensorView:
        """``pl.TensorView(valid_shape=[...], stride=[], layout=pl.TensorLayout.ND)``:
        ptoc's tensors are row-major, so a stride or another layout is refused."""
        if node.args:
            raise self.ctx.error(node, "pl.TensorView takes keyword arguments only")
        given = {kw.arg: kw for kw in node.keywords}
        unknown = sorted(set(given) - {"valid_shape", "stride", "layout", "pad"})
        if unknown:
            raise self.ctx.error(node, f"pl.TensorView has no field {unknown[0]!r}",
                                 hint="fields: valid_shape, stride, layout, pad")
        fields = []
        if "valid_shape" in given:
            valid = self._shape(given["valid_shape"].value)
            if len(valid) != len(shape):
                raise self.ctx.error(node, f"valid_shape {list(valid)} has rank {len(valid)} "
                                     f"but the tensor has rank {len(shape)}")
            fields.append(("valid_shape", valid))
        stride = self.expr(given["stride"].value) if "stride" in given else []
        layout = self.expr(given["layout"].value) if "layout" in given else TensorLayout.ND
        if stride or layout is not TensorLayout.ND:
            raise self.ctx.error(node, "ptoc's DDR tensors are row-major: pl.TensorView takes "
                                 "stride=[] and layout=pl.TensorLayout.ND only",
                                 hint="transpose with a_trans=/b_trans= or pl.transpose")
        fields += [("stride", ()), ("layout", TensorLayout.ND)]
        if "pad" in given:
            fields.append(("pad", self.expr(given["pad"].value)))
        return TensorView(tuple(fields))

    def _slot_memref(self, node: ast.Subscript, head: str) -> None:
        """``pl.MemRef("ub", slots=N)[i % N]``: PyPTO's hand-placed slot rotation. ptoc checks
        the spelling and leaves placement to its own planner (values are the same; the overlap
        the slots allow may not be), and says so with a warning."""
        call = node.value
        slots = next((kw.value for kw in call.keywords if kw.arg == "slots"), None)
        base = self.expr(call.args[0]) if len(call.args) == 1 else None
        count = self.expr(slots) if slots is not None else None
        if head != "Tile" or not isinstance(base, str) or len(call.keywords) != 1 or \
                isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise self.ctx.error(node, f"'{ast.unparse(node)}' is not a slot placement",
                                 hint='on a pl.Tile write pl.MemRef("name", slots=N)[index] with '
                                      "a literal N >= 1")
        index = self.runtime(node.slice, "a MemRef slot index")
        if not (isinstance(index.type, ScalarType) and index.type.dtype.is_int):
            raise self.ctx.error(node.slice, f"slot index '{ast.unparse(node.slice)}' must be "
                                 "an integer")
        warnings.warn_explicit(
            f"ptoc places '{ast.unparse(node)}' with its own memory planner (results are the "
            f"same; for {count}-deep buffering that ptoc schedules, use "
            f"pl.pipeline(..., stage={count}))", SlotPlacementIgnoredWarning,
            self.ctx.filename, getattr(node, "lineno", 0))

    def _tile_view(self, node: ast.Call) -> TileView:
        if node.args:
            raise self.ctx.error(node, "pl.TileView takes keyword arguments only")
        fields = []
        for kw in node.keywords:
            value: Any = self.expr(kw.value)
            if isinstance(value, list):
                value = tuple(value)
            fields.append((kw.arg, value))
        return TileView(tuple(fields))


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else None
