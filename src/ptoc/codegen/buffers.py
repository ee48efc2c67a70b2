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
``tensors``, ``buffer_key``, ``row_stride_of``, ``window_base``, ``_shared``, ``_extents``, ``_path`` and ``saw_spaces``.
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import DataType, MemorySpace
from ptoc.ir.nodes import BinOp, Call, ConstInt, Var
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

    def _defined_here(self, expr) -> bool:
        """True when every scalar ``expr`` reads already has a value at this point."""
        if isinstance(expr, Var):
            return expr in self.scalars
        if isinstance(expr, BinOp):
            return self._defined_here(expr.lhs) and self._defined_here(expr.rhs)
        if isinstance(expr, Call):
            return all(self._defined_here(a) for a in expr.args)
        return True

    def alloc_tile(self, var: Var, stmt_loc=None, *, name: str | None = None,
                   valid: tuple | None = None, hoisted: bool = False) -> Value:
        """Emit (or, without addresses, reuse) the ``pto.alloc_tile`` of tile ``var``.

        The valid extents are the type's ``TileView(valid_shape=...)``, else ``valid`` (a
        load's ``valid_shape``), else the whole tile; ``valid_of`` remembers them so a store
        writes back exactly the valid window. A ``hoisted`` allocation (an ``if`` result,
        allocated at the top of the kernel) whose valid extents name scalars computed later
        (a tail block's row count) is allocated whole; ``valid_of`` still holds the extents,
        which a store evaluates where it stands.
        """
        ty = var.type
        if not isinstance(ty, TileType):
            raise CodegenError(f"'{var.name}' should be a tile but has type {describe(ty)}",
                               stmt_loc)
        buf = tile_buf_type(ty, f"'{var.name}'", stmt_loc)
        self.saw_spaces.add(buf.loc)
        key = None if self.options.with_addresses else _memref_key(ty.memref, buf)
        if key is not None:
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
        if hoisted and not all(self._defined_here(v) for v in (vrow, vcol)):
            vrow, vcol = buf.rows, buf.cols
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
        extent = self._extents.get((space, base))
        if extent is None:
            extent = self._extents[(space, base)] = [addr, addr + memref.size, name]
        elif extent[0] <= addr and addr + memref.size <= extent[1]:
            return  # inside its allocation as claimed so far, which overlaps no other
        else:
            extent[0], extent[1] = min(extent[0], addr), max(extent[1], addr + memref.size)
        for (other_space, other), (lo, hi, other_name) in self._extents.items():
            if other_space is space and other != base and lo < extent[1] and extent[0] < hi:
                raise CodegenError(
                    f"tile '{var.name}' puts allocation '{name}' at {space.value} bytes "
                    f"[{extent[0]}, {extent[1]}), overlapping allocation '{other_name}' at "
                    f"[{lo}, {hi}); two allocations never share bytes", loc,
                    hint="give the MemRefs addresses from AllocateMemoryAddr (or disjoint "
                         "ones), or put tiles that share bytes on one allocation")

    def alias_window(self, parent: Value, shape: tuple[int, int], offset: tuple, name: str,
                     what: str, loc) -> Value:
        """A tile naming the ``shape`` window at ``offset`` of ``parent``'s buffer.

        With addresses baked (PYPTO planner) the window is declared as a tile of its own at
        the parent's address plus the window's byte offset; without (PTOAS planner) it is
        PyPTO's ``pto.subview``, which the PTO planner turns into that same declaration. A
        window of part of the columns of several rows is strided: its rows stay the parent's
        row length apart (``row_stride``), as the subview PTOAS lowers keeps its source's
        stride. Either offset may be a run-time index (the address is computed per use).
        """
        ptype: TileBufType = parent.type
        rows, cols = shape
        r0, c0 = offset
        pitch = self.row_stride_of.get(parent, ptype.cols)
        fits = all(not (isinstance(o, int) and isinstance(n, int)) or o + n <= extent
                   for o, n, extent in ((r0, rows, ptype.rows), (c0, cols, ptype.cols)))
        dense_rows = ptype.blayout == "row_major" or ptype.cols == 1   # [N, 1]: one column
        if ptype.loc is not MemorySpace.Vec or not dense_rows or not fits:
            problem = "reaches past its edge" if not fits else "is not a row-major Vec tile"
            raise CodegenError(
                f"{what}: the {rows}x{cols} window at [{describe(r0)}, {describe(c0)}] of "
                f"%{parent.name} ({ptype.rows}x{ptype.cols}, {ptype.loc.value}, "
                f"{ptype.blayout}): the parent {problem}", loc,
                hint="take windows inside row-major Vec tiles, or copy with tile.extract")
        strided = rows > 1 and cols != pitch
        if not self.options.with_addresses:
            buf = dataclasses.replace(ptype, rows=rows, cols=cols, v_row=rows, v_col=cols)
            value = Value(name, buf)
            self.buffer_key[value] = (ptype.loc, ("subview", name))
            self.valid_of[value] = (rows, cols)
            if strided:
                self.row_stride_of[value] = pitch
            self.emit(Instruction("pto.subview", results=(value,),
                                  ins=(parent, self.index(r0, loc), self.index(c0, loc)),
                                  attrs=(("sizes", (rows, cols)),), loc=loc))
            return value
        base = self.window_base.get(parent, self.buffer_key[parent][1])
        elem = ptype.dtype.nbytes
        terms = [(o, scale) for o, scale in ((r0, pitch * elem), (c0, elem))
                 if not isinstance(o, int)]
        static = sum(o * scale for o, scale in ((r0, pitch * elem), (c0, elem))
                     if isinstance(o, int))
        if terms or not isinstance(base, int):
            # a window at a loop offset (or of such a window): its address computed per trip
            addr = base if not isinstance(base, int) else ConstInt(base, DataType.INT64)
            addr = BinOp("+", addr, ConstInt(static, DataType.INT64))
            for o, scale in terms:
                addr = BinOp("+", addr, BinOp("*", o, ConstInt(scale, DataType.INT64)))
            addr_value = self.scalar(addr, DataType.INT64, loc)
            key = (ptype.loc, ("window", id(base), id(r0), id(c0), static))
            base_of_value = addr
        else:
            addr_value, key = self.const(base + static, DataType.INT64), (ptype.loc, base + static)
            base_of_value = base + static
        if strided:   # not the buffer of a dense tile at the same address (a join moves it)
            key = (ptype.loc, ("strided", key[1], pitch, rows, cols))
        attrs = (("addr", addr_value), ("valid_row", self.index(rows, loc)),
                 ("valid_col", self.index(cols, loc)))
        if strided:
            attrs += (("row_stride", self.index(pitch, loc)),)
        value = Value(name, dataclasses.replace(ptype, rows=rows, cols=cols))
        self.buffer_key[value] = key
        self.window_base[value] = base_of_value
        self.valid_of[value] = (rows, cols)
        if strided:
            self.row_stride_of[value] = pitch
        self.emit(Instruction("pto.alloc_tile", results=(value,), attrs=attrs, loc=loc))
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
