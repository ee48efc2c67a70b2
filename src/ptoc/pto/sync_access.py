"""Dependence analysis for sync insertion: which bytes each PTO instruction touches.

Why a separate module: InsertSync needs, for every instruction, its pipe and the byte ranges
it reads and writes, so that two instructions conflict exactly when they touch overlapping
bytes of one buffer (RAW, WAR or WAW). This module resolves those ranges statically from the
kernel text, without running it:

* a tile's range is ``[addr, addr + physical bytes)`` in its memory space (a column window
  with a ``row_stride``: from its first to past its last element), the address
  coming from ``pto.alloc_tile addr = %c`` (a constant, possibly computed by ``arith`` ops
  on constants). A tile without a known address aliases its whole space (PTOAS treats an
  unknown range the same way);
* ``textract`` reads, and ``tinsert`` writes, only a window of the large tile when the
  window offsets are constants (the bounding byte range of that window);
* a tile popped from a cross-core pipe is its own buffer (``ring %t``): its slot is chosen at
  run time, and reuse of a slot is ordered by the pipe protocol (free -> push -> pop), not by
  flags;
* a GM access is keyed by the kernel parameter behind the tensor view; a ``partition_view``
  with constant offsets and sizes covers a rectangle of elements, anything else covers the
  whole tensor. Distinct parameters are assumed to be distinct tensors (as the simulator
  assumes).

Ranges are iteration-invariant on purpose: an offset that depends on a loop counter makes
the access cover the whole tensor, so a dependence found once holds for every iteration.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from ptoc.backend.pipes import QUEUE_PIPES, Pipe
from ptoc.backend.targets import Target
from ptoc.dtypes import MemorySpace
from ptoc.errors import PtoError
from ptoc.pto.model import (
    Instruction, Kernel, PartitionViewType, SyncOp, TensorViewType, TileBufType, Value, walk,
)
from ptoc.pto.ops import OP_TABLE, pipe_of

#: Upper bound used for "the whole buffer" when an address or offset is unknown.
WHOLE = 1 << 62

_FOLD = {
    "arith.addi": operator.add, "arith.subi": operator.sub, "arith.muli": operator.mul,
    "arith.maxsi": max, "arith.minsi": min,
    "arith.floordivsi": lambda a, b: a // b if b else None,
    "arith.divsi": lambda a, b: int(a / b) if b else None,
    "arith.ceildivsi": lambda a, b: -(-a // b) if b else None,
    "arith.remsi": lambda a, b: a % b if b else None,
}
_CASTS = ("arith.index_cast", "arith.extsi", "arith.trunci")
#: The ops that touch only a window of one of their tiles (``_tile_window``).
_WINDOW_OPS = frozenset({"pto.textract", "pto.tinsert"})


@dataclass(frozen=True)
class Access:
    """One byte range an instruction reads or writes.

    ``buffer`` names the storage (``"Vec"``, ``"Acc"`` ... or ``"GM %arg0"``); ``rect`` is
    ``(strides, row0, row1, col0, col1)`` for a 2-D GM window with constant bounds, which
    lets two windows of one tensor be compared exactly instead of by bounding bytes.
    """

    buffer: str
    lo: int
    hi: int
    write: bool
    rect: tuple | None = None

    def overlaps(self, other: "Access") -> bool:
        return ranges_overlap(self, other)

    def conflicts(self, other: "Access") -> bool:
        """True when the two accesses form a RAW, WAR or WAW hazard."""
        return (self.write or other.write) and self.overlaps(other)


def hazard_kind(earlier: Access, later: Access) -> str:
    if earlier.write and later.write:
        return "WAW"
    return "RAW" if earlier.write else "WAR"


@dataclass(frozen=True)
class Footprint:
    """The pipe and accesses of one instruction (empty accesses: nothing to order)."""

    pipe: Pipe
    accesses: tuple[Access, ...]


class AccessResolver:
    """Resolves constants, tiles and GM views of one kernel, then the footprint of each
    instruction (``footprint(inst)``; None for scalar and descriptor ops)."""

    def __init__(self, kernel: Kernel, target: Target):
        self.target = target
        self.consts: dict[str, int] = {}
        self.literals: dict[str, object] = {}                    # arith.constant values
        self.tiles: dict[str, tuple[str, int, int]] = {}       # name -> (space, lo, hi)
        self.views: dict[str, tuple[str, tuple | None]] = {}   # view -> (param, strides)
        self.windows: dict[str, tuple[str, int, int, tuple | None]] = {}
        self._cache: dict[int, Footprint | None] = {}
        self._accesses: dict[tuple, Access] = {}
        for op in walk(kernel.body):
            if isinstance(op, Instruction):
                self._define(op)

    # -- definitions ---------------------------------------------------------------------
    def const(self, v) -> int | None:
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, Value):
            return self.consts.get(v.name)
        return None

    def _define(self, op: Instruction) -> None:
        code = op.opcode
        if code == "arith.constant":
            value = op.attr("value")
            self.literals[op.result.name] = value
            if isinstance(value, int) and not isinstance(value, bool):
                self.consts[op.result.name] = value
        elif code in _FOLD and len(op.ins) == 2:
            a, b = self.const(op.ins[0]), self.const(op.ins[1])
            if a is not None and b is not None:
                value = _FOLD[code](a, b)
                if value is not None:
                    self.consts[op.result.name] = value
        elif code in _CASTS and op.ins:
            a = self.const(op.ins[0])
            if a is not None:
                self.consts[op.result.name] = a
        elif code == "pto.alloc_tile":
            ty = op.result.type
            if isinstance(ty, TileBufType):
                nbytes = self.target.tile_bytes(ty.loc, ty.rows, ty.cols, ty.dtype)
                if op.attr("row_stride") is not None:   # a column window: its bounding bytes
                    pitch = self.const(op.attr("row_stride"))
                    nbytes = WHOLE if pitch is None else \
                        ((ty.rows - 1) * pitch + ty.cols) * ty.dtype.nbytes
                addr = self.const(op.attr("addr"))
                lo, hi = (0, WHOLE) if addr is None else (addr, addr + nbytes)
                self.tiles[op.result.name] = (ty.loc.value, lo, hi)
        elif OP_TABLE.get(code) is not None and OP_TABLE[code].category == "cross_core" \
                and op.results and isinstance(op.result.type, TileBufType):
            # a popped tile lives in a ring slot picked at run time: it conflicts only with
            # its own pop, readers and free (the ring protocol orders slot reuse)
            ty = op.result.type
            self.tiles[op.result.name] = (f"ring %{op.result.name}", 0, ty.nbytes)
        elif code == "pto.make_tensor_view" and op.ins:
            strides = tuple(self.const(v) for v in op.attr("strides", ()))
            self.views[op.result.name] = (op.ins[0].name,
                                          strides if None not in strides else None)
        elif code == "pto.partition_view" and op.ins:
            self._window(op)

    def _window(self, op: Instruction) -> None:
        src = self.views.get(op.ins[0].name)
        if src is None:
            return
        param, strides = src
        ty = op.result.type
        eb = ty.dtype.nbytes if isinstance(ty, (PartitionViewType, TensorViewType)) else 1
        offsets = [self.const(v) for v in op.attr("offsets", ())]
        sizes = [self.const(v) for v in op.attr("sizes", ())]
        if strides is None or None in offsets or None in sizes or len(offsets) != len(strides) \
                or len(sizes) != len(strides):
            self.windows[op.result.name] = (param, 0, WHOLE, None)
            return
        first = sum(o * s for o, s in zip(offsets, strides))
        last = first + sum((n - 1) * s for n, s in zip(sizes, strides))
        rect = None
        if len(sizes) == 2:
            rect = (strides, offsets[0], offsets[0] + sizes[0], offsets[1], offsets[1] + sizes[1])
        self.windows[op.result.name] = (param, first * eb, (last + 1) * eb, rect)

    # -- footprints ----------------------------------------------------------------------
    def footprint(self, inst: Instruction) -> Footprint | None:
        key = id(inst)
        if key not in self._cache:
            self._cache[key] = self._footprint(inst)
        return self._cache[key]

    def pipes(self, ops) -> set[Pipe]:
        """The pipes of the instructions among ``ops`` that touch a buffer (the pipes that
        can wait for an access there). One whose footprint cannot be resolved is left out:
        reaching it raises the error."""
        pipes = set()
        for inst in ops:
            if not isinstance(inst, Instruction):
                continue
            try:
                fp = self.footprint(inst)
            except Exception:  # noqa: BLE001 - raised again where the walk reaches it
                continue
            if fp is not None and fp.accesses:
                pipes.add(fp.pipe)
        return pipes

    def _footprint(self, inst: Instruction) -> Footprint | None:
        info = OP_TABLE.get(inst.opcode)
        if info is None:
            return self._unknown(inst)
        if info.category not in ("move", "cube", "vector", "cross_core"):
            return None
        pipe = pipe_of(inst, self.target)
        if pipe not in QUEUE_PIPES:
            return None
        accesses = [self._access(inst, v, False) for v in info.reads(inst)]
        accesses += [self._access(inst, v, True) for v in info.writes(inst)]
        return Footprint(pipe, tuple(a for a in accesses if a is not None))

    def _unknown(self, inst: Instruction) -> Footprint | None:
        """An op the op table does not list: a DPS op on Vec tiles only is a vector op
        (reads its ins, writes its outs); anything else touching buffers cannot be ordered
        safely, so it is an error rather than a silently missing flag."""
        buffers = [v for v in (*inst.ins, *inst.outs)
                   if isinstance(v.type, (TileBufType, PartitionViewType, TensorViewType))]
        if not buffers:
            return None
        if all(isinstance(v.type, TileBufType) and v.type.loc is MemorySpace.Vec
               for v in buffers):
            accesses = [self._access(inst, v, False) for v in inst.ins if v in buffers]
            accesses += [self._access(inst, v, True) for v in inst.outs if v in buffers]
            return Footprint(Pipe.PIPE_V, tuple(a for a in accesses if a is not None))
        raise PtoError(f"insert_sync: op '{inst.opcode}' (line {inst.line}) is not in the PTO "
                       f"op table, so its pipe is unknown",
                       hint="add it to ptoc.pto.ops (its pipe and operand roles)")

    def _access(self, inst: Instruction, v: Value, write: bool) -> Access | None:
        ty = v.type
        if isinstance(ty, TileBufType):
            tile = self.tiles.get(v.name)
            space, lo, hi = (ty.loc.value, 0, WHOLE) if tile is None else tile
            if inst.opcode in _WINDOW_OPS:
                window = self._tile_window(inst, v, write, lo, hi)
                if window is not None:
                    lo, hi = window
            return self._intern(space, lo, hi, write, None)
        if isinstance(ty, (PartitionViewType, TensorViewType)):
            win = self.windows.get(v.name)
            if win is None:
                view = self.views.get(v.name)
                param = view[0] if view else v.name
                return self._intern(f"GM %{param}", 0, WHOLE, write, None)
            param, lo, hi, rect = win
            return self._intern(f"GM %{param}", lo, hi, write, rect)
        return None

    def _intern(self, *fields) -> Access:
        """One Access object per distinct range (many instructions touch the same tile)."""
        access = self._accesses.get(fields)
        if access is None:
            access = self._accesses[fields] = Access(*fields)
        return access

    def _tile_window(self, inst: Instruction, v: Value, write: bool, lo: int, hi: int):
        """Bounding bytes of the window a textract reads from its source or a tinsert writes
        into its destination, when the offsets are constants and the address is known."""
        code = inst.opcode
        if hi - lo >= WHOLE // 2 or len(inst.ins) < 3:
            return None
        if code == "pto.textract" and not write and v is inst.ins[0] and inst.outs:
            other = inst.outs[0].type
        elif code == "pto.tinsert" and write and inst.outs and v is inst.outs[0]:
            other = inst.ins[0].type
        else:
            return None
        row, col = self.const(inst.ins[1]), self.const(inst.ins[2])
        big = v.type
        if row is None or col is None or not isinstance(other, TileBufType) \
                or not isinstance(big, TileBufType):
            return None
        r, c = min(other.rows, big.rows - row), min(other.cols, big.cols - col)
        if row < 0 or col < 0 or r <= 0 or c <= 0:
            return None
        eb = big.dtype.nbytes
        w_lo = lo + (row * big.cols + col) * eb
        w_hi = lo + ((row + r - 1) * big.cols + col + c) * eb
        return max(lo, w_lo), min(hi, w_hi)


def has_sync(kernel: Kernel) -> bool:
    """True when the kernel already holds set_flag / wait_flag (Level 3). A user's
    ``pto.barrier`` alone (PyPTO's ``system.bar_v`` / ``bar_m``) does not count: InsertSync
    keeps it and takes the order it gives into account."""
    return any(isinstance(op, SyncOp) and op.kind != "barrier" for op in walk(kernel.body))


def ranges_overlap(a, b) -> bool:
    """Whether two accesses (``buffer``, ``lo``, ``hi``, optional ``rect``) touch a common byte.

    Two windows of the same GM tensor view (``rect`` = view key, row0, row1, col0, col1) are
    compared element-exactly instead of by their byte bounding boxes.
    """
    if a.buffer != b.buffer or a.hi <= b.lo or b.hi <= a.lo:
        return False
    r, s = a.rect, b.rect
    if r is not None and s is not None and r[0] == s[0]:
        return r[1] < s[2] and s[1] < r[2] and r[3] < s[4] and s[3] < r[4]
    return True
