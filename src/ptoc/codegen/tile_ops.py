"""Lowering of each tile op to PTO instructions (one function per op family).

Every lowering follows PyPTO's destination-passing form: the result tile's ``pto.alloc_tile``
comes first (at the statement's location), then the operand arithmetic, then the op itself (at
the call's location) writing into that buffer through ``outs(...)``.

    tile.load          alloc; partition_view of the source tensor (its valid window); tload
    tile.store         partition_view of the destination tensor; tstore (Acc -> GM is the
                       FIXPIPE drain, Vec/Mat -> GM runs on MTE3). Dynamic offsets are clamped
                       at zero with ``arith.maxsi`` as PyPTO does.
    tile.extract       alloc; textract ins(src, row, col)
    tile.move          alloc; tmov ins(src)
    tile.matmul        alloc; tmatmul ins(lhs, rhs)
    tile.matmul_acc    tmatmul.acc ins(acc, lhs, rhs) outs(acc) — in place on the accumulator.
                       With ``init_cond`` (a run-time flag): scf.if cond { tmatmul ins(lhs, rhs)
                       outs(acc) } else { tmatmul.acc ... } — the same shape PyPTO's own passes
                       give a K loop (see AutoTileMatmulL0's first-iteration ``if``), and a
                       decided condition keeps only one arm.
    tile.matmul_bias   alloc; tmatmul.bias ins(lhs, rhs, bias)
    tile.gemv_acc      tgemv.acc ins(acc, lhs, rhs) outs(acc), in place (as matmul_acc)
    tile.assemble      Acc/Vec -> Mat: tinsert ins(src, row, col) outs(target), in place;
                       Vec -> Vec of one dtype: an alias of the target window + tmov (the
                       subview + tmov of PyPTO)
    tile.create        alloc only (the buffer's contents are whatever is there)
    tile.slice         an alias: alloc at the parent's address plus the byte offset of the
                       window (PTOAS planner: pto.subview); a column window of several rows
                       keeps the parent's row length as its row_stride; offsets may be
                       run-time (loop variables)
    tile.alloc         nothing (MemRef bases have no PTO form; tiles carry their addresses)
    every other op     alloc; <opcode> ins(operands) outs(result) {attrs}: the op's registry
                       entry (``OpDef.pto``) names the instruction, its operands and attributes
    cross-core ops     pipe setup, tpush / tpop / tfree (``ptoc.codegen.cross_core``)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple

from ptoc.dtypes import AtomicType, DataType, MemorySpace
from ptoc.ir.nodes import Call, ConstBool, ConstInt, ListExpr, Stmt, Var
from ptoc.ir.types import MemRef, TensorType, TileType
from ptoc.ops import all_ops, get_op
from ptoc.ops.registry import PtoForm
from ptoc.pto.model import EnumAttr, IfOp, Instruction, PartitionViewType, ScalarType, Value

from ptoc.codegen.access_ops import LOWERINGS as ACCESS_LOWERINGS
from ptoc.codegen.block_ops import LOWERINGS as BLOCK_LOWERINGS
from ptoc.codegen.cross_core import CROSS_CORE_LOWERINGS
from ptoc.codegen.errors import CodegenError
from ptoc.codegen.simplify import decide
from ptoc.codegen.tile_types import valid_shape

if TYPE_CHECKING:  # pragma: no cover
    from ptoc.codegen.emitter import KernelEmitter


class Site(NamedTuple):
    """Where a call is: ``stmt`` locates its allocation, ``op`` the instructions (a named
    tuple: one is made per lowered call)."""

    stmt: object
    op: object
    call: Call


def lower_call(em: KernelEmitter, var: Var | None, call: Call, stmt: Stmt) -> None:
    """Emit the PTO for ``var = call`` (``var`` is None for an expression statement)."""
    site = Site(em.loc(stmt, call), em.loc(call, stmt), call)
    if call.is_function:
        raise CodegenError(f"kernel calls function '{call.op}'; PTO kernels cannot call other "
                           "functions", site.op, hint="inline it, or call both from the "
                           "orchestration function")
    if call.op.startswith("tensor.") and call.op not in _LOWERINGS:
        raise CodegenError(
            f"tensor-level op {call.op} is still in the kernel at codegen", site.op,
            hint="run ConvertTensorToTileOps (the default pass pipeline does) so that it "
            "becomes tile loads, tile ops and stores")
    op = get_op(call.op)
    args = op.bind(tuple(call.args), dict(call.kwargs), call.loc)
    lower = _LOWERINGS.get(call.op)
    if lower is not None:
        lower(em, var, args, site)
    elif op.pto is not None:
        _dps(em, var, args, site, op.pto)
    else:
        raise CodegenError(f"{call.op} has no PTO lowering in ptoc", site.op,
                           hint="supported: " + ", ".join(SUPPORTED_OPS))


# ---- helpers ---------------------------------------------------------------------------------

def _items(expr) -> tuple:
    if isinstance(expr, ListExpr):
        return expr.items
    if isinstance(expr, (list, tuple)):
        return tuple(expr)
    return (expr,)


def _static(expr) -> int | None:
    if isinstance(expr, int):
        return expr
    return expr.value if isinstance(expr, ConstInt) else None


def _name_of(expr) -> str:
    return expr.name if isinstance(expr, Var) else "t"


def _need_result(var, call_op: str, site: Site) -> Var:
    if var is None:
        raise CodegenError(f"the result of {call_op} must be assigned to a variable", site.op)
    return var


def _check_space(em, value: Value, allowed, what: str, site: Site, fix: str) -> None:
    if value.type.loc not in allowed:
        names = "/".join(f"pl.Mem.{s.value}" for s in allowed)
        raise CodegenError(f"{what} %{value.name} is in pl.Mem.{value.type.loc.value}, but PTO "
                           f"needs it in {names}", site.op, hint=fix)


def _same_memref(a: MemRef | None, b: MemRef | None) -> bool:
    if a is None or b is None:
        return True
    same_base = a.base is b.base or (isinstance(a.base, str) and a.base == b.base)
    ao, bo = _static(a.offset), _static(b.offset)
    return same_base and ao is not None and ao == bo


def _pview(em: KernelEmitter, tensor_expr, offsets, sizes, site: Site, *, clamp: bool) -> Value:
    view = em.tensor(tensor_expr, site.op)
    offs = []
    for o in offsets:
        v = em.index(o, site.op)
        if clamp and _static(o) is None:
            clamped = Value(em.temp_name(), ScalarType(DataType.INDEX))
            em.emit(Instruction("arith.maxsi", results=(clamped,),
                                ins=(v, em.const(0, DataType.INDEX)), loc=site.op))
            v = clamped
        offs.append(v)
    size_values = tuple(em.index(d, site.op) for d in sizes)
    shape = tuple(_static(d) for d in sizes)
    result = Value(em.names.derived(_name_of(tensor_expr), "_pview"),
                   PartitionViewType(shape, view.type.dtype))
    em.emit(Instruction("pto.partition_view", results=(result,), ins=(view,),
                        attrs=(("offsets", tuple(offs)), ("sizes", size_values)), loc=site.op))
    return result


# ---- data movement -------------------------------------------------------------------------

def _load(em, var, a, site):
    var = _need_result(var, "tile.load", site)
    window = _items(a["valid_shape"] if a.get("valid_shape") is not None else a["shapes"])
    dst = em.alloc_tile(var, site.stmt, valid=window)
    pview = _pview(em, a["tensor"], _items(a["offsets"]), window, site, clamp=False)
    em.emit(Instruction("pto.tload", ins=(pview,), outs=(dst,), loc=site.op))


def _store(em, var, a, site):
    src = em.tile(a["tile"], site.op)
    _check_space(em, src, (MemorySpace.Acc, MemorySpace.Vec, MemorySpace.Mat), "stored tile",
                 site, "move the tile to Vec (or drain the Acc) before storing it")
    attrs = _atomic_attrs(em, a.get("atomic"), a["output_tensor"], site)
    if var is not None:
        em.names.var(var)  # PyPTO names the result (a duplicate name costs a number)
    out = a["output_tensor"]
    rank = len(out.type.shape) if isinstance(getattr(out, "type", None), TensorType) else 2
    if a.get("shapes") is not None:
        sizes = _items(a["shapes"])
    else:
        valid = em.valid_of.get(src) or valid_shape(a["tile"].type)
        sizes = (1,) * (rank - 2) + tuple(valid)
        extra = len(sizes) - rank   # a 1-D tensor's [1, N] tile: its window is N long
        if extra > 0 and all(_static(d) == 1 for d in sizes[:extra]):
            sizes = sizes[extra:]
    pview = _pview(em, out, _items(a["offsets"]), sizes, site, clamp=True)
    em.emit(Instruction("pto.tstore", ins=(src,), outs=(pview,), attrs=attrs, loc=site.op))
    if var is not None:
        em.tensors[var] = em.tensor(out, site.op)


def _atomic_attrs(em, atomic, out, site) -> tuple:
    """``{atomicType = #pto<atomic_type atomic_add>}`` for an atomic-add store (a plain
    store has none, as in PyPTO); the target's store pipe must combine the GM dtype."""
    if atomic is None or atomic is AtomicType.None_:
        return ()
    from ptoc.backend import get_target

    target = get_target(em.options.target)
    dtype = out.type.dtype
    if dtype not in target.atomic_add_dtypes:
        only = (" (bf16 atomic-add needs the A2/A3 store pipe, target a2a3)"
                if dtype is DataType.BF16 else "")
        raise CodegenError(
            f"atomic-add into a {dtype.value} global tensor is not supported on the "
            f"'{target.name}' backend{only}", site.op,
            hint="accumulate into an FP32 tensor and cast to the narrow type after the reduction")
    return (("atomicType", EnumAttr("pto", "atomic_type atomic_add")),)


