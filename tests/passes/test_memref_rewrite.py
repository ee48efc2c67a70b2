"""retype_function / Retyper: every definition's new type reaches its uses and its call."""

from __future__ import annotations

import dataclasses

from ptoc.ir.nodes import AssignStmt, Call
from ptoc.ir.types import TileType
from ptoc.language import parse_program
from ptoc.passes import PassContext
from ptoc.passes.init_mem_ref import init_mem_ref
from ptoc.passes.memref_rewrite import Retyper, retype_function, walk_stmts

SRC = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        s: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [32, 64], [32, 0])
        e: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(s)
        o: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(e, [0, 0], out)
        return o
"""


def _kernel():
    with PassContext():
        return init_mem_ref()(parse_program(SRC)).functions[0]


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
    for name in ("t", "s", "e"):
        s = assigns[name]
        assert s.value.type is s.var.type
        before = next(b for b in walk_stmts(fn.body)
                      if isinstance(b, AssignStmt) and b.var.name == name)
        assert s.var.type.memref.size == before.var.type.memref.size + 32
    assert assigns["s"].value.args[0] is assigns["t"].var     # the slice reads the new t
    assert assigns["e"].value.args[0] is assigns["s"].var
    assert retype_function(fn, lambda v: None) is fn          # nothing retyped: same function


def test_a_retyper_with_its_own_call_hook_still_sees_every_call():
    seen = []

    class Sees(Retyper):
        def mutate_call(self, node: Call):
            seen.append(node.op)
            return super().mutate_call(node)

    fn = _kernel()
    out = Sees(_grown).mutate(fn)
    assert {"tile.load", "tile.slice", "tile.exp", "tile.store"} <= set(seen)
    retyped = [s for s in walk_stmts(out.body) if isinstance(s, AssignStmt)
               and isinstance(s.var.type, TileType)]
    assert all(s.value.type is s.var.type for s in retyped)
