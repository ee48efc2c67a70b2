"""Lifetimes of the tile buffers of one PTO kernel, for the PTOAS-style memory planner.

Why a separate module: placement only needs, per buffer, its memory space, its physical
size and the closed interval of program positions during which its bytes must be kept.
Computing that interval is the delicate part, so it lives here on its own:

* Every op gets a position p in a pre-order walk (reads happen at p, writes at p + 1); an
  ``scf.for`` / ``scf.if`` gets one for its header and one after its body, so a loop is
  the interval ``[header, end]``. An operand read stays live through p + 1, so no result
  of the op lands on it; with ``in_place=True`` an operand read by an element-wise vector
  op (``IN_PLACE_OPS``) ends its life at p and the result may reuse its bytes.
* A buffer is live from its first access (a write, normally) to its last access. An
  access inside a loop that does not contain the ``alloc_tile`` keeps the buffer for the
  whole of that loop (outermost such loop): the bytes are needed on every iteration.
* A buffer allocated inside a loop whose first access is a *read* carries a value from the
  previous iteration, so it too is kept for the whole of that loop.
* Tile values joined by ``scf.for`` iter_args / ``scf.yield`` / ``scf.if`` results form one
  group; every buffer of a group is kept alive over the whole group's life (ptoc's codegen
  never yields tiles, but hand-written PTO may).
* A view (``pto.treshape`` / ``pto.subview``) has no bytes of its own: it joins its source's
  group, so every use of the view keeps the source alive.

An ``alloc_tile`` that already names a constant ``addr`` is reported as fixed: the planner
keeps it where it is and places the others around it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.targets import Target, align_up
from ptoc.dtypes import MemorySpace
from ptoc.errors import SourceLoc
from ptoc.pto.model import (
    LOOP_OPS, IfOp, Instruction, Kernel, Op, TileBufType, Value, WhileOp, YieldOp,
)
from ptoc.pto.ops import VIEW_OPS


@dataclass(frozen=True)
class TileLife:
    """One tile buffer to place.

    ``name`` is the ``alloc_tile`` result (without ``%``); ``nbytes`` the physical bytes
    rounded up to the target's address alignment; ``start``/``end`` the closed interval of
    positions it is live; ``fixed`` a constant address the program already gives (else
    None); ``order`` the index of its ``alloc_tile`` in program order (for determinism).
    """

    name: str
    space: MemorySpace
    nbytes: int
    start: int
    end: int
    order: int
    fixed: int | None = None
    loc: SourceLoc | None = None
    line: int = 0

    def overlaps(self, other: "TileLife") -> bool:
        """Whether the two buffers are live at a common position (so they must not share)."""
        return self.start <= other.end and other.start <= self.end


@dataclass
class _Buffer:
    name: str
    ty: TileBufType
    def_pos: int
    def_loops: tuple[int, ...]          # header positions of the enclosing loops
    order: int
    fixed: int | None
    loc: SourceLoc | None
    line: int
    lo: int | None = None
    hi: int | None = None
    first_access: tuple[int, bool] | None = None   # (position, is_read)

    def cover(self, lo: int, hi: int) -> None:
        self.lo = lo if self.lo is None else min(self.lo, lo)
        self.hi = hi if self.hi is None else max(self.hi, hi)


class _Walk:
    """One pre-order walk over a kernel body recording buffers, accesses and loop extents.

    A loop is named by the position of its header; ``loop_end`` maps it to the position
    after its body.
    """

    def __init__(self, constants: dict[str, int], in_place: bool) -> None:
        self.constants = constants
        self.in_place = in_place
        self.pos = 0
        self.buffers: dict[str, _Buffer] = {}
        self.parent: dict[str, str] = {}
        self.loop_end: dict[int, int] = {}
        self.accesses: list[tuple[str, int, int, tuple[int, ...], bool]] = []

    # -- joins (tile values that flow into one another through loops and branches) ---------
    def root(self, name: str) -> str:
        while name in self.parent:
            name = self.parent[name]
        return name

    def join(self, value: Value, onto: Value) -> None:
        """Put ``value`` in ``onto``'s group: loop/branch joins of tiles, whose buffers are
        then kept alive together over the group's whole life."""
        if not isinstance(value.type, TileBufType) or not isinstance(onto.type, TileBufType):
            return
        a, b = self.root(value.name), self.root(onto.name)
        if a != b:
            self.parent[a] = b

    def groups(self) -> dict[str, list[_Buffer]]:
        out: dict[str, list[_Buffer]] = {}
        for buf in self.buffers.values():
            out.setdefault(self.root(buf.name), []).append(buf)
        return out

    # -- the walk ---------------------------------------------------------------------------
    def next_pos(self) -> int:
        self.pos += 2      # op p reads at p and writes at p + 1
        return self.pos

    def body(self, ops: tuple[Op, ...], loops: tuple[int, ...]) -> None:
        for op in ops:
            self.op(op, loops)

    def op(self, op: Op, loops: tuple[int, ...]) -> None:
        if isinstance(op, LOOP_OPS):
            head = self.next_pos()
            for region_arg, init in op.iter_args:
                self.join(region_arg, init)
                self.access(init, head, head + 1, loops, read=True)
            for result, (region_arg, _) in zip(op.results, op.iter_args):
                self.join(result, region_arg)
            if isinstance(op, WhileOp):   # the condition runs before every trip
                for body_arg, (region_arg, _) in zip(op.body_args, op.iter_args):
                    self.join(body_arg, region_arg)
                self.body(op.cond, loops + (head,))
            self.body(op.body, loops + (head,))
            last = op.body[-1] if op.body else None
            if isinstance(last, YieldOp):
                for (region_arg, _), value in zip(op.iter_args, last.values):
                    self.join(value, region_arg)
            self.loop_end[head] = self.next_pos()
            return
        if isinstance(op, IfOp):
            head = self.next_pos()
            self.access(op.cond, head, head + 1, loops, read=True)
            for arm in (op.then_body, op.else_body):
                last = arm[-1] if arm else None
                if isinstance(last, YieldOp):
                    for result, value in zip(op.results, last.values):
                        self.join(result, value)
                self.body(arm, loops)
            self.next_pos()
            return
        here = self.next_pos()
        if type(op) is not Instruction:   # sync, yield, condition: every use is a read
            for value in op.uses:
                self.access(value, here, here + 1, loops, read=True)
            return
        opcode = op.opcode
        if opcode == "pto.alloc_tile":
            self.define(op, here, loops)
            return
        if opcode in VIEW_OPS:
            self.join(op.results[0], op.ins[0])
            self.access(op.ins[0], here, here + 1, loops, read=True)
            return
        ins, outs = op.ins, op.outs
        in_place = _in_place_reads(op) if self.in_place else ()
        accesses = self.accesses
        for value in op.uses:
            if type(value.type) is not TileBufType:
                continue
            if value in outs:
                read = value in ins
                accesses.append((value.name, here if read else here + 1, here + 1, loops, read))
            else:
                accesses.append((value.name, here, here if value in in_place else here + 1,
                                 loops, True))

    def define(self, inst: Instruction, here: int, loops: tuple[int, ...]) -> None:
        value = inst.result
        if not isinstance(value.type, TileBufType):
            return
        addr = inst.attr("addr")
        fixed = self.constants.get(addr.name) if isinstance(addr, Value) else None
        self.buffers[value.name] = _Buffer(value.name, value.type, here, loops,
                                           len(self.buffers), fixed, inst.loc, inst.line)

    def access(self, value: Value, lo: int, hi: int, loops: tuple[int, ...], *,
               read: bool) -> None:
        if isinstance(value.type, TileBufType):
            self.accesses.append((value.name, lo, hi, loops, read))