def _extract(em, var, a, site):
    var = _need_result(var, "tile.extract", site)
    dst = em.alloc_tile(var, site.stmt)
    src = em.tile(a["src"], site.op)
    row = em.index(a["index_row"], site.op)
    col = em.index(a["index_col"], site.op)
    em.emit(Instruction("pto.textract", ins=(src, row, col), outs=(dst,), loc=site.op))


def _move(em, var, a, site):
    var = _need_result(var, "tile.move", site)
    dst = em.alloc_tile(var, site.stmt)
    src = em.tile(a["tile"], site.op)
    em.emit(Instruction("pto.tmov", ins=(src,), outs=(dst,), loc=site.op))


def _create(em, var, a, site):
    em.alloc_tile(_need_result(var, "tile.create", site), site.stmt)


def _alloc(em, var, a, site):
    return None  # a MemRef base: tiles carry their own addresses


def _window(em, offset_expr, shape, what, site) -> tuple:
    """(row, col) offset of a window: constants, or run-time indices (IR expressions, e.g.
    a loop variable) whose address codegen computes per use."""
    items = _items(offset_expr)
    items = items[-2:] if len(items) >= 2 else (0, items[0])
    return tuple(_static(o) if _static(o) is not None else o for o in items)


def _slice(em, var, a, site):
    var = _need_result(var, "tile.slice", site)
    parent = em.tile(a["x"], site.op)
    shape = tuple(var.type.shape[-2:]) if len(var.type.shape) >= 2 else (1, var.type.shape[0])
    what = f"tile.slice '{var.name}'"
    offset = _window(em, a["offset"], shape, what, site)
    value = em.alias_window(parent, shape, offset, em.names.var(var), what, site.stmt)
    em.bind_tile(var, value)


