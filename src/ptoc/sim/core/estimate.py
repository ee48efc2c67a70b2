"""A static estimate of one kernel run: pipe instructions, scalar steps and the loops.

Why: ``ptoc.sim.limits`` refuses a run that is too large *before* the scalar unit builds
millions of records. Control flow depends only on constants, scalar parameters and loop
counters, so trip counts are usually known without running anything: constants and scalar
parameters are folded with the scalar unit's own arithmetic; loop counters (and what is
computed from them) are unknown. A loop with unknown bounds counts once and an ``scf.if``
with an unknown condition counts its cheaper branch, so the estimate errs low — what it
refuses, the run would have refused later, only slower.

Steps are counted as the scalar unit counts them: each executed block costs its op count
plus one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.backend import Pipe
from ptoc.errors import PtocError
from ptoc.pto.model import (
    LOOP_OPS, EnumAttr, ForOp, IfOp, Instruction, Kernel, SyncOp, Value, WhileOp,
)

from ptoc.sim.core import scalars
from ptoc.sim.core.issue import WORK_OPCODES


@dataclass
class Estimate:
    """``loops``: (PTO line, trip count or None when unknown) of every loop, in text order."""

    instructions: int = 0
    scalar_steps: int = 0
    loops: list[tuple[int, int | None]] = field(default_factory=list)

    def describe(self, filename: str, at_most: int = 4) -> str:
        """The largest known loops, e.g. ``loops at k.pto:12 (16,384 trips), k.pto:20 (8)``."""
        known = sorted((t, line) for line, t in self.loops if t is not None and t > 1)[::-1]
        if not known:
            return ""
        parts = [f"{filename}:{line} ({trips:,} trips)" for trips, line in known[:at_most]]
        return "loops at " + ", ".join(parts)


def estimate(kernel: Kernel, bindings: dict) -> Estimate:
    """Estimate a run of ``kernel`` with ``bindings`` (parameter name -> value; only the
    numbers are used)."""
    env = {name: value for name, value in bindings.items()
           if isinstance(value, (bool, int, float))}
    result = Estimate()
    result.instructions, result.scalar_steps = _Walker(env, result.loops).block(kernel.body)
    return result


class _Walker:
    def __init__(self, env: dict, loops: list):
        self.env = env
        self.loops = loops

    def block(self, body) -> tuple[int, int]:
        instructions, steps = 0, len(body) + 1
        for op in body:
            if isinstance(op, Instruction):
                if op.opcode in WORK_OPCODES:
                    instructions += 1
                else:
                    self.scalar(op)
            elif isinstance(op, SyncOp):
                instructions += 0 if op.kind == "barrier" and op.pipe is Pipe.PIPE_S else 1
            elif isinstance(op, LOOP_OPS):
                n, s = self.loop(op)
                instructions += n
                steps += s
            elif isinstance(op, IfOp):
                n, s = self.branch(op)
                instructions += n
                steps += s
        return instructions, steps

    def loop(self, op: ForOp | WhileOp) -> tuple[int, int]:
        """A loop's work: per trip times the trips when they are known (a while loop's never
        are: it counts as one trip here and is bounded while it runs)."""
        trips = None
        if isinstance(op, ForOp):
            lo, hi, step = (self.value(v) for v in (op.lower, op.upper, op.step))
            if all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi, step)) \
                    and step > 0:
                trips = len(range(lo, hi, step))
        self.loops.append((op.line, trips))
        names = [arg.name for arg, _ in op.iter_args]
        names += [op.iv.name] if isinstance(op, ForOp) else [a.name for a in op.body_args]
        for name in names:
            self.env.pop(name, None)
        n, s = self.block(op.body)
        if isinstance(op, WhileOp):
            s += self.block(op.cond)[1]
        for res in op.results:
            self.env.pop(res.name, None)
        times = 1 if trips is None else trips
        return times * n, times * s

    def branch(self, op: IfOp) -> tuple[int, int]:
        cond = self.value(op.cond)
        if isinstance(cond, (bool, int)):
            result = self.block(op.then_body if cond else op.else_body)
        else:
            result = min(self.block(op.then_body), self.block(op.else_body))
        for res in op.results:
            self.env.pop(res.name, None)
        return result

    def scalar(self, op: Instruction) -> None:
        """Fold a scalar op when its operands are known (else its result is unknown)."""
        if len(op.results) != 1:
            return
        code = op.opcode
        self.env.pop(op.result.name, None)
        try:
            if code == "arith.constant":
                value = op.attr("value")
            elif code in scalars.ARITH:
                a, b = (self.value(v) for v in op.ins[:2])
                value = scalars.arith(code, a, b)
            elif code == "arith.cmpi":
                a, b = (self.value(v) for v in op.ins[:2])
                pred = op.attr("predicate")
                pred = pred.value if isinstance(pred, EnumAttr) else str(pred)
                value = scalars.compare(pred, a, b)
            elif code in scalars.CASTS:
                value = scalars.cast(code, self.value(op.ins[0]))
            else:
                return
        except (PtocError, ValueError, IndexError):
            return      # the run reports it, with the op's line
        if isinstance(value, (bool, int, float)):
            self.env[op.result.name] = value

    def value(self, v):
        if isinstance(v, Value):
            return self.env.get(v.name)
        return v
