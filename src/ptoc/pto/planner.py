"""PlanMemory for the PTOAS planner path: give every address-less ``pto.alloc_tile`` an address.

Under ``memory_planner=PTOAS`` the compiler's own MemoryReuse/AllocateMemoryAddr are skipped
and codegen emits tiles without ``addr``; as ptoas' PlanMemory does, this pass decides where
each tile lives, on the PTO program itself, before sync insertion (which needs addresses to
see dependences):

1. lifetimes (``planner_lifetimes``): first access to last access, whole loops when a tile
   is used across iterations; only when a space does not fit this way does an element-wise
   vector result reuse the bytes of the operand it consumes (more reuse, fewer overlaps);
2. placement per memory space (``planner_place``): tiles with disjoint lifetimes may share
   bytes, co-live tiles never do; outside L0C a tile first takes the bytes released longest
   ago while the space has room (so pipes overlap), else tiles pack with reuse; addresses
   are ``Target.address_alignment`` (32-byte) aligned; a ``PlanMemoryError`` names the
   co-live tiles when a space overflows;
3. rewrite: ``addr = %cN_i64`` on each ``alloc_tile``, with the ``arith.constant`` i64
   values added at the top of the kernel (existing ones are reused); each view
   (``pto.treshape`` / ``pto.subview``, which keeps its source alive) becomes an
   ``alloc_tile`` at its source's address plus the window's byte offset (a column window of
   several rows also carries ``row_stride``, its source's row length) — what the PYPTO
   planner's codegen writes for the same alias — so nothing after planning sees a view. A
   subview's row offset may be a run-time index (its address is then computed in place).

Usage::

    planned = plan_memory(parse(text), "a2a3")
    tile_addresses(planned)["kernel"]["c"]     # -> 40960

Output is deterministic and survives print -> parse unchanged. Tiles that already carry a
constant ``addr`` keep it and the others are placed around them.
"""

from __future__ import annotations

import dataclasses

from ptoc.backend.targets import Target, get_target
from ptoc.dtypes import DataType, MemorySpace
from ptoc.pto.model import (
    LOOP_OPS, ForOp, IfOp, Instruction, Kernel, Module, Op, ScalarType, TileBufType, Value, WhileOp,
    walk,
)
from ptoc.pto.ops import VIEW_OPS
from ptoc.pto.planner_lifetimes import TileLife, analyse
from ptoc.pto.planner_place import PlanCapacityError, PlanMemoryError, place_space

__all__ = ["PlanCapacityError", "PlanMemoryError", "TileLife", "kernel_lifetimes", "plan_memory",
           "tile_addresses"]

_I64 = ScalarType(DataType.INT64)


def plan_memory(module: Module, target: "str | Target | None" = None, *,
                spread: bool = True) -> Module:
    """``module`` with an address on every ``alloc_tile`` (see the module docstring).

    ``spread`` (default) places non-Acc tiles on the bytes released longest ago while they
    fit, which keeps DMA and compute pipes from waiting on each other; ``spread=False``
    packs every space (lowest addresses, maximal reuse). Acc tiles each get bytes of their
    own when all of them fit L0C together (what PTOAS' PlanMemory does: no reuse while a
    space fits), so a pipeline's accumulators never serialise the cube behind a drain;
    otherwise they are packed by lifetime.
    """
    tgt = get_target(target or module.target_arch or "a2a3")
    kernels = tuple(_plan_kernel(k, tgt, spread) for k in module.kernels)
    return dataclasses.replace(module, kernels=kernels)


def kernel_lifetimes(kernel: Kernel, target: "str | Target", *,
                     in_place: bool = False) -> list[TileLife]:
    """The planner's view of ``kernel``: each tile buffer's space, bytes and live interval."""
    return analyse(kernel, get_target(target), _int_constants(kernel), in_place=in_place)


