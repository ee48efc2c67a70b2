"""Lowering of the cross-core pipe ops of AIC/AIV kernels (``ptoc.ops.cross_core``) to PTO.

    system.reserve_buffer        %r = pto.reserve_buffer {name, size, location, base} -> i32
    system.import_peer_buffer    %p = pto.import_reserved_buffer {name, peer_func} -> i32
    system.a{ic,iv}_initialize_pipe
                                 pto.a{ic,iv}_initialize_pipe(%c2v, %v2c[, %gm] : i32, i32[,
                                 !pto.ptr<..>]) {[id,] dir_mask, slot_size, slot_num}
    tile.tpush_to_a{iv,ic}       pto.tpush_to_a{iv,ic}(%t : T) {split[, id]}
    tile.tpop_from_a{ic,iv}      %t = pto.tpop_from_a{ic,iv} {split[, id]} -> T  (no alloc_tile:
                                 the tile lives in a ring slot the pipe picks at run time)
    system.tfree_to_a{ic,iv}     pto.tfree_from_a{ic,iv}(%t : T) {split[, id]}
    tile.get_subblock_idx        %i = pto.get_subblock_idx -> index

The ring's ``base`` is its address under the PYPTO planner (AllocateMemoryAddr resolves it)
and ``-1`` (PyPTO's AUTO) under PTOAS, where PlanMemory places it at the bottom of its space;
the GM pipe buffer is the kernel's ``__gm_pipe_buffer`` pointer parameter.
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import DataType, MemorySpace
from ptoc.ir.nodes import ConstInt
from ptoc.pto.model import EnumAttr, Instruction, ScalarType, Value

from ptoc.codegen.errors import CodegenError
from ptoc.codegen.tile_types import tile_buf_type

_I32 = ScalarType(DataType.INT32)


def _pipe_attrs(a) -> tuple:
    attrs = [("split", int(a.get("split") or 0))]
    if a.get("id") is not None:
        attrs.append(("id", int(a["id"])))
    return tuple(attrs)


def _result(em, var, what: str, site):
    if var is None:
        raise CodegenError(f"{what} produces a value; assign it", site.op)
    return var


def _reserve(em, var, a, site):
    var = _result(em, var, "system.reserve_buffer", site)
    base = a.get("base")
    if base is None or base < 0:    # PTOAS: PlanMemory places it (PyPTO's AUTO base)
        base = -1
    space = a.get("location") or MemorySpace.Vec
    value = Value(em.names.var(var), _I32)
    em.emit(Instruction("pto.reserve_buffer", results=(value,), attrs=(
        ("name", a["name"]), ("size", int(a["size"])),
        ("location", EnumAttr("pto.address_space", space.lower)), ("base", int(base))),
        loc=site.op))
    em.scalars[var] = value


def _import(em, var, a, site):
    var = _result(em, var, "system.import_peer_buffer", site)
    value = Value(em.names.var(var), _I32)
    em.emit(Instruction("pto.import_reserved_buffer", results=(value,), attrs=(
        ("name", a["name"]), ("peer_func", a["peer_func"])), loc=site.op))
    em.scalars[var] = value


def _initialize(core: str):
    def lower(em, var, a, site):
        ins = [em.scalar(a[k] if a[k] is not None else ConstInt(0), DataType.INT32, site.op)
               for k in ("c2v_consumer_buf", "v2c_consumer_buf")]
        gm = a.get("gm_slot_buffer")
        if gm is not None:
            ptr = em.ptrs.get(gm)
            if ptr is None:
                raise CodegenError("gm_slot_buffer must be a kernel parameter", site.op,
                                   hint="InjectGMPipeBuffer passes __gm_pipe_buffer down")
            ins.append(ptr)
        attrs = (() if a.get("id") is None else (("id", int(a["id"])),)) + (
            ("dir_mask", int(a["dir_mask"])), ("slot_size", int(a["slot_size"])),
            ("slot_num", int(a["slot_num"])))
        em.emit(Instruction(f"pto.{core}_initialize_pipe", ins=tuple(ins), attrs=attrs,
                            loc=site.op))
    return lower


def _push(opcode: str):
    def lower(em, var, a, site):
        em.emit(Instruction(opcode, ins=(em.tile(a["tile"], site.op),), attrs=_pipe_attrs(a),
                            loc=site.op))
    return lower


def _pop(opcode: str):
    def lower(em, var, a, site):
        var = _result(em, var, opcode, site)
        buf = tile_buf_type(var.type, f"'{var.name}'", site.op)
        buf = dataclasses.replace(buf, v_row=buf.rows, v_col=buf.cols)
        value = Value(em.names.var(var), buf)
        em.saw_spaces.add(buf.loc)
        em.valid_of[value] = (buf.rows, buf.cols)
        em.buffer_key[value] = ("ring", value.name)
        em.emit(Instruction(opcode, results=(value,), attrs=_pipe_attrs(a), loc=site.op))
        em.tiles[var] = value
    return lower


def _subblock(em, var, a, site):
    var = _result(em, var, "tile.get_subblock_idx", site)
    value = Value(em.names.var(var), ScalarType(DataType.INDEX))
    em.emit(Instruction("pto.get_subblock_idx", results=(value,), loc=site.op))
    em.scalars[var] = value


CROSS_CORE_LOWERINGS = {
    "system.reserve_buffer": _reserve, "system.import_peer_buffer": _import,
    "system.aic_initialize_pipe": _initialize("aic"),
    "system.aiv_initialize_pipe": _initialize("aiv"),
    "tile.tpush_to_aiv": _push("pto.tpush_to_aiv"), "tile.tpush_to_aic": _push("pto.tpush_to_aic"),
    "tile.tpop_from_aic": _pop("pto.tpop_from_aic"), "tile.tpop_from_aiv": _pop("pto.tpop_from_aiv"),
    "system.tfree_to_aic": _push("pto.tfree_from_aic"),
    "system.tfree_to_aiv": _push("pto.tfree_from_aiv"),
    "tile.get_subblock_idx": _subblock,
}
