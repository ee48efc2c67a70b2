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

import operator
from typing import Callable

import numpy as np

from ptoc.backend import NUM_EVENT_IDS, Pipe, Target, TimingProfile
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtocError, SourceLoc
from ptoc.pto.model import (
    EnumAttr, ForOp, IfOp, Instruction, Kernel, PtrType, ScalarType, SyncOp, TileBufType, Value,
    YieldOp,
)

from ptoc.sim import numerics, vector
from ptoc.sim.gm import GMView, GMWindow, make_view, make_window
from ptoc.sim.instr import BARRIER, SET, WAIT, WORK, Access, Instr
from ptoc.sim.memory import BufferMemory, MemoryAccessError, TileRef

_D, _M, _L, _R, _A, _V, _B = (MemorySpace.DDR, MemorySpace.Mat, MemorySpace.Left,
                              MemorySpace.Right, MemorySpace.Acc, MemorySpace.Vec,
                              MemorySpace.Bias)
#: Runaway-unrolling guard: more dynamic instructions than this is almost surely a bug.
MAX_INSTRUCTIONS = 5_000_000


class SimProgramError(PtocError):
    """The PTO program cannot run: bad operand, unsupported op, missing address or binding."""


_ARITH: dict[str, Callable] = {
    "arith.addi": operator.add, "arith.subi": operator.sub, "arith.muli": operator.mul,
    "arith.divsi": lambda a, b: int(a / b), "arith.divui": operator.floordiv,
    "arith.floordivsi": operator.floordiv, "arith.ceildivsi": lambda a, b: -(-a // b),
    "arith.ceildivui": lambda a, b: -(-a // b),
    "arith.remsi": lambda a, b: int(np.fmod(a, b)), "arith.remui": operator.mod,
    "arith.maxsi": max, "arith.minsi": min, "arith.maxui": max, "arith.minui": min,
    "arith.andi": operator.and_, "arith.ori": operator.or_, "arith.xori": operator.xor,
    "arith.shli": operator.lshift, "arith.shrsi": operator.rshift, "arith.shrui": operator.rshift,
    "arith.addf": operator.add, "arith.subf": operator.sub, "arith.mulf": operator.mul,
    "arith.divf": operator.truediv, "arith.maximumf": max, "arith.minimumf": min,
}
_CMP = {
    "eq": operator.eq, "ne": operator.ne, "slt": operator.lt, "sle": operator.le,
    "sgt": operator.gt, "sge": operator.ge, "ult": operator.lt, "ule": operator.le,
    "ugt": operator.gt, "uge": operator.ge, "oeq": operator.eq, "one": operator.ne,
    "olt": operator.lt, "ole": operator.le, "ogt": operator.gt, "oge": operator.ge,
}
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui",
          "arith.trunci", "arith.sitofp", "arith.fptosi", "arith.extf", "arith.truncf")


class ScalarUnit:
    """Builds the dynamic instruction stream of one kernel (see module doc)."""

    def __init__(self, kernel: Kernel, bindings: dict[str, object], target: Target,
                 profile: TimingProfile, memory: BufferMemory, *, mad_mode: str,
                 filename: str = "<pto>"):
        self.kernel = kernel
        self.target = target
        self.profile = profile
        self.memory = memory
        self.mad_mode = mad_mode
        self.filename = filename
        self.env: dict[str, object] = dict(bindings)
        self.instrs: list[Instr] = []
        self._static: dict[int, int] = {}
        self._op: object = None
        self._sync_cache: dict[int, tuple] = {}
        self._cost_cache: dict[tuple, float] = {}
        self._work_cache: dict[tuple, Instr] = {}
        self._handlers = {
            "pto.tload": self._tload, "pto.tstore": self._tstore,
            "pto.textract": self._textract, "pto.tmov": self._tmov,
            "pto.tinsert": self._tinsert, "pto.tmatmul": self._matmul,
            "pto.tmatmul.acc": self._matmul, "pto.tmatmul.bias": self._matmul,
        }

    # -- walking -------------------------------------------------------------------------
    def run(self) -> list[Instr]:
        self._block(self.kernel.body)
        return self.instrs

    def _block(self, body) -> tuple | None:
        for op in body:
            self._op = op
            if isinstance(op, Instruction):
                self._instruction(op)
            elif isinstance(op, SyncOp):
                self._sync(op)
            elif isinstance(op, ForOp):
                self._for(op)
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

    def _if(self, op: IfOp) -> None:
        cond = self._get(op.cond)
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
        elif code == "arith.constant":
            self._set(op.result, op.attr("value"))
        elif code in _ARITH:
            a, b = (self._get(v) for v in op.ins[:2])
            self._set(op.result, _ARITH[code](a, b))
        elif code == "arith.cmpi" or code == "arith.cmpf":
            a, b = (self._get(v) for v in op.ins[:2])
            pred = op.attr("predicate")
            pred = pred.value if isinstance(pred, EnumAttr) else str(pred)
            if pred not in _CMP:
                raise SimProgramError(f"{code} predicate {pred!r} is not supported",
                                      self._loc(op), hint=f"use one of {', '.join(_CMP)}")
            self._set(op.result, bool(_CMP[pred](a, b)))
        elif code == "arith.select":
            c, a, b = (self._get(v) for v in op.ins[:3])
            self._set(op.result, a if c else b)
        elif code in _CASTS:
            self._set(op.result, self._get(op.ins[0]))
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
                                       "ptoc.sim.issue")

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
                self._emit(op, tpl.pipe, tpl.kind, tpl.name, tpl.cost, reads=tpl.reads,
                           writes=tpl.writes, read=tpl.read, commit=tpl.commit)
                return
        count = len(self.instrs)
        handler(op)
        if key is not None and len(self.instrs) == count + 1:
            self._work_cache[key] = self.instrs[-1]

    def _make_view(self, op: Instruction) -> None:
        ptr = op.ins[0]
        flat = self._get(ptr)
        if not isinstance(flat, np.ndarray):
            raise SimProgramError(f"make_tensor_view needs a GM pointer, %{ptr.name} is not one",
                                  self._loc(op), hint="pass a !pto.ptr kernel parameter")
        shape = [self._int(v, "shape") for v in op.attr("shape", ())]
        strides = [self._int(v, "stride") for v in op.attr("strides", ())]
        dtype = ptr.type.dtype if isinstance(ptr.type, PtrType) else DataType.from_numpy(flat.dtype)
        self._set(op.result, make_view(ptr.name, flat, dtype, shape, strides, self._loc(op)))

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
        if not (0 < vr <= ty.rows and 0 < vc <= ty.cols):
            raise SimProgramError(
                f"tile %{op.result.name}: valid shape {vr}x{vc} must be within its physical "
                f"shape {ty.rows}x{ty.cols}", self._loc(op), hint="shrink valid_row/valid_col")
        nbytes = self.target.tile_bytes(ty.loc, ty.rows, ty.cols, ty.dtype)
        tile = TileRef(op.result.name, ty.loc, addr, ty.rows, ty.cols, ty.dtype, vr, vc, nbytes)
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
    def _tload(self, op: Instruction) -> None:
        win, dst = self._window(op.ins[0]), self._tile(op.outs[0])
        self._same_dtype(op, win.view.dtype, dst)
        pipe = self._move_pipe(op, _D, dst.space)
        r, c = self._fits(op, win, dst)
        cost = self._cost('transfer_cycles', _D, dst.space, dst.nbytes)
        src_arr, dview = win.array(), self.memory.view(dst)

        def commit(payload):
            dview[:r, :c] = payload
        self._emit(op, pipe, WORK, op.opcode, cost, reads=(win.access(),),
                   writes=(self._access(dst, 0, 0, r, c),), read=src_arr.copy, commit=commit)

    def _tstore(self, op: Instruction) -> None:
        src, win = self._tile(op.ins[0]), self._window(op.outs[0])
        pipe = self._move_pipe(op, src.space, _D)
        r, c = self._fits(op, win, src)
        sview, dst_arr, gm_dtype = self.memory.view(src), win.array(), win.view.dtype
        if src.space is _A:
            cost = self._cost('drain_cycles', _D, r, c, src.dtype)

            def read():
                return numerics.fixpipe_convert(sview[:r, :c], gm_dtype)
        else:
            self._same_dtype(op, gm_dtype, src)
            cost = self._cost('transfer_cycles', src.space, _D, src.nbytes)

            def read():
                return sview[:r, :c].copy()

        def commit(payload):
            dst_arr[...] = payload
        self._emit(op, pipe, WORK, op.opcode, cost, reads=(self._access(src, 0, 0, r, c),),
                   writes=(win.access(),), read=read, commit=commit)

    def _textract(self, op: Instruction) -> None:
        src, dst = self._tile(op.ins[0]), self._tile(op.outs[0])
        row = self._int(op.ins[1], "row offset") if len(op.ins) > 1 else 0
        col = self._int(op.ins[2], "col offset") if len(op.ins) > 2 else 0
        self._copy_window(op, src, dst, row, col, dst.valid_rows, dst.valid_cols, into_dst=False)

    def _tmov(self, op: Instruction) -> None:
        src, dst = self._tile(op.ins[0]), self._tile(op.outs[0])
        self._copy_window(op, src, dst, 0, 0, dst.valid_rows, dst.valid_cols, into_dst=False)

    def _tinsert(self, op: Instruction) -> None:
        src, dst = self._tile(op.ins[0]), self._tile(op.outs[0])
        row = self._int(op.ins[1], "row offset") if len(op.ins) > 1 else 0
        col = self._int(op.ins[2], "col offset") if len(op.ins) > 2 else 0
        self._copy_window(op, src, dst, row, col, src.valid_rows, src.valid_cols, into_dst=True)

    def _copy_window(self, op, src: TileRef, dst: TileRef, row: int, col: int, r: int, c: int,
                     *, into_dst: bool) -> None:
        """dst[window] = src[window]: the window (row, col, r, c) is in dst when
        ``into_dst`` (tinsert) and in src otherwise (textract / tmov)."""
        pipe = self._move_pipe(op, src.space, dst.space)
        outer = dst if into_dst else src
        if row < 0 or col < 0 or row + r > outer.rows or col + c > outer.cols:
            raise SimProgramError(
                f"{op.opcode}: window rows [{row}, {row + r}) x cols [{col}, {col + c}) is "
                f"outside %{outer.name}'s {outer.rows}x{outer.cols}", self._loc(op),
                hint="keep the offsets plus the moved shape within the tile")
        inner = src if into_dst else dst
        if r > inner.rows or c > inner.cols:
            raise SimProgramError(
                f"{op.opcode}: moving {r}x{c} elements but %{inner.name} is only "
                f"{inner.rows}x{inner.cols}", self._loc(op), hint="match the tiles' shapes")
        if src.space is _A:
            cost = self._cost('drain_cycles', dst.space, r, c, src.dtype)
        else:
            self._same_dtype(op, src.dtype, dst)
            cost = self._cost('transfer_cycles', src.space, dst.space, dst.nbytes)
        sview, dview = self.memory.view(src), self.memory.view(dst)
        s_r, s_c = (0, 0) if into_dst else (row, col)
        d_r, d_c = (row, col) if into_dst else (0, 0)
        ddtype = dst.dtype

        if src.space is _A:
            def read():
                return numerics.fixpipe_convert(sview[s_r:s_r + r, s_c:s_c + c], ddtype)
        else:
            def read():
                return sview[s_r:s_r + r, s_c:s_c + c].copy()

        def commit(payload):
            dview[d_r:d_r + r, d_c:d_c + c] = payload
        self._emit(op, pipe, WORK, op.opcode, cost,
                   reads=(self._access(src, s_r, s_c, r, c),),
                   writes=(self._access(dst, d_r, d_c, r, c),), read=read, commit=commit)

    def _matmul(self, op: Instruction) -> None:
        code = op.opcode
        ins = [self._tile(v) for v in op.ins]
        c = self._tile(op.outs[0])
        if code == "pto.tmatmul.acc":
            if len(ins) != 3:
                raise self._arity(op, "ins(%acc, %a, %b)")
            acc, a, b = ins
            bias = None
            if (acc.space, acc.addr, acc.rows, acc.cols, acc.dtype) != \
                    (c.space, c.addr, c.rows, c.cols, c.dtype):
                raise SimProgramError(
                    f"pto.tmatmul.acc accumulates in place: ins accumulator %{acc.name} and "
                    f"outs %{c.name} must be the same Acc tile", self._loc(op),
                    hint="pass the same accumulator in ins(...) and outs(...)")
        elif code == "pto.tmatmul.bias":
            if len(ins) != 3:
                raise self._arity(op, "ins(%a, %b, %bias)")
            a, b, bias = ins
            acc = None
            self._space(op, bias, _B, "bias")
        else:
            if len(ins) != 2:
                raise self._arity(op, "ins(%a, %b)")
            a, b = ins
            acc = bias = None
        self._space(op, a, _L, "A operand")
        self._space(op, b, _R, "B operand")
        self._space(op, c, _A, "accumulator")
        m, k, k2, n = a.valid_rows, a.valid_cols, b.valid_rows, b.valid_cols
        if k != k2:
            raise SimProgramError(
                f"{code}: A %{a.name} is {m}x{k} but B %{b.name} is {k2}x{n}; the K extents "
                f"differ", self._loc(op), hint="give A's valid cols = B's valid rows")
        if m > c.rows or n > c.cols:
            raise SimProgramError(
                f"{code}: the {m}x{n} product does not fit accumulator %{c.name} "
                f"({c.rows}x{c.cols})", self._loc(op), hint="enlarge the Acc tile")
        try:
            shape = self.target.mad_shape(a.dtype, b.dtype)
        except PtocError as exc:
            raise SimProgramError(exc.message, self._loc(op), hint=exc.hint) from None
        if shape.acc is not c.dtype:
            raise SimProgramError(
                f"{code}: {a.dtype.pto_name} x {b.dtype.pto_name} accumulates in "
                f"{shape.acc.pto_name}, but %{c.name} is {c.dtype.pto_name}", self._loc(op),
                hint=f"declare the accumulator dtype={shape.acc.pto_name}")
        if bias is not None and (bias.dtype is not c.dtype or bias.valid_cols < n):
            raise SimProgramError(
                f"{code}: bias %{bias.name} must be {c.dtype.pto_name} with >= {n} columns, "
                f"got {bias.dtype.pto_name} with {bias.valid_cols}", self._loc(op),
                hint="load a [1, N] bias of the accumulator dtype into the Bias table")
        cost = self._cost('mad_cycles', m, k, n, a.dtype)
        mem, mode = self.memory, self.mad_mode
        av, bv, cv = mem.view(a), mem.view(b), mem.view(c)
        biasv = mem.view(bias) if bias is not None else None

        def read():
            return numerics.mad(av[:m, :k], bv[:k, :n],
                                acc=cv[:m, :n] if acc is not None else None,
                                bias=biasv[:1, :n] if biasv is not None else None, mode=mode)

        def commit(payload):
            cv[:m, :n] = payload
        reads = [self._access(a, 0, 0, m, k), self._access(b, 0, 0, k, n)]
        if acc is not None:
            reads.append(self._access(c, 0, 0, m, n))
        if bias is not None:
            reads.append(self._access(bias, 0, 0, 1, n))
        self._emit(op, Pipe.PIPE_M, WORK, code, cost, reads=tuple(reads),
                   writes=(self._access(c, 0, 0, m, n),), read=read, commit=commit)

    def _vector(self, op: Instruction) -> None:
        code = op.opcode
        out = self._tile(op.outs[0]) if op.outs else None
        if out is None:
            raise self._arity(op, "outs(%dst)")
        tiles = [self._get(v) for v in op.ins]
        srcs = [t for t in tiles if isinstance(t, TileRef)]
        scalars = [t for t in tiles if not isinstance(t, TileRef)]
        for t in (*srcs, out):
            self._space(op, t, _V, "operand")
        r, c = out.valid_rows, out.valid_cols
        fn, shapes = self._vector_fn(op, code, srcs, scalars, r, c)
        mem = self.memory
        views = [mem.view(t) for t in srcs]
        oview, odtype = mem.view(out), out.dtype
        cost = self._cost('vector_cycles', code, out.dtype, r, c)

        def read():
            args = [vector.widen(v[:sr, :sc]) for v, (sr, sc) in zip(views, shapes)]
            return fn(*args)

        def commit(payload):
            oview[:r, :c] = numerics.convert(np.asarray(payload), odtype, "rint") \
                if payload.dtype != odtype.numpy else payload
        if code == "pto.tcvt":
            mode = self._round_mode(op)

            def read():  # noqa: F811 - tcvt keeps the source precision until the rounding
                return numerics.convert(views[0][:r, :c], odtype, mode)
        reads = tuple(self._access(t, 0, 0, sr, sc) for t, (sr, sc) in zip(srcs, shapes))
        self._emit(op, Pipe.PIPE_V, WORK, code, cost, reads=reads,
                   writes=(self._access(out, 0, 0, r, c),), read=read, commit=commit)

    def _vector_fn(self, op, code, srcs, scalars, r, c):
        """(numpy function of the widened tile operands, shape read from each operand)."""
        full = (r, c)
        need = {"binary": 2, "scalar": 1, "unary": 1, "reduce": 1, "rowexp": 2, "expand": 1}
        if code in vector.BINARY:
            kind, fn, shapes = "binary", vector.BINARY[code], [full, full]
        elif code in vector.SCALAR:
            if not scalars:
                raise self._arity(op, "ins(%tile, %scalar)")
            s, f = float(scalars[0]), vector.SCALAR[code]
            kind, fn, shapes = "scalar", (lambda x: f(x, np.float32(s))), [full]
        elif code in vector.UNARY or code == "pto.tcvt":
            kind, fn, shapes = "unary", vector.UNARY.get(code, lambda x: x), [full]
        elif code in vector.ROW_REDUCE:
            if c != 1:
                raise SimProgramError(f"{code}: the result tile must have 1 valid column, got {c}",
                                      self._loc(op), hint="reduce into an [R, 1] tile")
            f = vector.ROW_REDUCE[code]
            cols = srcs[0].valid_cols if srcs else 0
            kind, fn, shapes = "reduce", (lambda x: vector.reduce_rows(f, x)), [(r, cols)]
            shapes += [full] * (len(srcs) - 1)   # scratch tiles are listed but unused
            srcs[:] = srcs[:1]
        elif code in vector.ROW_EXPAND:
            kind, fn, shapes = "rowexp", vector.ROW_EXPAND[code], [full, (r, 1)]
        else:  # trowexpand
            kind, fn, shapes = "expand", (lambda v: np.broadcast_to(v, full).copy()), [(r, 1)]
        if len(srcs) < need[kind]:
            raise self._arity(op, f"{need[kind]} tile operand(s) in ins(...)")
        for t, (sr, sc) in zip(srcs, shapes):
            if sr > t.rows or sc > t.cols:
                raise SimProgramError(
                    f"{code}: operand %{t.name} ({t.rows}x{t.cols}) is smaller than the "
                    f"{sr}x{sc} region the op reads", self._loc(op),
                    hint="give every operand at least the destination's valid shape")
        return fn, shapes[:len(srcs)]

    def _round_mode(self, op: Instruction) -> str:
        raw = op.attr("rmode", op.attr("round_mode", "rint"))
        text = raw.value if isinstance(raw, EnumAttr) else str(raw)
        text = text.lower().removeprefix("cast_")
        if text not in numerics.ROUND_MODES:
            raise SimProgramError(f"pto.tcvt rounding mode {text!r} is not known", self._loc(op),
                                  hint=f"use one of {', '.join(numerics.ROUND_MODES)}")
        return text

    # -- helpers -------------------------------------------------------------------------
    def _cost(self, method: str, *args) -> float:
        """Memoised profile cost (the same shapes recur in every loop iteration)."""
        key = (method, *args)
        found = self._cost_cache.get(key)
        if found is None:
            found = self._cost_cache[key] = getattr(self.profile, method)(*args)
        return found

    def _emit(self, op, pipe: Pipe, kind: int, name: str, cost: float, *, reads=(), writes=(),
              read=None, commit=None) -> Instr:
        if len(self.instrs) >= MAX_INSTRUCTIONS:
            raise SimProgramError(
                f"more than {MAX_INSTRUCTIONS} dynamic instructions; the loops are too long "
                f"to simulate", self._loc(op), hint="simulate a smaller problem size")
        static = self._static.setdefault(id(op), len(self._static))
        if kind == WORK and cost <= 0:
            cost = 1.0      # a data instruction must span time so its commit follows its read
        ins = Instr(len(self.instrs), pipe, kind, name, op.loc, cost, reads, writes, None, read,
                    commit, static, op.line, self.filename)
        self.instrs.append(ins)
        return ins

    def _access(self, tile: TileRef, row: int, col: int, r: int, c: int) -> Access:
        """Bounding byte range of a (row, col, r, c) window of a row-major tile."""
        nb = tile.elem
        lo = tile.addr + (row * tile.cols + col) * nb
        hi = tile.addr + ((row + r - 1) * tile.cols + col + c) * nb
        return Access(tile.buffer, lo, hi)

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

    def _space(self, op, tile: TileRef, space: MemorySpace, role: str) -> None:
        if tile.space is not space:
            raise SimProgramError(
                f"{op.opcode}: {role} %{tile.name} is in {tile.space.value}, expected "
                f"{space.value}", self._loc(op), hint=f"allocate it with loc={space.lower}")

    def _same_dtype(self, op, dtype: DataType, tile: TileRef) -> None:
        if dtype is not tile.dtype:
            raise SimProgramError(
                f"{op.opcode}: %{tile.name} is {tile.dtype.pto_name} but the other side is "
                f"{dtype.pto_name}; this move does not convert", self._loc(op),
                hint="use matching dtypes (convert with pto.tcvt, or store from Acc)")

    def _move_pipe(self, op, src: MemorySpace, dst: MemorySpace) -> Pipe:
        found = self._cost_cache.get(("pipe", src, dst))
        if found is not None:
            return found
        try:
            found = self._cost_cache[("pipe", src, dst)] = self.target.move_pipe(src, dst)
            return found
        except PtocError as exc:
            raise SimProgramError(f"{op.opcode}: {exc.message}", self._loc(op),
                                  hint=exc.hint) from None

    def _fits(self, op, win: GMWindow, tile: TileRef) -> tuple[int, int]:
        r, c = win.rows, win.cols
        if r > tile.rows or c > tile.cols:
            raise SimProgramError(
                f"{op.opcode}: GM window {r}x{c} does not fit tile %{tile.name} "
                f"({tile.rows}x{tile.cols})", self._loc(op),
                hint="make the partition_view sizes at most the tile's shape")
        return r, c

    def _arity(self, op, form: str) -> SimProgramError:
        return SimProgramError(f"{op.opcode} expects {form}", self._loc(op),
                               hint=f"write {op.opcode} {form}")


