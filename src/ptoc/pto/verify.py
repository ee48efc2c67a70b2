"""Verify a PTO module against a target: every ill-formed program raises ``PtoError`` whose
``loc.line`` is the offending line of the PTO text (``op.line``).

Checks: known ops and their operand roles (count, tile/view/scalar kind, memory space),
legal data paths on the target, dtype and shape agreement per op rule (see ``ptoc.pto.ops``),
tile buffers inside their memory's capacity and 32-byte aligned when their address is a
constant, cube/vector tile shape rules, SSA (defined before use in an enclosing region,
defined once, use-site type = definition type), flag pipes and event ids 0..7, loop bounds,
branch conditions and region results.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.pipes import NUM_EVENT_IDS, Pipe
from ptoc.backend.targets import Target, TargetError, get_target
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtoError, SourceLoc

from ptoc.pto.model import (
    ConditionOp, EnumAttr, ForOp, IfOp, Instruction, Kernel, Module, Op, PartitionViewType, PtoType,
    PtrType, WhileOp, ScalarType, SyncOp, TensorViewType, TileBufType, Value, YieldOp,
)
from ptoc.pto.ops import (
    CMP_MODES, CMPI_PREDICATES, OP_TABLE, ROUND_MODES, OpInfo, atomic_add, suggest_opcode,
)
from ptoc.pto.verify_cross_core import CrossCoreRules

_INT_TYPES = {DataType.INDEX, DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64,
              DataType.UINT8}
_FLOAT_TYPES = {DataType.FP32, DataType.FP16, DataType.BF16}
_FLOAT_ARITH = {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf",
                "arith.minimumf"}
#: FIXPIPE output dtypes per accumulator dtype [S] (hw-model.md §1.5 "Accumulator-to-GM store
#: dtypes"; §4.1 tinsert f32 -> bf16/f16).
_FIX_CASTS = {DataType.FP32: {DataType.FP32, DataType.FP16, DataType.BF16},
              DataType.INT32: {DataType.INT32}}
_LAYOUTS = ("nd", "dn", "nz")


def verify(module: Module, target: "Target | str | None" = None) -> Module:
    """Check ``module`` against ``target`` (default: the module's ``pto.target_arch``, else
    a2a3). Returns the module unchanged; raises ``PtoError`` naming the line otherwise."""
    try:
        tgt = get_target(target if target is not None else (module.target_arch or "a2a3"))
    except TargetError as exc:
        raise PtoError(exc.message, hint=exc.hint) from None
    for kernel in module.kernels:
        _KernelVerifier(module.filename, tgt).run(kernel)
    return module


@dataclass
class _Def:
    type: PtoType
    const: int | None = None


def _desc(ty: PtoType) -> str:
    if isinstance(ty, TileBufType):
        return f"{ty.loc.lower} {ty.dtype.pto_name} {ty.rows}x{ty.cols} tile"
    return str(ty)


def _is_int(ty: PtoType) -> bool:
    return isinstance(ty, ScalarType) and ty.dtype in _INT_TYPES


class _KernelVerifier(CrossCoreRules):
    def __init__(self, filename: str, target: Target) -> None:
        self.file = filename
        self.target = target
        self.frames: list[dict[str, _Def]] = [{}]

    # -- helpers ------------------------------------------------------------------------------
    def fail(self, op, msg: str, hint: str | None = None) -> PtoError:
        line = getattr(op, "line", 0)
        return PtoError(msg, SourceLoc(self.file, line, 1), hint=hint)

    def lookup(self, name: str) -> _Def | None:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None

    def define(self, op, value: Value, const: int | None = None) -> None:
        if self.lookup(value.name) is not None:
            raise self.fail(op, f"SSA value %{value.name} is defined twice",
                            "give each definition a fresh name")
        self.frames[-1][value.name] = _Def(value.type, const)

    def check_use(self, op, value: Value) -> _Def:
        d = self.lookup(value.name)
        if d is None:
            raise self.fail(op, f"{op.opcode}: undefined SSA value %{value.name}",
                            "define it earlier in this or an enclosing region")
        if d.type != value.type:
            raise self.fail(op, f"{op.opcode}: %{value.name} is used as {value.type} but was "
                                f"defined as {d.type}", "make the use-site type match the definition")
        return d

    def const(self, value: Value) -> int | None:
        d = self.lookup(value.name)
        return d.const if d is not None else None

    # -- structure ------------------------------------------------------------------------------
    def run(self, kernel: Kernel) -> None:
        for p in kernel.params:
            if not isinstance(p.type, (PtrType, ScalarType)):
                raise self.fail(kernel, f"parameter %{p.name} of @{kernel.name} has type {p.type}",
                                "kernel parameters are !pto.ptr<dtype> (GM tensors) or scalars")
            self.define(kernel, p)
        kind = kernel.attr("pto.kernel_kind")
        self.kernel_kind = kind.value if isinstance(kind, EnumAttr) else None
        self.start_cross_core()
        self.region(kernel.body, results=None, owner=kernel)
        self.finish_cross_core()

    def region(self, body: tuple[Op, ...], results: tuple[Value, ...] | None, owner=None) -> None:
        """Verify a region; ``results`` are the values its yield must match (None: top level);
        ``owner`` is the op holding the region (blamed when an empty region lacks its yield)."""
        for i, op in enumerate(body):
            if isinstance(op, YieldOp):
                if results is None:
                    raise self.fail(op, "scf.yield outside of an scf.for / scf.if region",
                                    "remove it; kernels end with 'return'")
                if i != len(body) - 1:
                    raise self.fail(op, "scf.yield must be the last op of its region",
                                    "move the ops after it before it")
                for v in op.values:
                    self.check_use(op, v)
                want = [r.type for r in results]
                got = [v.type for v in op.values]
                if want != got:
                    raise self.fail(op, f"scf.yield gives ({', '.join(map(str, got))}) but the region "
                                        f"returns ({', '.join(map(str, want))})",
                                    "yield one value per result, with matching types")
            else:
                self.op(op)
        if results and not (body and isinstance(body[-1], YieldOp)):
            raise self.fail(body[-1] if body else owner,
                            f"region with {len(results)} result(s) does not end in scf.yield",
                            "add scf.yield with the result values")

    def op(self, op: Op) -> None:
        if isinstance(op, ForOp):
            self.for_op(op)
        elif isinstance(op, WhileOp):
            self.while_op(op)
        elif isinstance(op, ConditionOp):
            raise self.fail(op, "scf.condition outside the condition region of an scf.while",
                            "end a while's condition region with it, nowhere else")
        elif isinstance(op, IfOp):
            self.if_op(op)
        elif isinstance(op, SyncOp):
            self.sync_op(op)
        elif isinstance(op, Instruction):
            self.instruction(op)
        else:
            raise self.fail(op, f"unsupported op object {type(op).__name__}")

    def for_op(self, op: ForOp) -> None:
        for name, v in (("lower bound", op.lower), ("upper bound", op.upper), ("step", op.step)):
            self.check_use(op, v)
            if not _is_int(v.type):
                raise self.fail(op, f"scf.for {name} %{v.name} has type {v.type}",
                                "loop bounds must be index (or integer) values")
        if self.const(op.step) is not None and self.const(op.step) <= 0:
            raise self.fail(op, f"scf.for step %{op.step.name} = {self.const(op.step)} is not positive",
                            "use a step >= 1")
        for arg, init in op.iter_args:
            self.check_use(op, init)
            if arg.type != init.type:
                raise self.fail(op, f"iter_arg %{arg.name} is {arg.type} but its initial value "
                                    f"%{init.name} is {init.type}", "make the types equal")
        self.frames.append({})
        self.define(op, op.iv)
        for arg, _ in op.iter_args:
            self.define(op, arg)
        self.region(op.body, tuple(a for a, _ in op.iter_args) if op.iter_args else (), op)
        self.frames.pop()
        for r in op.results:
            self.define(op, r)

    def while_op(self, op: WhileOp) -> None:
        """The condition region computes an i1 from scalars only (it runs once more than the
        body, so no pipe work or flag may sit there) and hands on one value per carry; the
        body's block arguments and yield have the carries' types."""
        types = [a.type for a, _ in op.iter_args]
        for arg, init in op.iter_args:
            self.check_use(op, init)
            if arg.type != init.type:
                raise self.fail(op, f"scf.while argument %{arg.name} is {arg.type} but its "
                                    f"initial value %{init.name} is {init.type}",
                                "make the types equal")
        self.frames.append({})
        for arg, _ in op.iter_args:
            self.define(op, arg)
        *scalars, cond = op.cond
        for inst in scalars:
            if not (isinstance(inst, Instruction) and inst.opcode.startswith("arith.")):
                raise self.fail(inst, f"{inst.opcode} in the condition region of scf.while",
                                "compute only scalars (arith ops) there; do the work in the body")
            self.instruction(inst)
        self.check_use(cond, cond.cond)
        if cond.cond.type != ScalarType(DataType.BOOL):
            raise self.fail(cond, f"scf.condition %{cond.cond.name} has type {cond.cond.type}",
                            "test an i1, e.g. the result of arith.cmpi")
        for v in cond.values:
            self.check_use(cond, v)
        if [v.type for v in cond.values] != types:
            raise self.fail(cond, f"scf.condition hands on {len(cond.values)} value(s) but the "
                                  f"scf.while carries {len(types)}",
                            "hand on one value per carry, with the carries' types")
        self.frames.pop()
        if [a.type for a in op.body_args] != types:
            raise self.fail(op, f"the scf.while body takes {len(op.body_args)} argument(s) but "
                                f"the loop carries {len(types)}",
                            "give ^bb0 one argument per carry, with the carries' types")
        self.frames.append({})
        for arg in op.body_args:
            self.define(op, arg)
        self.region(op.body, tuple(op.body_args), op)
        self.frames.pop()
        for r in op.results:
            self.define(op, r)

    def if_op(self, op: IfOp) -> None:
        self.check_use(op, op.cond)
        if op.cond.type != ScalarType(DataType.BOOL):
            raise self.fail(op, f"scf.if condition %{op.cond.name} has type {op.cond.type}",
                            "branch on an i1, e.g. the result of arith.cmpi")
        if op.results and not op.has_else:
            raise self.fail(op, "scf.if with results needs an else region",
                            "add 'else { scf.yield ... }'")
        for body in (op.then_body, op.else_body):
            self.frames.append({})
            self.region(body, op.results, op)
            self.frames.pop()
        for r in op.results:
            self.define(op, r)

    def sync_op(self, op: SyncOp) -> None:
        if op.kind == "barrier":
            if not isinstance(op.pipe, Pipe):
                raise self.fail(op, "pto.barrier needs a pipe", "write pto.barrier <PIPE_ALL>")
            return
        if op.kind not in ("set_flag", "wait_flag"):
            raise self.fail(op, f"unknown sync op pto.{op.kind}",
                            "use pto.set_flag, pto.wait_flag or pto.barrier")
        if not isinstance(op.src, Pipe) or not isinstance(op.dst, Pipe):
            raise self.fail(op, f"{op.opcode} needs a source and a destination pipe",
                            f"write {op.opcode}[<PIPE_A>, <PIPE_B>, <EVENT_ID0>]")
        for pipe in (op.src, op.dst):
            if pipe is Pipe.PIPE_ALL:
                raise self.fail(op, f"{op.opcode} cannot use PIPE_ALL as an endpoint",
                                "flags join two specific pipes; use pto.barrier <PIPE_ALL> to drain all")
        if op.src is op.dst:
            raise self.fail(op, f"{op.opcode} from {op.src.pto_name} to itself",
                            f"order work on one pipe with pto.barrier <{op.src.pto_name}>")
        if isinstance(op.event, Value):
            self.check_use(op, op.event)
            if not _is_int(op.event.type):
                raise self.fail(op, f"{op.opcode} event %{op.event.name} has type {op.event.type}",
                                "a dynamic event id must be an index value")
            known = self.const(op.event)
            if known is not None and not 0 <= known < NUM_EVENT_IDS:
                raise self.fail(op, f"{op.opcode} event id {known} is out of range "
                                    f"0..{NUM_EVENT_IDS - 1}", "use EVENT_ID0 .. EVENT_ID7")
        elif not isinstance(op.event, int) or not 0 <= op.event < NUM_EVENT_IDS:
            raise self.fail(op, f"{op.opcode} event id {op.event} is out of range "
                                f"0..{NUM_EVENT_IDS - 1}",
                            "each pipe pair has 8 flags, EVENT_ID0 .. EVENT_ID7")

    # -- instructions -----------------------------------------------------------------------------
    def instruction(self, inst: Instruction) -> None:
        info = OP_TABLE.get(inst.opcode)
        if info is None or info.syntax in ("sync", "for", "while", "condition", "if", "yield"):
            raise self.fail(inst, f"unknown op '{inst.opcode}'", suggest_opcode(inst.opcode))
        for v in inst.uses:
            self.check_use(inst, v)
        if info.syntax == "dps":
            self.dps_common(inst, info)
        elif info.syntax == "call":
            self.known_attrs(inst, info)
        getattr(self, f"rule_{info.rule}")(inst)
        for r in inst.results:
            self.define(inst, r, self.fold(inst))

    def fold(self, inst: Instruction) -> int | None:
        """Constant value of a scalar result when its inputs are constants (for range checks)."""
        if inst.opcode == "arith.constant":
            v = inst.attr("value")
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        if OP_TABLE[inst.opcode].syntax != "binary" or len(inst.ins) != 2:
            return None
        a, b = (self.const(v) for v in inst.ins)
        if a is None or b is None:
            return None
        op = inst.opcode.removeprefix("arith.")
        if op in ("divsi", "floordivsi", "ceildivsi", "remsi", "divui", "remui") and b == 0:
            return None
        table = {"addi": lambda: a + b, "subi": lambda: a - b, "muli": lambda: a * b,
                 "maxsi": lambda: max(a, b), "minsi": lambda: min(a, b),
                 "floordivsi": lambda: a // b, "ceildivsi": lambda: -(-a // b),
                 "divsi": lambda: int(a / b), "remsi": lambda: a - int(a / b) * b}
        fn = table.get(op)
        return fn() if fn else None

    def dps_common(self, inst: Instruction, info: OpInfo) -> None:
        if inst.results and info.rule != "getval":
            raise self.fail(inst, f"{inst.opcode} does not produce a value",
                            "destination-passing ops write their outs(...) operand")
        for group, values, roles in (("ins", inst.ins, info.ins), ("outs", inst.outs, info.outs)):
            required = sum(1 for r in roles if not r.optional)
            if not required <= len(values) <= len(roles):
                names = ", ".join(r.name + ("?" if r.optional else "") for r in roles)
                count = str(len(roles)) if required == len(roles) else f"{required}-{len(roles)}"
                raise self.fail(inst, f"{inst.opcode} takes {count} {group} operand(s) "
                                      f"({names}), got {len(values)}",
                                f"write {inst.opcode} ins({', '.join(r.name for r in info.ins)}) "
                                f"outs({', '.join(r.name for r in info.outs)})")
            for v, role in zip(values, roles):
                self.role(inst, v, role.name, role.kind, role.locs)
        self.known_attrs(inst, info)

    def known_attrs(self, inst: Instruction, info: OpInfo) -> None:
        for key, _ in inst.attrs:
            if key not in info.attrs:
                raise self.fail(inst, f"{inst.opcode} has no attribute '{key}'",
                                f"allowed: {', '.join(info.attrs) or 'none'}")

    def role(self, inst, v: Value, name: str, kind: str, locs) -> None:
        ty = v.type
        if kind == "tile":
            if not isinstance(ty, TileBufType):
                raise self.fail(inst, f"{inst.opcode}: {name} %{v.name} must be a tile, got {ty}",
                                "pass a value made by pto.alloc_tile")
            if locs and ty.loc not in locs:
                want = " or ".join(sorted(s.lower for s in locs))
                raise self.fail(inst, f"{inst.opcode}: {name} %{v.name} is in {ty.loc.lower}, "
                                      f"expected {want}",
                                f"allocate %{v.name} with loc={sorted(s.lower for s in locs)[0]}")
        elif kind == "tensor":
            if not isinstance(ty, TensorViewType):
                raise self.fail(inst, f"{inst.opcode}: {name} %{v.name} must be a GM tensor "
                                      f"view, got {_desc(ty)}", "make it with pto.make_tensor_view")
        elif kind == "view":
            if not isinstance(ty, PartitionViewType):
                raise self.fail(inst, f"{inst.opcode}: {name} %{v.name} must be a GM partition "
                                      f"view, got {_desc(ty)}", "make it with pto.partition_view")
        elif not isinstance(ty, ScalarType):
            raise self.fail(inst, f"{inst.opcode}: {name} %{v.name} must be a scalar, got {_desc(ty)}",
                            "pass an index / integer / float SSA value")

    # -- scalar rules -------------------------------------------------------------------------------
    def want_one_result(self, inst: Instruction) -> PtoType:
        if len(inst.results) != 1:
            raise self.fail(inst, f"{inst.opcode} defines exactly one value, got {len(inst.results)}")
        ty = inst.results[0].type
        if not isinstance(ty, ScalarType):
            raise self.fail(inst, f"{inst.opcode} result must be a scalar, got {ty}")
        return ty

    def rule_constant(self, inst: Instruction) -> None:
        ty = self.want_one_result(inst)
        value = inst.attr("value")
        if ty.dtype is DataType.BOOL:
            ok = isinstance(value, bool) or value in (0, 1)
        elif ty.dtype in _INT_TYPES:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            raise self.fail(inst, f"arith.constant {value!r} does not fit type {ty}",
                            "write an integer for index/iN, a float for fN, true/false for i1")

    def rule_binary(self, inst: Instruction) -> None:
        ty = self.want_one_result(inst)
        if len(inst.ins) != 2:
            raise self.fail(inst, f"{inst.opcode} takes 2 operands, got {len(inst.ins)}")
        for v in inst.ins:
            if v.type != ty:
                raise self.fail(inst, f"{inst.opcode}: operand %{v.name} is {v.type} but the result "
                                      f"is {ty}", "both operands and the result share one type")
        is_float = inst.opcode in _FLOAT_ARITH
        if is_float and ty.dtype not in _FLOAT_TYPES:
            raise self.fail(inst, f"{inst.opcode} needs float operands, got {ty}",
                            "use the integer op (addi, muli, ...) for index math")
        if not is_float and ty.dtype not in _INT_TYPES | {DataType.BOOL}:
            raise self.fail(inst, f"{inst.opcode} needs integer operands, got {ty}",
                            "use the float op (addf, mulf, ...) for floats")

    def rule_cmpi(self, inst: Instruction) -> None:
        pred = inst.attr("predicate")
        if pred not in CMPI_PREDICATES:
            raise self.fail(inst, f"arith.cmpi predicate '{pred}' is unknown",
                            f"use one of {', '.join(CMPI_PREDICATES)}")
        a, b = inst.ins
        if a.type != b.type or not _is_int(a.type):
            raise self.fail(inst, f"arith.cmpi compares {a.type} with {b.type}",
                            "compare two integer values of the same type")
        if len(inst.results) != 1 or inst.results[0].type != ScalarType(DataType.BOOL):
            raise self.fail(inst, "arith.cmpi defines one i1 value")

    def rule_select(self, inst: Instruction) -> None:
        ty = self.want_one_result(inst)
        c, a, b = inst.ins
        if c.type != ScalarType(DataType.BOOL):
            raise self.fail(inst, f"arith.select condition %{c.name} is {c.type}", "use an i1")
        if a.type != ty or b.type != ty:
            raise self.fail(inst, f"arith.select chooses between {a.type} and {b.type} into {ty}",
                            "all three types must match")

    def rule_cast(self, inst: Instruction) -> None:
        self.want_one_result(inst)
        if not isinstance(inst.ins[0].type, ScalarType):
            raise self.fail(inst, f"{inst.opcode} converts scalars, got {inst.ins[0].type}")

    # -- descriptor rules ----------------------------------------------------------------------------
    def rule_make_tensor_view(self, inst: Instruction) -> None:
        ptr = inst.ins[0]
        if not isinstance(ptr.type, PtrType):
            raise self.fail(inst, f"pto.make_tensor_view source %{ptr.name} is {ptr.type}",
                            "pass a !pto.ptr<dtype> kernel parameter")
        ty = inst.results[0].type if len(inst.results) == 1 else None
        if not isinstance(ty, TensorViewType):
            raise self.fail(inst, f"pto.make_tensor_view must produce a !pto.tensor_view, got {ty}")
        if ty.dtype != ptr.type.dtype:
            raise self.fail(inst, f"pto.make_tensor_view: pointer %{ptr.name} is "
                                  f"{ptr.type.dtype.pto_name} but the view is {ty.dtype.pto_name}",
                            "element types must match")
        shape, strides = inst.attr("shape", ()), inst.attr("strides", ())
        if not (len(shape) == len(strides) == len(ty.shape)):
            raise self.fail(inst, f"pto.make_tensor_view: rank {len(ty.shape)} view with "
                                  f"{len(shape)} sizes and {len(strides)} strides",
                            "give one size and one stride per dimension")
        for v in (*shape, *strides):
            if not _is_int(v.type):
                raise self.fail(inst, f"pto.make_tensor_view: %{v.name} is {v.type}, expected index")
        for i, (v, dim) in enumerate(zip(shape, ty.shape)):
            known = self.const(v)
            if dim is not None and known is not None and known != dim:
                raise self.fail(inst, f"pto.make_tensor_view: shape[{i}] is {known} but the type "
                                      f"says {dim}", "make the type agree or write ?")
        layout = inst.attr("layout")
        if layout is not None and not (isinstance(layout, EnumAttr) and layout.kind == "pto.layout"
                                       and layout.value in _LAYOUTS):
            raise self.fail(inst, f"pto.make_tensor_view: bad layout {layout}",
                            "use #pto.layout<nd>, #pto.layout<dn> or #pto.layout<nz>")
        for key, _ in inst.attrs:
            if key not in ("shape", "strides", "layout"):
                raise self.fail(inst, f"pto.make_tensor_view has no attribute '{key}'",
                                "allowed: layout")

    def rule_partition_view(self, inst: Instruction) -> None:
        src = inst.ins[0]
        if not isinstance(src.type, TensorViewType):
            raise self.fail(inst, f"pto.partition_view source %{src.name} is {_desc(src.type)}",
                            "partition a !pto.tensor_view made by pto.make_tensor_view")
        ty = inst.results[0].type if len(inst.results) == 1 else None
        if not isinstance(ty, PartitionViewType):
            raise self.fail(inst, f"pto.partition_view must produce a !pto.partition_tensor_view, "
                                  f"got {ty}")
        if ty.dtype != src.type.dtype:
            raise self.fail(inst, f"pto.partition_view: source is {src.type.dtype.pto_name} but the "
                                  f"window is {ty.dtype.pto_name}", "element types must match")
        offsets, sizes = inst.attr("offsets", ()), inst.attr("sizes", ())
        rank = len(src.type.shape)
        if not (len(offsets) == len(sizes) == rank == len(ty.shape)):
            raise self.fail(inst, f"pto.partition_view: rank-{rank} source with {len(offsets)} "
                                  f"offsets, {len(sizes)} sizes and a rank-{len(ty.shape)} result",
                            "give one offset and one size per dimension")
        for v in (*offsets, *sizes):
            if not _is_int(v.type):
                raise self.fail(inst, f"pto.partition_view: %{v.name} is {v.type}, expected index")
        for i, (v, dim) in enumerate(zip(sizes, ty.shape)):
            known = self.const(v)
            if dim is not None and known is not None and known != dim:
                raise self.fail(inst, f"pto.partition_view: sizes[{i}] is {known} but the result "
                                      f"type says {dim}", "make the sizes and the result type agree")
        for i, (v, dim) in enumerate(zip(offsets, src.type.shape)):
            known = self.const(v)
            if known is not None and known < 0:
                raise self.fail(inst, f"pto.partition_view: offsets[{i}] = {known} is negative")

    def _view_tiles(self, inst: Instruction) -> tuple[TileBufType, TileBufType]:
        src = inst.ins[0]
        res = inst.results[0] if len(inst.results) == 1 else None
        if not isinstance(src.type, TileBufType) or res is None \
                or not isinstance(res.type, TileBufType):
            raise self.fail(inst, f"{inst.opcode} re-views a !pto.tile_buf as another one",
                            f"write %v = {inst.opcode} %tile ... : T -> T2 with tile types")
        if res.type.loc is not src.type.loc:
            raise self.fail(inst, f"{inst.opcode}: %{src.name} is in {src.type.loc.value} but "
                                  f"the view is in {res.type.loc.value}",
                            "a view stays in its source's memory; move data with pto.tmov")
        return src.type, res.type

    def rule_treshape(self, inst: Instruction) -> None:
        src, ty = self._view_tiles(inst)
        have, need = src.rows * src.cols * src.dtype.nbytes, ty.rows * ty.cols * ty.dtype.nbytes
        if need > have:
            raise self.fail(inst, f"pto.treshape: the {ty.rows}x{ty.cols} "
                                  f"{ty.dtype.pto_name} view needs {need} bytes but %"
                                  f"{inst.ins[0].name} has {have}",
                            "a reshape keeps the bytes of its source")

    def rule_subview(self, inst: Instruction) -> None:
        src, ty = self._view_tiles(inst)
        if ty.dtype != src.dtype:
            raise self.fail(inst, f"pto.subview: source is {src.dtype.pto_name} but the view "
                                  f"is {ty.dtype.pto_name}", "element types must match")
        sizes = tuple(inst.attr("sizes", ()))
        if sizes != (ty.rows, ty.cols):
            raise self.fail(inst, f"pto.subview sizes {list(sizes)} differ from the view type's "
                                  f"{ty.rows}x{ty.cols}", "give sizes [rows, cols] of the view")
        for value, size, extent, what in ((inst.ins[1], ty.rows, src.rows, "row"),
                                          (inst.ins[2], ty.cols, src.cols, "column")):
            known = self.const(value)
            if known is not None and not 0 <= known <= extent - size:
                raise self.fail(inst, f"pto.subview: {what} offset {known} + {size} is outside "
                                      f"the source's {extent}",
                                "keep the window inside the source tile")

    def rule_alloc_tile(self, inst: Instruction) -> None:
        if len(inst.results) != 1 or not isinstance(inst.results[0].type, TileBufType):
            raise self.fail(inst, "pto.alloc_tile must define one !pto.tile_buf value")
        res = inst.results[0]
        ty: TileBufType = res.type
        name = f"tile %{res.name}"
        if ty.rows <= 0 or ty.cols <= 0:
            raise self.fail(inst, f"{name} has shape {ty.rows}x{ty.cols}", "rows and cols must be >= 1")
        for key, static, phys in (("valid_row", ty.v_row, ty.rows), ("valid_col", ty.v_col, ty.cols)):
            operand = inst.attr(key)
            short = "v_row" if key == "valid_row" else "v_col"
            if static is None and operand is None:
                raise self.fail(inst, f"{name} has dynamic {short}=? but no {key} operand",
                                f"write {key} = %n, or give a static {short}")
            if static is not None and operand is not None:
                raise self.fail(inst, f"{name} has static {short}={static} and a {key} operand",
                                f"use {short}=? with a {key} operand, or drop the operand")
            if static is not None and not 0 < static <= phys:
                raise self.fail(inst, f"{name}: {short}={static} is outside 1..{phys}",
                                "the valid shape must fit the physical shape")
            if operand is not None:
                if not _is_int(operand.type):
                    raise self.fail(inst, f"{name}: {key} %{operand.name} is {operand.type}",
                                    "use an index value")
                known = self.const(operand)
                if known is not None and not 0 < known <= phys:
                    raise self.fail(inst, f"{name}: {key} = {known} is outside 1..{phys}",
                                    "the valid shape must fit the physical shape")
        self.tile_shape_rules(inst, name, ty)
        space = ty.loc
        nbytes = self.target.tile_bytes(space, ty.rows, ty.cols, ty.dtype)
        cap = self.target.capacity(space)
        if nbytes > cap:
            raise self.fail(inst, f"{name} ({ty.rows}x{ty.cols} {ty.dtype.pto_name}) needs {nbytes} "
                                  f"bytes but {space.lower} holds {cap} on {self.target.name}",
                            "use a smaller tile")
        addr = inst.attr("addr")
        if addr is None:
            return
        if not _is_int(addr.type):
            raise self.fail(inst, f"{name}: addr %{addr.name} is {addr.type}", "use an i64 constant")
        at = self.const(addr)
        if at is None:
            return
        align = self.target.address_alignment
        if at < 0:
            raise self.fail(inst, f"{name}: address {at} is negative", "use an address >= 0")
        if at % align:
            raise self.fail(inst, f"{name}: address {at} is not {align}-byte aligned",
                            f"use {at - at % align} or {at - at % align + align}")
        if at + nbytes > cap:
            raise self.fail(inst, f"{name} at address {at} spans [{at}, {at + nbytes}) which exceeds "
                                  f"the {cap}-byte {space.lower} capacity on {self.target.name}",
                            f"place it at or below {cap - nbytes}" if nbytes <= cap else "shrink it")

    def tile_shape_rules(self, inst, name: str, ty: TileBufType) -> None:
        grid = self.target.fractal_alignment
        if ty.loc in (MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc):
            # Cube tiles are whole 16x16 fractals [S] (hw-model.md §1.3 "Cube tile dims").
            if ty.rows % grid or ty.cols % grid:
                raise self.fail(inst, f"{name}: {ty.loc.lower} tile {ty.rows}x{ty.cols} is not a "
                                      f"multiple of {grid} in both dims",
                                f"pad to {-(-ty.rows // grid) * grid}x{-(-ty.cols // grid) * grid} and "
                                "set the valid shape")
        if ty.loc is MemorySpace.Vec and ty.blayout == "col_major" and ty.cols == 1:
            # A DN column vector ([N, 1], e.g. a row-reduction result) is one contiguous column.
            col_bytes = ty.rows * ty.dtype.nbytes
            if col_bytes % self.target.address_alignment:
                raise self.fail(inst, f"{name}: a vec column of {ty.rows} {ty.dtype.pto_name} is "
                                      f"{col_bytes} bytes, not a multiple of "
                                      f"{self.target.address_alignment}",
                                "pad rows and set v_row to the valid height")
        elif ty.loc is MemorySpace.Vec:
            # Vector operands are 32-byte aligned [S] (hw-model.md §1.3), so each row is too.
            row_bytes = ty.cols * ty.dtype.nbytes
            if row_bytes % self.target.address_alignment:
                raise self.fail(inst, f"{name}: a vec row of {ty.cols} {ty.dtype.pto_name} is "
                                      f"{row_bytes} bytes, not a multiple of "
                                      f"{self.target.address_alignment}",
                                "pad cols and set v_col to the valid width")

    # -- moves --------------------------------------------------------------------------------------
    def check_path(self, inst, src: MemorySpace, dst: MemorySpace) -> None:
        if not self.target.can_move(src, dst):
            try:
                self.target.move_pipe(src, dst)
            except TargetError as exc:
                raise self.fail(inst, f"{inst.opcode}: {exc.message}", exc.hint) from None

    def fix_cast_ok(self, src: TileBufType, dst_dtype: DataType) -> bool:
        if src.loc is MemorySpace.Acc:
            return dst_dtype in _FIX_CASTS.get(src.dtype, {src.dtype})
        return dst_dtype == src.dtype

    def rule_tload(self, inst: Instruction) -> None:
        view, tile = inst.ins[0], inst.outs[0]
        self.check_path(inst, MemorySpace.DDR, tile.type.loc)
        if view.type.dtype != tile.type.dtype:
            raise self.fail(inst, f"pto.tload: GM window is {view.type.dtype.pto_name} but tile "
                                  f"%{tile.name} is {tile.type.dtype.pto_name}",
                            "load into a tile of the same dtype (convert later with pto.tcvt)")
        self.window_fits(inst, view, tile)

    def rule_tstore(self, inst: Instruction) -> None:
        tile, view = inst.ins[0], inst.outs[0]
        self.check_path(inst, tile.type.loc, MemorySpace.DDR)
        if not self.fix_cast_ok(tile.type, view.type.dtype):
            raise self.fail(inst, f"pto.tstore: cannot store {tile.type.loc.lower} "
                                  f"{tile.type.dtype.pto_name} tile %{tile.name} into a "
                                  f"{view.type.dtype.pto_name} window",
                            "only Acc f32 may narrow to bf16/f16 on the way out; match dtypes")
        self.window_fits(inst, view, tile)
        adds = atomic_add(inst)
        if adds is None:
            raise self.fail(inst, f"pto.tstore: atomicType {inst.attr('atomicType')} is not an "
                                  "atomic type", "write {atomicType = #pto<atomic_type "
                                                 "atomic_add>} or leave it out")
        dtype = view.type.dtype
        if adds and dtype not in self.target.atomic_add_dtypes:
            raise self.fail(inst, f"pto.tstore: atomic-add into a {dtype.pto_name} GM window is "
                                  f"not supported on target {self.target.name}",
                            "accumulate into an f32 tensor and cast after the reduction")

    def window_fits(self, inst, view: Value, tile: Value) -> None:
        vr, vc = view.type.rows, view.type.cols
        t: TileBufType = tile.type
        if (vr is not None and vr > t.rows) or (vc is not None and vc > t.cols):
            raise self.fail(inst, f"{inst.opcode}: GM window {vr}x{vc} does not fit tile "
                                  f"%{tile.name} ({t.rows}x{t.cols})",
                            "use a window no larger than the tile")

    def offsets_fit(self, inst, big: Value, small: Value, row: Value, col: Value, verb: str) -> None:
        for v, what in ((row, "row"), (col, "col")):
            if not _is_int(v.type):
                raise self.fail(inst, f"{inst.opcode}: {what} offset %{v.name} is {v.type}",
                                "offsets are index values")
        b: TileBufType = big.type
        s: TileBufType = small.type
        r, c = self.const(row), self.const(col)
        grid = self.target.fractal_alignment
        for value, what in ((r, "row"), (c, "col")):
            # Window offsets are whole fractals [S] (hw-model.md §4.1 textract "offsets 16-aligned").
            if value is not None and value % grid:
                raise self.fail(inst, f"{inst.opcode}: {what} offset {value} is not a multiple of "
                                      f"{grid}", f"use {value - value % grid} or "
                                                 f"{value - value % grid + grid}")
        if r is not None and (r < 0 or r + s.rows > b.rows):
            raise self.fail(inst, f"{inst.opcode}: rows [{r}, {r + s.rows}) {verb} %{big.name} with "
                                  f"{b.rows} rows", "use a smaller row offset or tile")
        if c is not None and (c < 0 or c + s.cols > b.cols):
            raise self.fail(inst, f"{inst.opcode}: cols [{c}, {c + s.cols}) {verb} %{big.name} with "
                                  f"{b.cols} cols", "use a smaller col offset or tile")

    def rule_textract(self, inst: Instruction) -> None:
        src, row, col = inst.ins
        dst = inst.outs[0]
        self.check_path(inst, src.type.loc, dst.type.loc)
        if not self.fix_cast_ok(src.type, dst.type.dtype):
            raise self.fail(inst, f"pto.textract: {src.type.dtype.pto_name} source %{src.name} into "
                                  f"{dst.type.dtype.pto_name} destination %{dst.name}",
                            "extract keeps the dtype (only Acc f32 may narrow to bf16/f16)")
        self.offsets_fit(inst, src, dst, row, col, "exceed source")

    def rule_tinsert(self, inst: Instruction) -> None:
        src, row, col = inst.ins
        dst = inst.outs[0]
        self.check_path(inst, src.type.loc, dst.type.loc)
        if not self.fix_cast_ok(src.type, dst.type.dtype):
            raise self.fail(inst, f"pto.tinsert: {src.type.dtype.pto_name} source %{src.name} into "
                                  f"{dst.type.dtype.pto_name} destination %{dst.name}",
                            "Acc f32 may narrow to bf16/f16; otherwise match dtypes")
        self.offsets_fit(inst, dst, src, row, col, "exceed destination")

    def rule_tmov(self, inst: Instruction) -> None:
        src, dst = inst.ins[0], inst.outs[0]
        self.check_path(inst, src.type.loc, dst.type.loc)
        if not self.fix_cast_ok(src.type, dst.type.dtype):
            raise self.fail(inst, f"pto.tmov: {src.type.dtype.pto_name} source %{src.name} into "
                                  f"{dst.type.dtype.pto_name} destination %{dst.name}",
                            "tmov keeps the dtype (only Acc f32 may narrow); use pto.tcvt")
        if src.type.shape != dst.type.shape:
            raise self.fail(inst, f"pto.tmov: shape mismatch {src.type.rows}x{src.type.cols} -> "
                                  f"{dst.type.rows}x{dst.type.cols}",
                            "tmov copies a whole tile; use pto.textract for a window")

    # -- cube ---------------------------------------------------------------------------------------
    def mad(self, inst, lhs: Value, rhs: Value, dst: Value) -> None:
        a, b, c = lhs.type, rhs.type, dst.type
        try:
            shape = self.target.mad_shape(a.dtype, b.dtype)
        except TargetError as exc:
            raise self.fail(inst, f"{inst.opcode}: dtype mismatch: {exc.message}", exc.hint) from None
        if c.dtype != shape.acc:
            raise self.fail(inst, f"{inst.opcode}: dtype mismatch: {a.dtype.pto_name} x "
                                  f"{b.dtype.pto_name} accumulates in {shape.acc.pto_name}, but "
                                  f"%{dst.name} is {c.dtype.pto_name}",
                            f"allocate the accumulator with dtype={shape.acc.pto_name}")
        if a.cols != b.rows or a.rows != c.rows or b.cols != c.cols:
            raise self.fail(inst, f"{inst.opcode}: shape mismatch: lhs {a.rows}x{a.cols} x rhs "
                                  f"{b.rows}x{b.cols} -> dst {c.rows}x{c.cols}",
                            "need lhs MxK, rhs KxN and dst MxN")
        for x, y, what in ((a.v_col, b.v_row, "K"), (a.v_row, c.v_row, "M"), (b.v_col, c.v_col, "N")):
            if x is not None and y is not None and x != y:
                raise self.fail(inst, f"{inst.opcode}: shape mismatch: valid {what} differs "
                                      f"({x} vs {y})", "make the valid shapes agree")

    def rule_matmul(self, inst: Instruction) -> None:
        self.mad(inst, inst.ins[0], inst.ins[1], inst.outs[0])

    def rule_matmul_acc(self, inst: Instruction) -> None:
        acc, lhs, rhs = inst.ins
        dst = inst.outs[0]
        if acc.type != dst.type:
            raise self.fail(inst, f"pto.tmatmul.acc: accumulator %{acc.name} ({_desc(acc.type)}) and "
                                  f"destination %{dst.name} ({_desc(dst.type)}) differ",
                            "accumulate in place: pass the same accumulator tile twice")
        self.mad(inst, lhs, rhs, dst)

    def rule_matmul_bias(self, inst: Instruction) -> None:
        lhs, rhs, bias = inst.ins
        dst = inst.outs[0]
        self.mad(inst, lhs, rhs, dst)
        bt: TileBufType = bias.type
        if bt.dtype != dst.type.dtype:
            raise self.fail(inst, f"pto.tmatmul.bias: dtype mismatch: bias %{bias.name} is "
                                  f"{bt.dtype.pto_name}, accumulator is {dst.type.dtype.pto_name}",
                            "the bias has the accumulator's dtype")
        if bt.rows != 1 or bt.cols < dst.type.cols:
            raise self.fail(inst, f"pto.tmatmul.bias: shape mismatch: bias is {bt.rows}x{bt.cols}, "
                                  f"need 1x{dst.type.cols}", "a bias is one row of N values")

    # -- vector -------------------------------------------------------------------------------------
    def same(self, inst, x: Value, y: Value, dtype: bool = True) -> None:
        if x.type.shape != y.type.shape:
            raise self.fail(inst, f"{inst.opcode}: shape mismatch: %{x.name} is "
                                  f"{x.type.rows}x{x.type.cols}, %{y.name} is {y.type.rows}x{y.type.cols}",
                            "elementwise operands share one shape")
        if dtype and x.type.dtype != y.type.dtype:
            raise self.fail(inst, f"{inst.opcode}: dtype mismatch: %{x.name} is "
                                  f"{x.type.dtype.pto_name}, %{y.name} is {y.type.dtype.pto_name}",
                            "convert with pto.tcvt first")

    def scalar_matches(self, inst, s: Value, tile: Value) -> None:
        sd, td = s.type.dtype, tile.type.dtype
        if (sd in _FLOAT_TYPES) != (td in _FLOAT_TYPES):
            raise self.fail(inst, f"{inst.opcode}: dtype mismatch: scalar %{s.name} is {sd.pto_name} "
                                  f"but tile %{tile.name} is {td.pto_name}",
                            "use a float scalar for float tiles and an integer for integer tiles")

    def rule_elementwise(self, inst: Instruction) -> None:
        """Every tile operand but the scratch ``tmp`` has the destination's shape and dtype;
        every scalar the destination's number class."""
        dst = inst.outs[0]
        roles = OP_TABLE[inst.opcode].ins
        for v, role in zip(inst.ins, roles):
            if role.name == "tmp":
                continue
            if role.kind == "tile":
                self.same(inst, v, dst)
            else:
                self.scalar_matches(inst, v, dst)

    def rule_partial(self, inst: Instruction) -> None:
        for v in inst.ins:
            self.same_dtype(inst, v, inst.outs[0])

    def rule_fill(self, inst: Instruction) -> None:
        s, dst = inst.ins[0], inst.outs[0]
        if inst.opcode == "pto.texpands":
            self.scalar_matches(inst, s, dst)
        elif s.type.dtype not in _INT_TYPES:
            raise self.fail(inst, f"{inst.opcode}: %{s.name} must be an integer, got "
                                  f"{s.type.dtype.pto_name}", "pass an index or i32 value")

    def same_dtype(self, inst, v: Value, ref: Value) -> None:
        if v.type.dtype != ref.type.dtype:
            raise self.fail(inst, f"{inst.opcode}: dtype mismatch: %{v.name} is "
                                  f"{v.type.dtype.pto_name}, %{ref.name} is "
                                  f"{ref.type.dtype.pto_name}", "convert with pto.tcvt first")

    def same_dim(self, inst, what: str, got: int, want: int, fix: str) -> None:
        if got != want:
            raise self.fail(inst, f"{inst.opcode}: shape mismatch: {what} is {got}, expected "
                                  f"{want}", fix)

    def rule_convert(self, inst: Instruction) -> None:
        self.same(inst, inst.ins[0], inst.outs[0], dtype=False)
        mode = inst.attr("rmode")
        if mode is not None and not (isinstance(mode, EnumAttr) and mode.kind == "pto.round_mode"
                                     and mode.value in ROUND_MODES):
            raise self.fail(inst, f"pto.tcvt: bad rounding mode {mode}",
                            f"use #pto.round_mode<m> with m in {', '.join(ROUND_MODES)}")

    def rule_row_reduce(self, inst: Instruction) -> None:
        a, tmp = inst.ins
        dst = inst.outs[0]
        for v in (tmp, dst):
            if v.type.dtype != a.type.dtype:
                raise self.fail(inst, f"{inst.opcode}: dtype mismatch: %{v.name} is "
                                      f"{v.type.dtype.pto_name}, source is {a.type.dtype.pto_name}",
                                "source, scratch and result share one dtype")
        if tmp.type.rows < a.type.rows or tmp.type.cols < a.type.cols:
            raise self.fail(inst, f"{inst.opcode}: scratch %{tmp.name} ({tmp.type.rows}x"
                                  f"{tmp.type.cols}) is smaller than the source ({a.type.rows}x"
                                  f"{a.type.cols})", "use a scratch tile at least as large")
        if dst.type.rows != a.type.rows:
            raise self.fail(inst, f"{inst.opcode}: shape mismatch: result has {dst.type.rows} rows, "
                                  f"source {a.type.rows}", "one result row per source row")

    def rule_getval(self, inst: Instruction) -> None:
        src, offset = inst.ins
        result = self.want_one_result(inst)
        if result.dtype is not src.type.dtype:
            raise self.fail(inst, f"{inst.opcode}: the result is {result.dtype.pto_name} but "
                                  f"%{src.name} holds {src.type.dtype.pto_name}",
                            "read into a scalar of the element type")
        self.index_like(inst, offset)

    def rule_setval(self, inst: Instruction) -> None:
        offset, value = inst.ins
        self.index_like(inst, offset)
        self.scalar_matches(inst, value, inst.outs[0])

    def index_like(self, inst, v: Value) -> None:
        if v.type.dtype not in _INT_TYPES:
            raise self.fail(inst, f"{inst.opcode}: offset %{v.name} must be an index, got "
                                  f"{v.type.dtype.pto_name}", "pass an index value")

    def rule_arg_reduce(self, inst: Instruction) -> None:
        """trowargmax/min: one i32 index per row; tcolargmax/min: one per column."""
        a, dst = inst.ins[0], inst.outs[0]
        if dst.type.dtype not in _INT_TYPES:
            raise self.fail(inst, f"{inst.opcode}: the index result %{dst.name} must be an integer "
                                  f"tile, got {dst.type.dtype.pto_name}", "use an i32 result tile")
        if inst.opcode.startswith("pto.trow"):
            self.same_dim(inst, "result rows", dst.type.rows, a.type.rows, "one index per row")
        else:
            self.same_dim(inst, "result cols", dst.type.cols, a.type.cols, "one index per column")

    def rule_col_reduce(self, inst: Instruction) -> None:
        a, dst = inst.ins[0], inst.outs[0]
        self.same_dtype(inst, a, dst)
        self.same_dim(inst, "result cols", dst.type.cols, a.type.cols, "one result per column")

    def rule_col_broadcast(self, inst: Instruction) -> None:
        b, dst = inst.ins[0], inst.outs[0]
        self.same_dtype(inst, b, dst)
        self.same_dim(inst, "source cols", b.type.cols, dst.type.cols, "one source per column")

    def rule_col_expand(self, inst: Instruction) -> None:
        a, b = inst.ins
        dst = inst.outs[0]
        self.same(inst, a, dst)
        self.same_dtype(inst, b, a)
        self.same_dim(inst, "column operand cols", b.type.cols, a.type.cols,
                      "one per-column value per column")

    def rule_compare(self, inst: Instruction) -> None:
        a, other = inst.ins
        dst = inst.outs[0]
        if isinstance(other.type, TileBufType):
            self.same(inst, a, other)
        else:
            self.scalar_matches(inst, other, a)
        if dst.type.dtype not in (DataType.UINT8, DataType.INT8):
            raise self.fail(inst, f"{inst.opcode}: the mask %{dst.name} must be a ui8 tile, got "
                                  f"{dst.type.dtype.pto_name}", "allocate the mask as ui8")
        self.same_dim(inst, "mask rows", dst.type.rows, a.type.rows, "one mask row per row")
        mode = inst.attr("cmpMode")
        if mode is not None and not (isinstance(mode, EnumAttr) and mode.value in CMP_MODES):
            raise self.fail(inst, f"{inst.opcode}: bad comparison mode {mode}",
                            f"use #pto.cmp<m> with m in {', '.join(CMP_MODES)}")

    def rule_tile_select(self, inst: Instruction) -> None:
        mask, dst = inst.ins[0], inst.outs[0]
        if mask.type.dtype not in _INT_TYPES:
            raise self.fail(inst, f"{inst.opcode}: mask %{mask.name} must be an integer tile, got "
                                  f"{mask.type.dtype.pto_name}", "pass the ui8 result of pto.tcmp")
        roles = OP_TABLE[inst.opcode].ins
        for v, role in zip(inst.ins[1:], roles[1:]):
            if role.name in ("a", "b"):
                self.same(inst, v, dst)
            elif role.kind == "scalar":
                self.scalar_matches(inst, v, dst)

    def rule_fillpad(self, inst: Instruction) -> None:
        a, dst = inst.ins[0], inst.outs[0]
        self.same_dtype(inst, a, dst)
        if dst.type.rows < a.type.rows or dst.type.cols < a.type.cols:
            raise self.fail(inst, f"{inst.opcode}: destination {dst.type.rows}x{dst.type.cols} is "
                                  f"smaller than the source {a.type.rows}x{a.type.cols}",
                            "fill into a tile at least as large as the source")

    def rule_concat(self, inst: Instruction) -> None:
        a, b = inst.ins
        dst = inst.outs[0]
        self.same_dtype(inst, a, dst)
        self.same_dtype(inst, b, dst)
        self.same_dim(inst, "second operand rows", b.type.rows, a.type.rows, "concat equal rows")

    def rule_transpose(self, inst: Instruction) -> None:
        a, dst = inst.ins[0], inst.outs[0]
        self.same_dtype(inst, a, dst)

    def rule_row_broadcast(self, inst: Instruction) -> None:
        b, dst = inst.ins[0], inst.outs[0]
        if b.type.dtype != dst.type.dtype:
            raise self.fail(inst, f"{inst.opcode}: dtype mismatch: {b.type.dtype.pto_name} -> "
                                  f"{dst.type.dtype.pto_name}", "match dtypes")
        if b.type.rows != dst.type.rows:
            raise self.fail(inst, f"{inst.opcode}: shape mismatch: %{b.name} has {b.type.rows} rows, "
                                  f"%{dst.name} {dst.type.rows}", "one source row per result row")

    def rule_row_expand(self, inst: Instruction) -> None:
        a, b = inst.ins
        dst = inst.outs[0]
        self.same(inst, a, dst)
        if b.type.dtype != a.type.dtype:
            raise self.fail(inst, f"{inst.opcode}: dtype mismatch: %{b.name} is "
                                  f"{b.type.dtype.pto_name}, %{a.name} is {a.type.dtype.pto_name}",
                            "match dtypes")
        if b.type.rows != a.type.rows:
            raise self.fail(inst, f"{inst.opcode}: shape mismatch: row operand %{b.name} has "
                                  f"{b.type.rows} rows, %{a.name} has {a.type.rows}",
                            "one per-row value per row")
