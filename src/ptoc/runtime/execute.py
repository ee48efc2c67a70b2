"""Running a compiled program: the orchestration function is interpreted on the host and
each kernel call runs its Level-3 PTO on the simulated AI Core, in program order.

Orchestration may allocate DDR tensors (``pl.create_tensor``), call kernels, alias values
and loop with constant bounds; a compute op in it is misplaced and reported as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ptoc.dtypes import Direction, FunctionType
from ptoc.errors import InternalError, RuntimeConfigError
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, EvalStmt, ForStmt, Function,
    ReturnStmt, TupleGetItem, UnaryOp, Var,
)
from ptoc.ir.types import TensorType
from ptoc.ir.aliases import returned_params
from ptoc.runtime.config import RunConfig
from ptoc.sim.errors import SimLimitError

_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "//": lambda a, b: a // b, "%": lambda a, b: a % b, "/": lambda a, b: a / b,
          "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
          "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
          "and": lambda a, b: a and b, "or": lambda a, b: a or b}


@dataclass
class KernelRun:
    """One kernel invocation: its name, the simulator result and the trace file if written."""

    kernel: str
    sim: Any
    trace_path: Path | None = None


@dataclass
class RunResult:
    """What ``CompiledProgram.run`` returns.

    ``cycles`` is the simulated core time of every kernel call (the sum of their walls);
    ``floor_cycles`` what a device adds outside the cores under the run's profile: each
    kernel's launch and the staging of the run's tensors; ``total_cycles`` both.
    """

    outputs: dict[str, np.ndarray]
    cycles: float
    pipe_busy: dict
    races: list
    runs: list[KernelRun] = field(default_factory=list)
    trace_path: Path | None = None
    floor_cycles: float = 0.0

    @property
    def total_cycles(self) -> float:
        return self.cycles + self.floor_cycles


def entry_function(program) -> Function:
    """The function a run starts from: the orchestration, else the only kernel."""
    for fn in program.functions:
        if fn.func_type is FunctionType.Orchestration:
            return fn
    kernels = [fn for fn in program.functions if fn.func_type.is_kernel]
    opaque = [fn for fn in program.functions if fn.func_type is FunctionType.Opaque]
    if len(opaque) == 1 and not any(fn.func_type is FunctionType.Orchestration
                                    for fn in program.functions):
        return opaque[0]
    if len(kernels) == 1:
        return kernels[0]
    raise RuntimeConfigError(
        f"program '{program.name}' has {len(kernels)} kernels and no orchestration function",
        hint="add a @pl.function(type=pl.FunctionType.Orchestration) that calls the kernels")


class Executor:
    """Interprets the entry function; kernel calls go to the simulator."""

    def __init__(self, compiled, config: RunConfig):
        from ptoc.sim.limits import DEFAULT_LIMITS

        self.compiled = compiled
        self.config = config
        self.limits = config.sim_limits or DEFAULT_LIMITS
        self.steps = 0
        self.runs: list[KernelRun] = []

    def run(self, entry: Function, values: list) -> list:
        if entry.func_type.is_kernel:
            return self.call_kernel(entry, values)
        env: dict[int, Any] = {id(p.var): v for p, v in zip(entry.params, values)}
        return self.block(entry.body.stmts, env) or []

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
            results = self.call_kernel(callee, args)
            return results[0] if len(results) == 1 else tuple(results)
        if isinstance(expr, Call) and expr.op == "tensor.create":
            ty = expr.type
            return np.zeros(tuple(ty.shape), dtype=ty.dtype.numpy)
        op = getattr(expr, "op", type(expr).__name__)
        raise RuntimeConfigError(
            f"Misplaced tensor op '{op}' in Orchestration function (should be inside InCore "
            "block)", getattr(stmt, "loc", None),
            hint="move the computation into an InCore kernel")

    def call_kernel(self, function: Function, args: list) -> list:
        from ptoc.sim import simulate

        if function is None or not function.func_type.is_kernel:
            raise RuntimeConfigError(f"'{getattr(function, 'name', '?')}' is not a kernel")
        _refuse_aliased_writes(function, args)
        module = self.compiled.pto_module(function.name)
        sim = simulate(module, list(args), target=self.compiled.target, limits=self.limits,
                       profile=self.config.profile, mode=self.config.sim_mode)
        pto_params = module.kernel(function.name).params
        for index, param in enumerate(function.params):
            if not isinstance(param.var.type, TensorType):
                continue
            result = sim.outputs[pto_params[index].name].reshape(args[index].shape)
            if param.direction is not Direction.In:
                np.copyto(args[index], result, casting="unsafe")
            elif not np.array_equal(result.view(np.uint8), args[index].view(np.uint8)):
                raise InternalError(
                    f"kernel '{function.name}' wrote its In parameter '{param.var.name}' but "
                    "the write would not reach the caller", function.loc,
                    hint="declare the parameter pl.Out or pl.InOut")
        trace = None
        if self.config.trace:
            trace = self.compiled.output_dir / "trace" / f"{function.name}_{len(self.runs)}.json"
            sim.write_trace(trace)
        self.runs.append(KernelRun(function.name, sim, trace))
        results = []
        for index, ty in zip(returned_params(function), function.return_types):
            if index is None and isinstance(ty, TensorType):
                raise InternalError(
                    f"kernel '{function.name}' returns a tensor that is none of its "
                    "parameters, so its data would be lost", function.loc,
                    hint="store the result into a pl.Out parameter and return that")
            results.append(args[index] if index is not None else None)
        return results


def _refuse_aliased_writes(function: Function, args: list) -> None:
    """Two tensor parameters on the same bytes, one written: the simulator binds each
    parameter separately, so the other would not see the write (the device would)."""
    tensors = [(p, a) for p, a in zip(function.params, args) if isinstance(p.var.type, TensorType)]
    for i, (p, a) in enumerate(tensors):
        for q, b in tensors[i + 1:]:
            written = p.direction is not Direction.In or q.direction is not Direction.In
            if written and np.shares_memory(a, b):
                raise RuntimeConfigError(
                    f"kernel '{function.name}' gets one tensor as both '{p.var.name}' and "
                    f"'{q.var.name}' and writes it; ptoc's simulator binds each parameter to "
                    "its own copy, so the aliasing would be lost", function.loc,
                    hint="pass distinct tensors (copy one of them), or read and write the "
                         "tensor through one pl.InOut parameter")
