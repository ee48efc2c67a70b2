"""Broadcast of an [R, 1] row vector across each row of a Vec tile, fused with arithmetic.
Each ``register`` call is one op's single entry."""

from __future__ import annotations

from ptoc.dtypes import MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import TileType
from ptoc.ops import checks
from ptoc.ops.params import pos
from ptoc.ops.registry import OpDef, PtoForm, register


def _row_expand(name):
    def infer(a, loc):
        x = checks.tile(f"tile.{name}", "x", a["x"], loc)
        row = checks.tile(f"tile.{name}", "row_vec", a["row_vec"], loc)
        checks.space(f"tile.{name}", "x", x, (MemorySpace.Vec,), loc)
        checks.same_dtype(f"tile.{name}", x, row, loc)
        if len(row.shape) != 2 or row.shape[1] != 1 or (
                isinstance(row.shape[0], int) and isinstance(x.shape[0], int)
                and row.shape[0] != x.shape[0]):
            raise TypeCheckError(
                f"pl.tile.{name} row vector must be [{x.shape[0]}, 1], got {list(row.shape)}", loc,
                hint="pass the [R, 1] result of a row reduction of the same tile")
        return TileType(x.shape, x.dtype, x.memory_space)
    return infer


for _name in ("row_expand_sub", "row_expand_div", "row_expand_expdif"):
    register(OpDef(f"tile.{_name}", (pos("x"), pos("row_vec")), _row_expand(_name), pipe="V",
                   dsl_names=(_name,), forbid_output_alias=(1,),
                   doc="Broadcast an [R, 1] vector across each row (expdif computes exp(x - v)).",
                   pto=PtoForm("pto.trowexpand" + _name.split("_")[-1], ("x", "row_vec"))))

del _name
