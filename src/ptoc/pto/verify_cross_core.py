"""Verifier rules of the cross-core pipe ops (one kernel at a time, mixed into the verifier).

Checked: the op runs on the right core kind (``pto.kernel_kind`` cube / vector); a pipe is
set up (``*_initialize_pipe`` with that ``id`` and a ``dir_mask`` covering the direction)
before a push, pop or free uses it; the ring fits its slot size and depth limits; a reserved
ring lies inside its buffer; every popped tile is released by exactly one free of the same
direction and pipe, and a free names a popped tile. Counts that depend on loop trips (as
many pops as pushes) are the simulator's to check.
"""

from __future__ import annotations

from ptoc.backend.cross_core import DIR_C2V, DIR_V2C, SPLIT_CODES, cluster_model
from ptoc.dtypes import DataType, MemorySpace
from ptoc.pto.model import EnumAttr, Instruction, PtrType, ScalarType, TileBufType
from ptoc.pto.ops import CROSS_CORE_ROLES

_CORE_OF_OP = {"pto.tpush_to_aiv": "cube", "pto.tpop_from_aiv": "cube",
               "pto.tfree_from_aiv": "cube", "pto.aic_initialize_pipe": "cube",
               "pto.tpush_to_aic": "vector", "pto.tpop_from_aic": "vector",
               "pto.tfree_from_aic": "vector", "pto.aiv_initialize_pipe": "vector",
               "pto.get_subblock_idx": "vector"}
_DIRECTION = {"c2v": DIR_C2V, "v2c": DIR_V2C}
_I32 = ScalarType(DataType.INT32)


