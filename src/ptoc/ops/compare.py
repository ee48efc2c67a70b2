"""Comparison and selection: ``cmp``/``cmps`` write a packed predicate mask (one bit per
element, 8 per UINT8 byte, rows padded to 32 bytes), ``sel``/``sels`` pick per element by
such a mask. Scalar ``max``/``min`` (of two scalars, not a reduction) live here too. Each
``register`` call is one op's single entry."""

from __future__ import annotations

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.nodes import ConstInt
from ptoc.ir.types import ScalarType, TensorType, TileType, TileView
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import OpDef, PtoForm, TileForm, register

VEC = (MemorySpace.Vec,)
#: PyPTO's cmp_type codes: 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE
CMP_MODES = ("eq", "ne", "lt", "le", "gt", "ge")
MASK_ROW_BYTES = 32   # a mask row is padded to the vector unit's 32-byte block
PACKED = "exact: bit c%8 of byte c//8 of the row is (lhs cmp rhs); NaN compares false (ne true)"


def cmp_mode(op: str, value, loc) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(CMP_MODES):
        return CMP_MODES[value]
    if isinstance(value, str) and value.lower() in CMP_MODES:
        return value.lower()
    raise TypeCheckError(f"pl.{op} cmp_type {value!r} is not a comparison code", loc,
                         hint="use 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT or 5 GE")


