"""The simulator's limits applied to a whole program run, before any tensor is allocated.

Why: ``ptoc run`` makes its own inputs and a run allocates its outputs, so a problem too
large to simulate (16384^3 FP32: 3 GiB of tensors and billions of instructions) must be
refused from the compiled program alone, with the numbers — not after the inputs were
made, and never as an out-of-memory crash reported as a ptoc bug. The estimate walks the
orchestration function (constant loop bounds multiply the kernel calls inside) and each
kernel's PTO (``ptoc.sim.core.estimate``); each kernel call is one simulation, checked
against ``max_instructions`` and ``max_scalar_steps``, and every call's records plus the
tensors count towards ``max_bytes``.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from ptoc.errors import RuntimeConfigError
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstInt, EvalStmt, ForStmt, IfStmt, ScopeStmt, SeqStmts,
)
from ptoc.ir.types import TensorType
from ptoc.sim.core.estimate import Estimate, estimate
from ptoc.sim.limits import DEFAULT_LIMITS, SimLimits, check, human_bytes, memory_bytes


def check_run(compiled, limits: SimLimits | None = None) -> None:
    """Raise ``SimLimitError`` when running ``compiled`` would exceed ``limits``."""
    limits = limits or DEFAULT_LIMITS
    entry = compiled.entry
    calls: dict[str, int] = {}
    created = 0
    if entry.func_type.is_kernel:
        calls[entry.name] = 1
    else:
        created = _walk(entry.body.stmts, 1, calls)
    tensor_bytes = created + sum(_nbytes(p.var.type) for p in entry.params)
    worst, total, steps, detail = 0, 0, 0, ""
    for name, times in calls.items():
        if name not in compiled.pto_text:
            continue
        est = _module_estimate(compiled, name)
        total += times * est.instructions
        steps = max(steps, est.scalar_steps)
        if est.instructions >= worst:
            worst = est.instructions
            loops = est.describe(f"{name}.pto")
            detail = f"kernel {name}: {est.instructions:,} instructions per call"
            detail += f" ({loops})" if loops else ""
            detail += f", {times:,} call(s)" if times > 1 else ""
    check(f"running {entry.name}", limits, instructions=worst, scalar_steps=steps,
          memory=memory_bytes(total, tensor_bytes),
          detail=f"{detail}; {human_bytes(tensor_bytes)} of tensors", loc=entry.loc)


def _module_estimate(compiled, name: str) -> Estimate:
    """The estimate of one call of ``name``: its kernel, or for a core group every core's
    kernel (the AIV kernel once per AIV)."""
    module = compiled.pto_module(name)
    if len(module.kernels) == 1:
        return estimate(module.kernel(), {})
    from ptoc.backend.cross_core import cluster_model

    lanes = cluster_model(compiled.target).aiv_per_aic
    total = Estimate()
    for kernel in module.kernels:
        est = estimate(kernel, {})
        times = lanes if getattr(kernel.attr("pto.kernel_kind"), "value", None) == "vector" else 1
        total.instructions += times * est.instructions
        total.scalar_steps += times * est.scalar_steps
        total.loops += est.loops
    return total


@contextlib.contextmanager
def out_of_memory_as_error(what: str, tensor_bytes: int) -> Iterator[None]:
    """Turn a ``MemoryError`` in the block into a ``RuntimeConfigError`` with the numbers."""
    try:
        yield
    except MemoryError:
        raise RuntimeConfigError(
            f"out of memory while {what} ({human_bytes(tensor_bytes)} of tensors)",
            hint="run a smaller problem, or lower SimLimits(max_bytes=...) in "
                 "RunConfig(sim_limits=...) so it is refused up front") from None


def entry_tensor_bytes(compiled) -> int:
    return sum(_nbytes(p.var.type) for p in compiled.entry.params)


def _walk(stmts, times: int, calls: dict[str, int]) -> int:
    """Count kernel calls (``times`` each) into ``calls``; returns bytes of created tensors."""
    created = 0
    for stmt in stmts:
        if isinstance(stmt, ForStmt):
            bounds = (stmt.start, stmt.stop, stmt.step)
            trips = 1
            if all(isinstance(b, ConstInt) for b in bounds) and stmt.step.value > 0:
                trips = len(range(*(b.value for b in bounds)))
            created += _walk(stmt.body.stmts, times * trips, calls)
        elif isinstance(stmt, (ScopeStmt, SeqStmts)):   # runtime scopes run their body
            created += _walk(stmt.body.stmts if isinstance(stmt, ScopeStmt) else stmt.stmts,
                             times, calls)
        elif isinstance(stmt, IfStmt):
            created += _walk(stmt.then_body.stmts, times, calls)
            if stmt.else_body is not None:
                created += _walk(stmt.else_body.stmts, times, calls)
        else:
            expr = stmt.value if isinstance(stmt, AssignStmt) else \
                stmt.expr if isinstance(stmt, EvalStmt) else None
            if isinstance(expr, Call) and expr.is_function:
                calls[expr.op] = calls.get(expr.op, 0) + times
            elif isinstance(expr, Call) and expr.op == "tensor.create":
                created += _nbytes(expr.type)
    return created


def _nbytes(ty) -> int:
    if not isinstance(ty, TensorType) or not all(isinstance(d, int) for d in ty.shape):
        return 0
    count = 1
    for d in ty.shape:
        count *= d
    return count * ty.dtype.nbytes
