"""The scalar unit: walk a PTO kernel in program order and emit the instruction stream.

Why first and separate: control flow in PTO depends only on constants, loop counters and
scalar kernel parameters (never on tile data), so the whole dynamic stream — loops
unrolled, ``scf.if`` decided, addresses and GM windows resolved — can be built before any
timing. Each emitted ``Instr`` carries its pipe, its cost from the timing profile, the
byte ranges it reads and writes, and two closures: ``read`` (run at the instruction's
start, computes the result from the operands as they are then) and ``commit`` (run at its
end, writes the result).
"""

from __future__ import annotations

import numpy as np

from ptoc.backend import NUM_EVENT_IDS, Pipe, Target, TimingProfile
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import SourceLoc
from ptoc.pto.model import (
    EnumAttr, ForOp, IfOp, Instruction, Kernel, PtrType, SyncOp, TileBufType, Value, WhileOp,
    YieldOp,
)
from ptoc.pto.ops import OP_TABLE

from ptoc.sim.core import scalars, vector
from ptoc.sim.core.binding import bind_params
from ptoc.sim.errors import SimLimitError, SimProgramError
from ptoc.sim.gm import GMPointer, GMView, GMWindow, make_view, make_window
from ptoc.sim.global_memory import GMTensor
from ptoc.sim.instr import BARRIER, SET, WAIT, WORK, Instr
from ptoc.sim.limits import DEFAULT_LIMITS, SimLimits
from ptoc.sim.core.memory import BufferMemory, TileRef
from ptoc.sim.core.runtime_scalar import RuntimeScalar, lift
from ptoc.sim.core.tileops import ELEMENT_ACCESS, TileOps

#: Tile ops with their own lowering method (vector ops share ``_vector``).
_TILE_HANDLERS = {
    "pto.tload": "_tload", "pto.tstore": "_tstore", "pto.textract": "_textract",
    "pto.tmov": "_tmov", "pto.tinsert": "_tinsert", "pto.tmatmul": "_matmul",
    "pto.tmatmul.acc": "_matmul", "pto.tmatmul.bias": "_matmul", "pto.tgemv": "_matmul",
    "pto.tgemv.acc": "_matmul", "pto.tgemv.bias": "_matmul",
}
#: Ops that set up or use a cross-core pipe: handled by the core group (``port``).
_CROSS_CORE = frozenset(code for code, info in OP_TABLE.items() if info.category == "cross_core")
_SCALAR_OTHER = frozenset(scalars.CASTS) | {"arith.cmpi"}
#: Opcodes that issue one pipe instruction each.
WORK_OPCODES = frozenset(_TILE_HANDLERS) | frozenset(vector.ALL_VECTOR_OPS)


