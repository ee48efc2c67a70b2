"""The PTO op table: one entry per opcode, the data every consumer asks about an op.

Each ``OpInfo`` says how the op is written (``syntax``), what its operands are (``ins`` /
``outs`` roles with allowed memory spaces), which pipe runs it, which attributes it takes,
and which verifier rule checks its shapes and dtypes. The simulator and the sync-insertion
pass use ``op_info(opcode).pipe`` (or ``pipe_of(inst, target)`` for moves, whose pipe depends
on the source and destination spaces), ``reads(inst)`` and ``writes(inst)``.

Syntax kinds (see ``ptoc.pto.parser`` for the grammar):
    dps               pto.X ins(%a, %b : T, T) outs(%c : T) [{attrs}]
    constant          %c = arith.constant 0 : index
    binary            %r = arith.addi %a, %b : index
    cmpi              %r = arith.cmpi slt, %a, %b : index       (result i1)
    select            %r = arith.select %cond, %a, %b : index
    cast              %r = arith.index_cast %a : i64 to index
    make_tensor_view  %v = pto.make_tensor_view %p, shape = [...], strides = [...] {layout = #pto.layout<nd>} : T
    partition_view    %w = pto.partition_view %v, offsets = [...], sizes = [...] : T -> T2
    alloc_tile        %t = pto.alloc_tile [addr = %a] [valid_row = %r] [valid_col = %c] [row_stride = %s] : T
    treshape          %v = pto.treshape %t : T -> T2              (PTOAS path; see below)
    subview           %v = pto.subview %t[%row, %col] sizes [R, C] : T -> T2
    call              [%r =] pto.X[(%a, %b : T, T)] [{attrs}] [-> T]   (cross-core pipe ops)
    sync              pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>] / pto.barrier <PIPE_ALL>
    for / while / if / yield  scf.for, scf.while (+ scf.condition), scf.if, scf.yield

Vector ops (all on PIPE_V, operands in Vec) are listed in the "vector" section below, one
entry each with its operand roles and a one-line meaning; what each computes bit for bit is
``ptoc.sim.core.vector``. Scratch operands are named ``tmp`` (optional ones may be left out).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from ptoc.backend.pipes import Pipe
from ptoc.dtypes import MemorySpace
from ptoc.errors import PtoError

from ptoc.pto.model import Instruction, PartitionViewType, TensorViewType, TileBufType, Value

_M, _V, _L, _R, _A, _B = (MemorySpace.Mat, MemorySpace.Vec, MemorySpace.Left, MemorySpace.Right,
                          MemorySpace.Acc, MemorySpace.Bias)


@dataclass(frozen=True)
class Role:
    """One operand slot: ``kind`` is ``tile``, ``view`` (a GM partition view), ``tensor`` (a
    GM tensor view) or ``scalar``;
    ``locs`` are the memory spaces a tile may be in (empty: any space). ``optional`` slots
    come last and may be left out (``trsqrt ins(a)`` or ``ins(a, tmp)``)."""

    name: str
    kind: str
    locs: frozenset[MemorySpace] = frozenset()
    optional: bool = False


@dataclass(frozen=True)
class OpInfo:
    """Static facts about one opcode.

    Fields:
        opcode: full name (``pto.tmatmul.acc``).
        syntax: how it is written (module docstring).
        category: ``scalar`` | ``descriptor`` | ``move`` | ``cube`` | ``vector`` |
            ``scalar_mem`` (one element read/written by the scalar unit, which first waits for
            every pipe to drain) | ``sync`` | ``control``.
        ins / outs: operand roles of ``Instruction.ins`` / ``Instruction.outs``.
        pipe: the pipe it runs on; ``None`` for moves, whose pipe comes from the target's
            data-path table (``pipe_of``). Scalar, descriptor and control ops run on PIPE_S.
        attrs: names of the optional trailing attributes it accepts.
        rule: name of the verifier's shape/dtype rule.
        doc: one line of semantics.
    """

    opcode: str
    syntax: str
    category: str
    ins: tuple[Role, ...] = ()
    outs: tuple[Role, ...] = ()
    pipe: Pipe | None = Pipe.PIPE_S
    attrs: tuple[str, ...] = ()
    rule: str = ""
    doc: str = ""

    def reads(self, inst: Instruction) -> tuple[Value, ...]:
        """Buffer operands the op reads (tiles and GM views among ``ins``)."""
        return tuple(v for v in inst.ins if _is_buffer(v))

    def writes(self, inst: Instruction) -> tuple[Value, ...]:
        """Buffer operands the op writes: its ``outs``, and the tile a pop defines."""
        written = tuple(v for v in inst.outs if _is_buffer(v))
        if self.category == "cross_core":
            written += tuple(v for v in inst.results if isinstance(v.type, TileBufType))
        return written


def _is_buffer(v: Value) -> bool:
    return isinstance(v.type, (TileBufType, PartitionViewType, TensorViewType))


def _t(name: str, *locs: MemorySpace) -> Role:
    return Role(name, "tile", frozenset(locs))


def _view(name: str) -> Role:
    return Role(name, "view")


def _s(name: str) -> Role:
    return Role(name, "scalar")


_TABLE: dict[str, OpInfo] = {}


def _add(info: OpInfo) -> None:
    _TABLE[info.opcode] = info


# -- scalar (arith) ops: index math on the scalar unit ----------------------------------------
_add(OpInfo("arith.constant", "constant", "scalar", rule="constant",
            doc="an integer, float or boolean constant"))
for _name, _doc in [
    ("addi", "a + b"), ("subi", "a - b"), ("muli", "a * b"),
    ("divsi", "a / b truncated toward zero"), ("divui", "unsigned a / b"),
    ("floordivsi", "a / b rounded toward minus infinity"),
    ("ceildivsi", "a / b rounded toward plus infinity"),
    ("remsi", "a % b with the sign of a"), ("remui", "unsigned a % b"),
    ("maxsi", "max(a, b)"), ("minsi", "min(a, b)"),
    ("andi", "bitwise and"), ("ori", "bitwise or"), ("xori", "bitwise xor"),
    ("addf", "float a + b"), ("subf", "float a - b"), ("mulf", "float a * b"),
    ("divf", "float a / b"), ("maximumf", "float max"), ("minimumf", "float min"),
]:
    _add(OpInfo(f"arith.{_name}", "binary", "scalar", ins=(_s("lhs"), _s("rhs")),
                rule="binary", doc=_doc))
_add(OpInfo("arith.cmpi", "cmpi", "scalar", ins=(_s("lhs"), _s("rhs")), rule="cmpi",
            doc="integer comparison with a predicate; result i1"))
_add(OpInfo("arith.select", "select", "scalar", ins=(_s("cond"), _s("a"), _s("b")),
            rule="select", doc="cond ? a : b"))
for _name in ("index_cast", "extsi", "trunci", "sitofp", "fptosi", "extf", "truncf"):
    _add(OpInfo(f"arith.{_name}", "cast", "scalar", ins=(_s("src"),), rule="cast",
                doc="scalar type conversion"))

CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")

# -- descriptors -----------------------------------------------------------------------------
_add(OpInfo("pto.make_tensor_view", "make_tensor_view", "descriptor", ins=(_s("ptr"),),
            attrs=("layout",), rule="make_tensor_view",
            doc="describe a GM tensor (pointer, shape, strides, layout)"))
_add(OpInfo("pto.partition_view", "partition_view", "descriptor", ins=(_s("source"),),
            rule="partition_view", doc="a static window of a tensor view at offsets"))
_add(OpInfo("pto.alloc_tile", "alloc_tile", "descriptor", rule="alloc_tile",
            doc="declare a tile buffer (optional address, valid sizes)"))

# -- in-place views of a tile (Level 2 under the PTOAS planner, which places tiles itself) ----
# A view names bytes of its source's buffer with another tile type; it moves no data. With
# addresses baked (PYPTO planner) the same thing is a second alloc_tile at the source's
# address, and ptoc.pto.planner rewrites each view into exactly that once it has placed the
# source, so Level 3 and everything after planning (sync, simulator) see only alloc_tiles.
_add(OpInfo("pto.treshape", "treshape", "descriptor", ins=(_t("source"),), rule="treshape",
            doc="the source's bytes under the result type (reshape, transpose_view, "
                "reinterpret_view, narrowed valid shape)"))
_add(OpInfo("pto.subview", "subview", "descriptor", ins=(_t("source"), _s("row"), _s("col")),
            attrs=("sizes",), rule="subview",
            doc="the [R, C] window of the source at (row, col), in place"))
VIEW_OPS = ("pto.treshape", "pto.subview")

# -- moves (pipe from the target's data-path table) ------------------------------------------
_add(OpInfo("pto.tload", "dps", "move", ins=(_view("src"),), outs=(_t("dst", _M, _V),),
            pipe=None, rule="tload", doc="GM window -> Mat (ND->NZ) or Vec tile (MTE2)"))
_add(OpInfo("pto.tstore", "dps", "move", ins=(_t("src", _A, _V, _M),), outs=(_view("dst"),),
            pipe=None, attrs=("atomicType",), rule="tstore",
            doc="tile -> GM window: Acc on FIX (with f32->bf16/f16 cast), Vec on MTE3; "
                "{atomicType = #pto<atomic_type atomic_add>} adds into GM instead"))
_add(OpInfo("pto.textract", "dps", "move",
            ins=(_t("src", _M, _A), _s("row"), _s("col")), outs=(_t("dst", _L, _R, _M),),
            pipe=None, rule="textract",
            doc="dst[i, j] = src[row + i, col + j]: Mat -> Left/Right (MTE1), Acc -> Mat (FIX)"))
_add(OpInfo("pto.tmov", "dps", "move", ins=(_t("src"),), outs=(_t("dst"),), pipe=None,
            rule="tmov", doc="whole-tile move along any legal data path"))
_add(OpInfo("pto.tinsert", "dps", "move", ins=(_t("src", _A, _V), _s("row"), _s("col")),
            outs=(_t("dst", _M),), pipe=None, rule="tinsert",
            doc="dst[row + i, col + j] = src[i, j]: Acc -> window of a Mat tile (FIX)"))

# -- cube ---------------------------------------------------------------------------------------
_add(OpInfo("pto.tmatmul", "dps", "cube", ins=(_t("lhs", _L), _t("rhs", _R)),
            outs=(_t("dst", _A),), pipe=Pipe.PIPE_M, rule="matmul", doc="C = A * B"))
_add(OpInfo("pto.tmatmul.acc", "dps", "cube", ins=(_t("acc", _A), _t("lhs", _L), _t("rhs", _R)),
            outs=(_t("dst", _A),), pipe=Pipe.PIPE_M, rule="matmul_acc", doc="C = C_in + A * B"))
_add(OpInfo("pto.tmatmul.bias", "dps", "cube", ins=(_t("lhs", _L), _t("rhs", _R), _t("bias", _B)),
            outs=(_t("dst", _A),), pipe=Pipe.PIPE_M, rule="matmul_bias",
            doc="C = A * B + broadcast_rows(bias)"))

for _suffix, _ins, _rule, _doc in (
        ("", (_t("lhs", _L), _t("rhs", _R)), "matmul", "C[1, N] = A[1, K] * B"),
        (".acc", (_t("acc", _A), _t("lhs", _L), _t("rhs", _R)), "matmul_acc", "C = C_in + A * B"),
        (".bias", (_t("lhs", _L), _t("rhs", _R), _t("bias", _B)), "matmul_bias",
         "C = A * B + bias")):
    _add(OpInfo(f"pto.tgemv{_suffix}", "dps", "cube", ins=_ins, outs=(_t("dst", _A),),
                pipe=Pipe.PIPE_M, attrs=("accPhase",), rule=_rule,
                doc=f"matrix-vector: {_doc} (one row of A)"))

# -- vector (all on PIPE_V, operands in Vec; semantics: ptoc.sim.core.vector) -----------------------
ROUND_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")
CMP_MODES = ("eq", "ne", "lt", "le", "gt", "ge")


def _vec(opcode: str, ins: tuple[Role, ...], rule: str, doc: str, attrs: tuple[str, ...] = (),
         syntax: str = "dps"):
    _add(OpInfo(f"pto.{opcode}", syntax, "vector", ins=ins, outs=(_t("dst", _V),),
                pipe=Pipe.PIPE_V, attrs=attrs, rule=rule, doc=doc))


def _tmp(optional: bool = False) -> Role:
    return Role("tmp", "tile", frozenset((_V,)), optional)


_A1, _B1, _S1 = _t("a", _V), _t("b", _V), _s("scalar")
for _name, _doc in [("tadd", "a + b"), ("tsub", "a - b"), ("tmul", "a * b"), ("tdiv", "a / b"),
                    ("tmax", "max(a, b)"), ("tmin", "min(a, b)"), ("tfmod", "fmod(a, b)"),
                    ("tand", "a & b"), ("tor", "a | b"), ("tshl", "a << b"), ("tshr", "a >> b")]:
    _vec(_name, (_A1, _B1), "elementwise", _doc)
for _name, _doc in [("trem", "a mod b (sign of b)"), ("txor", "a ^ b"),
                    ("tprelu", "a > 0 ? a : a * b")]:
    _vec(_name, (_A1, _B1, _tmp()), "elementwise", _doc)
for _name, _doc in [("taddc", "a + b + c"), ("tsubc", "a - b + c")]:
    _vec(_name, (_A1, _B1, _t("c", _V)), "elementwise", _doc)
for _name, _doc in [("tpartadd", "+"), ("tpartmul", "*"), ("tpartmax", "max"),
                    ("tpartmin", "min")]:
    _vec(_name, (_A1, _B1), "partial", f"a {_doc} b where both are valid, else the valid one")
for _name, _doc in [("tadds", "a + s"), ("tsubs", "a - s"), ("tmuls", "a * s"),
                    ("tdivs", "a / s"), ("tmaxs", "max(a, s)"), ("tmins", "min(a, s)"),
                    ("tfmods", "fmod(a, s)"), ("tands", "a & s"), ("tors", "a | s"),
                    ("tshls", "a << s"), ("tshrs", "a >> s"), ("tlrelu", "a > 0 ? a : a * s")]:
    _vec(_name, (_A1, _S1), "elementwise", _doc)
for _name, _doc in [("trems", "a mod s (sign of s)"), ("txors", "a ^ s")]:
    _vec(_name, (_A1, _S1, _tmp()), "elementwise", _doc)
for _name, _doc in [("taddsc", "a + s + b"), ("tsubsc", "a - s + b")]:
    _vec(_name, (_A1, _S1, _B1), "elementwise", _doc)
for _name, _doc in [("texp", "exp(a)"), ("tlog", "log(a)"), ("tsqrt", "sqrt(a)"),
                    ("trecip", "1 / a"), ("tabs", "|a|"), ("tneg", "-a"), ("trelu", "max(a, 0)"),
                    ("tnot", "~a")]:
    _vec(_name, (_A1,), "elementwise", _doc)
_vec("trsqrt", (_A1, _tmp(optional=True)), "elementwise", "1 / sqrt(a)")
_vec("texpands", (_S1,), "fill", "dst[:, :] = scalar")
_vec("tcvt", (_A1,), "convert", "dst = convert(a) with rounding mode rmode", attrs=("rmode",))
for _name, _doc in [("trowmax", "max"), ("trowmin", "min"), ("trowsum", "sum"),
                    ("trowprod", "prod")]:
    _vec(_name, (_A1, _tmp()), "row_reduce", f"dst[r, 0] = {_doc}(a[r, :])")
for _name, _doc in [("trowargmax", "argmax"), ("trowargmin", "argmin")]:
    _vec(_name, (_A1, _tmp()), "arg_reduce", f"dst[r, 0] = {_doc}(a[r, :])")
_vec("tcolsum", (_A1, _tmp(optional=True)), "col_reduce", "dst[0, c] = sum(a[:, c])",
     attrs=("isBinary",))
for _name, _doc in [("tcolmax", "max"), ("tcolmin", "min"), ("tcolprod", "prod")]:
    _vec(_name, (_A1,), "col_reduce", f"dst[0, c] = {_doc}(a[:, c])")
for _name, _doc in [("tcolargmax", "argmax"), ("tcolargmin", "argmin")]:
    _vec(_name, (_A1, _tmp()), "arg_reduce", f"dst[0, c] = {_doc}(a[:, c])")
_vec("trowexpand", (_t("b", _V),), "row_broadcast", "dst[r, c] = b[r, 0]")
_vec("tcolexpand", (_t("b", _V),), "col_broadcast", "dst[r, c] = b[0, c]")
for _name, _doc in [("add", "a + b"), ("sub", "a - b"), ("mul", "a * b"), ("div", "a / b"),
                    ("max", "max(a, b)"), ("min", "min(a, b)"), ("expdif", "exp(a - b)")]:
    _vec(f"trowexpand{_name}", (_A1, _B1), "row_expand", f"dst[r, c] = {_doc}[r, 0]")
    _vec(f"tcolexpand{_name}", (_A1, _B1), "col_expand", f"dst[r, c] = {_doc}[0, c]")
_vec("tcmp", (_A1, _B1), "compare", "packed mask: bit c%8 of byte c//8 = (a cmp b)",
     attrs=("cmpMode",))
_vec("tcmps", (_A1, _S1), "compare", "packed mask: bit c%8 of byte c//8 = (a cmp s)",
     attrs=("cmpMode",))
_vec("tsel", (_t("mask", _V), _A1, _B1, _tmp()), "tile_select", "dst = mask bit ? a : b")
_vec("tsels", (_t("mask", _V), _A1, _tmp(), _S1), "tile_select", "dst = mask bit ? a : s")
_vec("tfillpad", (_A1,), "fillpad", "dst = a in a's valid region, the dst pad value elsewhere")
_vec("tfillpad_expand", (_A1,), "fillpad",
     "dst = a in a's valid region, the dst pad value elsewhere (dst may be larger)")
_vec("ttri", (_S1,), "fill", "dst[r, c] = 1 inside the triangle c <= r + s (c >= r + s upper)",
     attrs=("upperOrLower",))
_vec("tci", (_S1,), "fill", "dst[0, c] = s + c (s - c descending)", attrs=("descending",))
_vec("tconcat", (_A1, _B1), "concat", "dst = [a | b] (columns)")
_vec("ttrans", (_A1, _tmp()), "transpose", "dst = a^T")

# -- element access by the scalar unit (it waits for every pipe to drain first) ------------------
_add(OpInfo("pto.tgetval", "dps", "scalar_mem", ins=(_t("tile", _V, _M), _s("offset")),
            rule="getval", doc="%v = tile[offset] (flat element offset)"))
_add(OpInfo("pto.tsetval", "dps", "scalar_mem", ins=(_s("offset"), _s("value")),
            outs=(_t("tile", _V, _M),), rule="setval", doc="tile[offset] = value"))
_add(OpInfo("pto.load_scalar", "dps", "scalar_mem", ins=(Role("view", "tensor"), _s("offset")),
            rule="getval", doc="%v = gm[offset] (flat element offset of a tensor view)"))
_add(OpInfo("pto.store_scalar", "dps", "scalar_mem", ins=(_s("offset"), _s("value")),
            outs=(Role("view", "tensor"),), rule="setval", doc="gm[offset] = value"))

# -- cross-core pipes (one AIC and its AIVs; ptoc.backend.cross_core) ---------------------------------
# Pipes come from the target's cluster model (``cross_core_pipe``); popped tiles live in the
# consumer's ring slot, which is chosen at run time (round robin), so they have no alloc_tile.
_add(OpInfo("pto.reserve_buffer", "call", "cross_core", attrs=("name", "size", "location", "base"),
            rule="reserve_buffer",
            doc="reserve [base, base + size) of this core's UB/L1 for a pipe's ring (consumer)"))
_add(OpInfo("pto.import_reserved_buffer", "call", "cross_core", attrs=("name", "peer_func"),
            rule="import_reserved_buffer",
            doc="the base address the peer kernel reserved under name (producer)"))
for _core in ("aic", "aiv"):
    _add(OpInfo(f"pto.{_core}_initialize_pipe", "call", "cross_core",
                ins=(_s("c2v_consumer_buf"), _s("v2c_consumer_buf"), Role("gm_slot_buffer", "ptr")),
                attrs=("id", "dir_mask", "slot_size", "slot_num", "gm_offset"),
                rule="initialize_pipe",
                doc="bind pipe id's rings (GM buffer on a2a3, consumer buffers on a5)"))
_add(OpInfo("pto.tpush_to_aiv", "call", "cross_core", ins=(_t("tile", _A, _M),), pipe=None,
            attrs=("split", "id"), rule="tpush",
            doc="AIC: wait for a free slot, copy the tile into it, signal the AIVs"))
_add(OpInfo("pto.tpush_to_aic", "call", "cross_core", ins=(_t("tile", _V),), pipe=None,
            attrs=("split", "id"), rule="tpush",
            doc="AIV: wait for a free slot, copy this lane's part into it, signal the AIC"))
_add(OpInfo("pto.tpop_from_aic", "call", "cross_core", pipe=None, attrs=("split", "id"),
            rule="tpop", doc="AIV: wait for the AIC's next tile; the result is this lane's part"))
_add(OpInfo("pto.tpop_from_aiv", "call", "cross_core", pipe=None, attrs=("split", "id"),
            rule="tpop", doc="AIC: wait for the AIVs' next tile (their parts joined)"))
_add(OpInfo("pto.tfree_from_aic", "call", "cross_core", ins=(_t("tile", _V),), pipe=None,
            attrs=("split", "id"), rule="tfree",
            doc="AIV: release the slot of a popped tile after its last reader"))
_add(OpInfo("pto.tfree_from_aiv", "call", "cross_core", ins=(_t("tile", _M),), pipe=None,
            attrs=("split", "id"), rule="tfree",
            doc="AIC: release the slot of a popped tile after its last reader"))
_add(OpInfo("pto.get_subblock_idx", "call", "scalar", rule="subblock_idx",
            doc="AIV: which vector core of the group runs this instance (0 or 1)"))

#: Cross-core data ops: (direction, role) — direction ``c2v`` (cube -> vector) or ``v2c``.
CROSS_CORE_ROLES = MappingProxyType({
    "pto.tpush_to_aiv": ("c2v", "push"), "pto.tpop_from_aic": ("c2v", "pop"),
    "pto.tfree_from_aic": ("c2v", "free"), "pto.tpush_to_aic": ("v2c", "push"),
    "pto.tpop_from_aiv": ("v2c", "pop"), "pto.tfree_from_aiv": ("v2c", "free"),
})

# -- sync and control -----------------------------------------------------------------------------
_add(OpInfo("pto.set_flag", "sync", "sync", doc="set flag (src, dst, id) once src pipe is idle"))
_add(OpInfo("pto.wait_flag", "sync", "sync", doc="block dst pipe until flag set, then clear"))
_add(OpInfo("pto.barrier", "sync", "sync", doc="order all earlier work on a pipe (or ALL)"))
_add(OpInfo("scf.for", "for", "control", doc="counted loop"))
_add(OpInfo("scf.while", "while", "control", doc="loop while a condition holds (run-time trips)"))
_add(OpInfo("scf.condition", "condition", "control", doc="end of a while's condition region"))
_add(OpInfo("scf.if", "if", "control", doc="two-way branch on an i1"))
_add(OpInfo("scf.yield", "yield", "control", doc="region results"))

OP_TABLE: Mapping[str, OpInfo] = MappingProxyType(_TABLE)


def is_known(opcode: str) -> bool:
    return opcode in OP_TABLE


def op_info(opcode: str) -> OpInfo:
    """The table entry of ``opcode``; PtoError listing near names when unknown."""
    try:
        return OP_TABLE[opcode]
    except KeyError:
        raise PtoError(f"unknown op '{opcode}'", hint=suggest_opcode(opcode)) from None


def suggest_opcode(opcode: str) -> str:
    import difflib  # noqa: PLC0415

    close = difflib.get_close_matches(opcode, list(OP_TABLE), n=3, cutoff=0.6)
    if close:
        return f"did you mean {' or '.join(close)}?"
    return "see ptoc.pto.ops.OP_TABLE for the supported ops"


def space_of(value: Value) -> MemorySpace | None:
    """Memory space of a buffer operand: its tile location, DDR for GM views, else None."""
    if isinstance(value.type, TileBufType):
        return value.type.loc
    if isinstance(value.type, (PartitionViewType, TensorViewType)):
        return MemorySpace.DDR
    return None


def move_endpoints(inst: Instruction) -> tuple[MemorySpace, MemorySpace]:
    """(source space, destination space) of a move op."""
    src = space_of(inst.ins[0]) if inst.ins else None
    dst = space_of(inst.outs[0]) if inst.outs else None
    if src is None or dst is None:
        raise PtoError(f"{inst.opcode} needs a tile or view source and destination")
    return src, dst


def pipe_of(inst, target) -> Pipe:
    """The pipe ``inst`` runs on for ``target`` (a Target or its name).

    Sync ops report PIPE_S here (their queue placement is the simulator's business: a set
    goes to its ``src`` pipe, a wait to its ``dst`` pipe); control and scalar ops PIPE_S.
    """
    info = OP_TABLE.get(inst.opcode)
    if info is None:
        raise PtoError(f"unknown op '{inst.opcode}'", hint=suggest_opcode(inst.opcode))
    if info.pipe is not None:
        return info.pipe
    if info.category == "cross_core":
        return cross_core_pipe(inst, target)
    from ptoc.backend.targets import TargetError, get_target  # noqa: PLC0415

    src, dst = move_endpoints(inst)
    try:
        return get_target(target).move_pipe(src, dst)
    except TargetError as exc:
        raise PtoError(f"{inst.opcode}: {exc.message}", hint=exc.hint) from None


def cross_core_pipe(inst: Instruction, target) -> Pipe:
    """The pipe of a tpush / tpop / tfree on ``target`` (``ptoc.backend.cross_core``)."""
    from ptoc.backend.cross_core import cluster_model  # noqa: PLC0415

    model = cluster_model(target)
    _, role = CROSS_CORE_ROLES[inst.opcode]
    tile = inst.results[0] if role == "pop" else inst.ins[0]
    if not isinstance(tile.type, TileBufType):
        raise PtoError(f"{inst.opcode}: %{tile.name} is not a tile",
                       hint="push, pop and free name a !pto.tile_buf value")
    if role == "push":
        return model.push_pipe(tile.type.loc)
    if role == "pop":
        return model.pop_pipe(tile.type.loc)
    return model.free_pipe(tile.type.loc)


def reads(inst) -> tuple[Value, ...]:
    """Buffer operands ``inst`` reads (empty for sync/control/scalar ops)."""
    info = OP_TABLE.get(getattr(inst, "opcode", ""))
    return info.reads(inst) if info is not None and isinstance(inst, Instruction) else ()


def writes(inst) -> tuple[Value, ...]:
    """Buffer operands ``inst`` writes."""
    info = OP_TABLE.get(getattr(inst, "opcode", ""))
    return info.writes(inst) if info is not None and isinstance(inst, Instruction) else ()


def queue_of(op, target) -> Pipe:
    """The in-order queue ``op`` is issued to (hw-model.md §3.1 placement [S]).

    ``set_flag`` goes to its source pipe's queue and ``wait_flag`` to its destination pipe's
    queue; ``barrier`` to its pipe (``PIPE_ALL`` for a full drain); instructions to
    ``pipe_of``; control flow and scalar ops to PIPE_S.
    """
    from ptoc.pto.model import SyncOp  # noqa: PLC0415

    if isinstance(op, SyncOp):
        if op.kind == "set_flag":
            return op.src
        if op.kind == "wait_flag":
            return op.dst
        return op.pipe
    if isinstance(op, Instruction):
        return pipe_of(op, target)
    return Pipe.PIPE_S


#: ``atomicType`` values of ``pto.tstore`` and whether each adds into GM.
ATOMIC_TYPES = {"atomic_type atomic_none": False, "atomic_type atomic_add": True}


def atomic_add(inst: Instruction) -> bool | None:
    """Whether a ``pto.tstore`` adds into GM (its ``atomicType``); None for a value that is
    not an atomic type."""
    value = inst.attr("atomicType")
    if value is None:
        return False
    return ATOMIC_TYPES.get(getattr(value, "value", None)) \
        if getattr(value, "kind", None) == "pto" else None