class CrossCoreRules:
    """Mixin of ``_KernelVerifier``: needs ``fail``, ``target`` and ``kernel_kind``."""

    def start_cross_core(self) -> None:
        self.pipes: dict[int, tuple[int, int]] = {}       # id -> (dir_mask, slot_size)
        self.popped: dict[str, tuple[str, int, Instruction]] = {}   # tile -> (op, id, pop)
        self.freed: set[str] = set()

    def finish_cross_core(self) -> None:
        for name, (_, _, pop) in self.popped.items():
            if name not in self.freed:
                free = pop.opcode.replace("tpop", "tfree")
                raise self.fail(pop, f"{pop.opcode}: the popped tile %{name} is never released",
                                f"add {free}(%{name} : ...) after its last reader; without it "
                                "the producer stalls once the ring is full")

    # -- helpers ----------------------------------------------------------------------------
    def _on_core(self, inst: Instruction) -> None:
        want = _CORE_OF_OP.get(inst.opcode)
        if want is None:
            return
        if self.kernel_kind is None:
            raise self.fail(inst, f"{inst.opcode} needs to know which core runs the kernel",
                            f"add attributes {{pto.kernel_kind = #pto.kernel_kind<{want}>}} "
                            "to the func.func")
        if self.kernel_kind != want:
            raise self.fail(inst, f"{inst.opcode} runs on a {want} core, but this kernel is a "
                                  f"{self.kernel_kind} kernel",
                            "move it to the group's other kernel")

    def _int_attr(self, inst, key: str, default=None, low: int | None = None) -> int:
        value = inst.attr(key, default)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(inst, f"{inst.opcode}: attribute '{key}' must be an integer, got "
                                  f"{value!r}", f"write {key} = <integer>")
        if low is not None and value < low:
            raise self.fail(inst, f"{inst.opcode}: {key} = {value} must be >= {low}")
        return value

    def _no_results(self, inst) -> None:
        if inst.results:
            raise self.fail(inst, f"{inst.opcode} does not produce a value",
                            f"remove '%{inst.results[0].name} ='")

    def _one_result(self, inst):
        if len(inst.results) != 1:
            raise self.fail(inst, f"{inst.opcode} defines one value", f"write %x = {inst.opcode} ...")
        return inst.results[0]

    def _pipe_for(self, inst, direction: int) -> tuple[int, int]:
        ident = self._int_attr(inst, "id", 0, low=0)
        found = self.pipes.get(ident)
        name = "cube -> vector" if direction == DIR_C2V else "vector -> cube"
        setup = "pto.aic_initialize_pipe" if self.kernel_kind == "cube" else "pto.aiv_initialize_pipe"
        if found is None or not found[0] & direction:
            what = "is not set up" if found is None else f"has dir_mask = {found[0]}"
            raise self.fail(inst, f"{inst.opcode}: pipe id {ident} {what}, but this op uses its "
                                  f"{name} direction",
                            f"call {setup}(...) {{id = {ident}, dir_mask = <includes {direction}>, "
                            "...} earlier in the kernel")
        return ident, found[1]

    def _split(self, inst) -> int:
        split = self._int_attr(inst, "split")
        if split not in SPLIT_CODES:
            raise self.fail(inst, f"{inst.opcode}: split = {split} is not a pto-isa split code",
                            "use 0 (none), 1 (up-down), 2 (left-right), 3/4 (their odd forms)")
        return split

    def _fits_slot(self, inst, tile, slot_size: int) -> None:
        ty = tile.type
        nbytes = ty.rows * ty.cols * ty.dtype.nbytes
        if nbytes > slot_size:
            raise self.fail(inst, f"{inst.opcode}: tile %{tile.name} ({ty.rows}x{ty.cols} "
                                  f"{ty.dtype.pto_name}, {nbytes} bytes) does not fit the "
                                  f"{slot_size}-byte slot of its pipe",
                            f"set slot_size >= {nbytes} in the pipe's initialize_pipe")

    # -- rules ------------------------------------------------------------------------------
    def rule_reserve_buffer(self, inst: Instruction) -> None:
        res = self._one_result(inst)
        if res.type != _I32:
            raise self.fail(inst, f"pto.reserve_buffer result is {res.type}", "it returns an i32 base")
        name = inst.attr("name")
        if not isinstance(name, str) or not name:
            raise self.fail(inst, "pto.reserve_buffer needs name = \"...\"")
        size = self._int_attr(inst, "size", low=1)
        loc = inst.attr("location")
        spaces = {"vec": MemorySpace.Vec, "mat": MemorySpace.Mat}
        if not (isinstance(loc, EnumAttr) and loc.kind == "pto.address_space"
                and loc.value in spaces):
            raise self.fail(inst, f"pto.reserve_buffer '{name}': location {loc} is not a ring space",
                            "use location = #pto.address_space<vec> (cube -> vector) or <mat>")
        space = spaces[loc.value]
        base = self._int_attr(inst, "base", low=-1)
        align = self.target.address_alignment
        cap = self.target.capacity(space)
        if base == -1:      # AUTO: the memory planner places it (Level 2, PTOAS)
            base = 0
        if base % align:
            raise self.fail(inst, f"pto.reserve_buffer '{name}': base {base} is not {align}-byte "
                                  "aligned", f"use {base - base % align + align}")
        if base + size > cap:
            raise self.fail(inst, f"pto.reserve_buffer '{name}': [{base}, {base + size}) exceeds "
                                  f"the {cap}-byte {loc.value} of {self.target.name}",
                            "lower the ring depth (slot_num) or shrink the tile that crosses")

    def rule_import_reserved_buffer(self, inst: Instruction) -> None:
        res = self._one_result(inst)
        if res.type != _I32:
            raise self.fail(inst, f"pto.import_reserved_buffer result is {res.type}",
                            "it returns the peer's i32 base")
        for key in ("name", "peer_func"):
            if not isinstance(inst.attr(key), str) or not inst.attr(key):
                raise self.fail(inst, f"pto.import_reserved_buffer needs {key} = \"...\"")

    def rule_initialize_pipe(self, inst: Instruction) -> None:
        self._no_results(inst)
        self._on_core(inst)
        model = cluster_model(self.target)
        ident = self._int_attr(inst, "id", 0, low=0)
        dir_mask = self._int_attr(inst, "dir_mask")
        if dir_mask not in (DIR_C2V, DIR_V2C, DIR_C2V | DIR_V2C):
            raise self.fail(inst, f"{inst.opcode}: dir_mask = {dir_mask}",
                            "use 1 (cube -> vector), 2 (vector -> cube) or 3 (both)")
        slot_size = self._int_attr(inst, "slot_size", low=1)
        slot_num = self._int_attr(inst, "slot_num", low=1)
        if slot_num > model.max_slots(dir_mask):
            raise self.fail(inst, f"{inst.opcode}: slot_num = {slot_num} but a pipe with "
                                  f"dir_mask = {dir_mask} has at most {model.max_slots(dir_mask)}",
                            f"use slot_num <= {model.max_slots(dir_mask)}")
        self._int_attr(inst, "gm_offset", 0, low=0)
        want = 3 if model.ring_in_gm else 2
        if len(inst.ins) != want:
            where = "GM" if model.ring_in_gm else "the consumer's buffer"
            raise self.fail(inst, f"{inst.opcode} takes {want} operands on {self.target.name} "
                                  f"(its ring lives in {where}), got {len(inst.ins)}",
                            "write (%c2v_consumer_buf, %v2c_consumer_buf"
                            + (", %gm_slot_buffer : i32, i32, !pto.ptr<...>)" if want == 3
                               else " : i32, i32)"))
        for v in inst.ins[:2]:
            if v.type != _I32:
                raise self.fail(inst, f"{inst.opcode}: consumer buffer %{v.name} is {v.type}",
                                "pass an i32 (a reserve_buffer / import_reserved_buffer result)")
        if want == 3 and not isinstance(inst.ins[2].type, PtrType):
            raise self.fail(inst, f"{inst.opcode}: gm_slot_buffer %{inst.ins[2].name} is "
                                  f"{inst.ins[2].type}", "pass the GM pipe buffer parameter")
        if ident in self.pipes:
            raise self.fail(inst, f"{inst.opcode}: pipe id {ident} is set up twice",
                            "give each pipe its own id")
        self.pipes[ident] = (dir_mask, slot_size)

    def rule_tpush(self, inst: Instruction) -> None:
        self._no_results(inst)
        self._on_core(inst)
        direction = _DIRECTION[CROSS_CORE_ROLES[inst.opcode][0]]
        tile = inst.ins[0] if inst.ins else None
        model = cluster_model(self.target)
        if tile is not None and isinstance(tile.type, TileBufType) \
                and not model.can_push(tile.type.loc, direction):
            spaces = sorted(s.value.lower() for s in model.c2v_push_spaces) \
                if direction == DIR_C2V else ["vec"]
            raise self.fail(inst, f"{inst.opcode}: %{tile.name} is a "
                                  f"{tile.type.loc.value.lower()} tile; on {self.target.name} "
                                  f"this pipe is fed from {' or '.join(spaces)}",
                            f"push a tile from {' or '.join(spaces)}")
        self._split(inst)
        _, slot_size = self._pipe_for(inst, direction)
        self._fits_slot(inst, inst.ins[0], slot_size)

    def rule_tpop(self, inst: Instruction) -> None:
        self._on_core(inst)
        tile = self._one_result(inst)
        direction = _DIRECTION[CROSS_CORE_ROLES[inst.opcode][0]]
        want = cluster_model(self.target).consumer_space(direction)
        if not isinstance(tile.type, TileBufType) or tile.type.loc is not want:
            raise self.fail(inst, f"{inst.opcode}: result %{tile.name} must be a "
                                  f"{want.value.lower()} tile, got {tile.type}",
                            f"type it !pto.tile_buf<loc={want.value.lower()}, ...>")
        self._split(inst)
        ident, slot_size = self._pipe_for(inst, direction)
        self._fits_slot(inst, tile, slot_size)
        self.popped[tile.name] = (inst.opcode, ident, inst)

    def rule_tfree(self, inst: Instruction) -> None:
        self._no_results(inst)
        self._on_core(inst)
        tile = inst.ins[0] if len(inst.ins) == 1 else None
        if tile is None:
            raise self.fail(inst, f"{inst.opcode} names the popped tile it releases",
                            f"write {inst.opcode}(%t : !pto.tile_buf<...>) {{split = .., id = ..}}")
        pop_op = inst.opcode.replace("tfree", "tpop")
        found = self.popped.get(tile.name)
        if found is None or found[0] != pop_op:
            raise self.fail(inst, f"{inst.opcode}: %{tile.name} is not a tile popped by {pop_op}",
                            f"release only {pop_op} results, once each")
        if tile.name in self.freed:
            raise self.fail(inst, f"{inst.opcode}: %{tile.name} is released twice",
                            "remove the second free")
        ident = self._int_attr(inst, "id", 0, low=0)
        if ident != found[1]:
            raise self.fail(inst, f"{inst.opcode}: %{tile.name} was popped from pipe {found[1]} "
                                  f"but is released to pipe {ident}", f"write id = {found[1]}")
        self._split(inst)
        self.freed.add(tile.name)

    def rule_subblock_idx(self, inst: Instruction) -> None:
        self._on_core(inst)
        res = self._one_result(inst)
        if res.type != ScalarType(DataType.INDEX):
            raise self.fail(inst, f"pto.get_subblock_idx result is {res.type}", "it is an index")
