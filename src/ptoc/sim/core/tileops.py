"""Lowering of PTO tile ops (moves, cube, vector) into simulator instructions.

Why a mixin of the scalar unit: each tile op, once its operands are resolved, becomes one
``Instr`` with a pipe, a profile cost, the byte ranges it reads and writes, and the two
data closures (``read`` at start computes the result from the operands as they are then;
``commit`` at end writes it). The scalar unit (``ptoc.sim.core.issue``) supplies operand
lookup and ``_emit``; this module knows what each op means.
"""

from __future__ import annotations

import numpy as np

from ptoc.backend import Pipe
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtocError
from ptoc.pto.model import EnumAttr, Instruction
from ptoc.pto.ops import atomic_add

from ptoc.sim import numerics
from ptoc.sim.core import vector
from ptoc.sim.errors import SimProgramError
from ptoc.sim.gm import GMView, GMWindow
from ptoc.sim.instr import BARRIER, WORK, Access
from ptoc.sim.core.memory import TileRef
from ptoc.sim.core.runtime_scalar import RuntimeScalar, resolve

_D, _M, _L, _R, _A, _V, _B = (MemorySpace.DDR, MemorySpace.Mat, MemorySpace.Left,
                              MemorySpace.Right, MemorySpace.Acc, MemorySpace.Vec,
                              MemorySpace.Bias)


ELEMENT_ACCESS = ("pto.tgetval", "pto.tsetval", "pto.load_scalar", "pto.store_scalar")