def _assemble(em, var, a, site):
    target = em.tile(a["target"], site.op)
    source = em.tile(a["source"], site.op)
    offs = _items(a["offset"])
    tloc, sloc = target.type.loc, source.type.loc
    dst = _in_place(em, var, a["target"], target)
    if dst is None:  # the result has a buffer of its own: start from a copy of the target
        if tloc is not MemorySpace.Vec:
            raise CodegenError(
                f"tile.assemble result '{var.name}' is not in the buffer of its target "
                f"%{target.name}, and {tloc.value} tiles cannot be copied on chip", site.op,
                hint="InitMemRef makes assemble write its target in place")
        dst = em.alloc_tile(var, site.stmt)
        em.emit(Instruction("pto.tmov", ins=(target,), outs=(dst,), loc=site.op))
    if tloc is MemorySpace.Mat and sloc in (MemorySpace.Acc, MemorySpace.Vec):
        row = em.index(offs[0] if len(offs) > 1 else 0, site.op)
        col = em.index(offs[-1], site.op)
        em.emit(Instruction("pto.tinsert", ins=(source, row, col), outs=(dst,), loc=site.op))
    elif tloc is sloc is MemorySpace.Vec and dst.type.dtype == source.type.dtype:
        shape = (source.type.rows, em.valid_of.get(source, (0, source.type.cols))[1])
        shape = tuple(_static(d) if _static(d) is not None else d for d in shape)
        what = f"tile.assemble into %{dst.name}"
        offset = _window(em, a["offset"], shape, what, site)
        window = em.alias_window(dst, shape, offset, em.temp_name(), what, site.op)
        em.emit(Instruction("pto.tmov", ins=(source,), outs=(window,), loc=site.op))
    else:
        raise CodegenError(
            f"tile.assemble of a {sloc.value} {source.type.dtype.pto_name} tile into a "
            f"{tloc.value} {target.type.dtype.pto_name} tile has no PTO lowering in ptoc",
            site.op, hint="assemble Acc results into a Mat tile (tinsert) or Vec tiles of one "
            "dtype into a window of a Vec tile, or store the pieces to DDR")


