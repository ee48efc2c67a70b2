"""Reductions of Vec tiles and tensors: along a row ([R, C] -> [R, 1]) or a column
([R, C] -> [1, C]); sums, products, max/min and the index of the max/min. Tile row reductions
take PyPTO's explicit scratch tile; tensor-level ones take none (ConvertTensorToTileOps
allocates it). Each ``register`` call is one op's single entry."""

from __future__ import annotations

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import pos
from ptoc.ops.registry import OpDef, PtoForm, TileForm, register

VEC = (MemorySpace.Vec,)
SUM_ROW = "bit-exact: left-to-right sum (fp32 accumulator for fp16/bf16)"
SUM_COL = "bit-exact: top-to-bottom sum rounded to the dtype at every step"
PROD = "bit-exact: left-to-right product rounded to the dtype at every step"
EXTREME = "exact: the first value, replaced by a later strictly greater (smaller) one"
ARG = "exact: index (INT32) of the first extreme value"

#: name -> (PTO opcode suffix, axis, takes the tile scratch, result dtype (None: input's), numerics)
REDUCTIONS = {
    "row_sum": ("trowsum", 1, True, None, SUM_ROW),
    "row_max": ("trowmax", 1, True, None, EXTREME),
    "row_min": ("trowmin", 1, True, None, EXTREME),
    "row_prod": ("trowprod", 1, True, None, PROD),
    "row_argmax": ("trowargmax", 1, True, DataType.INT32, ARG),
    "row_argmin": ("trowargmin", 1, True, DataType.INT32, ARG),
    "col_sum": ("tcolsum", 0, False, None, SUM_COL),
    "col_max": ("tcolmax", 0, False, None, EXTREME),
    "col_min": ("tcolmin", 0, False, None, EXTREME),
    "col_prod": ("tcolprod", 0, False, None, PROD),
    "col_argmax": ("tcolargmax", 0, True, DataType.INT32, ARG),
    "col_argmin": ("tcolargmin", 0, True, DataType.INT32, ARG),
}


def _reduced(shape: tuple, axis: int) -> tuple:
    return (shape[0], 1) if axis == 1 else (1, shape[1])


def _infer_tile(name: str, axis: int, tmp: str | None, out_dtype):
    op = f"tile.{name}"

    def infer(a, loc):
        x = checks.tile(op, "tile", a["tile"], loc)
        checks.space(op, "tile", x, VEC, loc)
        if len(x.shape) != 2:
            raise TypeCheckError(f"pl.{op} expects a 2-D tile, got {list(x.shape)}", loc,
                                 hint="reshape the tile to 2-D first")
        if tmp is not None and a[tmp] is not None:
            t = checks.tile(op, tmp, a[tmp], loc)
            checks.space(op, tmp, t, VEC, loc)
            checks.same_dtype(op, x, t, loc)
            if len(t.shape) != 2 or any(isinstance(p, int) and isinstance(q, int) and p < q
                                        for p, q in zip(t.shape, x.shape)):
                raise TypeCheckError(
                    f"pl.{op} scratch tile {list(t.shape)} is smaller than the input "
                    f"{list(x.shape)}", loc, hint="pass a full-size scratch from pl.create_tile")
        valid = checks.valid_of(x)
        shape = _reduced(x.shape, axis)
        view = checks.with_valid(valid and _reduced(valid, axis), shape)
        return TileType(shape, out_dtype or x.dtype, x.memory_space, view=view)
    return infer


def _infer_tensor(name: str, axis: int, out_dtype):
    op = f"tensor.{name}"

    def infer(a, loc):
        x = checks.tensor(op, "input", a["input"], loc)
        if len(x.shape) != 2:
            raise TypeCheckError(f"pl.{op} expects a 2-D tensor, got {list(x.shape)}", loc,
                                 hint="reshape the tensor to 2-D first")
        return TensorType(_reduced(x.shape, axis), out_dtype or x.dtype)
    return infer


for _name, (_pto, _axis, _needs_tmp, _dtype, _numerics) in REDUCTIONS.items():
    _optional_tmp = _name == "col_sum"
    _tmp = "tmp_tile" if _needs_tmp or _optional_tmp else None
    _params = (pos("tile"),) + ((pos("tmp_tile", "expr", None) if _optional_tmp else
                                 pos("tmp_tile"),) if _tmp else ())
    _attrs = (lambda a: (("isBinary", None, True),) if a["tmp_tile"] is not None else ()) \
        if _optional_tmp else None
    register(OpDef(
        f"tile.{_name}", _params, _infer_tile(_name, _axis, _tmp, _dtype), pipe="V",
        dsl_names=(_name,), forbid_output_alias=(0, 1) if _needs_tmp else (),
        numerics=_numerics,
        doc=f"Reduce each {'row' if _axis else 'column'} to one value "
            f"({'[R, 1]' if _axis else '[1, C]'})"
            + ("; takes a full-size scratch tile" if _needs_tmp else ""),
        pto=PtoForm(f"pto.{_pto}", ("tile", "tmp_tile") if _tmp else ("tile",), attrs=_attrs)))
    register(OpDef(
        f"tensor.{_name}", (pos("input"),), _infer_tensor(_name, _axis, _dtype), level="tensor",
        dsl_names=(_name,), numerics=_numerics, row_local=_axis == 1,
        doc=f"Reduce each {'row' if _axis else 'column'} of a tensor",
        tile_form=TileForm(f"tile.{_name}", ("tmp_tile",) if _needs_tmp else ())))

del _name, _pto, _axis, _needs_tmp, _dtype, _numerics, _optional_tmp, _tmp, _params, _attrs
