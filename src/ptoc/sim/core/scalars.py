"""The scalar unit's arithmetic: the ``arith.*`` integer and float ops, ``cmpi`` and casts
that ``ptoc.pto`` parses.

Why its own module: index arithmetic decides loop bounds, addresses and GM windows, so a
wrong value here is a wrong number everywhere. Integers are exact and must fit 64 bits
(``index``/``i64``, signed or unsigned); division and remainder by zero and results that
overflow 64 bits are errors naming the op, never a Python exception or a silently wrapped
value. Float ops follow IEEE (x / 0 is inf or nan).
"""

from __future__ import annotations

import math
import operator
from typing import Callable

import numpy as np

from ptoc.dtypes import DataType
from ptoc.sim.errors import SimProgramError

_MIN, _MAX = -(1 << 63), 1 << 64      # signed i64 minimum .. unsigned u64 maximum + 1


def _trunc_div(a: int, b: int) -> int:
    """C-style division (rounds toward zero), exact for any integers."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _fdiv(a, b) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(a) / np.float64(b))


INTEGER: dict[str, Callable] = {
    "arith.addi": operator.add, "arith.subi": operator.sub, "arith.muli": operator.mul,
    "arith.divsi": _trunc_div, "arith.divui": operator.floordiv,
    "arith.floordivsi": operator.floordiv, "arith.ceildivsi": lambda a, b: -(-a // b),
    "arith.remsi": lambda a, b: a - b * _trunc_div(a, b), "arith.remui": operator.mod,
    "arith.maxsi": max, "arith.minsi": min,
    "arith.andi": operator.and_, "arith.ori": operator.or_, "arith.xori": operator.xor,
}
FLOAT: dict[str, Callable] = {
    "arith.addf": operator.add, "arith.subf": operator.sub, "arith.mulf": operator.mul,
    "arith.divf": _fdiv, "arith.maximumf": max, "arith.minimumf": min,
}
ARITH = {**INTEGER, **FLOAT}
COMPARE = {
    "eq": operator.eq, "ne": operator.ne, "slt": operator.lt, "sle": operator.le,
    "sgt": operator.gt, "sge": operator.ge, "ult": operator.lt, "ule": operator.le,
    "ugt": operator.gt, "uge": operator.ge,
}
CASTS = ("arith.index_cast", "arith.extsi", "arith.trunci", "arith.sitofp", "arith.fptosi",
         "arith.extf", "arith.truncf")


def arith(code: str, a, b, result: str = "?"):
    """``a <code> b``; see the module doc for what is an error (raised without a location:
    the caller adds the op's)."""
    if type(a) is not int or type(b) is not int:     # the common case needs no checks
        integer = code in INTEGER
        for operand in (a, b):
            if not _is_number(operand, integer):
                kind = "an integer" if integer else "a number"
                raise SimProgramError(f"{code} %{result}: operand {operand!r} is not {kind}",
                                      hint="scalar ops take index/integer (or float) values")
        a, b = _plain(a), _plain(b)      # numpy scalars would wrap silently
    try:
        value = ARITH[code](a, b)
    except ZeroDivisionError:
        raise SimProgramError(f"{code} %{result}: division by zero ({a} by {b})",
                              hint="guard the divisor, or fix the value it is computed from"
                              ) from None
    except ValueError as exc:
        raise SimProgramError(f"{code} %{result} on {a} and {b}: {exc}",
                              hint="check the operands' values") from None
    if type(value) is int and not _MIN <= value < _MAX:
        raise SimProgramError(f"{code} %{result} = {value} from {a} and {b} does not fit a "
                              "64-bit integer",
                              hint="integer scalars are 64-bit; keep index arithmetic in range")
    return value


def compare(predicate: str, a, b, result: str = "?") -> bool:
    """``arith.cmpi`` with one of the ``COMPARE`` predicates."""
    if predicate not in COMPARE:
        raise SimProgramError(f"compare predicate {predicate!r} is not supported",
                              hint=f"use one of {', '.join(COMPARE)}")
    for operand in (a, b):
        if not _is_number(operand, False):
            raise SimProgramError(f"compare %{result}: operand {operand!r} is not a number",
                                  hint="compare index, integer or float values")
    return bool(COMPARE[predicate](a, b))


def cast(code: str, value, result: str = "?", dtype: DataType | None = None):
    """An ``arith`` cast: to an exact integer (float truncates toward zero; a fixed-width
    ``dtype`` wraps) or to a float (rounded to nearest even in ``dtype``)."""
    if not _is_number(value, False):
        raise SimProgramError(f"{code} %{result}: operand {value!r} is not a number",
                              hint="casts convert index, integer or float values")
    if code in ("arith.sitofp", "arith.extf", "arith.truncf"):
        if dtype is None or not dtype.is_float:
            return float(value)
        return float(np.asarray(value, dtype=np.float64).astype(dtype.numpy))
    if not math.isfinite(value):
        raise SimProgramError(f"{code} %{result}: cannot convert {value} to an integer",
                              hint="the float operand must be finite")
    number = int(value)
    if dtype is None or dtype is DataType.INDEX or not dtype.is_int:
        return number
    return int(np.asarray(number, dtype=np.int64).astype(dtype.numpy))


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _is_number(value, integer: bool) -> bool:
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    return isinstance(value, kinds)
