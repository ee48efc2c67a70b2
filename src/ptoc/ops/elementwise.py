"""Elementwise arithmetic, math, activations and bitwise ops on Vec tiles and on tensors:
binary ops, their scalar-operand forms, three-input (carry) forms, partial (valid-region)
forms and unary ops. Each ``register`` call is one op's single entry; the tables below list
one line per op family member.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.dtypes import MemorySpace
from ptoc.ir.types import TensorType, TileType
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import OpDef, PtoForm, TileForm, register

VEC = (MemorySpace.Vec,)
EXACT = "bit-exact: one IEEE rounding to the dtype (integers wrap)"
TRANSCENDENTAL = "float64 evaluation rounded to the dtype: within 1 ulp of float64"


@dataclass(frozen=True)
class Spec:
    """One elementwise op: its PTO opcode, operands by role, dtype kind and numerics."""

    name: str
    pto: str
    tiles: tuple[str, ...]
    scalars: tuple[str, ...] = ()
    scratch: tuple[str, ...] = ()
    optional_scratch: bool = False
    kind: str = "any"
    numerics: str = EXACT
    doc: str = ""
    dsl: str | None = None
    flags: tuple[str, ...] = ()
    scalar_variant: str | None = None
    order: tuple[str, ...] = ()    # parameter order when not tiles, scalars, scratch

    @property
    def params(self) -> tuple[str, ...]:
        return self.order or self.tiles + self.scalars + self.scratch


def _infer(spec: Spec, level: str, params: tuple[str, ...], scalars: tuple[str, ...],
           scratch: tuple[str, ...] = ()):
    """Tile (Vec) or tensor operands of one shape and dtype, scalars, optional scratch."""
    op = f"{level}.{spec.name}"

    def infer(a, loc):
        first = None
        for name in params:
            ty = checks.value(op, level, name, a[name], loc)
            if level == "tile":
                checks.space(op, name, ty, VEC, loc)
            if first is None:
                first = ty
                checks.dtype_kind(op, name, ty.dtype, spec.kind, loc)
            else:
                checks.same_shape(op, first, ty, loc)
                checks.same_dtype(op, first, ty, loc)
        for name in scalars:
            checks.scalar_like(op, name, a[name], loc)
        for name in scratch:
            if a[name] is not None:
                checks.space(op, name, checks.tile(op, name, a[name], loc), VEC, loc)
        if level == "tensor":
            return TensorType(first.shape, first.dtype)
        return TileType(first.shape, first.dtype, first.memory_space,
                        view=checks.with_valid(checks.valid_of(first), first.shape))
    return infer


def _flag_params(spec: Spec) -> tuple:
    return tuple(kw(f, default=False) for f in spec.flags)


def register_tile(spec: Spec) -> None:
    """``tile.<name>``: operands in ``tiles``/``scalars`` order, then the scratch tiles."""
    operands = [pos(n, "expr", None) if spec.optional_scratch and n in spec.scratch else pos(n)
                for n in spec.params]
    register(OpDef(
        f"tile.{spec.name}", tuple(operands) + _flag_params(spec),
        _infer(spec, "tile", spec.tiles, spec.scalars, spec.scratch), pipe="V",
        dsl_names=(spec.dsl or spec.name,), doc=spec.doc, numerics=spec.numerics,
        scalar_variant=spec.scalar_variant and f"tile.{spec.scalar_variant}",
        pto=PtoForm(f"pto.{spec.pto}", spec.params)))


def register_tensor(spec: Spec, params: tuple[str, ...] = ("lhs", "rhs"),
                    scalars: tuple[str, ...] = ()) -> None:
    """``tensor.<name>``: lowered to ``tile.<name>`` with a scratch tile per tile scratch."""
    operands = tuple(pos(n) for n in params + scalars)
    register(OpDef(
        f"tensor.{spec.name}", operands + _flag_params(spec),
        _infer(spec, "tensor", params, scalars), level="tensor", dsl_names=(spec.dsl or spec.name,),
        doc=spec.doc, numerics=spec.numerics,
        scalar_variant=spec.scalar_variant and f"tensor.{spec.scalar_variant}", row_local=True,
        tile_form=TileForm(f"tile.{spec.name}",
                           () if spec.optional_scratch else spec.scratch)))


LR = ("lhs", "rhs")
BINARY = (
    Spec("add", "tadd", LR, doc="lhs + rhs", scalar_variant="adds"),
    Spec("sub", "tsub", LR, doc="lhs - rhs", scalar_variant="subs"),
    Spec("mul", "tmul", LR, doc="lhs * rhs", scalar_variant="muls"),
    Spec("div", "tdiv", LR, doc="lhs / rhs (integers truncate toward zero)",
         flags=("high_precision",), scalar_variant="divs"),
    Spec("maximum", "tmax", LR, doc="max(lhs, rhs): lhs < rhs ? rhs : lhs",
         scalar_variant="maximums"),
    Spec("minimum", "tmin", LR, doc="min(lhs, rhs): rhs < lhs ? rhs : lhs",
         scalar_variant="minimums"),
    Spec("fmod", "tfmod", LR, doc="C fmod: the remainder has the sign of lhs",
         scalar_variant="fmods"),
    Spec("and_", "tand", LR, kind="int", doc="bitwise lhs & rhs", dsl="and_",
         scalar_variant="ands"),
    Spec("or_", "tor", LR, kind="int", doc="bitwise lhs | rhs", dsl="or_", scalar_variant="ors"),
    Spec("shl", "tshl", LR, kind="int", doc="lhs << rhs", scalar_variant="shls"),
    Spec("shr", "tshr", LR, kind="int", doc="lhs >> rhs (arithmetic for signed dtypes)",
         scalar_variant="shrs"),
)
SCALAR = (
    Spec("adds", "tadds", ("lhs",), ("rhs",), doc="lhs + scalar"),
    Spec("subs", "tsubs", ("lhs",), ("rhs",), doc="lhs - scalar"),
    Spec("muls", "tmuls", ("lhs",), ("rhs",), doc="lhs * scalar"),
    Spec("divs", "tdivs", ("lhs",), ("rhs",), doc="lhs / scalar"),
    Spec("fmods", "tfmods", ("lhs",), ("rhs",), doc="C fmod(lhs, scalar)"),
    Spec("ands", "tands", ("lhs",), ("rhs",), kind="int", doc="bitwise lhs & scalar"),
    Spec("ors", "tors", ("lhs",), ("rhs",), kind="int", doc="bitwise lhs | scalar"),
    Spec("shls", "tshls", ("lhs",), ("rhs",), kind="int", doc="lhs << scalar"),
    Spec("shrs", "tshrs", ("lhs",), ("rhs",), kind="int", doc="lhs >> scalar"),
)
UNARY = (
    Spec("neg", "tneg", ("tile",), doc="-x"),
    Spec("abs", "tabs", ("tile",), doc="|x|"),
    Spec("recip", "trecip", ("tile",), kind="float", doc="1 / x", flags=("high_precision",)),
    Spec("sqrt", "tsqrt", ("tile",), kind="float", doc="sqrt(x)"),
    Spec("exp", "texp", ("tile",), kind="float", doc="e^x", numerics=TRANSCENDENTAL),
    Spec("log", "tlog", ("tile",), kind="float", doc="natural log", numerics=TRANSCENDENTAL,
         flags=("high_precision",)),
    Spec("not_", "tnot", ("tile",), kind="int", doc="bitwise ~x", dsl="not_"),
)
TILE_ONLY = (
    Spec("maximums", "tmaxs", ("lhs",), ("rhs",), doc="max(lhs, scalar)"),
    Spec("minimums", "tmins", ("lhs",), ("rhs",), doc="min(lhs, scalar)"),
    Spec("rem", "trem", LR, scratch=("tmp",), doc="remainder with the sign of rhs "
         "(fmod, then + rhs when the signs differ)", scalar_variant="rems"),
    Spec("rems", "trems", ("lhs",), ("rhs",), ("tmp",), doc="rem(lhs, scalar)"),
    Spec("xor", "txor", LR, scratch=("tmp",), kind="int", doc="bitwise lhs ^ rhs",
         scalar_variant="xors"),
    Spec("xors", "txors", ("lhs",), ("rhs",), ("tmp",), kind="int", doc="bitwise lhs ^ scalar"),
    Spec("addc", "taddc", ("lhs", "rhs", "rhs2"), doc="(lhs + rhs) + rhs2, rounded per step"),
    Spec("subc", "tsubc", ("lhs", "rhs", "rhs2"), doc="(lhs - rhs) + rhs2, rounded per step"),
    Spec("addsc", "taddsc", ("lhs", "rhs2"), ("rhs",), order=("lhs", "rhs", "rhs2"),
         doc="(lhs + scalar) + rhs2, rounded per step"),
    Spec("subsc", "tsubsc", ("lhs", "rhs2"), ("rhs",), order=("lhs", "rhs", "rhs2"),
         doc="(lhs - scalar) + rhs2, rounded per step"),
    Spec("relu", "trelu", ("tile",), doc="max(x, 0)"),
    Spec("lrelu", "tlrelu", ("tile",), ("slope",), doc="x > 0 ? x : x * slope"),
    Spec("prelu", "tprelu", ("tile", "slope"), scratch=("tmp",),
         doc="x > 0 ? x : x * slope (per element)"),
    Spec("rsqrt", "trsqrt", ("tile",), scratch=("tmp",), optional_scratch=True, kind="float",
         numerics=TRANSCENDENTAL, doc="1 / sqrt(x); a scratch tile selects the "
         "high-precision PTO form"),
)

for _spec in BINARY:
    register_tile(_spec)
    register_tensor(_spec)
for _spec in SCALAR:
    register_tile(_spec)
    register_tensor(_spec, ("lhs",), ("rhs",))
for _spec in UNARY:
    register_tile(_spec)
    register_tensor(_spec, ("input",))
for _spec in TILE_ONLY:
    register_tile(_spec)

# Tensor forms PyPTO spells through the dispatcher (pl.maximum(tensor, 2.0), pl.rsqrt(tensor),
# pl.relu on a tensor, pl.xor(t1, t2) whose scratch the conversion allocates).
_TILE_ONLY = {spec.name: spec for spec in TILE_ONLY}
register_tensor(_TILE_ONLY["maximums"], ("lhs",), ("rhs",))
register_tensor(_TILE_ONLY["minimums"], ("lhs",), ("rhs",))
register_tensor(_TILE_ONLY["xor"])
register_tensor(_TILE_ONLY["xors"], ("lhs",), ("rhs",))
register_tensor(_TILE_ONLY["relu"], ("input",))
register_tensor(Spec("rsqrt", "trsqrt", ("tile",), kind="float", numerics=TRANSCENDENTAL,
                     doc="1 / sqrt(x)", flags=("high_precision",)), ("input",))


def _part_infer(name):
    op = f"tile.{name}"

    def infer(a, loc):
        x = checks.tile(op, "src0", a["src0"], loc)
        y = checks.tile(op, "src1", a["src1"], loc)
        checks.space(op, "src0", x, VEC, loc)
        checks.space(op, "src1", y, VEC, loc)
        checks.same_dtype(op, x, y, loc)
        shape = tuple(max(p, q) if isinstance(p, int) and isinstance(q, int) else p
                      for p, q in zip(x.shape, y.shape))
        return TileType(shape, x.dtype, x.memory_space)
    return infer


for _name, _pto, _what in (("part_add", "tpartadd", "+"), ("part_mul", "tpartmul", "*"),
                           ("part_max", "tpartmax", "max"), ("part_min", "tpartmin", "min")):
    register(OpDef(
        f"tile.{_name}", (pos("src0"), pos("src1")), _part_infer(_name), pipe="V",
        dsl_names=(_name,), numerics=EXACT, pto=PtoForm(f"pto.{_pto}", ("src0", "src1")),
        doc=f"src0 {_what} src1 where both are valid; the valid one where only one is; else 0"))
    _spec = Spec(_name, _pto, LR, doc=f"lhs {_what} rhs (whole tensors)")
    register_tensor(_spec)

del _spec, _name, _pto, _what
