"""Row reductions of Vec tiles ([R, C] -> [R, 1]). Each ``register`` call is one op's single
entry."""

from __future__ import annotations

from ptoc.dtypes import MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import TileType
from ptoc.ops import checks
from ptoc.ops.params import pos
from ptoc.ops.registry import OpDef, PtoForm, register

Vec = (MemorySpace.Vec,)


def _row_reduce(name):
    def infer(a, loc):
        x = checks.tile(f"tile.{name}", "x", a["x"], loc)
        tmp = checks.tile(f"tile.{name}", "tmp", a["tmp"], loc)
        checks.space(f"tile.{name}", "x", x, Vec, loc)
        checks.space(f"tile.{name}", "tmp", tmp, Vec, loc)
        checks.same_dtype(f"tile.{name}", x, tmp, loc)
        if len(x.shape) != 2:
            raise TypeCheckError(f"pl.tile.{name} expects a 2-D tile", loc)
        if len(tmp.shape) != 2 or any(isinstance(t, int) and isinstance(s, int) and t < s
                                      for t, s in zip(tmp.shape, x.shape)):
            raise TypeCheckError(
                f"pl.tile.{name} scratch tile {list(tmp.shape)} is smaller than the input "
                f"{list(x.shape)}", loc, hint="pass a full-width scratch from pl.create_tile")
        return TileType((x.shape[0], 1), x.dtype, x.memory_space)
    return infer


for _name in ("row_max", "row_sum"):
    register(OpDef(f"tile.{_name}", (pos("x"), pos("tmp")), _row_reduce(_name), pipe="V",
                   dsl_names=(_name,), forbid_output_alias=(0, 1),
                   doc=f"Reduce each row ({_name[4:]}) to [R, 1]; needs a full-size scratch tile.",
                   pto=PtoForm(f"pto.trow{_name[4:]}", ("x", "tmp"))))

del _name
