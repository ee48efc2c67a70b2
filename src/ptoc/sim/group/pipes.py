"""Cross-core pipes of a simulated core group: the ring of each pipe and what every pipe op
issues (``CorePort``), then the links that make the protocol a set of happens-before edges.

Why issue-time plus link-time: each core's scalar unit walks its own kernel and emits its
own instruction stream, one core after the other. Everything a push, pop or free *does*
(which slot, which bytes, which copy) follows from that core's own program order and its
pipe setup, so it is fixed at issue. What it *waits for* is on another core: the k-th pop of
a consumer waits for the k-th push of every producer; the k-th push waits, once the ring is
full, for every consumer's free of pop k - slot_num. Those partners are only known when all
cores are issued, so ``PipeNetwork.link`` adds them as ``Instr.deps`` (``-1`` when the
partner is never issued: the scheduler then reports the deadlock, never hangs).

Ring layout (``ptoc.backend.cross_core``): slot ``tag = k % slot_num`` at
``base + tag * slot_size``. A tile crosses as its full [R, C] block, row-major; with split
1 (up-down) lane L owns rows [L*R/2, (L+1)*R/2), with split 2 (left-right) columns. On a2a3
the slots are in the GM pipe buffer and a pop copies its part into its own ring (reserved
buffer) in UB/L1; on a5 the producer writes straight into each consumer's ring and the pop
is zero-copy.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace

import numpy as np

from ptoc.backend.cross_core import (
    DIR_C2V, DIR_V2C, SPLIT_LEFT_RIGHT, SPLIT_NONE, SPLIT_UP_DOWN, ClusterModel,
)
from ptoc.dtypes import MemorySpace
from ptoc.errors import PipeProtocolError
from ptoc.pto.model import EnumAttr, Instruction, Kernel, TileBufType, walk
from ptoc.pto.ops import CROSS_CORE_ROLES

from ptoc.sim.core.memory import BufferMemory, MemoryAccessError, TileRef
from ptoc.sim.errors import SimProgramError
from ptoc.sim.instr import WORK, Access, Instr

_DIRECTIONS = {"c2v": DIR_C2V, "v2c": DIR_V2C}
_NAMES = {DIR_C2V: "cube -> vector", DIR_V2C: "vector -> cube"}
_SPACES = {"vec": MemorySpace.Vec, "mat": MemorySpace.Mat}


@dataclass(frozen=True)
class PipeSetup:
    """One core's ``*_initialize_pipe``: the ring geometry and where its slots live."""

    ident: int
    dir_mask: int
    slot_size: int
    slot_num: int
    c2v_base: int
    v2c_base: int
    gm: np.ndarray | None
    gm_name: str | None
    gm_offset: int
    where: str
    gm_space: str | None = None     # the GM allocation holding the ring (default: the param)
    gm_origin: int = 0              # byte offset of the bound region in that allocation

    def gm_ring_offset(self, direction: int) -> int:
        """Byte offset of a direction's ring in the GM pipe buffer: cube -> vector first, the
        vector -> cube ring after it when the pipe goes both ways [S] (01-tpush_tpop.md)."""
        both = self.dir_mask == DIR_C2V | DIR_V2C
        return self.gm_offset + (self.slot_num * self.slot_size
                                 if direction == DIR_V2C and both else 0)

    def same_geometry(self, other: "PipeSetup") -> bool:
        return (self.dir_mask, self.slot_size, self.slot_num, self.gm_offset) == \
            (other.dir_mask, other.slot_size, other.slot_num, other.gm_offset)