def bind_params(kernel: Kernel, tensors, filename: str) -> tuple[dict, dict]:
    """Map kernel parameters to values: GM pointers to flat array copies, scalars to ints.

    ``tensors`` is a dict keyed by parameter name (with or without ``%``) or a sequence in
    parameter order. Returns (env bindings, {param name: original shape}).
    """
    from ptoc.sim.memory import bind_tensor

    params = kernel.params
    loc = SourceLoc(filename, kernel.line, 0)
    if isinstance(tensors, dict):
        given = {str(k).removeprefix("%"): v for k, v in tensors.items()}
    else:
        seq = list(tensors)
        if len(seq) != len(params):
            raise SimProgramError(
                f"kernel @{kernel.name} takes {len(params)} parameters "
                f"({', '.join('%' + p.name for p in params)}), {len(seq)} values were given",
                loc, hint="pass one value per parameter, or a dict keyed by parameter name")
        given = {p.name: v for p, v in zip(params, seq)}
    names = {p.name for p in params}
    unknown = sorted(set(given) - names)
    if unknown:
        raise SimProgramError(
            f"kernel @{kernel.name} has no parameter {', '.join('%' + u for u in unknown)}", loc,
            hint=f"parameters are {', '.join('%' + p.name for p in params)}")
    env, shapes = {}, {}
    for p in params:
        if p.name not in given:
            raise SimProgramError(f"no value bound to kernel parameter %{p.name} ({p.type})", loc,
                                  hint=f"pass tensors={{'{p.name}': ...}}")
        value = given[p.name]
        if isinstance(p.type, PtrType):
            shapes[p.name] = tuple(np.shape(value)) if not hasattr(value, "shape") else \
                tuple(value.shape)
            env[p.name] = bind_tensor(p.name, value, p.type.dtype, loc)
        elif isinstance(p.type, ScalarType):
            env[p.name] = value.item() if hasattr(value, "item") else value
        else:
            raise SimProgramError(f"parameter %{p.name} has unsupported type {p.type}", loc,
                                  hint="kernel parameters are !pto.ptr<...> or scalars")
    return env, shapes


__all__ = ["ScalarUnit", "SimProgramError", "bind_params", "MemoryAccessError"]
