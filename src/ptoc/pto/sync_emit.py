"""Write a ``SyncPlan`` into the structured kernel: Level 2 in, Level 3 out.

Why separate: placement is pure bookkeeping once the plan is final; keeping it apart from
the analysis makes the gap order (``sync_plan`` module doc) the single contract between
what the analysis assumed and what the program does.
"""

from __future__ import annotations

from dataclasses import replace

from ptoc.pto.model import LOOP_OPS, IfOp, Kernel, SyncOp
from ptoc.pto.sync_plan import SET_KINDS, SyncPlan


def emit_kernel(kernel: Kernel, plan: SyncPlan) -> Kernel:
    """``kernel`` with every set/wait/barrier of ``plan`` inserted."""
    return replace(kernel, body=_block(plan, plan.tree.root))


def _block(plan: SyncPlan, b: int) -> tuple:
    block, occupied = plan.tree[b], plan.occupied[b]
    out: list = []
    for g, item in enumerate(block.items):
        if g in occupied:
            out += _gap(plan, b, g)
        if isinstance(item, LOOP_OPS):
            (body,) = plan.tree.children[id(item)]
            item = replace(item, body=_block(plan, body))
        elif isinstance(item, IfOp):
            then_b, else_b = plan.tree.children[id(item)]
            item = replace(item, then_body=_block(plan, then_b), else_body=_block(plan, else_b))
        out.append(item)
    if len(block.items) in occupied:
        out += _gap(plan, b, len(block.items))
    if block.terminator is not None:
        out.append(block.terminator)
    return tuple(out)


def _gap(plan: SyncPlan, b: int, g: int) -> list[SyncOp]:
    pairs, ops = plan.pairs, []
    for _, kind, entry, _ in plan.gap_ops.get((b, g), ()):
        if kind == "barrier":
            ops.append(SyncOp("barrier", pipe=entry))
        else:
            p = pairs[entry]
            ops.append(SyncOp("set_flag" if kind in SET_KINDS else "wait_flag",
                              src=p.src, dst=p.dst, event=p.event))
    return ops
