"""The orchestration interpreter: runs the host-side entry function and turns every kernel
call into a ``ptoc.sim.task.Task`` for a dispatcher (``ptoc.runtime.dispatch``).

Why separate from dispatching: what the program launches (kernels, their GM regions, the
dependencies it states) is the program's meaning; when and where each task runs is the
runtime's — one core in order, or the chip's scheduler over many cores. Tensors are
regions of one GM (``ptoc.sim.global_memory``): ``pl.create_tensor`` allocates, a kernel's
``Out`` parameter is written where it lies, two arguments on one tensor share its bytes.

Orchestration may allocate GM tensors, take views of them, read scalars out of them and
ask their extents (``ptoc.runtime.host_ops``), do scalar arithmetic, branch (``if`` with
``pl.yield_``), loop with bounds it computed, and call functions: a kernel (or a core
group) call is a task; a call of a wrapper (an SPMD launch, a cluster, a hierarchy level)
runs the wrapper's body here, and the launch spec on the call (``core_num``,
``sync_start``) applies to the kernels it launches. A compute op is misplaced and reported
as such.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import numpy as np

from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, ScopeKind
from ptoc.errors import InternalError, RuntimeConfigError
from ptoc.ir.aliases import returned_params
from ptoc.ir.dynamic import dynamic_dims
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, DimVar, EvalStmt, ForStmt,
    Function, IfStmt, ListExpr, ReturnStmt, ScopeStmt, Submit, TupleGetItem, UnaryOp, Var,
    YieldStmt,
)
from ptoc.ir.printer import format_node
from ptoc.ops import get_op
from ptoc.pto.launch import BLOCK_PARAMS, block_arguments
from ptoc.passes.tasks.auto_derive_task_dependencies import COMPILER_EDGES
from ptoc.passes.tasks.classify_iter_arg_carry import iter_arg_array_size
from ptoc.runtime.host_ops import HOST_OPS, element_index, gm_regions, task_ids
from ptoc.ir.types import TensorType
from ptoc.runtime.dims import DimBindings
from ptoc.sim.core.memory import MemoryAccessError
from ptoc.sim.errors import SimLimitError
from ptoc.sim.global_memory import GlobalMemory, GMTensor
from ptoc.sim.task import COMPARE, DispatchPredicate, Task
from ptoc.sim.unwritten import DefinedBytes

_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "//": lambda a, b: a // b, "%": lambda a, b: a % b, "/": lambda a, b: a / b,
          **COMPARE, "and": lambda a, b: a and b, "or": lambda a, b: a or b}

#: a predicate written constant-first (``0 < t[i]``), as the runtime's ``t[i] OP c``
_FLIPPED = {"==": "==", "!=": "!=", ">": "<", "<": ">", ">=": "<=", "<=": ">="}


def is_launchable(function) -> bool:
    """A kernel (InCore/AIC/AIV) or a Group (one AIC and its AIVs)."""
    return function is not None and (function.func_type.is_kernel
                                     or function.func_type is FunctionType.Group)


class _Yield(list):
    """The values a body's ``pl.yield_`` hands to its loop or ``if``."""


class _Return(list):
    """The values of a ``return``; unwinds every enclosing loop and branch."""


