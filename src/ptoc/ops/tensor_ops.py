"""Tensor-level ops (``pl.tensor.*``): whole DDR arrays that ConvertTensorToTileOps lowers.

Each ``register`` call below is the single definition of one op.
"""

from __future__ import annotations

from ptoc.dtypes import DataType
from ptoc.errors import TypeCheckError
from ptoc.ir.types import TensorType
from ptoc.ops import checks
from ptoc.ops.registry import REQUIRED, OpDef, ParamSpec, register


def _pos(name, kind="expr", default=REQUIRED):
    return ParamSpec(name, kind, positional=True, default=default)


def _kw(name, kind="static", default=None, also_positional=False):
    return ParamSpec(name, kind, positional=False, default=default, also_positional=also_positional)


def _matmul_shape(op, a_ty, b_ty, a_trans, b_trans, loc):
    if len(a_ty.shape) != 2 or len(b_ty.shape) != 2:
        raise TypeCheckError(f"pl.{op} operands must be 2-D tensors", loc)
    m, k1 = (a_ty.shape[1], a_ty.shape[0]) if a_trans else a_ty.shape
    k2, n = (b_ty.shape[1], b_ty.shape[0]) if b_trans else b_ty.shape
    if isinstance(k1, int) and isinstance(k2, int) and k1 != k2:
        raise TypeCheckError(
            f"pl.{op} inner dimensions differ: a is {list(a_ty.shape)} and b is "
            f"{list(b_ty.shape)} (K {k1} != {k2})", loc,
            hint="a must be [M, K] and b [K, N] (or pass a_trans=/b_trans=)")
    return m, n


def _infer_matmul(a, loc):
    lhs = checks.tensor("tensor.matmul", "a", a["a"], loc)
    rhs = checks.tensor("tensor.matmul", "b", a["b"], loc)
    acc = checks.accumulator_dtype("tensor.matmul", lhs.dtype, rhs.dtype, loc)
    m, n = _matmul_shape("tensor.matmul", lhs, rhs, a["a_trans"], a["b_trans"], loc)
    out = a["out_dtype"]
    if out is not None and not isinstance(out, DataType):
        raise TypeCheckError(f"pl.tensor.matmul out_dtype must be a dtype, got {out!r}", loc)
    return TensorType((m, n), out or acc)


register(OpDef(
    "tensor.matmul",
    (_pos("a"), _pos("b"), _kw("out_dtype"), _kw("a_trans", default=False),
     _kw("b_trans", default=False)),
    _infer_matmul, level="tensor", dsl_names=("matmul",),
    doc="a @ b on whole tensors; the compiler picks the data path and the L0 tiling."))


def _infer_matmul_acc(a, loc):
    acc = checks.tensor("tensor.matmul_acc", "acc", a["acc"], loc)
    lhs = checks.tensor("tensor.matmul_acc", "a", a["a"], loc)
    rhs = checks.tensor("tensor.matmul_acc", "b", a["b"], loc)
    checks.accumulator_dtype("tensor.matmul_acc", lhs.dtype, rhs.dtype, loc)
    m, n = _matmul_shape("tensor.matmul_acc", lhs, rhs, a["a_trans"], a["b_trans"], loc)
    if not checks.shapes_equal(tuple(acc.shape), (m, n)):
        raise TypeCheckError(f"pl.tensor.matmul_acc accumulator is {list(acc.shape)} but a @ b "
                             f"gives [{m}, {n}]", loc)
    return TensorType(acc.shape, acc.dtype)


register(OpDef(
    "tensor.matmul_acc",
    (_pos("acc"), _pos("a"), _pos("b"), _kw("a_trans", default=False),
     _kw("b_trans", default=False), _kw("init_cond", "any")),
    _infer_matmul_acc, level="tensor", dsl_names=("matmul_acc",), reuses_input=0,
    doc="acc += a @ b on whole tensors."))


def _infer_create(a, loc):
    shape = checks.shape("tensor.create", "shape", a["shape"], loc)
    dtype = checks.dtype_arg("tensor.create", "dtype", a["dtype"], loc)
    return TensorType(shape, dtype)


register(OpDef(
    "tensor.create",
    (_pos("shape", "list"), _kw("dtype", default=REQUIRED, also_positional=True), _kw("init_value"),
     _kw("manual_dep", default=False)),
    _infer_create, level="tensor", dsl_names=("create_tensor",),
    doc="Allocate a DDR tensor in orchestration (or an accumulator seed inside a scope)."))


def _infer_assemble(a, loc):
    target = checks.tensor("tensor.assemble", "target", a["target"], loc)
    src_ty = checks.type_of(a["source"])
    if src_ty is None or not hasattr(src_ty, "shape"):
        raise TypeCheckError("pl.tensor.assemble source must be a Tensor or Tile", loc)
    checks.rank("tensor.assemble", "offset", a["offset"], len(target.shape), loc)
    return TensorType(target.shape, target.dtype)


register(OpDef(
    "tensor.assemble",
    (_pos("target"), _pos("source"), _pos("offset", "list"), _kw("atomic")),
    _infer_assemble, level="tensor", dsl_names=("assemble",), reuses_input=0,
    doc="Write source into target at offset (out[:] = expr sugar); atomic=Add for split-K."))


def _infer_slice(a, loc):
    src = checks.tensor("tensor.slice", "x", a["x"], loc)
    shape = checks.shape("tensor.slice", "shape", a["shape"], loc)
    checks.rank("tensor.slice", "offset", a["offset"], len(src.shape), loc)
    return TensorType(shape, src.dtype)


register(OpDef(
    "tensor.slice", (_pos("x"), _pos("shape", "list"), _pos("offset", "list")),
    _infer_slice, level="tensor", dsl_names=("slice",), view=True,
    doc="A sub-view of a tensor. Shape first, then offset."))


def _elementwise(name, arity):
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


for _name in ("add", "sub", "mul", "div", "maximum", "minimum"):
    register(OpDef(f"tensor.{_name}", (_pos("lhs"), _pos("rhs")), _elementwise(_name, 2),
                   level="tensor", dsl_names=(_name,), doc=f"Elementwise {_name} of tensors."))
for _name in ("adds", "muls"):
    register(OpDef(f"tensor.{_name}", (_pos("lhs"), _pos("rhs")), _elementwise(_name, "s"),
                   level="tensor", dsl_names=(_name,), doc=f"Tensor {_name[:-1]} by a scalar."))
for _name in ("exp", "neg", "relu"):
    register(OpDef(f"tensor.{_name}", (_pos("lhs"),), _elementwise(_name, 1), level="tensor",
                   dsl_names=(_name,), doc=f"Elementwise {_name} of a tensor."))
del _name


def _infer_cast(a, loc):
    src = checks.tensor("tensor.cast", "x", a["x"], loc)
    dtype = checks.dtype_arg("tensor.cast", "target_type", a["target_type"], loc)
    return TensorType(src.shape, dtype)


register(OpDef(
    "tensor.cast", (_pos("x"), _pos("target_type", "static"), _kw("mode", default="round")),
    _infer_cast, level="tensor", dsl_names=("cast",), doc="Convert a tensor's dtype."))
