"""Elementwise ops on the simulated core equal a numpy reference of their definition.

Exact ops (+ - * / sqrt recip, max/min, remainders, bitwise, relu family, the carry forms)
must match bit for bit — the reference is numpy's own arithmetic in the element dtype, which
rounds once (integers wrap); NaN, infinities and signed zeros are among the inputs.
Transcendental ops (exp, log, rsqrt) must be within one ulp of float64. Every op is run
once per dtype at a fixed shape, and hypothesis varies shapes, dtypes and values per family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from op_harness import DTYPES, FLOATS, bits_equal, load_lines, name_of, run_kernel, ulps

INTS = ("INT32", "INT16")


def _where_lt(a, b):
    return np.where(a < b, b, a)


def _where_gt(a, b):
    return np.where(b < a, b, a)


def _idiv(a, b):
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def _div(a, b):
    return _idiv(a, b) if a.dtype.kind == "i" else a / b


def _fmod(a, b):
    if a.dtype.kind == "i":
        return (a.astype(np.int64) - _idiv(a, b).astype(np.int64) * b).astype(a.dtype)
    return np.fmod(a, b)


def _rem(a, b):
    r = _fmod(a, b)
    return np.where(((a >= 0) != (b >= 0)) & (r != 0), r + b, r).astype(a.dtype)


@dataclass(frozen=True)
class Case:
    """``call`` spells the op on tiles a_t, b_t, c_t (tmp: a scratch tile, s: the scalar)."""

    name: str
    call: str
    ref: Callable
    dtypes: tuple = FLOATS + INTS
    inputs: int = 2
    scalar: float | None = None
    exact: bool = True
    nonzero_rhs: bool = False
    positive: bool = False


CASES = [
    Case("add", "pl.add(a_t, b_t)", lambda a, b: a + b),
    Case("sub", "pl.sub(a_t, b_t)", lambda a, b: a - b),
    Case("mul", "pl.mul(a_t, b_t)", lambda a, b: a * b),
    Case("div", "pl.div(a_t, b_t)", _div, nonzero_rhs=True),
    Case("maximum", "pl.maximum(a_t, b_t)", _where_lt),
    Case("minimum", "pl.minimum(a_t, b_t)", _where_gt),
    Case("fmod", "pl.fmod(a_t, b_t)", _fmod, nonzero_rhs=True),
    Case("rem", "pl.rem(a_t, b_t, tmp)", _rem, nonzero_rhs=True),
    Case("adds", "pl.add(a_t, s)", lambda a, s: a + s, inputs=1, scalar=1.75),
    Case("subs", "pl.sub(a_t, s)", lambda a, s: a - s, inputs=1, scalar=0.3),
    Case("muls", "pl.mul(a_t, s)", lambda a, s: a * s, inputs=1, scalar=-2.5),
    Case("divs", "pl.div(a_t, s)", _div, inputs=1, scalar=3.0),
    Case("maximums", "pl.maximum(a_t, s)", _where_lt, inputs=1, scalar=0.5),
    Case("minimums", "pl.minimums(a_t, s)", _where_gt, inputs=1, scalar=-0.5),
    Case("fmods", "pl.fmod(a_t, s)", _fmod, inputs=1, scalar=1.5),
    Case("rems", "pl.tile.rems(a_t, s, tmp)", _rem, inputs=1, scalar=-1.5),
    Case("neg", "pl.neg(a_t)", lambda a: -a, inputs=1),
    Case("abs", "pl.abs(a_t)", np.abs, inputs=1),
    Case("relu", "pl.relu(a_t)", lambda a: np.where(a < 0, np.zeros_like(a), a), inputs=1),
    Case("lrelu", "pl.lrelu(a_t, s)", lambda a, s: np.where(a > 0, a, a * s), inputs=1,
         scalar=0.125, dtypes=FLOATS),
    Case("prelu", "pl.prelu(a_t, b_t, tmp)", lambda a, b: np.where(a > 0, a, a * b),
         dtypes=FLOATS),
    Case("recip", "pl.recip(a_t)", lambda a: a.dtype.type(1) / a, inputs=1, dtypes=FLOATS),
    Case("sqrt", "pl.sqrt(a_t)", np.sqrt, inputs=1, dtypes=FLOATS, positive=True),
    Case("addc", "pl.addc(a_t, b_t, c_t)", lambda a, b, c: (a + b) + c, inputs=3),
    Case("subc", "pl.subc(a_t, b_t, c_t)", lambda a, b, c: (a - b) + c, inputs=3),
    Case("addsc", "pl.addsc(a_t, s, b_t)", lambda a, s, b: (a + s) + b, scalar=0.75),
    Case("subsc", "pl.subsc(a_t, s, b_t)", lambda a, s, b: (a - s) + b, scalar=0.75),
    Case("and", "pl.and_(a_t, b_t)", np.bitwise_and, dtypes=INTS),
    Case("or", "pl.or_(a_t, b_t)", np.bitwise_or, dtypes=INTS),
    Case("xor", "pl.xor(a_t, b_t, tmp)", np.bitwise_xor, dtypes=INTS),
    Case("not", "pl.not_(a_t)", np.invert, inputs=1, dtypes=INTS),
    Case("ands", "pl.ands(a_t, s)", np.bitwise_and, inputs=1, scalar=0x5A, dtypes=INTS),
    Case("ors", "pl.ors(a_t, s)", np.bitwise_or, inputs=1, scalar=0x0F, dtypes=INTS),
    Case("xors", "pl.xors(a_t, s, tmp)", np.bitwise_xor, inputs=1, scalar=0x33, dtypes=INTS),
    Case("shls", "pl.shls(a_t, s)", np.left_shift, inputs=1, scalar=3, dtypes=INTS),
    Case("shrs", "pl.shrs(a_t, s)", np.right_shift, inputs=1, scalar=2, dtypes=INTS),
    Case("exp", "pl.exp(a_t)", np.exp, inputs=1, dtypes=FLOATS, exact=False),
    Case("log", "pl.log(a_t)", np.log, inputs=1, dtypes=FLOATS, exact=False, positive=True),
    Case("rsqrt", "pl.rsqrt(a_t)", lambda a: 1.0 / np.sqrt(a), inputs=1, dtypes=FLOATS,
         exact=False, positive=True),
]
BY_NAME = {c.name: c for c in CASES}
SPECIALS = (np.inf, -np.inf, np.nan, 0.0, -0.0)


def make_inputs(case: Case, dtype, shape, rng, specials: bool) -> dict:
    n_tiles = case.inputs if case.scalar is None else max(case.inputs, 1)
    if case.name in ("addsc", "subsc"):
        n_tiles = 2
    arrays = {}
    for i, name in enumerate("abc"[:n_tiles]):
        if np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16":
            x = rng.standard_normal(shape) * 4.0
            if case.positive:
                x = np.abs(x) + 0.01
            if specials and not case.positive:
                flat = x.reshape(-1)
                picks = rng.choice(flat.size, size=min(len(SPECIALS), flat.size), replace=False)
                flat[picks] = SPECIALS[:len(picks)]
        else:
            info = np.iinfo(dtype)
            low, high = max(info.min, -1000), min(info.max, 1000)
            if case.name.startswith("sh"):
                low = 0
            x = rng.integers(low, high, shape)
            if case.name.startswith("sh") and name == "b":
                x = rng.integers(0, 8, shape)
        if i == 1 and case.nonzero_rhs:
            x = np.where(x == 0, 3, x)
        arrays[name] = np.asarray(x).astype(dtype)
    return arrays


def check_case(case: Case, dtype, shape, rng, specials: bool = True) -> None:
    arrays = make_inputs(case, dtype, shape, rng, specials and case.exact)
    body = [load_lines(arrays)]
    scalar = case.scalar
    if scalar is not None:
        scalar = int(scalar) if np.dtype(dtype).kind in "iu" else scalar
        body.append(f"s = {scalar!r}")
    if "tmp" in case.call:
        body.append(f"tmp = pl.create_tile([{shape[0]}, {shape[1]}], dtype=pl.{name_of(dtype)}, "
                    "target_memory=pl.Mem.Vec)")
    body.append(f"r = {case.call}")
    body.append("out = pl.store(r, [0, 0], out)")
    got = run_kernel(arrays, (shape, dtype), "\n".join(body))
    args = list(arrays.values())
    if scalar is not None:
        args.insert(1, np.asarray(scalar).astype(dtype)[()])
    with np.errstate(all="ignore"):
        if case.exact:
            want = np.asarray(case.ref(*args)).astype(dtype)
            assert bits_equal(got, want), f"{case.name} {name_of(dtype)} differs:\n{got}\n{want}"
        else:
            exact = case.ref(*[np.asarray(a).astype(np.float64) for a in args])
            assert ulps(got, exact) <= 1.0, case.name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_op_every_dtype(case):
    rng = np.random.default_rng(11)
    for dtype_name in case.dtypes:
        dtype = DTYPES[dtype_name]
        cols = 32 // np.dtype(dtype).itemsize
        check_case(case, dtype, (8, cols * 2), rng)


FAMILIES = {
    "binary": ("add", "sub", "mul", "div", "maximum", "minimum", "fmod", "rem"),
    "scalar": ("adds", "subs", "muls", "divs", "maximums", "minimums", "fmods", "rems"),
    "unary": ("neg", "abs", "relu", "recip", "sqrt", "lrelu", "prelu"),
    "carry": ("addc", "subc", "addsc", "subsc"),
    "bitwise": ("and", "or", "xor", "not", "ands", "ors", "xors", "shls", "shrs"),
    "math": ("exp", "log", "rsqrt"),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_family_property(family, data):
    case = BY_NAME[data.draw(st.sampled_from(FAMILIES[family]), label="op")]
    dtype = DTYPES[data.draw(st.sampled_from(case.dtypes), label="dtype")]
    per_block = 32 // np.dtype(dtype).itemsize
    rows = data.draw(st.integers(1, 24), label="rows")
    cols = per_block * data.draw(st.integers(1, 4), label="blocks")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    check_case(case, dtype, (rows, cols), np.random.default_rng(seed))


def test_integer_division_by_zero_is_an_error():
    from ptoc.errors import PtocError

    a = np.ones((8, 8), np.int32)
    b = np.zeros((8, 8), np.int32)
    with pytest.raises(PtocError, match="division by zero"):
        run_kernel({"a": a, "b": b}, ((8, 8), np.int32),
                   load_lines({"a": a, "b": b}) + "\nout = pl.store(pl.div(a_t, b_t), [0, 0], out)")