def tile_addresses(module: Module) -> dict[str, dict[str, int]]:
    """``{kernel: {tile: address}}`` for every ``alloc_tile`` with a constant ``addr``."""
    out: dict[str, dict[str, int]] = {}
    for kernel in module.kernels:
        constants = _int_constants(kernel)
        out[kernel.name] = {
            op.result.name: constants[op.attr("addr").name] for op in walk(kernel.body)
            if isinstance(op, Instruction) and op.opcode == "pto.alloc_tile"
            and isinstance(op.attr("addr"), Value) and op.attr("addr").name in constants}
    return out


def _plan_kernel(kernel: Kernel, target: Target, spread: bool) -> Kernel:
    constants = _int_constants(kernel)
    _reject_dynamic_addresses(kernel, constants)
    rings = _ring_bases(kernel, target)
    lives = analyse(kernel, target, constants) + _ring_lives(kernel, target, rings)
    tight: list[TileLife] | None = None
    addresses: dict[str, int] = {}
    for space in sorted({t.space for t in lives}, key=lambda s: s.value):
        try:
            acc = space is MemorySpace.Acc
            addresses.update(place_space(space, [t for t in lives if t.space is space], target,
                                         spread=spread and not acc, separate=acc))
        except PlanCapacityError:
            # Out of room: let element-wise results overwrite their operands and try again.
            tight = tight or (analyse(kernel, target, constants, in_place=True)
                              + _ring_lives(kernel, target, rings))
            addresses.update(place_space(space, [t for t in tight if t.space is space], target))
    todo = {t.name: addresses[t.name] for t in lives if t.fixed is None}
    placed = {name: base for name, (base, _, _, auto) in rings.items() if auto}
    has_views = any(isinstance(op, Instruction) and op.opcode in VIEW_OPS
                    for op in walk(kernel.body))
    if not todo and not placed and not has_views:
        return kernel
    pool = _ConstantPool(kernel)
    where = {t.name: t.fixed if t.fixed is not None else addresses[t.name] for t in lives}
    body = _rewrite(kernel.body, todo, pool, placed, _Views(where, constants, pool))
    return dataclasses.replace(kernel, body=pool.new_constants() + body)


class _Views:
    """Turns each view into an ``alloc_tile`` at its place in its source's bytes: a
    constant address, or (a subview at a run-time row, and views of it) an address value
    computed just before it."""

    def __init__(self, where: dict[str, int], constants: dict[str, int],
                 pool: "_ConstantPool") -> None:
        self.where: dict[str, "int | Value"] = dict(where)
        self.pitch: dict[str, int] = {}   # column windows: elements between their rows
        self.constants, self.pool = constants, pool

    def resolve(self, op: Instruction) -> list[Op]:
        src, result = op.ins[0], op.results[0]
        base = self.where.get(src.name)
        if base is None:
            raise PlanMemoryError(
                f"{op.opcode} %{result.name} views %{src.name}, which is not one placed tile "
                "(a loop-carried or branch-joined value)", op.loc,
                hint="take the view of the tile buffer itself")
        pitch = self.pitch.get(src.name)
        if op.opcode == "pto.treshape":
            if pitch is not None:
                raise PlanMemoryError(
                    f"pto.treshape %{result.name} reinterprets %{src.name}, a column window "
                    f"whose rows are {pitch} elements apart: its elements are not one dense "
                    "range", op.loc, hint="reshape the source tile, or copy the window first")
            self.where[result.name] = base
            return [_view_alloc(op, self._value(base))]
        ty: TileBufType = src.type
        rows, cols = op.attr("sizes")
        if ty.loc is not MemorySpace.Vec or ty.blayout != "row_major":
            raise PlanMemoryError(
                f"pto.subview %{result.name}: the {rows}x{cols} window of %{src.name} "
                f"({ty.rows}x{ty.cols} {ty.loc.value}, {ty.blayout}) is not a window of a "
                "row-major Vec tile", op.loc,
                hint="view windows of row-major Vec tiles (copy others with textract)")
        pitch = pitch or ty.cols
        strided = rows > 1 and cols != pitch
        elem, row_bytes = ty.dtype.nbytes, pitch * ty.dtype.nbytes
        if strided:
            self.pitch[result.name] = pitch
        stride = self.pool.get(pitch) if strided else None
        row = self.constants.get(op.ins[1].name)
        col = self.constants.get(op.ins[2].name)
        offset = (col * elem if col is not None else 0) + \
            (row * row_bytes if row is not None else 0)
        if isinstance(base, int) and row is not None and col is not None:
            self.where[result.name] = base + offset
            return [_view_alloc(op, self.pool.get(base + offset), stride)]
        ops: list[Op] = []
        addr = base if isinstance(base, Value) else None
        offset += base if isinstance(base, int) else 0
        for index, known, scale, what in ((op.ins[1], row, row_bytes, "row"),
                                          (op.ins[2], col, elem, "col")):
            if known is not None:
                continue
            if index.type != _I64:
                cast = Value(self.pool.fresh(f"{result.name}_{what}"), _I64)
                ops.append(Instruction("arith.index_cast", results=(cast,), ins=(index,),
                                       loc=op.loc))
                index = cast
            scaled = self._arith(ops, "muli", index, self.pool.get(scale), result, op)
            addr = scaled if addr is None else self._arith(ops, "addi", scaled, addr, result, op)
        if offset:
            addr = self._arith(ops, "addi", addr, self.pool.get(offset), result, op)
        self.where[result.name] = addr
        return ops + [_view_alloc(op, addr, stride)]

    def _value(self, addr: "int | Value") -> Value:
        return addr if isinstance(addr, Value) else self.pool.get(addr)

    def _arith(self, ops: list, code: str, a: Value, b: Value, result: Value,
               op: Instruction) -> Value:
        out = Value(self.pool.fresh(f"{result.name}_addr"), _I64)
        ops.append(Instruction(f"arith.{code}", results=(out,), ins=(a, b), loc=op.loc))
        return out