class ScalarUnit(TileOps):
    """Builds the dynamic instruction stream of one kernel (see module doc).

    In a core group (``ptoc.sim.group``) each core has its own unit: ``core``/``unit`` name
    it, ``subblock`` is what ``pto.get_subblock_idx`` returns on it, ``port`` handles its
    cross-core pipe ops, and ``instrs`` is the group's shared stream (so ``seq`` numbers are
    unique across cores). ``regions`` maps pointer parameters to their GM regions, so GM
    accesses are named by allocation (two parameters on one tensor share bytes).
    """

    def __init__(self, kernel: Kernel, bindings: dict[str, object], target: Target,
                 profile: TimingProfile, memory: BufferMemory, *, mad_mode: str,
                 filename: str = "<pto>", core: int = 0, unit: str = "", subblock: int = 0,
                 port=None, instrs: list[Instr] | None = None,
                 limits: SimLimits = DEFAULT_LIMITS,
                 regions: dict[str, GMTensor] | None = None):
        self.kernel = kernel
        self.target = target
        self.profile = profile
        self.memory = memory
        self.mad_mode = mad_mode
        self.filename = filename
        self.core = core
        self.unit = unit
        self.subblock = subblock
        self.port = port
        self.env: dict[str, object] = dict(bindings)
        self.regions: dict[str, GMTensor] = dict(regions or {})
        #: the GM pointer of each pointer parameter the kernel views (re-pointed to replay)
        self.pointers: dict[str, GMPointer] = {}
        self.instrs: list[Instr] = [] if instrs is None else instrs
        self._static: dict[int, int] = {}
        self._op: object = None
        self._sync_cache: dict[int, tuple] = {}
        self._cost_cache: dict[tuple, float] = {}
        self._cost_key: tuple | None = None
        self._work_cache: dict[tuple, Instr] = {}
        self.limits = limits
        self.scalar_steps = 0
        self._handlers = {code: getattr(self, name) for code, name in _TILE_HANDLERS.items()}

    # -- walking -------------------------------------------------------------------------
    def run(self) -> list[Instr]:
        self._block(self.kernel.body)
        return self.instrs

    def _block(self, body) -> tuple | None:
        self.scalar_steps += len(body) + 1
        if self.scalar_steps > self.limits.max_scalar_steps:
            raise SimLimitError(
                f"more than {self.limits.max_scalar_steps:,} scalar steps (loop iterations and "
                f"the ops they run) after {len(self.instrs):,} instructions; a loop runs far "
                "longer than intended", self._loc(self._op),
                hint="check the loop bounds, or raise SimLimits(max_scalar_steps=...)")
        for op in body:
            self._op = op
            if isinstance(op, Instruction):
                self._instruction(op)
            elif isinstance(op, SyncOp):
                self._sync(op)
            elif isinstance(op, ForOp):
                self._for(op)
            elif isinstance(op, WhileOp):
                self._while(op)
            elif isinstance(op, IfOp):
                self._if(op)
            elif isinstance(op, YieldOp):
                return tuple(self._get(v) for v in op.values)
        return None

    def _for(self, op: ForOp) -> None:
        lo, hi, step = (self._int(op.lower, "lower bound"), self._int(op.upper, "upper bound"),
                        self._int(op.step, "step"))
        if step <= 0:
            raise SimProgramError(f"scf.for %{op.iv.name} has step {step}; it must be positive",
                                  self._loc(op), hint="use a positive step")
        carried = [self._get(init) for _, init in op.iter_args]
        for i in range(lo, hi, step):
            self.env[op.iv.name] = i
            for (arg, _), value in zip(op.iter_args, carried):
                self.env[arg.name] = value
            yielded = self._block(op.body)
            if op.iter_args:
                carried = list(yielded or ())
            self._op = op
        for res, value in zip(op.results, carried):
            self.env[res.name] = value

    def _while(self, op: WhileOp) -> None:
        """The condition region runs before every trip; its value must be known while the
        instruction stream is built (as a branch's). It reads only the carried scalars and
        values fixed before the loop, so a trip that leaves the carries unchanged means the
        loop never ends (an error at once); any other endless loop stops at the scalar-step
        limit (``SimLimits.max_scalar_steps``) with a SimLimitError."""
        carried = [self._get(init) for _, init in op.iter_args]
        while True:
            for (arg, _), value in zip(op.iter_args, carried):
                self.env[arg.name] = value
            self._block(op.cond[:-1])
            test = op.condition
            self._op = test
            cond = self._get(test.cond)
            if isinstance(cond, RuntimeScalar):
                raise SimProgramError(
                    f"scf.condition %{test.cond.name} depends on tile data read while the kernel "
                    "runs; the simulator decides loop trips before it runs", self._loc(op),
                    hint="keep while conditions independent of values read from tiles (or from "
                         "GM the kernel writes); values read from input tensors are fine")
            handed = [self._get(v) for v in test.values]
            if not cond:
                break
            for arg, value in zip(op.body_args, handed):
                self.env[arg.name] = value
            yielded = list(self._block(op.body) or ())
            self._op = op
            if yielded == carried and not any(isinstance(v, RuntimeScalar) for v in carried):
                raise SimProgramError(
                    f"the scf.while loop never ends: a trip leaves its carried scalars as they "
                    f"were ({', '.join(map(str, carried)) or 'it carries none'}), so its "
                    "condition stays true", self._loc(op),
                    hint="change a value the condition tests in every trip (e.g. i = i + 1)")
            carried = yielded
        for res, value in zip(op.results, handed):
            self.env[res.name] = value

    def _if(self, op: IfOp) -> None:
        cond = self._get(op.cond)
        if isinstance(cond, RuntimeScalar):
            raise SimProgramError(
                f"scf.if condition %{op.cond.name} depends on tile data read while the kernel "
                "runs; the simulator decides branches before it runs", self._loc(op),
                hint="keep branch conditions independent of pl.read values")
        yielded = self._block(op.then_body if cond else op.else_body)
        for res, value in zip(op.results, yielded or ()):
            self.env[res.name] = value

    # -- scalar ops and descriptors ------------------------------------------------------
    def _instruction(self, op: Instruction) -> None:
        code = op.opcode
        handler = self._handlers.get(code)
        if handler is None and code in vector.ALL_VECTOR_OPS:
            handler = self._vector
        if handler is not None:
            self._work(op, handler)
        elif code in ELEMENT_ACCESS:
            self._element_access(op)
        elif code == "arith.constant":
            self._set(op.result, op.attr("value"))
        elif code in scalars.ARITH:
            self._scalar_op(op, lambda a, b: scalars.arith(code, a, b, op.result.name),
                            op.ins[:2])
        elif code in _SCALAR_OTHER:
            self._scalar_op(op, lambda *args: self._scalar(op, code, *args),
                            op.ins[:1] if code in scalars.CASTS else op.ins[:2])
        elif code == "arith.select":
            self._scalar_op(op, lambda c, a, b: a if c else b, op.ins[:3])
        elif code == "pto.get_subblock_idx":
            self._set(op.result, self.subblock)
        elif code in _CROSS_CORE:
            if self.port is None:
                raise SimProgramError(
                    f"{code} exchanges tiles with another core, but simulate() runs one core",
                    self._loc(op), hint="run the module with ptoc.sim.simulate_group (ptoc sim "
                                        "does so for a module with a cube and a vector kernel)")
            self.port.issue(self, op)
        elif code == "pto.make_tensor_view":
            self._make_view(op)
        elif code == "pto.partition_view":
            self._partition(op)
        elif code == "pto.alloc_tile":
            self._alloc(op)
        elif code in ("func.return", "return"):
            return
        else:
            raise SimProgramError(f"the simulator does not support op {code!r}", self._loc(op),
                                  hint="use the ops listed in ptoc.sim's docs, or extend "
                                       "ptoc.sim.core.issue")

    def _scalar_op(self, op: Instruction, fn, operands) -> None:
        """A scalar-unit op; deferred to run time when an operand is a ``RuntimeScalar``.
        Errors (``ptoc.sim.core.scalars``) name the op's PTO line either way."""
        def located(*args):
            try:
                return fn(*args)
            except SimProgramError as err:
                raise self._located(err, op) from None

        args = tuple(self._get(v) for v in operands)
        if any(isinstance(a, RuntimeScalar) for a in args):
            self._set(op.result, lift(located, args, f"%{op.result.name}"))
        else:
            self._set(op.result, located(*args))

    def _work(self, op: Instruction, handler) -> None:
        """Lower a tile op, reusing the lowering of an earlier iteration when every operand
        (tiles, offsets) is the same: only the new Instr record is made."""
        env = self.env
        key = None
        vals = tuple(env.get(v.name) for v in op.ins) + tuple(env.get(v.name) for v in op.outs)
        if all(isinstance(x, (TileRef, int, float)) for x in vals):
            key = (id(op), vals)
            tpl = self._work_cache.get(key)
            if tpl is not None:
                self._cost_key = tpl.cost_key
                self._emit(op, tpl.pipe, tpl.kind, tpl.name, tpl.cost, reads=tpl.reads,
                           writes=tpl.writes, read=tpl.read, commit=tpl.commit)
                return
        count = len(self.instrs)
        handler(op)
        if key is not None and len(self.instrs) == count + 1:
            self._work_cache[key] = self.instrs[-1]

    def _scalar(self, op: Instruction, code: str, *args):
        """The value of a cast or compare (``ptoc.sim.core.scalars`` says what is an error)."""
        if code in scalars.CASTS:
            return scalars.cast(code, args[0], op.result.name, op.result.type.dtype)
        a, b = args
        pred = op.attr("predicate")
        pred = pred.value if isinstance(pred, EnumAttr) else str(pred)
        return scalars.compare(pred, a, b, op.result.name)

    def _located(self, err: SimProgramError, op) -> SimProgramError:
        """``err`` (raised by ``scalars`` without a location) at ``op``'s PTO line, naming
        the DSL source line too when the op carries one."""
        if err.loc is not None:
            return err
        source = f" (source {op.loc})" if op.loc is not None else ""
        return SimProgramError(err.message + source, self._loc(op), hint=err.hint)

    def _make_view(self, op: Instruction) -> None:
        ptr = op.ins[0]
        flat = self._get(ptr)
        if not isinstance(flat, np.ndarray):
            raise SimProgramError(f"make_tensor_view needs a GM pointer, %{ptr.name} is not one",
                                  self._loc(op), hint="pass a !pto.ptr kernel parameter")
        shape = [self._int(v, "shape") for v in op.attr("shape", ())]
        strides = [self._int(v, "stride") for v in op.attr("strides", ())]
        dtype = ptr.type.dtype if isinstance(ptr.type, PtrType) else DataType.from_numpy(flat.dtype)
        region = self.regions.get(ptr.name)
        space, origin = (region.name, region.offset) if region is not None else (ptr.name, 0)
        pointer = self.pointers.get(ptr.name)
        if pointer is None or pointer.flat is not flat:
            pointer = self.pointers[ptr.name] = GMPointer(flat)
        self._set(op.result, make_view(ptr.name, pointer, dtype, shape, strides, self._loc(op),
                                       space=space, origin=origin))

    def _partition(self, op: Instruction) -> None:
        view = self._get(op.ins[0])
        if not isinstance(view, GMView):
            raise SimProgramError(f"partition_view source %{op.ins[0].name} is not a tensor view",
                                  self._loc(op), hint="partition a pto.make_tensor_view result")
        offsets = [self._int(v, "offset") for v in op.attr("offsets", ())]
        sizes = [self._int(v, "size") for v in op.attr("sizes", ())]
        self._set(op.result, make_window(view, offsets, sizes, self._loc(op)))

    def _alloc(self, op: Instruction) -> None:
        ty = op.result.type
        if not isinstance(ty, TileBufType):
            raise SimProgramError(f"alloc_tile result %{op.result.name} is not a !pto.tile_buf",
                                  self._loc(op), hint="give it a !pto.tile_buf<...> type")
        addr_v = op.attr("addr")
        if addr_v is None:
            raise SimProgramError(
                f"tile %{op.result.name} ({ty.loc.value}) has no address", self._loc(op),
                hint="run the PTO memory planner first (Level-2 PTO without addresses), or "
                     "write `addr = %c...` on pto.alloc_tile")
        addr = self._int(addr_v, "addr")
        vr = ty.v_row if ty.v_row is not None else self._opt_int(op.attr("valid_row"), ty.rows)
        vc = ty.v_col if ty.v_col is not None else self._opt_int(op.attr("valid_col"), ty.cols)
        if (vr == 0 or vc == 0) and vr <= ty.rows and vc <= ty.cols:
            raise SimProgramError(
                f"tile %{op.result.name}: valid shape {vr}x{vc} of {ty.rows}x{ty.cols}: its "
                "window holds no data (a valid extent computed at run time, such as "
                "clamp(valid - offset, 0, window), is 0), and a tile needs at least one valid "
                "row and column (pto-isa)", self._loc(op),
                hint="skip empty windows: bound the loop by the valid extent, e.g. "
                     "pl.range(0, pl.min(m - i, T), step), or guard the window with an if")
        if not (0 < vr <= ty.rows and 0 < vc <= ty.cols):
            raise SimProgramError(
                f"tile %{op.result.name}: valid shape {vr}x{vc} must be within its physical "
                f"shape {ty.rows}x{ty.cols}", self._loc(op), hint="shrink valid_row/valid_col")
        nbytes = self.target.tile_bytes(ty.loc, ty.rows, ty.cols, ty.dtype)
        zn = ty.loc is MemorySpace.Mat and (ty.blayout, ty.slayout) == ("row_major", "col_major")
        pitch = self._opt_int(op.attr("row_stride"), ty.cols)
        if pitch != ty.cols:
            if ty.loc is not MemorySpace.Vec or ty.blayout != "row_major" or pitch < ty.cols:
                raise SimProgramError(
                    f"tile %{op.result.name}: row_stride {pitch} needs a row-major Vec tile "
                    f"and at least its {ty.cols} columns", self._loc(op),
                    hint="give row_stride only to column windows of row-major Vec tiles")
            nbytes = ((ty.rows - 1) * pitch + ty.cols) * ty.dtype.nbytes
        tile = TileRef(op.result.name, ty.loc, addr, ty.rows, ty.cols, ty.dtype, vr, vc, nbytes,
                       buffer=self.memory.buffer_name(ty.loc), pad=ty.pad, transposed=zn,
                       pitch=0 if pitch == ty.cols else pitch)
        self.memory.check_tile(tile, self._loc(op))
        self._set(op.result, tile)

    # -- sync ----------------------------------------------------------------------------
    def _sync(self, op: SyncOp) -> None:
        cached = self._sync_cache.get(id(op))
        if cached is not None:
            pipe, kind, name, flag = cached
            self._emit(op, pipe, kind, name, 0.0).flag = flag
            return
        loc = self._loc(op)
        if op.kind == "barrier":
            pipe = op.pipe or Pipe.PIPE_ALL
            if pipe is Pipe.PIPE_S:
                return
            self._emit(op, pipe, BARRIER, f"pto.barrier {pipe.name}", 0.0)
            return
        src, dst = op.src, op.dst
        event = op.event if isinstance(op.event, int) else self._int(op.event, "event id")
        if not 0 <= event < NUM_EVENT_IDS:
            raise SimProgramError(f"{op.opcode} event id {event} is out of range", loc,
                                  hint=f"use EVENT_ID0..EVENT_ID{NUM_EVENT_IDS - 1}")
        for role, pipe in (("source", src), ("destination", dst)):
            if pipe in (None, Pipe.PIPE_ALL, Pipe.PIPE_S):
                raise SimProgramError(
                    f"{op.opcode} {role} pipe {getattr(pipe, 'name', None)} has no instruction "
                    f"queue in the simulator", loc,
                    hint="flags connect two of PIPE_MTE2, MTE1, M, FIX, V, MTE3")
        if src is dst:
            raise SimProgramError(f"{op.opcode} from {src.name} to itself", loc,
                                  hint=f"same-pipe order is implicit; use pto.barrier <{src.name}>")
        kind, pipe = (SET, src) if op.kind == "set_flag" else (WAIT, dst)
        name = f"{op.opcode}[{src.short}->{dst.short}, {event}]"
        ins = self._emit(op, pipe, kind, name, 0.0)
        ins.flag = (src, dst, event)
        if isinstance(op.event, int):
            self._sync_cache[id(op)] = (pipe, kind, name, ins.flag)

    # -- tile ops ------------------------------------------------------------------------
    def _cost(self, method: str, *args) -> float:
        """Memoised profile cost (the same shapes recur in every loop iteration)."""
        key = self._cost_key = (method, *args)
        found = self._cost_cache.get(key)
        if found is None:
            found = self._cost_cache[key] = getattr(self.profile, method)(*args)
        return found

    def _emit(self, op, pipe: Pipe, kind: int, name: str, cost: float, *, reads=(), writes=(),
              read=None, commit=None) -> Instr:
        if len(self.instrs) >= self.limits.max_instructions:
            raise SimLimitError(
                f"more than {self.limits.max_instructions:,} dynamic instructions; the loops "
                "are too long to simulate", self._loc(op),
                hint="simulate a smaller problem size, or raise SimLimits(max_instructions=...)")
        static = self._static.setdefault(id(op), len(self._static))
        if kind == WORK and cost <= 0 and commit is not None:
            cost = 1.0      # a data instruction must span time so its commit follows its read
        key, self._cost_key = (self._cost_key if kind == WORK else None), None
        ins = Instr(len(self.instrs), pipe, kind, name, op.loc, cost, reads, writes, None, read,
                    commit, static, op.line, self.filename, self.core, self.unit,
                    cost_key=key)
        self.instrs.append(ins)
        return ins

    def _loc(self, op) -> SourceLoc:
        return SourceLoc(self.filename, getattr(op, "line", 0), 0)

    def _get(self, v: Value):
        try:
            return self.env[v.name]
        except KeyError:
            raise SimProgramError(f"%{v.name} is used before it is defined", self._loc(self._op),
                                  hint="define it earlier in the kernel") from None

    def _set(self, v: Value, value) -> None:
        self.env[v.name] = value

    def _int(self, v, what: str) -> int:
        value = v if isinstance(v, int) else self._get(v)
        if isinstance(value, RuntimeScalar):
            raise SimProgramError(
                f"{what} %{v.name} depends on tile data read while the kernel runs; the "
                "simulator needs loop bounds, branch conditions and addresses before it runs",
                self._loc(self._op), hint="keep control flow and offsets independent of "
                                          "pl.read values")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            name = f"%{v.name}" if isinstance(v, Value) else repr(v)
            raise SimProgramError(f"{what} {name} is {value!r}, not an integer",
                                  self._loc(self._op), hint="use an index or integer value")
        return int(value)

    def _opt_int(self, v, default: int) -> int:
        return default if v is None else self._int(v, "valid size")

    def _tile(self, v: Value) -> TileRef:
        value = self._get(v)
        if not isinstance(value, TileRef):
            raise SimProgramError(f"%{v.name} is not a tile (got {type(value).__name__})",
                                  self._loc(self._op), hint="pass a pto.alloc_tile result")
        return value

    def _window(self, v: Value) -> GMWindow:
        value = self._get(v)
        if not isinstance(value, GMWindow):
            raise SimProgramError(f"%{v.name} is not a GM window (partition_view)",
                                  self._loc(self._op), hint="pass a pto.partition_view result")
        return value


__all__ = ["WORK_OPCODES", "ScalarUnit", "SimProgramError", "bind_params"]