def analyse(kernel: Kernel, target: Target, constants: dict[str, int], *,
            in_place: bool = False) -> list[TileLife]:
    """The lifetime of every tile buffer of ``kernel``, in ``alloc_tile`` order.

    ``constants`` maps SSA names of integer ``arith.constant`` results to their values (to
    recognise an ``addr`` the program already fixed). ``in_place`` lets an element-wise
    vector op's result take the bytes of an operand it reads for the last time.
    """
    walk = _Walk(constants, in_place)
    walk.body(kernel.body, ())
    groups = walk.groups()
    for name, lo, hi, loops, read in walk.accesses:
        for buf in groups.get(walk.root(name), ()):
            outside = [head for head in loops if head not in buf.def_loops]
            if outside:  # used on every iteration of a loop the buffer was allocated outside
                buf.cover(outside[0], walk.loop_end[outside[0]])
            else:
                buf.cover(lo, hi)
            if buf.first_access is None or lo < buf.first_access[0]:
                buf.first_access = (lo, read)
    for buf in walk.buffers.values():
        if buf.first_access is None:
            buf.cover(buf.def_pos, buf.def_pos)
        elif buf.first_access[1] and buf.def_loops:  # read before written: carried
            head = buf.def_loops[-1]
            buf.cover(head, walk.loop_end[head])
    for members in groups.values():  # joined buffers stay alive over the whole group's life
        if len(members) > 1:
            lo, hi = min(b.lo for b in members), max(b.hi for b in members)
            for buf in members:
                buf.cover(lo, hi)
    lives: list[TileLife] = []
    for buf in walk.buffers.values():
        size = target.tile_bytes(buf.ty.loc, buf.ty.rows, buf.ty.cols, buf.ty.dtype)
        lives.append(TileLife(buf.name, buf.ty.loc, align_up(size, target.address_alignment),
                              buf.lo, buf.hi, buf.order, buf.fixed, buf.loc, buf.line))
    return lives


#: Vector ops that may write their result over an operand of the same tile type, with the
#: operand positions for which that is safe: each element of the result depends only on
#: the same element of that operand. (PyPTO's MemoryReuse lets such "touching" lifetimes
#: share.) A row-expand op's second operand is read at column 0 of every row it writes, and
#: reductions and width-changing conversions are not in the table at all.
_EACH = (0, 1)
IN_PLACE_OPS: dict[str, tuple[int, ...]] = {
    **{f"pto.{n}": _EACH for n in ("tadd", "tsub", "tmul", "tdiv", "tmax", "tmin")},
    **{f"pto.{n}": (0,) for n in (
        "tadds", "tsubs", "tmuls", "tdivs", "tmaxs", "tmins", "texp", "tlog", "tsqrt", "trsqrt",
        "trecip", "tabs", "tneg", "trelu", "tcvt", "trowexpandadd", "trowexpandsub",
        "trowexpandmul", "trowexpanddiv", "trowexpandexpdif")},
}


def _in_place_reads(inst: Instruction) -> set[Value]:
    """Operands ``inst`` may overwrite with its result (same tile type as the result)."""
    safe = IN_PLACE_OPS.get(inst.opcode, ())
    if not safe or len(inst.outs) != 1 or not isinstance(inst.outs[0].type, TileBufType):
        return set()
    out = inst.outs[0].type
    return {inst.ins[i] for i in safe if i < len(inst.ins) and inst.ins[i].type == out}
