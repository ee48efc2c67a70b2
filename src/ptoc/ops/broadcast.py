"""Broadcasts: an [R, 1] row vector across each row or a [1, C] column vector down each column
of a Vec tile (alone or fused with arithmetic), and a scalar across a whole tile. Each
``register`` call is one op's single entry."""

from __future__ import annotations

from ptoc.dtypes import MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.types import TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import pos
from ptoc.ops.registry import OpDef, PtoForm, TileForm, register

VEC = (MemorySpace.Vec,)
EXACT = "bit-exact: one IEEE rounding to the dtype (integers wrap)"
EXPDIF = "x - v rounded to the dtype, then exp in float64 rounded: within 1 ulp"
FUSED = {"add": "x + v", "sub": "x - v", "mul": "x * v", "div": "x / v", "max": "max(x, v)",
         "min": "min(x, v)", "expdif": "exp(x - v)"}


def _vector_check(op: str, name: str, x, vec, axis: int, loc) -> None:
    """``vec`` must be [R, 1] (axis 1, a row vector) or [1, C] (axis 0) matching ``x``."""
    want = (x.shape[0], 1) if axis == 1 else (1, x.shape[1])
    if len(vec.shape) != 2 or not checks.shapes_equal(tuple(vec.shape), want):
        kind = "row" if axis == 1 else "column"
        raise TypeCheckError(
            f"pl.{op} {kind} vector must be {list(want)}, got {list(vec.shape)}", loc,
            hint=f"pass the {list(want)} result of a {kind} reduction of the same tile")


def _infer_tile(op: str, first: str, vec: str, axis: int, fused: bool):
    def infer(a, loc):
        x = checks.tile(op, first, a[first], loc)
        v = checks.tile(op, vec, a[vec], loc)
        checks.space(op, first, x, VEC, loc)
        checks.space(op, vec, v, VEC, loc)
        checks.same_dtype(op, x, v, loc)
        _vector_check(op, vec, x, v, axis, loc)
        if fused and a.get("tmp") is not None:
            checks.space(op, "tmp", checks.tile(op, "tmp", a["tmp"], loc), VEC, loc)
        return TileType(x.shape, x.dtype, x.memory_space,
                        view=checks.with_valid(checks.valid_of(x), x.shape))
    return infer


def _infer_tensor(op: str, first: str, vec: str, axis: int):
    def infer(a, loc):
        x = checks.tensor(op, first, a[first], loc)
        v = checks.tensor(op, vec, a[vec], loc)
        checks.same_dtype(op, x, v, loc)
        _vector_check(op, vec, x, v, axis, loc)
        return TensorType(x.shape, x.dtype)
    return infer


for _axis, _kind, _vec, _pto in ((1, "row", "row_vec", "trowexpand"),
                                 (0, "col", "col_vec", "tcolexpand")):
    _what = "[R, 1] vector across each row" if _axis else "[1, C] vector down each column"
    register(OpDef(
        f"tile.{_kind}_expand", (pos("target"), pos(_vec)),
        _infer_tile(f"tile.{_kind}_expand", "target", _vec, _axis, False), pipe="V",
        dsl_names=(f"{_kind}_expand",), numerics="exact copy",
        doc=f"Broadcast an {_what} to target's shape (target is not read)",
        pto=PtoForm(f"pto.{_pto}", (_vec,))))
    register(OpDef(
        f"tensor.{_kind}_expand", (pos("target"), pos(_vec)),
        _infer_tensor(f"tensor.{_kind}_expand", "target", _vec, _axis), level="tensor",
        dsl_names=(f"{_kind}_expand",), numerics="exact copy", row_local=True,
        doc=f"Broadcast an {_what} to target's shape",
        tile_form=TileForm(f"tile.{_kind}_expand")))
    for _op, _formula in FUSED.items():
        _name = f"{_kind}_expand_{_op}"
        _tmp = _kind == "row" and _op == "add"
        _params = (pos("tile"), pos(_vec)) + ((pos("tmp", "expr", None),) if _tmp else ())
        register(OpDef(
            f"tile.{_name}", _params, _infer_tile(f"tile.{_name}", "tile", _vec, _axis, _tmp),
            pipe="V", dsl_names=(_name,), forbid_output_alias=(1,),
            numerics=EXPDIF if _op == "expdif" else EXACT,
            doc=f"{_formula} with v broadcast from an {_what}",
            pto=PtoForm(f"pto.{_pto}{_op}", ("tile", _vec) + (("tmp",) if _tmp else ()))))
        register(OpDef(
            f"tensor.{_name}", (pos("tensor"), pos(_vec)),
            _infer_tensor(f"tensor.{_name}", "tensor", _vec, _axis), level="tensor",
            dsl_names=(_name,), numerics=EXPDIF if _op == "expdif" else EXACT, row_local=True,
            doc=f"{_formula} with v broadcast from an {_what}",
            tile_form=TileForm(f"tile.{_name}")))


def _infer_tile_expands(a, loc):
    x = checks.tile("tile.expands", "target", a["target"], loc)
    checks.scalar_like("tile.expands", "scalar", a["scalar"], loc)
    return TileType(x.shape, x.dtype, x.memory_space)


def _infer_tensor_expands(a, loc):
    x = checks.tensor("tensor.expands", "target", a["target"], loc)
    checks.scalar_like("tensor.expands", "scalar", a["scalar"], loc)
    return TensorType(x.shape, x.dtype)


register(OpDef(
    "tile.expands", (pos("target"), pos("scalar")), _infer_tile_expands, pipe="V",
    dsl_names=("expands",), numerics="exact: the scalar converted to the dtype",
    doc="A tile of target's shape and dtype filled with the scalar (target is not read)",
    pto=PtoForm("pto.texpands", ("scalar",))))
register(OpDef(
    "tensor.expands", (pos("target"), pos("scalar")), _infer_tensor_expands, level="tensor",
    dsl_names=("expands",), numerics="exact: the scalar converted to the dtype", row_local=True,
    doc="A tensor of target's shape and dtype filled with the scalar",
    tile_form=TileForm("tile.expands")))

del _axis, _kind, _vec, _pto, _what, _op, _formula, _name, _tmp, _params
