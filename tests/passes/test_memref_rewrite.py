"""retype_function / Retyper: every definition's new type reaches its uses and its call."""

from __future__ import annotations

import dataclasses
import os
import sys

from ptoc.ir.nodes import AssignStmt, Call
from ptoc.ir.types import TileType
from ptoc.passes import PassContext
from ptoc.passes.init_mem_ref import init_mem_ref
from ptoc.passes.memref_rewrite import Retyper, retype_function, walk_stmts

sys.path.insert(0, os.path.dirname(__file__))
from _memory_programs import program  # noqa: E402

LINES = [
    "t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 128], [16, 128], "
    "target_memory=pl.Mem.Vec)",
    "a: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(t, t)",
    "m: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.mul(a, t)",
    "o: pl.Tensor[[16, 128], pl.FP32] = pl.tile.store(m, [0, 0], out)",
    "return o",
]


def _kernel():
    prog = program("x: pl.Tensor[[16, 128], pl.FP32], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]",
                   "pl.Tensor[[16, 128], pl.FP32]", LINES)
    with PassContext():
        return init_mem_ref()(prog).functions[0]


def _grown(var):
    """Every tile's MemRef 32 bytes larger (a new type object for each tile)."""
    ty = var.type
    if not isinstance(ty, TileType):
        return None
    return dataclasses.replace(ty, memref=dataclasses.replace(ty.memref, size=ty.memref.size + 32))


def test_each_retyped_call_takes_its_variables_type_and_its_readers_follow():
    fn = _kernel()
    out = retype_function(fn, _grown)
    assigns = {s.var.name: s for s in walk_stmts(out.body) if isinstance(s, AssignStmt)}
    for name in ("t", "a", "m"):
        s = assigns[name]
        assert s.value.type is s.var.type
        before = next(b for b in walk_stmts(fn.body)
                      if isinstance(b, AssignStmt) and b.var.name == name)
        assert s.var.type.memref.size == before.var.type.memref.size + 32
    assert assigns["a"].value.args[0] is assigns["t"].var     # the add reads the new t
    assert assigns["m"].value.args == (assigns["a"].var, assigns["t"].var)
    assert retype_function(fn, lambda v: None) is fn          # nothing retyped: same function


def test_a_retyper_with_its_own_call_hook_still_sees_every_call():
    seen = []

    class Sees(Retyper):
        def mutate_call(self, node: Call):
            seen.append(node.op)
            return super().mutate_call(node)

    fn = _kernel()
    out = Sees(_grown).mutate(fn)
    assert {"tile.load", "tile.add", "tile.mul", "tile.store"} <= set(seen)
    retyped = [s for s in walk_stmts(out.body) if isinstance(s, AssignStmt)
               and isinstance(s.var.type, TileType)]
    assert all(s.value.type is s.var.type for s in retyped)