def _in_place(em, var, operand_expr, operand: Value) -> Value | None:
    """``operand``'s buffer when ``var`` (the result of an in-place op) lives in it — same
    MemRef, or under baked addresses the same address — binding ``var`` to it; else None."""
    if var is None:
        return operand
    mine = var.type.memref
    shared = _same_memref(mine, operand_expr.type.memref)
    if not shared and em.options.with_addresses and mine is not None:
        key = em.buffer_key.get(operand)
        shared = key == (var.type.memory_space, _static(mine.offset))
    if not shared:
        return None
    em.bind_tile(var, operand)
    return operand


# ---- cube ------------------------------------------------------------------------------------

_CUBE_FIX = "move operands with tile.move/tile.extract into Left/Right (InferTileMemorySpace)"


def _operands(em, a, site):
    lhs = em.tile(a["lhs"], site.op)
    rhs = em.tile(a["rhs"], site.op)
    _check_space(em, lhs, (MemorySpace.Left,), "matmul lhs", site, _CUBE_FIX)
    _check_space(em, rhs, (MemorySpace.Right,), "matmul rhs", site, _CUBE_FIX)
    return lhs, rhs


def _matmul(em, var, a, site):
    var = _need_result(var, "tile.matmul", site)
    dst = em.alloc_tile(var, site.stmt)
    lhs, rhs = _operands(em, a, site)
    em.emit(Instruction("pto.tmatmul", ins=(lhs, rhs), outs=(dst,), loc=site.op))