class Orchestrator:
    """Interprets an entry function over GM tensors; each kernel call becomes a Task handed
    to ``dispatcher.submit`` in program order."""

    def __init__(self, compiled, memory: GlobalMemory, dispatcher, limits=None,
                 defined: DefinedBytes | None = None):
        from ptoc.sim.limits import DEFAULT_LIMITS

        self.compiled = compiled
        self.memory = memory
        self.defined = defined or DefinedBytes()   # which bytes of the run's GM are written
        self.dispatcher = dispatcher
        self.limits = limits or DEFAULT_LIMITS
        self.steps = 0
        self.tasks: list[Task] = []
        self.launch_spec: dict = {}   # core_num / sync_start of the SPMD call being run
        self.manual = False           # inside pl.manual_scope
        self.wrapper_directions: dict = {}  # id(wrapper param) -> its caller's direction
        self.launch_deps: tuple[int, ...] = ()  # explicit deps of the submit being run
        self.launch_predicate: DispatchPredicate | None = None  # of the submit being run
        self.launched: dict[int, tuple[int, ...]] = {}  # id(var) -> tasks its call launched

    def run(self, entry: Function, values: list, dims: dict | None = None) -> list:
        """Run the entry function on ``values``; ``dims`` are the sizes of the ``pl.dynamic``
        dimensions its parameters name (from the tensors passed)."""
        if is_launchable(entry):
            return self.launch(entry, values, None)
        return self.interpret(entry, values, dims)

    def interpret(self, function: Function, values: list, dims: dict | None = None) -> list:
        """Run a host-side function's body; its returned values."""
        env: dict[int, Any] = {id(v): n for v, n in (dims or {}).items()}
        env.update({id(p.var): v for p, v in zip(function.params, values)})
        out = self.block(function.body.stmts, env)
        return list(out) if isinstance(out, _Return) else []

    # -- statements ------------------------------------------------------------------------
    def block(self, stmts, env) -> list | None:
        """Run statements; a ``_Yield`` or ``_Return`` when one ends the block."""
        for stmt in stmts:
            if isinstance(stmt, AssignStmt):
                first = len(self.tasks)
                env[id(stmt.var)] = self.value(stmt.value, env, stmt)
                if isinstance(stmt.value, Call) and stmt.value.is_function:
                    self.launched[id(stmt.var)] = tuple(range(first, len(self.tasks)))
            elif isinstance(stmt, EvalStmt):
                self.value(stmt.expr, env, stmt)
            elif isinstance(stmt, ReturnStmt):
                return _Return(self.value(v, env, stmt) for v in stmt.values)
            elif isinstance(stmt, YieldStmt):
                return _Yield(self.value(v, env, stmt) for v in stmt.values)
            elif isinstance(stmt, ForStmt):
                out = self.loop(stmt, env)
                if out is not None:
                    return out
            elif isinstance(stmt, IfStmt):
                out = self.branch(stmt, env)
                if out is not None:
                    return out
            elif isinstance(stmt, ScopeStmt) and stmt.kind is ScopeKind.Runtime:
                out = self.runtime_scope(stmt, env)
                if out is not None:
                    return out
            else:
                raise RuntimeConfigError(
                    f"orchestration statement {type(stmt).__name__} is not supported by the "
                    "ptoc runtime", stmt.loc, hint="a with-region left in the program means the "
                    "outlining passes did not run: compile the program with ir.compile")
        return None

    def runtime_scope(self, stmt: ScopeStmt, env):
        manual = bool(stmt.attrs.get("manual"))
        outer, self.manual = self.manual, self.manual or manual
        try:
            return self.block(stmt.body.stmts, env)
        finally:
            self.manual = outer

    def branch(self, stmt: IfStmt, env):
        cond = self.value(stmt.cond, env, stmt)
        body = stmt.then_body if cond else stmt.else_body
        out = self.block(body.stmts, env) if body is not None else None
        if isinstance(out, _Yield):
            for rv, v in zip(stmt.return_vars, out):
                env[id(rv)] = v
            return None
        return out

    def loop(self, stmt: ForStmt, env):
        start, stop, step = (self.value(b, env, stmt) for b in (stmt.start, stmt.stop, stmt.step))
        if not all(isinstance(b, (int, np.integer)) for b in (start, stop, step)) or step <= 0:
            raise RuntimeConfigError(
                f"orchestration loop {stmt.loop_var.name} runs from {start!r} to {stop!r} in "
                f"steps of {step!r}", stmt.loc, hint="loop bounds are integers and a run-time "
                "step is positive; to count down, write a constant negative step "
                "(pl.range(7, -1, -2))")
        trips = len(range(start, stop, step))
        self.steps += trips
        if self.steps > self.limits.max_scalar_steps:
            raise SimLimitError(
                f"orchestration loop {stmt.loop_var.name} runs {trips:,} times; with the loops "
                f"before it that is more than {self.limits.max_scalar_steps:,} scalar steps",
                stmt.loc, hint="check the loop bounds, or raise SimLimits(max_scalar_steps=...)")
        carried = [self.value(ia.init, env, stmt) for ia in stmt.iter_args]
        entry = list(carried)
        fences = {slot: set() for slot in range(len(carried))
                  if stmt.kind is ForKind.Parallel and iter_arg_array_size(stmt, slot)}
        for i in range(start, stop, step):
            env[id(stmt.loop_var)] = int(i)
            for slot, (ia, v) in enumerate(zip(stmt.iter_args, carried)):
                env[id(ia)] = entry[slot] if slot in fences else v
            out = self.block(stmt.body.stmts, env)
            if isinstance(out, _Return):
                return out
            if isinstance(out, _Yield):
                carried = list(out)
                for slot, ids in fences.items():
                    ids.update(task_ids([carried[slot]]))
        for slot, ids in fences.items():   # a task-id fence: every iteration's launches
            carried[slot] = tuple(sorted(ids)) if trips else entry[slot]
        for rv, v in zip(stmt.return_vars, carried):
            env[id(rv)] = v
        return None

    # -- expressions -----------------------------------------------------------------------
    def value(self, expr, env, stmt):
        if isinstance(expr, Var):
            if id(expr) not in env and isinstance(expr, DimVar):
                raise RuntimeConfigError(
                    f"pl.dynamic dimension {expr.name} has no value here: no tensor parameter "
                    "of the entry function declares it", getattr(stmt, "loc", None),
                    hint=f"read the size with pl.tensor.dim, or name {expr.name} in a "
                         "parameter's shape")
            return env[id(expr)]
        if isinstance(expr, (ConstInt, ConstFloat, ConstBool)):
            return expr.value
        if isinstance(expr, TupleGetItem):
            return self.value(expr.tuple, env, stmt)[expr.index]
        if isinstance(expr, BinOp):
            lhs, rhs = self.value(expr.lhs, env, stmt), self.value(expr.rhs, env, stmt)
            try:
                return _ARITH[expr.op](lhs, rhs)
            except (ArithmeticError, ValueError, TypeError) as exc:
                raise RuntimeConfigError(
                    f"orchestration: {lhs!r} {expr.op} {rhs!r} fails ({exc})",
                    getattr(stmt, "loc", None), hint="fix the operands' values") from None
        if isinstance(expr, UnaryOp):
            operand = self.value(expr.operand, env, stmt)
            return (not operand) if expr.op == "not" else -operand
        if isinstance(expr, ListExpr):
            return [self.value(item, env, stmt) for item in expr.items]
        if isinstance(expr, Call) and expr.is_function:
            callee = self.compiled.program.get_function(expr.op)
            args = [self.value(a, env, stmt) for a in expr.args]
            first = len(self.tasks)
            with self._deps(self.stated_deps(expr, env, stmt)), \
                    self._gate(self.dispatch_predicate(expr, env, stmt)):
                results = self.call(callee, args, stmt, expr, env)
            if isinstance(expr, Submit):
                return (*results, tuple(range(first, len(self.tasks))))
            return results[0] if len(results) == 1 else tuple(results)
        if isinstance(expr, Call) and expr.op == "tensor.create":
            ty, options = expr.type, dict(expr.kwargs)
            name = stmt.var.name if isinstance(stmt, AssignStmt) else "tensor"
            shape = tuple(self.value(d, env, stmt) if not isinstance(d, int) else d
                          for d in ty.shape)
            fill = options.get("init_value")
            tensor = self.memory.alloc(name, shape, ty.dtype,
                                       None if fill is None else np.full(shape, fill),
                                       manual_dep=bool(options.get("manual_dep")))
            if fill is None:     # on a device: whatever the memory held
                loc = getattr(stmt, "loc", None)
                self.defined.undefined(tensor, "pl.create_tensor without init_value="
                                       + (f" at {loc}" if loc is not None else ""))
            return tensor
        if isinstance(expr, Call) and expr.op in HOST_OPS:
            return self.host_op(expr, env, stmt)
        op = getattr(expr, "op", type(expr).__name__)
        raise RuntimeConfigError(
            f"Misplaced tensor op '{op}' in Orchestration function (should be inside InCore "
            "block)", getattr(stmt, "loc", None),
            hint="move the computation into an InCore kernel")

    def stated_deps(self, expr: Call, env, stmt) -> tuple[int, ...]:
        """The tasks a launch waits for besides what the runtime infers: a submit's
        ``deps=[...]`` and the edges AutoDeriveTaskDependencies stated
        (``compiler_manual_dep_edges``: task ids, or a plain call's result standing for the
        tasks that call launched)."""
        edges = expr.attrs.get(COMPILER_EDGES)
        named = [self.launched[id(v)] if isinstance(v, Var) and id(v) in self.launched
                 else self.value(v, env, stmt) for v in (edges.items if edges else ())]
        return task_ids([*(self.value(d, env, stmt) for d in getattr(expr, "deps", ())),
                         *named])

    def dispatch_predicate(self, expr: Call, env, stmt) -> DispatchPredicate | None:
        """A submit's ``predicate=`` bound to its GM element — not read here: the scheduler
        reads it at each task's dispatch point (the tensor as operand, the op flipped when the
        constant was written first)."""
        pred = getattr(expr, "predicate", None)
        if pred is None:
            return None
        read, target, op = (pred.lhs, pred.rhs, pred.op) if isinstance(pred.rhs, ConstInt) \
            else (pred.rhs, pred.lhs, _FLIPPED[pred.op])
        tensor = self.value(read.args[0], env, stmt)
        loc = getattr(stmt, "loc", None)
        index = element_index(tensor, self.value(read.args[1], env, stmt),
                              "tensor.read of a predicate=", loc)
        return DispatchPredicate(tensor, index, op, target.value, format_node(pred))

    def host_op(self, expr: Call, env, stmt):
        """An orchestration op run on the host (``host_ops``). Dispatchers compute a task's
        data when it is submitted, so a tensor the host reads holds every earlier task's
        writes (the device runtime makes such a read wait for its producers)."""
        evaluate = HOST_OPS[expr.op]
        names = [p.name for p in get_op(expr.op).params]
        args = {name: a if isinstance(a, (int, float, str, DataType)) else self.value(a, env, stmt)
                for name, a in zip(names, expr.args)}
        args.update({k: v if not hasattr(v, "type") else self.value(v, env, stmt)
                     for k, v in expr.kwargs})
        loc = getattr(stmt, "loc", None)
        reads, writes = gm_regions(expr.op, args, loc)
        for region in reads:
            self.defined.host_read(region, f"pl.{expr.op.removeprefix('tensor.')}", loc)
        result = evaluate(args, loc)
        for region in writes:
            self.defined.host_write(region)
        return result

    def call(self, callee: Function | None, args: list, stmt, expr: Call, env) -> list:
        """A kernel (or core group) with compiled PTO is launched as a task; any other
        function (an SPMD or cluster wrapper, a hierarchy level) runs here, with the call's
        launch spec applying to the tasks it launches."""
        if callee is None:
            raise RuntimeConfigError(f"the program has no function '{expr.op}'",
                                     getattr(stmt, "loc", None))
        spec = {k: self.value(v, env, stmt) if hasattr(v, "type") else v
                for k, v in expr.attrs.items() if k in ("core_num", "sync_start")}
        directions = tuple(expr.attrs.get("arg_directions", ()))
        if callee.name in self.compiled.pto_text:
            forwarded = self.forwarded_directions(expr, env)
            with self._spec(spec):
                return self.launch(callee, args, stmt, directions=forwarded or directions)
        if callee.func_type.is_kernel:
            raise RuntimeConfigError(f"kernel '{callee.name}' has no compiled PTO",
                                     callee.loc, hint="compile the program with ir.compile")
        wrapper = callee.func_type in (FunctionType.Spmd, FunctionType.Group)
        outer = self.wrapper_directions
        self.wrapper_directions = {id(p.var): d for p, d in zip(callee.params, directions)} \
            if wrapper and directions else {}
        try:
            with self._spec(spec):
                return self.interpret(callee, args)
        finally:
            self.wrapper_directions = outer

    def forwarded_directions(self, expr: Call, env) -> tuple:
        """Inside an SPMD or cluster wrapper, the launch is the wrapper's call: an argument
        that is one of the wrapper's parameters is tracked as the wrapper's caller said (a
        wrapper body on its own would call every first write ``output_existing``)."""
        if not self.wrapper_directions:
            return ()
        own = expr.attrs.get("arg_directions", ())
        return tuple(self.wrapper_directions.get(id(a), d) if isinstance(a, Var) else d
                     for a, d in zip(expr.args, own))

    @contextmanager
    def _deps(self, deps: tuple[int, ...]):
        """Within: tasks launched also wait for ``deps`` (a submit's ``deps=[...]``)."""
        outer = self.launch_deps
        self.launch_deps = tuple(sorted(set(outer) | set(deps)))
        try:
            yield
        finally:
            self.launch_deps = outer

    @contextmanager
    def _gate(self, predicate: DispatchPredicate | None):
        """Within: tasks launched carry ``predicate`` (a predicated SPMD wrapper's blocks)."""
        outer = self.launch_predicate
        self.launch_predicate = predicate or outer
        try:
            yield
        finally:
            self.launch_predicate = outer

    @contextmanager
    def _spec(self, spec: dict):
        """Within: the launch spec of an SPMD call applies (the innermost one wins)."""
        outer = self.launch_spec
        if spec:
            core_num = spec.get("core_num", 1)
            if isinstance(core_num, bool) or not isinstance(core_num, (int, np.integer)) \
                    or core_num < 1:
                raise RuntimeConfigError(f"pl.spmd core_num is {core_num!r}; it must be a "
                                         "positive integer")
            self.launch_spec = {**spec, "core_num": int(core_num)}
        try:
            yield
        finally:
            self.launch_spec = outer

    # -- kernel launches -------------------------------------------------------------------
    def launch(self, function: Function, args: list, stmt, deps: tuple[int, ...] = (),
               directions: tuple = ()) -> list:
        """Make the Task of one kernel call (one per block of an SPMD launch), submit it, and
        return the call's results (the GM tensors of the parameters the kernel returns)."""
        if not is_launchable(function):
            raise RuntimeConfigError(f"'{getattr(function, 'name', '?')}' is not a kernel")
        blocks = self.launch_spec.get("core_num")
        launch = len(self.tasks) if blocks is not None else None
        for block in range(blocks or 1):
            task = self.make_task(function, args, stmt, tuple(deps) + self.launch_deps,
                                  tuple(directions),
                                  launch=launch, block=(block, blocks) if blocks else None)
            self.tasks.append(task)
            with _dynamic_sizes_named(task, function):
                self.dispatcher.submit(task)
        results = []
        for index, ty in zip(returned_params(function), function.return_types):
            if index is None and isinstance(ty, TensorType):
                raise InternalError(
                    f"kernel '{function.name}' returns a tensor that is none of its "
                    "parameters, so its data would be lost", function.loc,
                    hint="store the result into a pl.Out parameter and return that")
            results.append(args[index] if index is not None else None)
        return results

    def make_task(self, function: Function, args: list, stmt, deps: tuple[int, ...],
                  directions: tuple = (), *, launch: int | None = None,
                  block: tuple[int, int] | None = None) -> Task:
        """Bind ``args`` to the kernel's parameters: tensors must be GM regions of the
        declared shape and dtype laid out as the kernel reads them (row-major). The regions
        a launch waits on are those its call-site ``directions`` (DeriveCallDirections) mark
        ``input``/``inout`` — an ``output_existing`` write does not look its region up —
        or, without them, its ``In``/``InOut`` parameters; a ``no_dep`` slot and every slot
        of a ``pl.manual_scope`` launch neither wait nor become a region's writer (only
        ``deps`` order them), nor does a slot on a ``manual_dep=True`` tensor. A kernel
        that reads its block
        identity gets (index, count) as two more arguments (block 0 of 1 for a plain
        launch)."""
        reads, writes, produces = [], [], []
        dims = DimBindings({p.var: a for p, a in zip(function.params, args)
                            if isinstance(p.var, DimVar)})
        args = [a.with_rank(len(p.var.type.shape)) if isinstance(a, GMTensor) and
                isinstance(p.var.type, TensorType) else a for p, a in zip(function.params, args)]
        for index, (param, arg) in enumerate(zip(function.params, args)):
            ty = param.var.type
            if not isinstance(ty, TensorType):
                continue
            _check_tensor_arg(function, param, arg, stmt, dims)
            if param.direction is not Direction.In:
                writes.append(arg)
            if self.manual or arg.alloc.manual_dep:   # pl.manual_scope / manual_dep=True:
                continue                             # no lookup, no producer insert
            tracked = directions[index] if index < len(directions) else None
            if tracked is not None and tracked.reads or tracked is None and \
                    param.direction is not Direction.Out:
                reads.append(arg)   # the launch waits for this region's last writer
            if tracked is not None and tracked.writes or tracked is None and \
                    param.direction is not Direction.In:
                produces.append(arg)  # later readers of the region wait for this launch
        module = self.compiled.pto_module(function.name)
        kernel = next((k for k in module.kernels if k.name == function.name),
                      module.kernels[0])     # a core group: its kernels share one ABI
        identity = block_arguments(kernel, *(block or (0, 1)))
        declared = {p.var for p in function.params}
        extra = [v for v in dynamic_dims(function) if v not in declared]
        sizes = [dims.evaluate(v, f"kernel '{function.name}'", stmt) for v in extra]
        params = tuple(p.var.name for p in function.params) + tuple(v.name for v in extra) \
            + BLOCK_PARAMS[:len(identity)]
        return Task(len(self.tasks), function.name, module,
                    tuple(args) + tuple(sizes) + tuple(identity),
                    tuple(reads), tuple(writes), tuple(deps),
                    getattr(stmt, "loc", None) or function.loc, params,
                    launch=launch, block=block,
                    sync_start=bool(self.launch_spec.get("sync_start")),
                    directions=directions, manual=self.manual, produces=tuple(produces),
                    predicate=self.launch_predicate)


