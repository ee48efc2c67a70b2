"""Walk one post-allocation kernel function and build its ``ptoc.pto.model.Kernel``.

The emitter owns the kernel-wide state: SSA names, hoisted constants, the binding of every IR
variable to a PTO value, and the list of ops of the region being emitted. Statement kinds are
handled here (assignments, loops, branches); each tile op is lowered by a function in
``ptoc.codegen.tile_ops``.

Bindings. A scalar IR variable is an SSA scalar (``index``, ``i1``, ``f32`` ...). A tensor
variable is the ``tensor_view`` of the kernel parameter it comes from: a store's result, a
loop-carried tensor and a loop's result all denote the same DDR buffer, so they all bind to the
parameter's view (only the partition-view *name* remembers which variable a store wrote). A
tile variable is a ``tile_buf`` made by ``pto.alloc_tile``:

* under the PYPTO planner every tile variable gets its own ``alloc_tile`` with
  ``addr = <MemRef offset>`` — tiles sharing a MemRef share the address, so sharing is
  expressed by the addresses, exactly as in PyPTO's kernels;
* without addresses (PTOAS planner) sharing must be expressed by the SSA value itself, so all
  tiles of one MemRef (same base, same offset, same buffer type) become a single
  ``alloc_tile``; the PTOAS-style planner in ``ptoc.pto`` then places it;
* ops that update a buffer in place (``matmul_acc``, ``assemble``) bind their result to the
  destination operand's buffer; loop iter args and loop results bind to the initial value's
  buffer; the results of a run-time ``if`` get one buffer each, allocated at the top of the
  kernel (so both branches and the code after the branch can see it).

Where a loop body or branch yields a tile that lives in another buffer than the carried one
(planners normally prevent this by sharing the MemRef), a ``pto.tmov`` copies it across.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from dataclasses import dataclass

from ptoc.dtypes import DataType, FunctionType, MemorySpace
from ptoc.errors import SourceLoc
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstBool, ConstFloat, ConstInt, EvalStmt, Expr, ForStmt, Function, IfStmt,
    IterArg, ReturnStmt, SeqStmts, Stmt, Var, WhileStmt, YieldStmt,
)
from ptoc.ir.dynamic import dynamic_dims
from ptoc.ir.visitor import IRVisitor
from ptoc.ir.types import ScalarType as IrScalarType, TensorType, TileType
from ptoc.pto.model import (
    ConditionOp, EnumAttr, ForOp, IfOp, Instruction, Kernel, Op, PtrType, ScalarType, Value,
    WhileOp, YieldOp,
)

from ptoc.codegen.block_ops import BLOCK_OPS
from ptoc.pto.launch import BLOCK_PARAMS
from ptoc.codegen.buffers import BufferBinding
from ptoc.codegen.errors import CodegenError
from ptoc.codegen.names import ConstantPool, SsaNames, describe
from ptoc.codegen.scalars import ScalarLowering
from ptoc.codegen.simplify import simplify_function
from ptoc.codegen.tile_ops import lower_call


@dataclass(frozen=True)
class CodegenOptions:
    """How to print a kernel.

    Fields:
        target: target name (``a2a3``, ``a5``); becomes ``pto.target_arch``.
        with_addresses: emit ``addr = <offset>`` on every ``alloc_tile`` (PYPTO planner); False
            for the PTOAS planner, which places address-less tiles itself.
        emit_loc: append ``loc("file":line:col)`` to every op that has a source location.
        loc_file: file name written in ``loc(...)`` (default: the IR's own file names);
            PyPTO's kernels say ``"program.py"``.
    """

    target: str = "a2a3"
    with_addresses: bool = True
    emit_loc: bool = True
    loc_file: str | None = None


_CUBE_SPACES = (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc,
                MemorySpace.Bias)


class KernelEmitter(ScalarLowering, BufferBinding):
    """Builds the PTO kernel of one InCore/AIC/AIV function (see the module docstring)."""

    def __init__(self, fn: Function, options: CodegenOptions):
        self.source = fn
        self.options = options
        self.fn = simplify_function(fn)
        hints, self._reads_block_identity = _scan(self.fn)
        self.names = SsaNames(hints)
        self.consts = ConstantPool(self.names)
        self.scalars: dict[Var, Value] = {}
        self.tensors: dict[Var, Value] = {}
        self.ptrs: dict[Var, Value] = {}   # tensor parameter -> its !pto.ptr argument
        self.tiles: dict[Var, Value] = {}
        self.valid_of: dict[Value, tuple] = {}  # tile value -> valid (rows, cols) IR exprs
        self.row_stride_of: dict[Value, int] = {}  # column windows: elements between rows
        self.window_base: dict[Value, object] = {}  # window alias -> its address (int or IR)
        self.buffer_key: dict[Value, tuple] = {}  # tile value -> (space, addr) or memref key
        self._shared: dict[tuple, tuple[Value, tuple]] = {}  # PTOAS: memref key -> (value, path)
        self._extents: dict[tuple, list] = {}  # (space, base) -> [lo, hi, base name] (addresses)
        self._region: list[Op] = []
        self._path: tuple[int, ...] = ()  # ids of the regions enclosing the current op
        self._regions = 0
        self.saw_spaces: set[MemorySpace] = set()
        self._pto_loc_of: dict[int, SourceLoc] = {}  # id(IR loc) -> PTO loc (_pto_loc)

    # ---- entry -------------------------------------------------------------------------
    def build(self) -> Kernel:
        fn = self.fn
        params = []
        for i, p in enumerate(fn.params):
            ty = p.var.type
            name = f"arg{i}"
            self.names.reserve(name)
            if isinstance(ty, TensorType):
                params.append(Value(name, PtrType(ty.dtype)))
                self.ptrs[p.var] = params[-1]
            elif isinstance(ty, IrScalarType):
                value = Value(name, ScalarType(ty.dtype))
                params.append(value)
                self.scalars[p.var] = value
            else:
                raise CodegenError(
                    f"kernel '{fn.name}': parameter '{p.var.name}' has type "
                    f"{describe(ty)}, which has no PTO kernel argument form", p.var.loc,
                    hint="pass DDR tensors (pl.Tensor) and scalars only")
        for var in dynamic_dims(fn):   # PyPTO: one trailing index argument per pl.dynamic dim
            if var in self.scalars:
                continue  # also a declared parameter (MaterializeValidShapeSymbols)
            name = f"arg{len(params)}"
            self.names.reserve(name)
            params.append(Value(name, ScalarType(DataType.INDEX)))
            self.scalars[var] = params[-1]
        if self._reads_block_identity:
            self.block_params = []
            for name in BLOCK_PARAMS:
                self.names.reserve(name)
                self.block_params.append(Value(name, ScalarType(DataType.INT32)))
            params.extend(self.block_params)
        body: list[Op] = []
        self._region = body
        for p, param in zip(fn.params, params):  # zip stops at the declared parameters
            if isinstance(p.var.type, TensorType):
                self._make_view(p.var, param)
        self._prename_tiles(fn.body)
        self._hoist_branch_results(fn.body)
        self.stmt(fn.body)
        kind = self._kernel_kind()
        return Kernel(name=fn.name, params=tuple(params),
                      body=tuple(self.consts.instructions()) + self._pto_locs(body),
                      attrs=(("pto.kernel_kind", EnumAttr("pto.kernel_kind", kind)),))

    # ---- helpers used by tile_ops ------------------------------------------------------
    def loc(self, *nodes) -> SourceLoc | None:
        """The DSL location of the first node that has one.

        Ops carry the IR's own location while the kernel is built (so errors point at the
        DSL source); ``_pto_locs`` turns them into PTO ``loc(...)`` values at the end.
        """
        for node in nodes:
            loc = getattr(node, "loc", None)
            if loc is not None and loc.line:
                return loc
        return None

    def _pto_loc(self, loc: SourceLoc | None) -> SourceLoc | None:
        """PTO locs name ``loc_file`` (if set) and count columns from 1, as MLIR does
        (one PTO loc per IR loc: the ops of one statement share theirs)."""
        if loc is None or not self.options.emit_loc:
            return None
        found = self._pto_loc_of.get(id(loc))   # each held by an op of the kernel meanwhile
        if found is None:
            found = self._pto_loc_of[id(loc)] = SourceLoc(self.options.loc_file or loc.file,
                                                          loc.line, loc.col + 1)
        return found

    def _pto_locs(self, ops) -> tuple:
        out = []
        for op in ops:
            if type(op) is Instruction:   # most ops: no regions
                loc = self._pto_loc(op.loc)
                out.append(op if loc is op.loc else   # (both None)
                           Instruction(op.opcode, op.results, op.ins, op.outs, op.attrs, loc,
                                       op.line))
                continue
            changes = {"loc": self._pto_loc(op.loc)}
            if isinstance(op, ForOp):
                changes["body"] = self._pto_locs(op.body)
            elif isinstance(op, IfOp):
                changes["then_body"] = self._pto_locs(op.then_body)
                changes["else_body"] = self._pto_locs(op.else_body)
            out.append(dataclasses.replace(op, **changes))
        return tuple(out)

    def emit(self, op: Op) -> Op:
        self._region.append(op)
        return op

    @contextmanager
    def region(self, ops: list[Op]):
        saved, saved_path = self._region, self._path
        self._regions += 1
        self._region, self._path = ops, self._path + (self._regions,)
        try:
            yield ops
        finally:
            self._region, self._path = saved, saved_path

    def temp_name(self) -> str:
        return self.names.temp()

    # ---- statements --------------------------------------------------------------------
    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            for inner in s.stmts:
                self.stmt(inner)
        elif isinstance(s, AssignStmt):
            self._assign(s)
        elif isinstance(s, EvalStmt):
            if not isinstance(s.expr, Call):
                return  # a bare scalar expression has no effect
            self._call(None, s.expr, s)
        elif isinstance(s, ForStmt):
            self._for(s)
        elif isinstance(s, WhileStmt):
            self._while(s)
        elif isinstance(s, IfStmt):
            self._if(s)
        elif isinstance(s, ReturnStmt):
            return  # tensors are written in place; the kernel returns nothing
        elif isinstance(s, YieldStmt):
            raise CodegenError("pl.yield_ outside a loop or branch body", self.loc(s))
        else:  # pragma: no cover - the IR has no other statements
            raise CodegenError(f"cannot lower statement {type(s).__name__}", self.loc(s))

    def _assign(self, s: AssignStmt) -> None:
        var, value = s.var, s.value
        if isinstance(value, Call):
            self._call(var, value, s)
            return
        if isinstance(value, Var):  # an alias: same buffer / view / scalar
            if value in self.tiles:
                self.tiles[var] = self.tiles[value]
            elif value in self.tensors:
                self.tensors[var] = self.tensors[value]
            else:
                self.scalars[var] = self.scalar(value, loc=self.loc(s))
            return
        if isinstance(var.type, IrScalarType):
            if isinstance(value, (ConstInt, ConstFloat, ConstBool)):
                self.scalars[var] = self.scalar(value, var.type.dtype, self.loc(s))
            else:
                self.scalars[var] = self.scalar(value, var.type.dtype, self.loc(s),
                                                name=self.names.var(var))
            return
        raise CodegenError(f"cannot lower the assignment to '{var.name}' "
                           f"({describe(value)})", self.loc(s))

    def _call(self, var: Var | None, call: Call, s: Stmt) -> None:
        lower_call(self, var, call, s)

    def _for(self, s: ForStmt) -> None:
        loc = self.loc(s)
        lower = self.index(s.start, loc)
        upper = self.index(s.stop, loc)
        step = self.index(s.step, loc)
        iv = Value(self.names.var(s.loop_var), ScalarType(DataType.INDEX))
        self.scalars[s.loop_var] = iv
        carried: list[tuple[Value, Value]] = []
        for ia, init in self._carry_in(s, loc):
            self.scalars[ia] = Value(self.names.var(ia), init.type)
            carried.append((self.scalars[ia], init))
        body_ops: list[Op] = []
        with self.region(body_ops):
            yielded = self._body(s.body)
            yield_values = self._join(s.iter_args, yielded, [self.tiles.get(ia) for ia in
                                                             s.iter_args], loc)
            if carried:
                self.emit(YieldOp(tuple(yield_values)))
        results = self._carry_out(s)
        self.emit(ForOp(iv=iv, lower=lower, upper=upper, step=step, body=tuple(body_ops),
                        iter_args=tuple(carried), results=tuple(results)))

    def _while(self, s: WhileStmt) -> None:
        """``scf.while``: the scalar carries are the condition region's arguments, which it
        hands to the body's block arguments; tile and tensor carries stay in their buffers
        (as in ``_for``)."""
        loc = self.loc(s)
        scalars = self._carry_in(s, loc)
        carried = [(Value(self.temp_name(), init.type), init) for _, init in scalars]
        body_args = [Value(self.names.var(ia), init.type) for ia, init in scalars]
        scalar_iters = [ia for ia, _ in scalars]
        cond_ops: list[Op] = []
        with self.region(cond_ops):
            for ia, (arg, _) in zip(scalar_iters, carried):
                self.scalars[ia] = arg
            cond = self.scalar(s.cond, DataType.BOOL, loc)
            self.emit(ConditionOp(cond, tuple(arg for arg, _ in carried)))
        body_ops: list[Op] = []
        with self.region(body_ops):
            for ia, arg in zip(scalar_iters, body_args):
                self.scalars[ia] = arg
            yielded = self._body(s.body)
            values = self._join(s.iter_args, yielded, [self.tiles.get(ia) for ia in
                                                        s.iter_args], loc)
            self.emit(YieldOp(tuple(values)))
        results = self._carry_out(s)
        self.emit(WhileOp(tuple(cond_ops), tuple(body_ops), tuple(carried), tuple(body_args),
                          tuple(results)))

    def _carry_in(self, s: ForStmt | WhileStmt, loc) -> list[tuple[IterArg, Value]]:
        """Bind a loop's tile and tensor carries to their init's buffer (they are written
        in place); the scalar carries with their init values, which the loop op carries."""
        scalars = []
        for ia in s.iter_args:
            if isinstance(ia.type, TileType):
                self.tiles[ia] = self.tile(ia.init, loc)
            elif isinstance(ia.type, TensorType):
                self.tensors[ia] = self.tensor(ia.init, loc)
            else:
                scalars.append((ia, self.scalar(ia.init, ia.type.dtype, loc)))
        return scalars

    def _carry_out(self, s: ForStmt | WhileStmt) -> list[Value]:
        """Bind a loop's results: buffers as their carry's, scalars as new op results."""
        results = []
        for ia, rv in zip(s.iter_args, s.return_vars):
            if isinstance(ia.type, TileType):
                self.tiles[rv] = self.tiles[ia]
            elif isinstance(ia.type, TensorType):
                self.tensors[rv] = self.tensors[ia]
            else:
                result = Value(self.names.var(rv), self.scalars[ia].type)
                self.scalars[rv] = result
                results.append(result)
        return results

    def _body(self, body: SeqStmts) -> tuple[Expr, ...]:
        """Emit a loop/branch body; returns the values its trailing yield names."""
        stmts = list(body.stmts)
        yielded: tuple[Expr, ...] = ()
        if stmts and isinstance(stmts[-1], YieldStmt):
            yielded = stmts.pop().values
        for inner in stmts:
            self.stmt(inner)
        return yielded

    def _join(self, targets, yielded, tile_slots, loc) -> list[Value]:
        """Scalar yield values; tile values that are not already in their slot are moved."""
        values: list[Value] = []
        for target, value, slot in zip(targets, yielded, tile_slots):
            if isinstance(target.type, TileType):
                src = self.tile(value, loc)
                if slot is not None and not self.same_buffer(src, slot):
                    if target.type.memory_space is MemorySpace.Acc:
                        raise CodegenError(
                            f"cannot reconcile divergent L0C accumulator buffers: "
                            f"'{target.name}' is joined from accumulator '{value.name}', which "
                            "is live in another Acc buffer at the join, and an Acc -> Acc move "
                            "does not exist", loc,
                            hint="let every branch that feeds the accumulator write it in "
                                 "place (matmul_acc on the carried accumulator, or a matmul "
                                 "made in that branch), not an accumulator computed before the "
                                 "join")
                    self.copy_tile(src, slot, loc)
            elif isinstance(target.type, TensorType):
                continue
            else:
                values.append(self.scalar(value, target.type.dtype, loc))
        return values

    def _if(self, s: IfStmt) -> None:
        loc = self.loc(s)
        cond = self.scalar(s.cond, DataType.BOOL, loc)
        slots = [self.tiles.get(rv) if isinstance(rv.type, TileType) else None
                 for rv in s.return_vars]
        then_ops: list[Op] = []
        else_ops: list[Op] = []
        scalar_results = [rv for rv in s.return_vars
                          if not isinstance(rv.type, (TileType, TensorType))]
        with self.region(then_ops):
            y = self._body(s.then_body)
            vals = self._join(s.return_vars, y, slots, loc)
            self._bind_tensor_results(s.return_vars, y)
            if scalar_results:
                self.emit(YieldOp(tuple(vals)))
        if s.else_body is not None:
            with self.region(else_ops):
                y = self._body(s.else_body)
                vals = self._join(s.return_vars, y, slots, loc)
                if scalar_results:
                    self.emit(YieldOp(tuple(vals)))
        results = []
        for rv in scalar_results:
            result = Value(self.names.var(rv), ScalarType(rv.type.dtype))
            self.scalars[rv] = result
            results.append(result)
        self.emit(IfOp(cond=cond, then_body=tuple(then_ops), else_body=tuple(else_ops),
                       results=tuple(results), has_else=s.else_body is not None))

    def _bind_tensor_results(self, return_vars, yielded) -> None:
        for rv, value in zip(return_vars, yielded):
            if isinstance(rv.type, TensorType):
                self.tensors[rv] = self.tensor(value)

    # ---- pre-passes --------------------------------------------------------------------
    def _prename_tiles(self, body: SeqStmts) -> None:
        """Name tile variables in program order before emitting (see ``ptoc.codegen.names``)."""
        for s in body.stmts:
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) \
                    and isinstance(s.var.type, TileType):
                self.names.var(s.var)
            elif isinstance(s, (ForStmt, WhileStmt)):
                self._prename_tiles(s.body)
            elif isinstance(s, IfStmt):
                self._prename_tiles(s.then_body)
                if s.else_body is not None:
                    self._prename_tiles(s.else_body)
                for rv in s.return_vars:
                    if isinstance(rv.type, TileType):
                        self.names.var(rv)
            elif isinstance(s, SeqStmts):
                self._prename_tiles(s)

    def _hoist_branch_results(self, body: SeqStmts) -> None:
        """Allocate the tile results of every run-time ``if`` at the top of the kernel."""
        for s in body.stmts:
            if isinstance(s, (ForStmt, WhileStmt)):
                self._hoist_branch_results(s.body)
            elif isinstance(s, IfStmt):
                self._hoist_branch_results(s.then_body)
                if s.else_body is not None:
                    self._hoist_branch_results(s.else_body)
                for rv in s.return_vars:
                    if isinstance(rv.type, TileType):
                        self.alloc_tile(rv, self.loc(self.source), hoisted=True)
            elif isinstance(s, SeqStmts):
                self._hoist_branch_results(s)

    def _kernel_kind(self) -> str:
        ft = self.fn.func_type
        if ft is FunctionType.AIC:
            return "cube"
        if ft is FunctionType.AIV:
            return "vector"
        cube = any(sp in _CUBE_SPACES for sp in self.saw_spaces)
        vec = MemorySpace.Vec in self.saw_spaces
        if cube and vec:
            raise CodegenError(
                f"InCore kernel '{self.fn.name}' uses both cube buffers and Vec tiles; one PTO "
                "kernel runs on one core type", self.loc(self.source),
                hint="split it into an AIC and an AIV function (ExpandMixedKernel) first")
        return "cube" if cube else "vector"


def _scan(fn: Function) -> tuple[set[str], bool]:
    """In one walk: every name ``fn`` defines (the SSA namer's hints: params, loop variables,
    carries, results) and whether it reads its block identity (``BLOCK_OPS``)."""
    scan = _Scan()
    scan.visit(fn)
    return scan.names, scan.block


class _Scan(IRVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.block = False

    def visit_def(self, var) -> None:
        self.names.add(var.name)

    def visit_call(self, node) -> None:
        self.block = self.block or node.op in BLOCK_OPS
        super().visit_call(node)


__all__ = ["CodegenError", "CodegenOptions", "KernelEmitter"]