def _matmul_acc(em, var, a, site):
    acc = em.tile(a["acc"], site.op)
    dst = _in_place(em, var, a["acc"], acc)
    if dst is None:
        raise CodegenError(
            f"tile.matmul_acc result '{var.name}' is not in the buffer of its accumulator "
            f"%{acc.name}; the cube accumulates in place and there is no Acc -> Acc copy",
            site.op, hint="InitMemRef gives matmul_acc its accumulator's MemRef; keep them "
            "shared through MemoryReuse")
    lhs, rhs = _operands(em, a, site)
    cond = a.get("init_cond")
    base = "pto.tgemv" if site.call.op == "tile.gemv_acc" else "pto.tmatmul"
    phase = tuple((key, EnumAttr(kind, value)) for key, kind, value in _acc_phase(a))
    fresh = Instruction(base, ins=(lhs, rhs), outs=(dst,), attrs=phase, loc=site.op)
    accumulate = Instruction(f"{base}.acc", ins=(dst, lhs, rhs), outs=(dst,), attrs=phase,
                             loc=site.op)
    if cond is None:
        em.emit(accumulate)
        return
    if isinstance(cond, bool):
        cond = ConstBool(cond)
    known = decide(cond, {})
    if known is not None:
        em.emit(fresh if known else accumulate)
        return
    flag = em.scalar(cond, DataType.BOOL, site.op)
    em.emit(IfOp(cond=flag, then_body=(fresh,), else_body=(accumulate,), has_else=True))


def _acc_phase(a) -> tuple:
    phase = a.get("acc_phase", "unspecified")
    return () if phase in (None, "unspecified") else (("accPhase", "pto.acc_phase", phase),)


def _matmul_bias(em, var, a, site):
    var = _need_result(var, "tile.matmul_bias", site)
    dst = em.alloc_tile(var, site.stmt)
    lhs, rhs = _operands(em, a, site)
    bias = em.tile(a["bias"], site.op)
    _check_space(em, bias, (MemorySpace.Bias,), "matmul bias", site,
                 "move the bias row into pl.Mem.Bias first")
    em.emit(Instruction("pto.tmatmul.bias", ins=(lhs, rhs, bias), outs=(dst,), loc=site.op))


# ---- one destination-passing instruction (the op's registry entry says which) ---------------

def _dps(em, var, a, site, form: PtoForm) -> None:
    """``alloc dst; <opcode> ins(operands) outs(dst) {attrs}`` from the op's ``PtoForm``."""
    var = _need_result(var, form.opcode, site)
    dst = em.alloc_tile(var, site.stmt)
    tiles = [a[n] for n in form.ins if isinstance(getattr(a[n], "type", None), TileType)]
    scalar_dtype = form.scalar_dtype or (tiles[0].type.dtype if tiles else dst.type.dtype)
    ins = []
    for name in form.ins:
        value = a[name]
        if value is None:
            continue
        if isinstance(getattr(value, "type", None), TileType):
            ins.append(em.tile(value, site.op))
        else:
            ins.append(em.scalar(value, scalar_dtype, site.op))
    attrs = tuple((key, EnumAttr(kind, str(value)) if kind else value)
                  for key, kind, value in (form.attrs(a) if form.attrs else ()))
    em.emit(Instruction(form.opcode, ins=tuple(ins), outs=(dst,), attrs=attrs, loc=site.op))


_LOWERINGS: dict[str, Callable] = {
    "tile.load": _load, "tile.store": _store, "tile.extract": _extract, "tile.move": _move,
    "tile.create": _create, "tile.alloc": _alloc, "tile.slice": _slice,
    "tile.assemble": _assemble, "tile.matmul": _matmul, "tile.matmul_acc": _matmul_acc,
    "tile.matmul_bias": _matmul_bias, "tile.gemv_acc": _matmul_acc,
    **ACCESS_LOWERINGS,
    **BLOCK_LOWERINGS,
}
_LOWERINGS.update(CROSS_CORE_LOWERINGS)

SUPPORTED_OPS = tuple(sorted(set(_LOWERINGS) | {op.name for op in all_ops() if op.pto}))

__all__ = ["SUPPORTED_OPS", "lower_call"]
