"""The orchestration interpreter: runs the host-side entry function and turns every kernel
call into a ``ptoc.sim.task.Task`` for a dispatcher (``ptoc.runtime.dispatch``).

Why separate from dispatching: what the program launches (kernels, their GM regions, the
dependencies it states) is the program's meaning; when and where each task runs is the
runtime's — one core in order, or the chip's scheduler over many cores. Tensors are
regions of one GM (``ptoc.sim.global_memory``): ``pl.create_tensor`` allocates, a kernel's
``Out`` parameter is written where it lies, two arguments on one tensor share its bytes.

Orchestration may allocate GM tensors, call kernels, alias values and loop with constant
bounds; a compute op in it is misplaced and reported as such.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoc.dtypes import Direction, FunctionType
from ptoc.errors import InternalError, RuntimeConfigError
from ptoc.ir.aliases import returned_params
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, EvalStmt, ForStmt, Function,
    ReturnStmt, TupleGetItem, UnaryOp, Var,
)
from ptoc.ir.types import TensorType
from ptoc.sim.errors import SimLimitError
from ptoc.sim.global_memory import GlobalMemory, GMTensor
from ptoc.sim.task import Task

_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "//": lambda a, b: a // b, "%": lambda a, b: a % b, "/": lambda a, b: a / b,
          "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
          "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
          "and": lambda a, b: a and b, "or": lambda a, b: a or b}


def is_launchable(function) -> bool:
    """A kernel (InCore/AIC/AIV) or a Group (one AIC and its AIVs)."""
    return function is not None and (function.func_type.is_kernel
                                     or function.func_type is FunctionType.Group)


class Orchestrator:
    """Interprets an entry function over GM tensors; each kernel call becomes a Task handed
    to ``dispatcher.submit`` in program order."""

    def __init__(self, compiled, memory: GlobalMemory, dispatcher, limits=None):
        from ptoc.sim.limits import DEFAULT_LIMITS

        self.compiled = compiled
        self.memory = memory
        self.dispatcher = dispatcher
        self.limits = limits or DEFAULT_LIMITS
        self.steps = 0
        self.tasks: list[Task] = []

    def run(self, entry: Function, values: list) -> list:
        if is_launchable(entry):
            return self.launch(entry, values, None)
        env: dict[int, Any] = {id(p.var): v for p, v in zip(entry.params, values)}
        return self.block(entry.body.stmts, env) or []

    # -- statements ------------------------------------------------------------------------
    def block(self, stmts, env) -> list | None:
        for stmt in stmts:
            if isinstance(stmt, AssignStmt):
                env[id(stmt.var)] = self.value(stmt.value, env, stmt)
            elif isinstance(stmt, EvalStmt):
                self.value(stmt.expr, env, stmt)
            elif isinstance(stmt, ReturnStmt):
                return [self.value(v, env, stmt) for v in stmt.values]
            elif isinstance(stmt, ForStmt):
                self.loop(stmt, env)
            else:
                raise RuntimeConfigError(
                    f"orchestration statement {type(stmt).__name__} is not supported by the "
                    "ptoc runtime", stmt.loc, hint="keep orchestration to kernel calls, "
                    "pl.create_tensor and constant-bound loops")
        return None

    def loop(self, stmt: ForStmt, env) -> None:
        start, stop, step = (self.value(b, env, stmt) for b in (stmt.start, stmt.stop, stmt.step))
        if not all(isinstance(b, (int, np.integer)) for b in (start, stop, step)) or step <= 0:
            raise RuntimeConfigError(
                f"orchestration loop {stmt.loop_var.name} runs from {start!r} to {stop!r} in "
                f"steps of {step!r}", stmt.loc, hint="loop bounds are integers and the step "
                "is positive")
        trips = len(range(start, stop, step))
        self.steps += trips
        if self.steps > self.limits.max_scalar_steps:
            raise SimLimitError(
                f"orchestration loop {stmt.loop_var.name} runs {trips:,} times; with the loops "
                f"before it that is more than {self.limits.max_scalar_steps:,} scalar steps",
                stmt.loc, hint="check the loop bounds, or raise SimLimits(max_scalar_steps=...)")
        carried = [self.value(ia.init, env, stmt) for ia in stmt.iter_args]
        for i in range(start, stop, step):
            env[id(stmt.loop_var)] = i
            for ia, v in zip(stmt.iter_args, carried):
                env[id(ia)] = v
            body = stmt.body.stmts
            self.block(body[:-1] if stmt.iter_args else body, env)
            if stmt.iter_args:
                carried = [self.value(v, env, stmt) for v in body[-1].values]
        for rv, v in zip(stmt.return_vars, carried):
            env[id(rv)] = v

    # -- expressions -----------------------------------------------------------------------
    def value(self, expr, env, stmt):
        if isinstance(expr, Var):
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
        if isinstance(expr, Call) and expr.is_function:
            callee = self.compiled.program.get_function(expr.op)
            args = [self.value(a, env, stmt) for a in expr.args]
            results = self.launch(callee, args, stmt)
            return results[0] if len(results) == 1 else tuple(results)
        if isinstance(expr, Call) and expr.op == "tensor.create":
            ty = expr.type
            name = stmt.var.name if isinstance(stmt, AssignStmt) else "tensor"
            return self.memory.alloc(name, tuple(ty.shape), ty.dtype)
        op = getattr(expr, "op", type(expr).__name__)
        raise RuntimeConfigError(
            f"Misplaced tensor op '{op}' in Orchestration function (should be inside InCore "
            "block)", getattr(stmt, "loc", None),
            hint="move the computation into an InCore kernel")

    # -- kernel launches -------------------------------------------------------------------
    def launch(self, function: Function, args: list, stmt, deps: tuple[int, ...] = ()) -> list:
        """Make the Task of one kernel call, submit it, and return the call's results (the
        GM tensors of the parameters the kernel returns)."""
        if not is_launchable(function):
            raise RuntimeConfigError(f"'{getattr(function, 'name', '?')}' is not a kernel")
        task = self.make_task(function, args, stmt, deps)
        self.tasks.append(task)
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

    def make_task(self, function: Function, args: list, stmt, deps: tuple[int, ...]) -> Task:
        """Bind ``args`` to the kernel's parameters: tensors must be GM regions of the
        declared shape and dtype laid out as the kernel reads them (row-major)."""
        reads, writes = [], []
        for param, arg in zip(function.params, args):
            ty = param.var.type
            if not isinstance(ty, TensorType):
                continue
            _check_tensor_arg(function, param, arg, stmt)
            if param.direction is not Direction.Out:
                reads.append(arg)
            if param.direction is not Direction.In:
                writes.append(arg)
        return Task(len(self.tasks), function.name, self.compiled.pto_module(function.name),
                    tuple(args), tuple(reads), tuple(writes), tuple(deps),
                    getattr(stmt, "loc", None) or function.loc,
                    tuple(p.var.name for p in function.params))


def _check_tensor_arg(function: Function, param, arg, stmt) -> None:
    """A tensor argument is a GM region of the parameter's shape and dtype, one row-major
    block: the compiled kernel addresses its parameter with that layout."""
    ty = param.var.type
    loc = getattr(stmt, "loc", None) or function.loc
    if not isinstance(arg, GMTensor):
        raise RuntimeConfigError(
            f"kernel '{function.name}' parameter '{param.var.name}' is a tensor but got a "
            f"{type(arg).__name__}", loc, hint="pass a tensor")
    if tuple(arg.shape) != tuple(ty.shape) or arg.dtype is not ty.dtype:
        raise RuntimeConfigError(
            f"kernel '{function.name}' parameter '{param.var.name}' is {ty.dtype.value}"
            f"{list(ty.shape)} but got {arg.describe()} of {arg.dtype.value}{list(arg.shape)}",
            loc, hint="pass a tensor of the declared shape and dtype")
    if not arg.is_contiguous:
        raise RuntimeConfigError(
            f"kernel '{function.name}' parameter '{param.var.name}' gets a strided slice of "
            f"'{arg.name}' (strides {list(arg.strides)}), but the compiled kernel reads it as "
            "a row-major block, so it would read the wrong elements", loc,
            hint="pass a slice of whole rows, or the whole tensor and an offset")
