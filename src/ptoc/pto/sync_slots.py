"""Slot cascades: loops whose iteration ``i`` runs exactly one arm of an ``iv % F`` if-cascade.

LowerPipelineToSlots (PTOAS path) rotates a pipeline's loads over F slots by turning the
loop body into ``if iv % F == 0 {slot 0} else if iv % F == 1 {slot 1} ... else {slot F-1}``.
Walked like any branch, both arms look possible in every iteration, so InsertSync orders
each iteration after the previous one at the ``scf.if`` and the slots never overlap. Known
as a cascade, iteration ``j`` of a loop with a constant lower bound that is a multiple of F
and step 1 runs the arm of residue ``j % F`` only: the walk can follow that arm, and a
hazard between two visits of the same arm (distance F) becomes a pair inside the arm,
carried through a pre-loop set and a post-loop wait, with an event id of its own per arm
(PTOAS's per-slot multi-buffer events, expressed in plain flags).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.pto.model import ForOp, IfOp, Instruction, Value, WhileOp


@dataclass(frozen=True)
class SlotIf:
    """One ``if iv % period == residue`` of a slot loop."""

    loop: int          # id() of the ForOp whose induction variable selects the arm
    period: int
    residue: int


@dataclass
class SlotInfo:
    loops: dict[int, int] = field(default_factory=dict)    # id(ForOp) -> period
    ifs: dict[int, SlotIf] = field(default_factory=dict)   # id(IfOp) -> its test


def find_slot_cascades(body: tuple, const) -> SlotInfo:
    """The slot loops and slot ifs of a kernel body; ``const(value)`` folds constants."""
    info = SlotInfo()
    defs: dict[str, Instruction] = {}

    def visit(ops, loops: list[ForOp]) -> None:
        for op in ops:
            if isinstance(op, Instruction) and op.results:
                for r in op.results:
                    defs[r.name] = op
            if isinstance(op, ForOp):
                visit(op.body, loops + [op])
            elif isinstance(op, WhileOp):   # no induction variable: no slot arms
                visit(op.body, loops)
            elif isinstance(op, IfOp):
                test = _slot_test(op.cond, loops, defs, const)
                if test is not None:
                    info.ifs[id(op)] = test
                    info.loops[test.loop] = test.period
                visit(op.then_body, loops)
                visit(op.else_body, loops)

    visit(body, [])
    return info


def _slot_test(cond: Value, loops: list[ForOp], defs: dict, const) -> SlotIf | None:
    cmp = defs.get(cond.name)
    if cmp is None or cmp.opcode != "arith.cmpi" or cmp.attr("predicate") != "eq":
        return None
    for rem_value, k_value in (cmp.ins, cmp.ins[::-1]):
        rem, k = defs.get(getattr(rem_value, "name", None)), const(k_value)
        if rem is None or k is None or rem.opcode != "arith.remsi" or len(rem.ins) != 2:
            continue
        period = const(rem.ins[1])
        loop = next((lp for lp in reversed(loops) if lp.iv.name == rem.ins[0].name), None)
        if loop is None or period is None or not 2 <= period or not 0 <= k < period:
            continue
        lower, step = const(loop.lower), const(loop.step)
        if lower is None or step != 1 or lower % period:
            continue  # iteration j would not run residue j % period
        return SlotIf(id(loop), period, k)
    return None


__all__ = ["SlotIf", "SlotInfo", "find_slot_cascades"]
