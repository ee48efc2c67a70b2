"""Elementwise arithmetic and math on Vec tiles and on tensors: binary ops, the scalar-operand
forms and unary ops. Each ``register`` call is one op's single entry."""

from __future__ import annotations

from ptoc.dtypes import MemorySpace
from ptoc.ir.types import TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import pos
from ptoc.ops.registry import OpDef, PtoForm, register

Vec = (MemorySpace.Vec,)


def _tile_binary(name):
    def infer(a, loc):
        lhs = checks.tile(f"tile.{name}", "lhs", a["lhs"], loc)
        rhs = checks.tile(f"tile.{name}", "rhs", a["rhs"], loc)
        checks.space(f"tile.{name}", "lhs", lhs, Vec, loc)
        checks.space(f"tile.{name}", "rhs", rhs, Vec, loc)
        checks.same_shape(f"tile.{name}", lhs, rhs, loc)
        checks.same_dtype(f"tile.{name}", lhs, rhs, loc)
        return TileType(lhs.shape, lhs.dtype, lhs.memory_space or rhs.memory_space)
    return infer


def _tile_scalar_form(name):
    def infer(a, loc):
        lhs = checks.tile(f"tile.{name}", "lhs", a["lhs"], loc)
        checks.space(f"tile.{name}", "lhs", lhs, Vec, loc)
        checks.scalar_like(f"tile.{name}", "rhs", a["rhs"], loc)
        return TileType(lhs.shape, lhs.dtype, lhs.memory_space)
    return infer


def _tile_unary(name):
    def infer(a, loc):
        x = checks.tile(f"tile.{name}", "x", a["x"], loc)
        checks.space(f"tile.{name}", "x", x, Vec, loc)
        return TileType(x.shape, x.dtype, x.memory_space)
    return infer


def _tensor_elementwise(name, arity):
    def infer(a, loc):
        lhs = checks.tensor(f"tensor.{name}", "lhs", a["lhs"], loc)
        if arity == 2:
            rhs = checks.tensor(f"tensor.{name}", "rhs", a["rhs"], loc)
            checks.same_shape(f"tensor.{name}", lhs, rhs, loc)
            checks.same_dtype(f"tensor.{name}", lhs, rhs, loc)
        elif arity == "s":
            checks.scalar_like(f"tensor.{name}", "rhs", a["rhs"], loc)
        return TensorType(lhs.shape, lhs.dtype)
    return infer


_PTO = {"add": "tadd", "sub": "tsub", "mul": "tmul", "div": "tdiv", "maximum": "tmax",
        "minimum": "tmin", "adds": "tadds", "muls": "tmuls", "exp": "texp", "neg": "tneg",
        "relu": "trelu"}

for _name in ("add", "sub", "mul", "div", "maximum", "minimum"):
    register(OpDef(f"tile.{_name}", (pos("lhs"), pos("rhs")), _tile_binary(_name), pipe="V",
                   dsl_names=(_name,), doc=f"Elementwise {_name} of two Vec tiles.",
                   pto=PtoForm(f"pto.{_PTO[_name]}", ("lhs", "rhs"))))
    register(OpDef(f"tensor.{_name}", (pos("lhs"), pos("rhs")), _tensor_elementwise(_name, 2),
                   level="tensor", dsl_names=(_name,), doc=f"Elementwise {_name} of tensors."))

for _name in ("adds", "muls"):
    register(OpDef(f"tile.{_name}", (pos("lhs"), pos("rhs")), _tile_scalar_form(_name), pipe="V",
                   dsl_names=(_name,), doc=f"Elementwise {_name[:-1]} of a Vec tile and a scalar.",
                   pto=PtoForm(f"pto.{_PTO[_name]}", ("lhs", "rhs"))))
    register(OpDef(f"tensor.{_name}", (pos("lhs"), pos("rhs")), _tensor_elementwise(_name, "s"),
                   level="tensor", dsl_names=(_name,), doc=f"Tensor {_name[:-1]} by a scalar."))

for _name in ("exp", "neg", "relu"):
    register(OpDef(f"tile.{_name}", (pos("x"),), _tile_unary(_name), pipe="V", dsl_names=(_name,),
                   doc=f"Elementwise {_name} of a Vec tile.",
                   pto=PtoForm(f"pto.{_PTO[_name]}", ("x",))))
    register(OpDef(f"tensor.{_name}", (pos("lhs"),), _tensor_elementwise(_name, 1), level="tensor",
                   dsl_names=(_name,), doc=f"Elementwise {_name} of a tensor."))

del _name
