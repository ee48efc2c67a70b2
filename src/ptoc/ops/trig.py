"""``sin`` / ``cos`` (FP32): composite ops with no PTO instruction of their own. Each expands,
inside the kernel, into vector primitives, as PyPTO's LowerCompositeOps does:

1. range reduction ``t = x - k*pi`` with ``k`` the nearest integer to ``x/pi`` (cos: to
   ``x/pi + 1/2``, adding pi/2), pi split into five FP32 parts (Cody-Waite) so the product
   ``k * part`` is exact for moderate ``k``;
2. ``sign = (-1)^k`` as ``4*floor(k/2) - 2k + 1``;
3. ``sin(t) = t * P(t^2)`` with a degree-9 odd polynomial (Horner);
4. ``sign * t * P(t^2)``.

The result is therefore exactly the composition of those FP32 primitive steps (each
bit-exact on the simulator); against float64 sin/cos it is within a few ulps for |x| up to
about 1e4 (the test states the bound).
"""

from __future__ import annotations

from typing import Callable

from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import TypeCheckError
from ptoc.ir.nodes import Call, Expr
from ptoc.ir.types import TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import pos
from ptoc.ops.registry import OpDef, TileForm, make_call, register

#: FP32 constants of the recipe (the float32 values PyPTO's lowering uses).
PI_INV = 0.31830988732818603515625
PI_PARTS = (3.140625, 0.0009670257568359375, 6.2771141529083251953125e-7,
            1.21644916362129151821e-10, -1.0290623200529979163e-13)
HALF_PI = (1.57079637050628662109375, -4.371139000189375e-8)
POLY = (2.604926501e-6, -1.980894471e-4, 8.333049340e-3, -1.666665792e-1)
NUMERICS = ("composition of exact FP32 primitives (Cody-Waite + degree-9 polynomial); "
            "a few ulps of float64 for |x| <= 1e4")


def expand(call: Call, let: Callable[[str, Call], Expr]) -> Expr:
    """The primitive ops of ``tile.sin`` / ``tile.cos`` (``let`` binds one call, returns it)."""
    is_cos = call.op == "tile.cos"
    x = call.args[0]

    def op(name: str, hint: str, *args, **kwargs) -> Expr:
        return let(hint, make_call(f"tile.{name}", args, kwargs, loc=call.loc))

    scaled = op("muls", "pi_inv_x", x, PI_INV)
    if is_cos:
        k_int = op("cast", "k_i", op("adds", "k_pre", scaled, 0.5), DataType.INT32, mode="rint")
    else:
        k_int = op("cast", "k_i", scaled, DataType.INT32, mode="round")
    k = op("cast", "k_f", k_int, DataType.FP32, mode="none")
    t = op("sub", "t0", x, op("muls", "k_pi0", k, PI_PARTS[0]))
    t = op("sub", "t1", t, op("muls", "k_pi1", k, PI_PARTS[1]))
    if is_cos:
        t = op("adds", "t1h", t, HALF_PI[0])
    for i, part in enumerate(PI_PARTS[2:], start=2):
        t = op("sub", f"t{i}", t, op("muls", f"k_pi{i}", k, part))
    if is_cos:
        t = op("adds", "t4t", t, HALF_PI[1])
    half = op("muls", "half_k", k, 0.5)
    floor_half = op("cast", "floor_hk_f", op("cast", "floor_hk_i", half, DataType.INT32,
                                              mode="floor"), DataType.FP32, mode="none")
    sign = op("adds", "sign", op("add", "sign_pre", op("muls", "floor_x4", floor_half, 4.0),
                                 op("muls", "neg2_k", k, -2.0)), 1.0)
    t2 = op("mul", "t2sq", t, t)
    p = op("muls", "p_r0", t2, POLY[0])
    for i, coef in enumerate(POLY[1:], start=1):
        p = op("mul", f"p_t2_{i}", op("adds", f"p_r{i}", p, coef), t2)
    p = op("adds", "p_one", p, 1.0)
    return op("mul", "trig", sign, op("mul", "t_p", t, p))


def _infer(level: str, name: str):
    op = f"{level}.{name}"

    def infer(a, loc):
        x = checks.tile(op, "tile", a["tile"], loc) if level == "tile" else \
            checks.tensor(op, "input", a["input"], loc)
        if x.dtype is not DataType.FP32:
            raise TypeCheckError(f"pl.{op} is FP32-only, got {x.dtype.value}", loc,
                                 hint="convert with pl.cast(x, pl.FP32) first")
        if level == "tensor":
            return TensorType(x.shape, x.dtype)
        checks.space(op, "tile", x, (MemorySpace.Vec,), loc)
        return TileType(x.shape, x.dtype, x.memory_space)
    return infer


for _name in ("sin", "cos"):
    register(OpDef(f"tile.{_name}", (pos("tile"),), _infer("tile", _name), pipe="V",
                   dsl_names=(_name,), numerics=NUMERICS, composite=expand,
                   doc=f"{_name}(x), expanded into vector primitives (FP32)"))
    register(OpDef(f"tensor.{_name}", (pos("input"),), _infer("tensor", _name), level="tensor",
                   dsl_names=(_name,), numerics=NUMERICS, tile_form=TileForm(f"tile.{_name}"),
                   row_local=True,
                   doc=f"{_name}(x) of a tensor (FP32)"))

del _name