@dataclass
class Ring:
    """One direction of one pipe: every core's pushes, pops and frees in issue order."""

    ident: int
    direction: int
    pushes: dict[int, list[Instr]] = field(default_factory=dict)
    pops: dict[int, list[Instr]] = field(default_factory=dict)
    frees: dict[int, list[Instr]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"pipe {self.ident} ({_NAMES[self.direction]})"


def reserved_buffers(kernel: Kernel) -> dict[str, tuple[MemorySpace, int, int]]:
    """name -> (space, base, size) of every ``pto.reserve_buffer`` of ``kernel``."""
    found = {}
    for op in walk(kernel.body):
        if isinstance(op, Instruction) and op.opcode == "pto.reserve_buffer":
            loc = op.attr("location")
            space = _SPACES.get(loc.value) if isinstance(loc, EnumAttr) else None
            found[op.attr("name")] = (space, op.attr("base"), op.attr("size"))
    return found


class PipeNetwork:
    """The pipes of one core group: core 0 is the AIC, cores 1.. its AIV lanes."""

    def __init__(self, model: ClusterModel, profile, memories: list[BufferMemory],
                 units: list[str], kernels: list[Kernel]):
        self.model = model
        self.profile = profile
        self.memories = memories
        self.units = units
        self.lanes = len(units) - 1
        self.kernels = {k.name: k for k in kernels}
        self.setups: dict[tuple[int, int], PipeSetup] = {}
        self.rings: dict[tuple[int, int], Ring] = {}
        self.reserved: dict[int, dict[int, int]] = {}     # core -> base -> size
        self.unfreed: dict[tuple[int, int, int], deque] = {}

    def port(self, core: int) -> "CorePort":
        return CorePort(self, core)

    def ring(self, ident: int, direction: int) -> Ring:
        return self.rings.setdefault((ident, direction), Ring(ident, direction))

    def producers(self, direction: int) -> list[int]:
        return [0] if direction == DIR_C2V else list(range(1, self.lanes + 1))

    def consumers(self, direction: int) -> list[int]:
        return list(range(1, self.lanes + 1)) if direction == DIR_C2V else [0]

    # -- link ------------------------------------------------------------------------------
    def link(self) -> None:
        """Check both sides set each used pipe up alike, then add the protocol's deps."""
        for ring in self.rings.values():
            self._check_setups(ring)
            slots = self._setup_of(ring).slot_num
            for c in self.consumers(ring.direction):
                for k, pop in enumerate(ring.pops.get(c, ())):
                    pop.deps, notes = self._partners(ring.pushes, self.producers(ring.direction), k)
                    pop.wait_note = f"waits for push #{k} of {ring.name} from {notes}"
            for p in self.producers(ring.direction):
                for k, push in enumerate(ring.pushes.get(p, ())):
                    if k >= slots:
                        push.deps, notes = self._partners(ring.frees,
                                                          self.consumers(ring.direction),
                                                          k - slots)
                        push.wait_note = (f"waits for slot {k % slots} of {ring.name} to be "
                                          f"freed by {notes} (their free #{k - slots})")

    def _partners(self, table: dict[int, list[Instr]], cores: list[int], k: int):
        deps = tuple(table[c][k].seq if k < len(table.get(c, ())) else -1 for c in cores)
        return deps, ", ".join(self.units[c] for c in cores)

    def _setup_of(self, ring: Ring) -> PipeSetup:
        for core in range(len(self.units)):
            found = self.setups.get((core, ring.ident))
            if found is not None:
                return found
        raise AssertionError("a ring exists only after a setup")  # pragma: no cover

    def _check_setups(self, ring: Ring) -> None:
        first = self._setup_of(ring)
        for core in self.producers(ring.direction) + self.consumers(ring.direction):
            mine = self.setups.get((core, ring.ident))
            if mine is None:
                raise PipeProtocolError(
                    f"{ring.name} is used, but {self.units[core]} never sets it up "
                    f"(its kernel has no initialize_pipe with id = {ring.ident})",
                    hint=f"set the pipe up on both sides with the same dir_mask, slot_size "
                         f"and slot_num ({first.where})")
            if not mine.same_geometry(first):
                raise PipeProtocolError(
                    f"{ring.name} is set up differently on the two sides: {first.where} says "
                    f"dir_mask={first.dir_mask} slot_size={first.slot_size} "
                    f"slot_num={first.slot_num}, {mine.where} says dir_mask={mine.dir_mask} "
                    f"slot_size={mine.slot_size} slot_num={mine.slot_num}",
                    hint="give both initialize_pipe ops the same attributes")

    def check_balanced(self, timeline_of) -> None:
        """After a complete run: every pushed tile was popped by each consumer, every popped
        tile freed (a leftover tile or slot is a lost message on hardware).
        ``timeline_of()`` builds the timeline attached to the error."""
        for ring in self.rings.values():
            for p in self.producers(ring.direction):
                pushed = ring.pushes.get(p, [])
                for c in self.consumers(ring.direction):
                    popped = ring.pops.get(c, [])
                    if len(popped) != len(pushed):
                        extra = pushed[len(popped)] if len(pushed) > len(popped) else None
                        where = extra.pto_loc if extra is not None else None
                        raise PipeProtocolError(
                            f"{ring.name}: {self.units[p]} pushed {len(pushed)} tile(s) but "
                            f"{self.units[c]} popped {len(popped)}", where,
                            hint="every push needs exactly one pop on each consumer core; "
                                 "check loop trip counts on both sides", timeline=timeline_of())
            for c in self.consumers(ring.direction):
                popped, freed = ring.pops.get(c, []), ring.frees.get(c, [])
                if len(freed) != len(popped):
                    raise PipeProtocolError(
                        f"{ring.name}: {self.units[c]} popped {len(popped)} tile(s) but freed "
                        f"{len(freed)}", popped[len(freed)].pto_loc if len(popped) > len(freed)
                        else None,
                        hint="free each popped tile once, after its last reader",
                        timeline=timeline_of())


class CorePort:
    """What one core's scalar unit calls for a cross-core op (``ScalarUnit.port``)."""

    def __init__(self, net: PipeNetwork, core: int):
        self.net = net
        self.core = core

    def issue(self, unit, op: Instruction) -> None:
        code = op.opcode
        if code == "pto.reserve_buffer":
            self._reserve(unit, op)
        elif code == "pto.import_reserved_buffer":
            self._import(unit, op)
        elif code.endswith("_initialize_pipe"):
            self._initialize(unit, op)
        else:
            direction, role = CROSS_CORE_ROLES[code]
            getattr(self, f"_{role}")(unit, op, _DIRECTIONS[direction])

    # -- setup ------------------------------------------------------------------------------
    def _reserve(self, unit, op) -> None:
        name, base, size = op.attr("name"), op.attr("base"), op.attr("size")
        space = _SPACES.get(getattr(op.attr("location"), "value", None))
        if space is None or not isinstance(base, int) or not isinstance(size, int):
            raise SimProgramError(f"pto.reserve_buffer '{name}' needs location (vec or mat), "
                                  "base and size", unit._loc(op),
                                  hint="write {name = \"..\", size = N, location = "
                                       "#pto.address_space<vec>, base = B}")
        cap = unit.memory.capacities.get(space, 0)
        if base < 0 or base + size > cap:
            raise MemoryAccessError(f"pto.reserve_buffer '{name}' spans [{base}, {base + size}) "
                                    f"of {space.value}, which holds {cap} bytes", unit._loc(op),
                                    hint="lower slot_num or shrink the tile that crosses")
        self.net.reserved.setdefault(self.core, {})[base] = size
        unit._set(op.result, base)

    def _import(self, unit, op) -> None:
        name, peer = op.attr("name"), op.attr("peer_func")
        kernel = self.net.kernels.get(peer)
        found = reserved_buffers(kernel).get(name) if kernel is not None else None
        if found is None:
            raise SimProgramError(
                f"pto.import_reserved_buffer: kernel @{peer} of this group reserves no buffer "
                f"'{name}'", unit._loc(op),
                hint=f"kernels of the group: {', '.join('@' + k for k in self.net.kernels)}")
        unit._set(op.result, found[1])

    def _initialize(self, unit, op) -> None:
        ident = op.attr("id", 0)
        c2v, v2c = (unit._int(v, "consumer buffer") for v in op.ins[:2])
        gm = gm_name = None
        if self.net.model.ring_in_gm:
            if len(op.ins) < 3:
                raise SimProgramError(f"{op.opcode} on {self.net.model.target} needs the GM "
                                      "pipe buffer operand", unit._loc(op),
                                      hint="pass the kernel's GM pipe buffer parameter")
            gm, gm_name = unit._get(op.ins[2]), op.ins[2].name
            if not isinstance(gm, np.ndarray):
                raise SimProgramError(f"{op.opcode}: %{gm_name} is not a GM tensor",
                                      unit._loc(op), hint="pass a !pto.ptr kernel parameter")
        setup = PipeSetup(ident, op.attr("dir_mask"), op.attr("slot_size"),
                          op.attr("slot_num"), c2v, v2c, gm, gm_name, op.attr("gm_offset", 0),
                          f"{self.net.units[self.core]} {unit.filename} line {op.line}")
        region = unit.regions.get(gm_name) if gm is not None else None
        if region is not None:   # name the ring's bytes by the GM allocation they lie in
            setup = replace(setup, gm=region.alloc.data, gm_space=region.name,
                            gm_origin=region.offset * region.dtype.nbytes)
        if (self.core, ident) in self.net.setups:
            raise SimProgramError(f"{op.opcode}: pipe id {ident} is set up twice",
                                  unit._loc(op), hint="initialize each pipe once per kernel")
        mine = DIR_C2V if self.core else DIR_V2C      # the direction this core consumes
        if setup.dir_mask & mine:
            base = c2v if mine == DIR_C2V else v2c
            size = self.net.reserved.get(self.core, {}).get(base)
            need = setup.slot_num * setup.slot_size
            if size is None or size < need:
                raise SimProgramError(
                    f"{op.opcode}: the {_NAMES[mine]} ring needs {need} bytes "
                    f"({setup.slot_num} x {setup.slot_size}) of this core's reserved buffer at "
                    f"{base}, " + ("which is not reserved" if size is None
                                   else f"which holds {size}"), unit._loc(op),
                    hint="pass a pto.reserve_buffer result of at least slot_num * slot_size bytes")
        if gm is not None:
            end = setup.gm_ring_offset(DIR_V2C) + setup.slot_num * setup.slot_size
            if end > gm.nbytes:
                raise MemoryAccessError(
                    f"{op.opcode}: pipe {ident} needs {end} bytes of the GM pipe buffer "
                    f"%{gm_name}, which holds {gm.nbytes}", unit._loc(op),
                    hint=f"allocate at least {end} bytes for %{gm_name}")
        self.net.setups[(self.core, ident)] = setup

    def _setup(self, unit, op, direction: int) -> PipeSetup:
        ident = op.attr("id", 0)
        setup = self.net.setups.get((self.core, ident))
        if setup is None or not setup.dir_mask & direction:
            raise SimProgramError(f"{op.opcode}: pipe {ident} ({_NAMES[direction]}) is not set "
                                  "up on this core", unit._loc(op),
                                  hint="call the core's initialize_pipe for it first")
        return setup

    # -- geometry ---------------------------------------------------------------------------
    def _part(self, unit, op, split: int, lane: int, full: tuple[int, int]):
        """(row0, col0, rows, cols) of ``lane``'s part of a ``full`` tile under ``split``."""
        rows, cols = full
        if split == SPLIT_NONE:
            return 0, 0, rows, cols
        if split == SPLIT_UP_DOWN:
            return lane * rows // self.net.lanes, 0, rows // self.net.lanes, cols
        if split == SPLIT_LEFT_RIGHT:
            return 0, lane * cols // self.net.lanes, rows, cols // self.net.lanes
        raise SimProgramError(f"{op.opcode}: split = {split} (an odd split) is not simulated",
                              unit._loc(op), hint="use split 0, 1 or 2 on an even split axis")

    def _full(self, unit, op, split: int, part: tuple[int, int]) -> tuple[int, int]:
        """The full tile a lane's ``part`` belongs to."""
        rows, cols = part
        if split == SPLIT_UP_DOWN:
            return rows * self.net.lanes, cols
        if split == SPLIT_LEFT_RIGHT:
            return rows, cols * self.net.lanes
        self._part(unit, op, split, 0, part)       # rejects the odd codes
        return rows, cols

    @staticmethod
    def _block(buffer: str, offset: int, block: tuple[int, int, int, int], full_cols: int,
               eb: int) -> Access:
        """The access of a (row0, col0, rows, cols) block of a row-major slot ``full_cols``
        wide at byte ``offset``: its bounding bytes plus the rectangle, so two lanes' column
        halves of one slot do not look like overlapping byte ranges."""
        r0, c0, r, c = block
        lo = offset + (r0 * full_cols + c0) * eb
        hi = offset + ((r0 + r - 1) * full_cols + c0 + c) * eb
        return Access(buffer, lo, hi, (("ring", offset, full_cols * eb), r0, r0 + r, c0, c0 + c))

    def _slot_view(self, unit, op, raw: np.ndarray, offset: int, tile, full):
        """The slot at ``offset`` of the byte array ``raw`` viewed as the [R, C] full tile."""
        nbytes = full[0] * full[1] * tile.dtype.nbytes
        if offset + nbytes > raw.size:
            raise MemoryAccessError(f"{op.opcode}: a {full[0]}x{full[1]} "
                                    f"{tile.dtype.pto_name} slot at byte {offset} overruns its "
                                    f"{raw.size}-byte ring", unit._loc(op),
                                    hint="raise slot_size / the ring buffer, or shrink the tile")
        return raw[offset:offset + nbytes].view(tile.dtype.numpy).reshape(full)

    def _ring_slot(self, setup: PipeSetup, direction: int, tag: int, consumer: int):
        """(byte array, buffer name, byte offset) of slot ``tag``: GM on a2a3, else the
        consumer core's reserved ring."""
        if self.net.model.ring_in_gm:
            return (setup.gm.view(np.uint8), f"GM %{setup.gm_space or setup.gm_name}",
                    setup.gm_origin + setup.gm_ring_offset(direction) + tag * setup.slot_size)
        space = self.net.model.consumer_space(direction)
        memory = self.net.memories[consumer]
        base = setup.c2v_base if direction == DIR_C2V else setup.v2c_base
        return memory.buffers[space], memory.buffer_name(space), base + tag * setup.slot_size

    # -- protocol ops -----------------------------------------------------------------------
    def _push(self, unit, op, direction: int) -> None:
        setup = self._setup(unit, op, direction)
        tile = unit._tile(op.ins[0])
        if not self.net.model.can_push(tile.space, direction):
            raise SimProgramError(f"{op.opcode}: %{tile.name} is in {tile.space.value}, which "
                                  f"no {_NAMES[direction]} pipe of {self.net.model.target} "
                                  "reads from", unit._loc(op),
                                  hint="push an Acc tile (cube -> vector) or a Vec tile "
                                       "(vector -> cube)")
        split = op.attr("split", 0)
        ring = self.net.ring(setup.ident, direction)
        pushes = ring.pushes.setdefault(self.core, [])
        tag = len(pushes) % setup.slot_num
        eb = tile.dtype.nbytes
        sinks, writes = [], []
        if direction == DIR_C2V and not self.net.model.ring_in_gm:
            # a5: each AIV lane's part goes straight into that lane's own ring
            for consumer in self.net.consumers(direction):
                r0, c0, r, c = self._part(unit, op, split, consumer - 1, (tile.rows, tile.cols))
                raw, buffer, offset = self._ring_slot(setup, direction, tag, consumer)
                slot = self._slot_view(unit, op, raw, offset, tile, (r, c))
                sinks.append((slot, (slice(r0, r0 + r), slice(c0, c0 + c))))
                writes.append(Access(buffer, offset, offset + r * c * eb))
        else:
            # one full block: the GM slot (a2a3), or the AIC's L1 ring (a5 vector -> cube)
            if direction == DIR_C2V:
                full = (tile.rows, tile.cols)
                r0, c0, r, c = (0, 0) + full
            else:
                full = self._full(unit, op, split, (tile.rows, tile.cols))
                r0, c0, r, c = self._part(unit, op, split, self.core - 1, full)
            raw, buffer, offset = self._ring_slot(setup, direction, tag, 0)
            slot = self._slot_view(unit, op, raw, offset, tile, full)
            sinks.append((slot[r0:r0 + r, c0:c0 + c], (slice(None), slice(None))))
            writes.append(self._block(buffer, offset, (r0, c0, r, c), full[1], eb))
        src_space, dst_space = self.net.model.push_route(tile.space, direction)
        if tile.space is MemorySpace.Acc:
            cost = unit._cost("drain_cycles", dst_space, tile.valid_rows, tile.valid_cols,
                              tile.dtype)
        else:
            cost = unit._cost("transfer_cycles", src_space, dst_space, tile.nbytes)
        src = unit.memory.view(tile)

        def commit(payload):
            for sink, part in sinks:
                sink[...] = payload[part]
        ins = unit._emit(op, self.net.model.push_pipe(tile.space), WORK, op.opcode, cost,
                         reads=(unit._access(tile, 0, 0, tile.rows, tile.cols),),
                         writes=tuple(writes), read=src.copy, commit=commit)
        pushes.append(ins)

    def _pop(self, unit, op, direction: int) -> None:
        setup = self._setup(unit, op, direction)
        ty = op.result.type
        if not isinstance(ty, TileBufType):
            raise SimProgramError(f"{op.opcode} result %{op.result.name} is not a tile",
                                  unit._loc(op), hint="type it !pto.tile_buf<...>")
        split = op.attr("split", 0)
        ring = self.net.ring(setup.ident, direction)
        pops = ring.pops.setdefault(self.core, [])
        tag = len(pops) % setup.slot_num
        space = self.net.model.consumer_space(direction)
        base = (setup.c2v_base if direction == DIR_C2V else setup.v2c_base) \
            + tag * setup.slot_size
        nbytes = ty.rows * ty.cols * ty.dtype.nbytes
        tile = TileRef(op.result.name, space, base, ty.rows, ty.cols, ty.dtype,
                       ty.v_row or ty.rows, ty.v_col or ty.cols, nbytes,
                       buffer=unit.memory.buffer_name(space))
        unit.memory.check_tile(tile, unit._loc(op))
        pipe = self.net.model.pop_pipe(space)
        route = self.net.model.pop_route(direction)
        if route is None:                      # zero copy: the producer wrote it in place
            ins = unit._emit(op, pipe, WORK, op.opcode, 0.0)
        else:
            lane = self.core - 1 if direction == DIR_C2V else 0
            full = self._full(unit, op, split, (ty.rows, ty.cols)) if direction == DIR_C2V \
                else (ty.rows, ty.cols)
            r0, c0, r, c = self._part(unit, op, split, lane, full) if direction == DIR_C2V \
                else (0, 0) + full
            raw, buffer, offset = self._ring_slot(setup, direction, tag, self.core)
            slot = self._slot_view(unit, op, raw, offset, tile, full)[r0:r0 + r, c0:c0 + c]
            dst = unit.memory.view(tile)

            def commit(payload):
                dst[...] = payload
            ins = unit._emit(op, pipe, WORK, op.opcode,
                             unit._cost("transfer_cycles", route[0], route[1], nbytes),
                             reads=(self._block(buffer, offset, (r0, c0, r, c), full[1],
                                                ty.dtype.nbytes),),
                             writes=(unit._access(tile, 0, 0, ty.rows, ty.cols),),
                             read=slot.copy, commit=commit)
        pops.append(ins)
        self.net.unfreed.setdefault((self.core, setup.ident, direction), deque()).append(tile)
        unit._set(op.result, tile)

    def _free(self, unit, op, direction: int) -> None:
        setup = self._setup(unit, op, direction)
        tile = unit._tile(op.ins[0])
        live = self.net.unfreed.get((self.core, setup.ident, direction))
        oldest = live[0] if live else None
        if oldest is None or oldest != tile:
            what = f"the oldest unreleased tile is %{oldest.name}" if oldest is not None \
                else "no popped tile is unreleased"
            raise PipeProtocolError(f"{op.opcode}: releases %{tile.name} but {what}; slots "
                                    "are released in the order they were popped",
                                    unit._loc(op), hint="free popped tiles first-in first-out")
        live.popleft()
        ring = self.net.ring(setup.ident, direction)
        ins = unit._emit(op, self.net.model.free_pipe(tile.space), WORK, op.opcode, 0.0,
                         reads=(unit._access(tile, 0, 0, tile.rows, tile.cols),))
        ring.frees.setdefault(self.core, []).append(ins)
