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
    block = plan.tree[b]
    out: list = []
    for g in range(len(block.items) + 1):
        out.extend(_gap(plan, b, g))
        if g == len(block.items):
            break
        item = block.items[g]
        kids = plan.tree.children.get(id(item))
        if isinstance(item, LOOP_OPS):
            item = replace(item, body=_block(plan, kids[0]))
        elif isinstance(item, IfOp):
            item = replace(item, then_body=_block(plan, kids[0]),
                           else_body=_block(plan, kids[1]))
        out.append(item)
    if block.terminator is not None:
        out.append(block.terminator)
    return tuple(out)


def _gap(plan: SyncPlan, b: int, g: int) -> list[SyncOp]:
    if g not in plan.occupied[b]:
        return []
    pairs, ops = plan.pairs, []
    for _, kind, entry, _ in plan.gap_ops.get((b, g), ()):
        if kind == "barrier":
            ops.append(SyncOp("barrier", pipe=entry))
        else:
            p = pairs[entry]
            ops.append(SyncOp("set_flag" if kind in SET_KINDS else "wait_flag",
                              src=p.src, dst=p.dst, event=p.event))
    return ops