def _view_alloc(op: Instruction, addr: Value, stride: Value | None = None) -> Instruction:
    attrs = (("addr", addr), ("valid_row", None), ("valid_col", None))
    if stride is not None:
        attrs += (("row_stride", stride),)
    return Instruction("pto.alloc_tile", results=op.results, attrs=attrs,
                       loc=op.loc, line=op.line)


def _ring_bases(kernel: Kernel, target: Target) -> dict[str, tuple[int, MemorySpace, int, bool]]:
    """``{ring name: (base, space, bytes, auto)}`` of the kernel's ``pto.reserve_buffer``s:
    a ring without a base (``base = -1``, PyPTO's AUTO) takes the bottom of its space after
    the rings before it, as ptoas' PlanMemory places it; tiles go above."""
    cursor: dict[MemorySpace, int] = {}
    out: dict[str, tuple[int, MemorySpace, int, bool]] = {}
    for op in walk(kernel.body):
        if not (isinstance(op, Instruction) and op.opcode == "pto.reserve_buffer"):
            continue
        loc = op.attr("location")
        space = MemorySpace.Mat if getattr(loc, "value", "vec") == "mat" else MemorySpace.Vec
        size = int(op.attr("size"))
        base = op.attr("base")
        auto = not isinstance(base, int) or base < 0
        if auto:
            base = cursor.get(space, 0)
        out[op.attr("name")] = (base, space, size, auto)
        end = base + size
        cursor[space] = max(cursor.get(space, 0),
                            -(-end // target.address_alignment) * target.address_alignment)
    return out


def _ring_lives(kernel: Kernel, target: Target, rings) -> list[TileLife]:
    """Each ring as a fixed buffer live for the whole kernel (tiles never take its bytes)."""
    align = target.address_alignment
    return [TileLife(f"__ring_{name}", space, -(-size // align) * align, -1, 1 << 60, -1,
                     fixed=base) for name, (base, space, size, _) in rings.items()]


def _int_constants(kernel: Kernel) -> dict[str, int]:
    return {op.result.name: op.attr("value") for op in walk(kernel.body)
            if isinstance(op, Instruction) and op.opcode == "arith.constant"
            and isinstance(op.attr("value"), int) and not isinstance(op.attr("value"), bool)}


def _reject_dynamic_addresses(kernel: Kernel, constants: dict[str, int]) -> None:
    for op in walk(kernel.body):
        if isinstance(op, Instruction) and op.opcode == "pto.alloc_tile":
            addr = op.attr("addr")
            if isinstance(addr, Value) and addr.name not in constants:
                ty = op.result.type
                space = ty.loc.value if isinstance(ty, TileBufType) else "?"
                raise PlanMemoryError(
                    f"tile %{op.result.name} ({space}) in @{kernel.name} has a run-time address "
                    f"%{addr.name}; the memory planner needs constant addresses or none", op.loc,
                    hint="write addr = %c<N>_i64 from an arith.constant, or drop addr and let "
                         "the planner place the tile")


class _ConstantPool:
    """The i64 constants that name addresses: existing ones reused, new ones fresh."""

    def __init__(self, kernel: Kernel) -> None:
        self.taken = {p.name for p in kernel.params}
        for op in walk(kernel.body):
            self.taken.update(v.name for v in _defined(op))
        # Only the leading block of top-level constants dominates every alloc_tile.
        self.by_value: dict[int, Value] = {}
        for op in kernel.body:
            if not (isinstance(op, Instruction) and op.opcode == "arith.constant"):
                break
            if op.result.type == _I64 and isinstance(op.attr("value"), int):
                self.by_value.setdefault(op.attr("value"), op.result)
        self.added: list[Value] = []
        self.values: dict[int, int] = {}

    def get(self, value: int) -> Value:
        found = self.by_value.get(value)
        if found is not None:
            return found
        name, n = f"c{value}_i64", 0
        while name in self.taken:
            n += 1
            name = f"c{value}_i64_{n}"
        result = Value(name, _I64)
        self.taken.add(name)
        self.by_value[value] = result
        self.values[id(result)] = value
        self.added.append(result)
        return result

    def fresh(self, stem: str) -> str:
        """An SSA name no value of the kernel has."""
        name, n = stem, 0
        while name in self.taken:
            n += 1
            name = f"{stem}_{n}"
        self.taken.add(name)
        return name

    def new_constants(self) -> tuple[Op, ...]:
        return tuple(Instruction("arith.constant", results=(v,), attrs=(("value", self.values[id(v)]),))
                     for v in self.added)


def _defined(op: Op) -> tuple[Value, ...]:
    if isinstance(op, ForOp):
        return (op.iv, *(a for a, _ in op.iter_args), *op.results)
    if isinstance(op, WhileOp):
        return (*(a for a, _ in op.iter_args), *op.body_args, *op.results)
    return tuple(getattr(op, "results", ()))


def _rewrite(body: tuple[Op, ...], todo: dict[str, int], pool: _ConstantPool,
             rings: dict[str, int], views: _Views) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in body:
        if isinstance(op, LOOP_OPS):   # a while's condition region holds no tiles
            op = dataclasses.replace(op, body=_rewrite(op.body, todo, pool, rings, views))
        elif isinstance(op, IfOp):
            op = dataclasses.replace(
                op, then_body=_rewrite(op.then_body, todo, pool, rings, views),
                else_body=_rewrite(op.else_body, todo, pool, rings, views))
        elif isinstance(op, Instruction) and op.opcode in VIEW_OPS:
            out.extend(views.resolve(op))
            continue
        elif (isinstance(op, Instruction) and op.opcode == "pto.alloc_tile"
              and op.result.name in todo):
            op = _with_address(op, pool.get(todo[op.result.name]))
        elif (isinstance(op, Instruction) and op.opcode == "pto.reserve_buffer"
              and op.attr("name") in rings):
            op = dataclasses.replace(op, attrs=tuple(
                (k, rings[op.attr("name")] if k == "base" else v) for k, v in op.attrs))
        out.append(op)
    return tuple(out)


def _with_address(inst: Instruction, addr: Value) -> Instruction:
    """The ``alloc_tile`` with ``addr`` set, attributes in the parser's canonical order."""
    given = dict(inst.attrs)
    given["addr"] = addr
    keys = ("addr", "valid_row", "valid_col")
    attrs = tuple((k, given.get(k)) for k in keys) + tuple(
        (k, v) for k, v in inst.attrs if k not in keys)
    return dataclasses.replace(inst, attrs=attrs)
