"""Parse and print the PTO type and enum-attribute literals (``!pto...<...>``, ``#...<...>``)."""

from __future__ import annotations

import re

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtoError, SourceLoc

from ptoc.pto.model import (
    EnumAttr, PartitionViewType, PtoType, PtrType, ScalarType, TensorViewType, TileBufType,
)

SCALAR_TYPE_NAMES = ("index", "i1", "i8", "i16", "i32", "i64", "ui8", "f16", "bf16", "f32")
_SHAPED = re.compile(r"((?:(?:\d+|\?)x)*)([a-z][a-z0-9]*)")
_TILE_SPACES = {s.lower: s for s in MemorySpace if s is not MemorySpace.DDR}
_LAYOUTS = ("row_major", "col_major", "none_box")
_TILE_KEYS = ("loc", "dtype", "rows", "cols", "v_row", "v_col", "blayout", "slayout", "fractal",
              "pad", "compact")


def dtype_from_name(name: str, where: SourceLoc | None) -> DataType:
    """The DataType spelled ``name`` in PTO (``f32``, ``bf16``, ``i8``, ``index``...)."""
    try:
        return DataType.from_pto(name)
    except KeyError:
        raise PtoError(f"unknown element type '{name}'", where,
                       hint=f"use one of {', '.join(SCALAR_TYPE_NAMES)}") from None


def parse_scalar_type(name: str, where: SourceLoc | None) -> ScalarType:
    return ScalarType(dtype_from_name(name, where))


#: parsed literals by text: a kernel repeats a few tile types hundreds of times, and the
#: types are immutable (failures are never cached: their errors name the use site)
_PARSED: dict[str, PtoType] = {}
_PARSED_MAX = 4096


def parse_type_literal(text: str, where: SourceLoc | None) -> PtoType:
    """Parse a ``!pto.<kind><...>`` literal."""
    found = _PARSED.get(text)
    if found is None:
        found = _parse_type_literal(text, where)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[text] = found
    return found


def _parse_type_literal(text: str, where: SourceLoc | None) -> PtoType:
    m = re.fullmatch(r"!([A-Za-z_][A-Za-z0-9_.]*)(?:<(.*)>)?", text, re.S)
    if not m:
        raise PtoError(f"malformed type '{text}'", where, hint="e.g. !pto.ptr<f32>")
    kind, body = m.group(1), (m.group(2) or "").strip()
    if kind == "pto.ptr":
        return PtrType(dtype_from_name(body, where))
    if kind in ("pto.tensor_view", "pto.partition_tensor_view"):
        sm = _SHAPED.fullmatch(body.replace(" ", ""))
        if not sm or sm.group(2).startswith("x"):  # an empty dim such as 3xx4
            raise PtoError(f"malformed shape in '{text}'", where, hint="write e.g. 128x64xf32 or ?x?xbf16")
        dims = tuple(None if d == "?" else int(d) for d in sm.group(1).split("x") if d)
        dtype = dtype_from_name(sm.group(2), where)
        if kind == "pto.tensor_view":
            return TensorViewType(dims, dtype)
        return PartitionViewType(dims, dtype)
    if kind == "pto.tile_buf":
        return _parse_tile_buf(body, text, where)
    raise PtoError(f"unknown type '!{kind}'", where,
                   hint="use !pto.ptr, !pto.tensor_view, !pto.partition_tensor_view or !pto.tile_buf")


def _int_field(key: str, value: str, where, allow_dynamic: bool = False) -> int | None:
    if allow_dynamic and value == "?":
        return None
    try:
        return int(value)
    except ValueError:
        raise PtoError(f"tile_buf field {key}={value} is not an integer", where,
                       hint=f"write {key}=<int>" + (" or ?" if allow_dynamic else "")) from None


def _parse_tile_buf(body: str, text: str, where) -> TileBufType:
    fields: dict[str, str] = {}
    for part in body.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise PtoError(f"tile_buf field '{part}' must be key=value", where,
                           hint="e.g. !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64>")
        key, value = (s.strip() for s in part.split("=", 1))
        if key not in _TILE_KEYS:
            raise PtoError(f"unknown tile_buf field '{key}'", where,
                           hint=f"fields are {', '.join(_TILE_KEYS)}")
        if key in fields:
            raise PtoError(f"tile_buf field '{key}' given twice", where, hint="remove one")
        fields[key] = value
    for key in ("loc", "dtype", "rows", "cols"):
        if key not in fields:
            raise PtoError(f"tile_buf is missing '{key}'", where,
                           hint="loc, dtype, rows and cols are required")
    loc = _TILE_SPACES.get(fields["loc"])
    if loc is None:
        raise PtoError(f"unknown tile location loc={fields['loc']}", where,
                       hint=f"use one of {', '.join(_TILE_SPACES)}")
    rows = _int_field("rows", fields["rows"], where)
    cols = _int_field("cols", fields["cols"], where)
    for key in ("blayout", "slayout"):
        if key in fields and fields[key] not in _LAYOUTS:
            raise PtoError(f"unknown {key}={fields[key]}", where, hint=f"use one of {', '.join(_LAYOUTS)}")
    return TileBufType(
        loc=loc,
        dtype=dtype_from_name(fields["dtype"], where),
        rows=rows,
        cols=cols,
        v_row=_int_field("v_row", fields["v_row"], where, True) if "v_row" in fields else rows,
        v_col=_int_field("v_col", fields["v_col"], where, True) if "v_col" in fields else cols,
        blayout=fields.get("blayout", "row_major"),
        slayout=fields.get("slayout", "none_box"),
        fractal=_int_field("fractal", fields.get("fractal", "512"), where),
        pad=_int_field("pad", fields.get("pad", "0"), where),
        compact=_int_field("compact", fields["compact"], where) if "compact" in fields else None,
    )


def parse_enum_attr(text: str, where) -> EnumAttr:
    """Parse ``#kind<value>``."""
    m = re.fullmatch(r"#([A-Za-z_][A-Za-z0-9_.]*)<([^<>]*)>", text)
    if not m:
        raise PtoError(f"malformed attribute '{text}'", where, hint="write #dialect.kind<value>")
    return EnumAttr(m.group(1), m.group(2).strip())
