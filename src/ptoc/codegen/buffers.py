"""Buffers: tensor views of the kernel's GM parameters and tile allocations (a mixin of
``KernelEmitter``).

A tensor parameter becomes ``%<name>_view = pto.make_tensor_view %argN`` with its shape and
row-major strides; every tensor variable derived from it (store results, loop-carried tensors)
denotes that same view. A tile variable becomes a ``pto.alloc_tile``: with its MemRef's
offset as ``addr`` under the PYPTO planner (every variable its own alloc, sharing expressed by
equal addresses), or — without addresses — one alloc per MemRef (base, offset, buffer type),
reused by every variable in it while the first alloc is in scope.

With addresses, the byte ranges of two allocations in one memory space must be disjoint:
the planner places them so, and IR edited by hand that overlaps them would corrupt one tile
with another's bytes without any race (same pipe), so it is a ``CodegenError``.

The host class provides ``emit``, ``const``, ``index``, ``names``, ``options``, ``tiles``,
``tensors``, ``buffer_key``, ``_shared``, ``_extents``, ``_path`` and ``saw_spaces``.
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import DataType, MemorySpace
from ptoc.ir.nodes import BinOp, ConstInt, Var
from ptoc.ir.types import MemRef, TensorType, TileType
from ptoc.pto.model import EnumAttr, Instruction, ScalarType, TensorViewType, TileBufType, Value

from ptoc.codegen.errors import CodegenError
from ptoc.codegen.names import describe
from ptoc.codegen.tile_types import tile_buf_type, valid_shape


class BufferBinding:
    """Tensor views and tile buffers of one kernel (mixed into ``KernelEmitter``)."""

    def _make_view(self, var: Var, ptr: Value) -> None:
        ty: TensorType = var.type
        loc = self.loc(var)
        shape = [self.index(d, loc) for d in ty.shape]
        strides: list[Value] = []
        stride_exprs: list = [1]
        for d in reversed(ty.shape[1:]):
            prev = stride_exprs[-1]
            if isinstance(prev, int) and isinstance(d, int):
                stride_exprs.append(prev * d)
            else:
                stride_exprs.append(("mul", prev, d))
        for s in reversed(stride_exprs):
            if isinstance(s, int):
                strides.append(self.const(s, DataType.INDEX))
            else:
                strides.append(self._dyn_stride(s, loc))
        view = Value(self.names.derived(var.name, "_view"),
                     TensorViewType(tuple(None for _ in ty.shape), ty.dtype))
        self.emit(Instruction("pto.make_tensor_view", results=(view,), ins=(ptr,),
                              attrs=(("shape", tuple(shape)), ("strides", tuple(strides)),
                                     ("layout", EnumAttr("pto.layout", "nd"))), loc=loc))
        self.tensors[var] = view

    def _dyn_stride(self, s, loc) -> Value:
        if isinstance(s, int):
            return self.const(s, DataType.INDEX)
        _, prev, d = s
        a = self._dyn_stride(prev, loc)
        b = self.index(d, loc)
        result = Value(self.temp_name(), ScalarType(DataType.INDEX))
        self.emit(Instruction("arith.muli", results=(result,), ins=(a, b), loc=loc))
        return result

    def tensor(self, expr, loc=None) -> Value:
        """The tensor view a tensor-typed IR expression denotes."""
        if isinstance(expr, Var) and expr in self.tensors:
            return self.tensors[expr]
        raise CodegenError(f"tensor {describe(expr)} is not a kernel parameter or a value derived "
                           "from one", loc,
                           hint="on-chip code can only read and write the kernel's DDR tensor "
                           "parameters; tensors created inside a kernel are not supported")

    # ---- tiles -------------------------------------------------------------------------
    def tile(self, expr, loc=None) -> Value:
        """The tile buffer a tile-typed IR expression denotes."""
        if isinstance(expr, Var) and expr in self.tiles:
            return self.tiles[expr]
        raise CodegenError(f"tile {describe(expr)} is used before it has a buffer", loc,
                           hint="define tiles with a tile op before using them")

    def bind_tile(self, var: Var | None, value: Value) -> None:
        if var is not None:
            self.tiles[var] = value

    def alloc_tile(self, var: Var, stmt_loc=None, *, name: str | None = None,
                   valid: tuple | None = None) -> Value:
        """Emit (or, without addresses, reuse) the ``pto.alloc_tile`` of tile ``var``.

        The valid extents are the type's ``TileView(valid_shape=...)``, else ``valid`` (a
        load's ``valid_shape``), else the whole tile; ``valid_of`` remembers them so a store
        writes back exactly the valid window.
        """
        ty = var.type
        if not isinstance(ty, TileType):
            raise CodegenError(f"'{var.name}' should be a tile but has type {describe(ty)}",
                               stmt_loc)
        buf = tile_buf_type(ty, f"'{var.name}'", stmt_loc)
        self.saw_spaces.add(buf.loc)
        key = _memref_key(ty.memref, buf)
        if not self.options.with_addresses and key is not None:
            shared = self._shared.get(key)
            if shared is not None and self._path[:len(shared[1])] == shared[1]:
                self.tiles[var] = shared[0]
                return shared[0]
        name = name or self.names.var(var)
        value = Value(name, buf)
        attrs: list = []
        if self.options.with_addresses:
            addr = self._address(var, ty.memref, stmt_loc)
            attrs.append(("addr", self.const(addr, DataType.INT64)))
            self.buffer_key[value] = (buf.loc, addr)
        else:
            self.buffer_key[value] = key if key is not None else (buf.loc, name)
            if key is not None:
                self._shared[key] = (value, self._path)
        vrow, vcol = valid_shape(ty, valid)
        self.valid_of[value] = (vrow, vcol)
        attrs.append(("valid_row", self.index(vrow, stmt_loc)))
        attrs.append(("valid_col", self.index(vcol, stmt_loc)))
        self.emit(Instruction("pto.alloc_tile", results=(value,), attrs=tuple(attrs),
                              loc=stmt_loc))
        self.tiles[var] = value
        return value

    def _address(self, var: Var, memref: MemRef | None, loc) -> int:
        if memref is None:
            raise CodegenError(
                f"tile '{var.name}' has no MemRef, so codegen has no address for it", loc,
                hint="run InitMemRef, MemoryReuse and AllocateMemoryAddr first (PYPTO planner), "
                "or generate with with_addresses=False for the PTOAS planner")
        off = memref.offset
        if not isinstance(off, ConstInt):
            raise CodegenError(
                f"tile '{var.name}' has MemRef offset {describe(off)}, not a constant address",
                loc, hint="run AllocateMemoryAddr before codegen")
        self._claim(var, memref, off.value, loc)
        return off.value

    def _claim(self, var: Var, memref: MemRef, addr: int, loc) -> None:
        """Grow ``var``'s allocation to cover its bytes; it must not reach another one."""
        space = var.type.memory_space
        base = memref.base if isinstance(memref.base, str) else id(memref.base)
        name = memref.base if isinstance(memref.base, str) else memref.base.name
        extent = self._extents.setdefault((space, base), [addr, addr + memref.size, name])
        extent[0], extent[1] = min(extent[0], addr), max(extent[1], addr + memref.size)
        for (other_space, other), (lo, hi, other_name) in self._extents.items():
            if other_space is space and other != base and lo < extent[1] and extent[0] < hi:
                raise CodegenError(
                    f"tile '{var.name}' puts allocation '{name}' at {space.value} bytes "
                    f"[{extent[0]}, {extent[1]}), overlapping allocation '{other_name}' at "
                    f"[{lo}, {hi}); two allocations never share bytes", loc,
                    hint="give the MemRefs addresses from AllocateMemoryAddr (or disjoint "
                         "ones), or put tiles that share bytes on one allocation")

    def alias_window(self, parent: Value, shape: tuple[int, int], offset: tuple[int, int],
                     name: str, what: str, loc) -> Value:
        """A tile naming the ``shape`` window at ``offset`` of ``parent``'s buffer.

        With addresses baked (PYPTO planner) the window is declared as a tile of its own at
        the parent's address plus the window's byte offset; without (PTOAS planner) it is
        PyPTO's ``pto.subview``, which the PTO planner turns into that same declaration.
        Either way ptoc's simulated tiles are dense, so the window must be one contiguous
        byte range: whole rows (or part of one row) of a row-major Vec tile.
        """
        ptype: TileBufType = parent.type
        rows, cols = shape
        r0, c0 = offset
        dynamic = not isinstance(r0, int)
        whole_rows = cols == ptype.cols or (rows == 1 and not dynamic)
        contiguous = (ptype.loc is MemorySpace.Vec
                      and (ptype.blayout == "row_major" or ptype.cols == 1) and whole_rows
                      and (dynamic or r0 + rows <= ptype.rows) and c0 + cols <= ptype.cols)
        if not contiguous:
            raise CodegenError(
                f"{what}: the {rows}x{cols} window at [{r0}, {c0}] of %{parent.name} "
                f"({ptype.rows}x{ptype.cols}, {ptype.loc.value}, {ptype.blayout}) is not one "
                "contiguous byte range", loc,
                hint="use whole rows of a row-major Vec tile, or copy with tile.extract")
        if not self.options.with_addresses:
            buf = dataclasses.replace(ptype, rows=rows, cols=cols, v_row=rows, v_col=cols)
            value = Value(name, buf)
            self.buffer_key[value] = (ptype.loc, ("subview", name))
            self.valid_of[value] = (rows, cols)
            self.emit(Instruction("pto.subview", results=(value,),
                                  ins=(parent, self.index(r0, loc), self.index(c0, loc)),
                                  attrs=(("sizes", (rows, cols)),), loc=loc))
            return value
        _, base = self.buffer_key[parent]
        row_bytes = ptype.cols * ptype.dtype.nbytes
        if dynamic:   # a row block at a loop offset: base + r0 * row bytes, computed per trip
            addr = BinOp("+", ConstInt(base + c0 * ptype.dtype.nbytes, DataType.INT64),
                         BinOp("*", r0, ConstInt(row_bytes, DataType.INT64)))
            addr_value = self.scalar(addr, DataType.INT64, loc)
            key = (ptype.loc, ("window", base, id(r0)))
        else:
            addr = base + r0 * row_bytes + c0 * ptype.dtype.nbytes
            addr_value, key = self.const(addr, DataType.INT64), (ptype.loc, addr)
        buf = dataclasses.replace(ptype, rows=rows, cols=cols)
        value = Value(name, buf)
        self.buffer_key[value] = key
        self.valid_of[value] = (rows, cols)
        self.emit(Instruction("pto.alloc_tile", results=(value,), attrs=(
            ("addr", addr_value),
            ("valid_row", self.index(rows, loc)), ("valid_col", self.index(cols, loc))),
            loc=loc))
        return value

    def same_buffer(self, a: Value, b: Value) -> bool:
        return a is b or a == b or (a in self.buffer_key and
                                    self.buffer_key.get(a) == self.buffer_key.get(b))

    def copy_tile(self, src: Value, dst: Value, loc) -> None:
        """``pto.tmov`` of a whole tile between two buffers (used at loop/branch joins)."""
        self.emit(Instruction("pto.tmov", ins=(src,), outs=(dst,), loc=loc))


def _memref_key(memref: MemRef | None, buf: TileBufType):
    if memref is None:
        return None
    off = memref.offset.value if isinstance(memref.offset, ConstInt) else id(memref.offset)
    base = memref.base if isinstance(memref.base, str) else id(memref.base)
    return (base, off, buf)