@contextmanager
def _dynamic_sizes_named(task: Task, function: Function):
    """A kernel run with ``pl.dynamic`` sizes it cannot handle (a window past the tensor's
    end, a misaligned row) fails in the simulator; the error then also names the launch
    and the sizes it was given, which is what the user has to change."""
    names = {v.name for v in dynamic_dims(function)}
    sizes = [f"{n} = {a}" for n, a in zip(task.params, task.args) if n in names]
    try:
        yield
    except MemoryAccessError as exc:
        if not sizes:
            raise
        raise type(exc)(f"kernel '{function.name}' launched at {task.where()} with "
                        f"{', '.join(sizes)}: {exc.message}", exc.loc,
                        hint="the kernel handles only sizes its tile windows fit: pass "
                             "such sizes, or give the loads a valid_shape for the tail"
                        ) from None


def _check_tensor_arg(function: Function, param, arg, stmt, dims: DimBindings) -> None:
    """A tensor argument is a GM region of the parameter's shape and dtype (its
    ``pl.dynamic`` dimensions bind to the region's sizes), one row-major block: the
    compiled kernel addresses its parameter with that layout."""
    ty = param.var.type
    loc = getattr(stmt, "loc", None) or function.loc
    if not isinstance(arg, GMTensor):
        raise RuntimeConfigError(
            f"kernel '{function.name}' parameter '{param.var.name}' is a tensor but got a "
            f"{type(arg).__name__}", loc, hint="pass a tensor")
    if arg.dtype is not ty.dtype or len(arg.shape) != len(ty.shape):
        raise RuntimeConfigError(
            f"kernel '{function.name}' parameter '{param.var.name}' is {format_node(ty)} but "
            f"got {arg.describe()} of {arg.dtype.value}{list(arg.shape)}",
            loc, hint="pass a tensor of the declared shape and dtype")
    dims.bind_shape(tuple(ty.shape), tuple(arg.shape),
                    f"kernel '{function.name}' parameter '{param.var.name}'", loc)
    if not arg.is_contiguous:
        raise RuntimeConfigError(
            f"kernel '{function.name}' parameter '{param.var.name}' gets a strided slice of "
            f"'{arg.name}' (strides {list(arg.strides)}), but the compiled kernel reads it as "
            "a row-major block, so it would read the wrong elements", loc,
            hint="pass a slice of whole rows, or the whole tensor and an offset")