def mask_type(shape: tuple, memory_space, valid: tuple | None = None) -> TileType:
    """The packed predicate mask of a [R, C] comparison: UINT8 [R, roundup(ceil(C/8), 32)],
    valid over [R, ceil(C/8)] (over the source's valid rows and bytes when it is narrower)."""
    rows, cols = shape
    if not isinstance(cols, int):
        raise TypeCheckError("a comparison needs a static column count for its mask")
    nbytes = -(-cols // 8)
    width = -(-nbytes // MASK_ROW_BYTES) * MASK_ROW_BYTES
    v_rows, v_cols = valid if valid is not None else (rows, cols)
    v_bytes = -(-v_cols // 8) if isinstance(v_cols, int) else nbytes
    return TileType((rows, width), DataType.UINT8, memory_space,
                    view=TileView((("valid_shape", (v_rows, v_bytes)),)))


def _infer_cmp(scalar: bool):
    op = "tile.cmps" if scalar else "tile.cmp"

    def infer(a, loc):
        x = checks.tile(op, "lhs", a["lhs"], loc)
        checks.space(op, "lhs", x, VEC, loc)
        if scalar:
            checks.scalar_like(op, "rhs", a["rhs"], loc)
        else:
            y = checks.tile(op, "rhs", a["rhs"], loc)
            checks.same_shape(op, x, y, loc)
            checks.same_dtype(op, x, y, loc)
        cmp_mode(op, a["cmp_type"], loc)
        if len(x.shape) != 2:
            raise TypeCheckError(f"pl.{op} expects 2-D tiles", loc)
        return mask_type(tuple(x.shape), x.memory_space, checks.valid_of(x))
    return infer


def _mode_attr(a) -> tuple:
    return (("cmpMode", "pto.cmp", cmp_mode("tile.cmp", a["cmp_type"], None)),)


for _scalar, _name, _pto in ((False, "cmp", "tcmp"), (True, "cmps", "tcmps")):
    register(OpDef(
        f"tile.{_name}", (pos("lhs"), pos("rhs"), kw("cmp_type", default=0, also_positional=True)),
        _infer_cmp(_scalar), pipe="V", dsl_names=(_name,), numerics=PACKED,
        scalar_variant=None if _scalar else "tile.cmps",
        doc="Compare " + ("a tile with a scalar" if _scalar else "two tiles")
            + " into a packed UINT8 predicate mask",
        pto=PtoForm(f"pto.{_pto}", ("lhs", "rhs"), attrs=_mode_attr)))


def _infer_tensor_cmp(a, loc):
    x = checks.tensor("tensor.cmp", "lhs", a["lhs"], loc)
    y = checks.tensor("tensor.cmp", "rhs", a["rhs"], loc)
    checks.same_shape("tensor.cmp", x, y, loc)
    checks.same_dtype("tensor.cmp", x, y, loc)
    cmp_mode("tensor.cmp", a["cmp_type"], loc)
    rows, cols = x.shape
    return TensorType((rows, -(-cols // 8)), DataType.UINT8)


register(OpDef(
    "tensor.cmp", (pos("lhs"), pos("rhs"), kw("cmp_type", default=0, also_positional=True)),
    _infer_tensor_cmp, level="tensor", dsl_names=("cmp",), numerics=PACKED, row_local=True,
    doc="Compare two tensors into a packed UINT8 predicate mask [R, ceil(C/8)]",
    tile_form=TileForm("tile.cmp")))


def _check_mask(op: str, mask: TileType, src: TileType, loc) -> None:
    if mask.dtype not in (DataType.UINT8, DataType.INT8, DataType.INT16, DataType.INT32):
        raise TypeCheckError(f"pl.{op} mask must be an integer tile (the result of pl.cmp), got "
                             f"{mask.dtype.value}", loc, hint="make the mask with pl.cmp/pl.cmps")
    rows = src.shape[0]
    if isinstance(rows, int) and isinstance(mask.shape[0], int) and mask.shape[0] < rows:
        raise TypeCheckError(f"pl.{op} mask has {mask.shape[0]} rows but the tiles have {rows}",
                             loc, hint="compare tiles of the same shape to make the mask")


def _infer_sel(a, loc):
    mask = checks.tile("tile.sel", "mask", a["mask"], loc)
    x = checks.tile("tile.sel", "lhs", a["lhs"], loc)
    y = checks.tile("tile.sel", "rhs", a["rhs"], loc)
    checks.tile("tile.sel", "tmp", a["tmp"], loc)
    for name, ty in (("mask", mask), ("lhs", x), ("rhs", y)):
        checks.space("tile.sel", name, ty, VEC, loc)
    checks.same_shape("tile.sel", x, y, loc)
    checks.same_dtype("tile.sel", x, y, loc)
    _check_mask("tile.sel", mask, x, loc)
    return TileType(x.shape, x.dtype, x.memory_space,
                    view=checks.with_valid(checks.valid_of(x), x.shape))


def _infer_sels(a, loc):
    mask = checks.tile("tile.sels", "mask", a["mask"], loc)
    x = checks.tile("tile.sels", "src", a["src"], loc)
    checks.tile("tile.sels", "tmp", a["tmp"], loc)
    checks.scalar_like("tile.sels", "scalar", a["scalar"], loc)
    _check_mask("tile.sels", mask, x, loc)
    return TileType(x.shape, x.dtype, x.memory_space,
                    view=checks.with_valid(checks.valid_of(x), x.shape))


register(OpDef(
    "tile.sel", (pos("mask"), pos("lhs"), pos("rhs"), pos("tmp")), _infer_sel, pipe="V",
    dsl_names=("sel",), numerics="exact: mask bit (read as one bit stream over the mask's "
    "valid bytes) ? lhs : rhs", forbid_output_alias=(0, 3),
    doc="Per element: lhs where the mask bit is set, else rhs (tmp: TSEL scratch)",
    pto=PtoForm("pto.tsel", ("mask", "lhs", "rhs", "tmp"))))
register(OpDef(
    "tile.sels", (pos("mask"), pos("src"), pos("tmp"), pos("scalar")), _infer_sels, pipe="V",
    dsl_names=("sels",), numerics="exact: mask bit ? src : scalar (converted to the dtype)",
    forbid_output_alias=(0, 2),
    doc="Per element: src where the mask bit is set, else the scalar",
    pto=PtoForm("pto.tsels", ("mask", "src", "tmp", "scalar"),
                scalar_dtype=None)))


def _infer_scalar_extreme(name: str):
    def infer(a, loc):
        for p in ("lhs", "rhs"):
            checks.scalar_like(f"tile.{name}", p, a[p], loc)
        values = (a["lhs"], a["rhs"])
        floats = [v.type.dtype for v in values if v.type.dtype.is_float]
        if floats:
            return ScalarType(floats[0])
        typed = [v.type.dtype for v in values if not isinstance(v, ConstInt)]
        return ScalarType((typed or [values[0].type.dtype])[0])
    return infer


for _name, _what in (("max", "larger"), ("min", "smaller")):
    register(OpDef(
        f"tile.{_name}", (pos("lhs"), pos("rhs")), _infer_scalar_extreme(_name), pipe="S",
        dsl_names=(_name,), numerics="exact (scalar unit)",
        doc=f"The {_what} of two scalars (not a reduction: use row_{_name} / col_{_name})"))

del _scalar, _name, _pto, _what