class TileOps:
    """Tile-op handlers (``_tload`` ... ``_vector``) and their operand checks."""

    def _tload(self, op: Instruction) -> None:
        win, dst = self._window(op.ins[0]), self._tile(op.outs[0])
        self._same_dtype(op, win.view.dtype, dst)
        pipe = self._move_pipe(op, _D, dst.space)
        r, c = self._fits(op, win, dst)
        cost = self._cost('transfer_cycles', _D, dst.space, dst.nbytes)
        dview = self.memory.view(dst)

        def read():       # the window is read when the load runs (its pointer may be re-pointed)
            return win.array().copy()

        def commit(payload):
            dview[:r, :c] = payload
        self._emit(op, pipe, WORK, op.opcode, cost, reads=(win.access(),),
                   writes=(self._access(dst, 0, 0, r, c),), read=read, commit=commit)

    def _tstore(self, op: Instruction) -> None:
        src, win = self._tile(op.ins[0]), self._window(op.outs[0])
        pipe = self._move_pipe(op, src.space, _D)
        r, c = self._fits(op, win, src)
        sview, gm_dtype = self.memory.view(src), win.view.dtype
        if src.space is _A:
            cost = self._cost('drain_cycles', _D, r, c, src.dtype)

            def read():
                return numerics.fixpipe_convert(sview[:r, :c], gm_dtype)
        else:
            self._same_dtype(op, gm_dtype, src)
            cost = self._cost('transfer_cycles', src.space, _D, src.nbytes)

            def read():
                return sview[:r, :c].copy()

        adds = atomic_add(op)
        if adds is None:
            raise SimProgramError(f"pto.tstore: atomicType {op.attr('atomicType')} is not an "
                                  "atomic type", self._loc(op),
                                  hint="write {atomicType = #pto<atomic_type atomic_add>}")
        written = win.access()
        if adds:
            written.atomic = True

            def commit(payload):
                dst = win.array()
                dst[...] = numerics.atomic_add(dst, payload)
        else:
            def commit(payload):
                win.array()[...] = payload
        self._emit(op, pipe, WORK, op.opcode, cost, reads=(self._access(src, 0, 0, r, c),),
                   writes=(written,), read=read, commit=commit)

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
        if code.endswith(".acc"):
            if len(ins) != 3:
                raise self._arity(op, "ins(%acc, %a, %b)")
            acc, a, b = ins
            bias = None
            if (acc.space, acc.addr, acc.rows, acc.cols, acc.dtype) != \
                    (c.space, c.addr, c.rows, c.cols, c.dtype):
                raise SimProgramError(
                    f"{code} accumulates in place: ins accumulator %{acc.name} and "
                    f"outs %{c.name} must be the same Acc tile", self._loc(op),
                    hint="pass the same accumulator in ins(...) and outs(...)")
        elif code.endswith(".bias"):
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
            if not self._all_written_before(reads[-1]):
                source = f" (source {op.loc})" if op.loc is not None else ""
                raise SimProgramError(
                    f"{code} accumulates into %{c.name} ({m}x{n} {c.dtype.pto_name}){source}, "
                    "but no earlier instruction of this kernel wrote it: its contents are "
                    "undefined (on hardware, whatever the Acc buffer held)", self._loc(op),
                    hint="start the accumulation with a plain matmul on its first step (e.g. "
                         "'if k == 0: acc = pl.matmul(a, b) else: acc = pl.matmul_acc(acc, "
                         "a, b)' with the loop's first k taking the matmul arm)")
        if bias is not None:
            reads.append(self._access(bias, 0, 0, 1, n))
        self._emit(op, Pipe.PIPE_M, WORK, code, cost, reads=tuple(reads),
                   writes=(self._access(c, 0, 0, m, n),), read=read, commit=commit)

    def _vector(self, op: Instruction) -> None:
        """One vector instruction: its semantics come from ``vector.VECTOR_OPS``."""
        code = op.opcode
        sem = vector.VECTOR_OPS[code]
        if len(op.outs) != 1:
            raise self._arity(op, "outs(%dst)")
        out = self._tile(op.outs[0])
        values = [self._get(v) for v in op.ins]
        srcs = [t for t in values if isinstance(t, TileRef)]
        scalars = [t for t in values if not isinstance(t, TileRef)]
        required = sum(not role.endswith("?") for role in sem.reads)
        if not required <= len(srcs) <= len(sem.reads) or len(scalars) != sem.scalars:
            raise self._arity(op, f"{len(sem.reads)} tile and {sem.scalars} scalar operand(s) "
                                  "in ins(...)")
        for t in (*srcs, out):
            self._space(op, t, _V, "operand")
        r, c = (out.rows, out.cols) if sem.writes_all else (out.valid_rows, out.valid_cols)
        regions = [self._region(op, role, t, r, c) for role, t in zip(sem.reads, srcs)]
        attrs = {key: self._attr_text(op, key) for key in sem.attrs if op.attr(key) is not None}
        mem = self.memory
        read_views = [(mem.view(t), shape) for t, shape in zip(srcs, regions) if shape]
        oview, dst = mem.view(out), out.dtype
        cost = self._cost('vector_cycles', code, out.dtype, r, c)
        tiles = list(srcs)

        def read():
            args = [v[:sr, :sc].copy() for v, (sr, sc) in read_views]
            values = [resolve(x) for x in scalars]
            result = sem.compute(vector.VecCall(args, values, dst, (r, c), attrs, tiles, out))
            if result.shape != (r, c):
                raise SimProgramError(
                    f"{code}: computes a {result.shape[0]}x{result.shape[1]} result but "
                    f"%{out.name}'s region is {r}x{c}", self._loc(op),
                    hint="give the destination the valid shape the op produces")
            return result

        def commit(payload):
            oview[:r, :c] = payload
        reads = tuple(self._access(t, 0, 0, *shape) for t, shape in zip(srcs, regions) if shape)
        self._emit(op, Pipe.PIPE_V, WORK, code, cost, reads=reads,
                   writes=(self._access(out, 0, 0, r, c),), read=read, commit=commit)

    def _region(self, op, role: str, tile: TileRef, r: int, c: int) -> tuple[int, int] | None:
        """The (rows, cols) a vector op reads of one operand (None: scratch, not read)."""
        shape = {"dst": (r, c), "own": (tile.valid_rows, tile.valid_cols), "rows": (r, 1),
                 "cols": (1, c), "none": None, "none?": None}[role]
        if shape is not None and (shape[0] > tile.rows or shape[1] > tile.cols):
            raise SimProgramError(
                f"{op.opcode}: operand %{tile.name} ({tile.rows}x{tile.cols}) is smaller than "
                f"the {shape[0]}x{shape[1]} region the op reads", self._loc(op),
                hint="give every operand at least the destination's valid shape")
        return shape

    def _attr_text(self, op: Instruction, key: str) -> str:
        """An instruction attribute as text (``#pto.round_mode<rint>`` -> ``rint``)."""
        raw = op.attr(key)
        text = raw.value if isinstance(raw, EnumAttr) else str(raw)
        if key == "rmode":
            text = text.lower().removeprefix("cast_")
            if text not in numerics.ROUND_MODES:
                raise SimProgramError(f"pto.tcvt rounding mode {text!r} is not known",
                                      self._loc(op),
                                      hint=f"use one of {', '.join(numerics.ROUND_MODES)}")
        return text

    def _element_access(self, op: Instruction) -> None:
        """One element read or written by the scalar unit. The unit first waits for every pipe
        to drain (a full barrier), so the access is ordered after all earlier work and before
        all later work. A value read from a tile is a ``RuntimeScalar`` filled in when the
        read executes; a value read from GM that no earlier instruction of the kernel writes
        is the input's, known now (so it may bound a loop, as a block table does)."""
        code = op.opcode
        reading = code in ("pto.tgetval", "pto.load_scalar")
        target = op.ins[0] if reading else op.outs[0]
        offset = self._int(op.ins[1] if reading else op.ins[0], "element offset")
        place = self._get(target)
        if isinstance(place, TileRef):
            if place.strided:
                raise SimProgramError(
                    f"{code}: %{place.name} is a column window of a wider tile (rows "
                    f"{place.row_pitch} elements apart); element offsets address dense tiles",
                    self._loc(op), hint="read or write the element through the source tile")
            flat = self.memory.view(place).reshape(-1)
            size, dtype, what = place.rows * place.cols, place.dtype, f"%{place.name}"
            nbytes = place.elem
            access = Access(place.buffer, place.addr + offset * nbytes,
                            place.addr + (offset + 1) * nbytes)
        elif isinstance(place, GMView):
            flat, size, dtype, what = place.flat, int(np.prod(place.shape)), place.dtype, \
                place.buffer
            if 0 <= offset < size:
                offset = int(np.dot(np.unravel_index(offset, place.shape), place.strides))
            size, nbytes = place.flat.size, place.flat.itemsize
            access = Access(place.buffer, (place.origin + offset) * nbytes,
                            (place.origin + offset + 1) * nbytes)
        else:
            raise self._arity(op, "a tile or tensor view operand")
        if not 0 <= offset < size:
            raise SimProgramError(f"{code}: element offset {offset} is outside {what} "
                                  f"({size} elements)", self._loc(op),
                                  hint="keep the indices within the shape")
        if reading and isinstance(place, GMView) and not self._written_before(access):
            value = flat[offset].item()
            self._set(op.results[0], value)

            def commit(_):
                return None
        elif reading:
            cell = RuntimeScalar(what=f"%{op.results[0].name}")

            def commit(_):
                cell.set(flat[offset].item())
            self._set(op.results[0], cell)
        else:
            value = self._get(op.ins[1])

            def commit(_):
                flat[offset] = np.asarray(resolve(value)).astype(dtype.numpy)
        self._emit(op, Pipe.PIPE_ALL, BARRIER, code, 0.0, read=lambda: None, commit=commit,
                   reads=(access,) if reading else (), writes=() if reading else (access,))

    def _written_before(self, access: Access) -> bool:
        """Whether an instruction issued so far writes bytes of ``access``."""
        seen = getattr(self, "_gm_written", None)
        if seen is None:
            seen = self._gm_written = [0, []]
        for ins in self.instrs[seen[0]:]:
            seen[1].extend(w for w in ins.writes if w.buffer == access.buffer)
        seen[0] = len(self.instrs)
        return any(w.overlaps(access) for w in seen[1])

    def _all_written_before(self, access: Access) -> bool:
        """Whether instructions issued so far wrote every byte of on-chip ``access`` (a byte
        nothing wrote holds whatever the buffer held before the kernel: undefined)."""
        state = getattr(self, "_chip_written", None)
        if state is None:
            state = self._chip_written = [0, {
                self.memory.buffer_name(space): np.zeros(buf.size, dtype=bool)
                for space, buf in self.memory.buffers.items()}]
        masks = state[1]
        for ins in self.instrs[state[0]:]:
            for w in ins.writes:
                mask = masks.get(w.buffer)
                if mask is not None:
                    mask[w.lo:w.hi] = True
        state[0] = len(self.instrs)
        return bool(masks[access.buffer][access.lo:access.hi].all())

    # -- helpers -------------------------------------------------------------------------
    def _access(self, tile: TileRef, row: int, col: int, r: int, c: int) -> Access:
        """Bounding byte range of a (row, col, r, c) window of a row-major tile (the whole tile
        when it is stored transposed)."""
        if tile.transposed:
            return Access(tile.buffer, tile.addr, tile.addr + tile.data_bytes)
        nb = tile.elem
        lo = tile.addr + (row * tile.row_pitch + col) * nb
        hi = tile.addr + ((row + r - 1) * tile.row_pitch + col + c) * nb
        return Access(tile.buffer, lo, hi)

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
