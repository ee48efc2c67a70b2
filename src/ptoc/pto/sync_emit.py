"""Write a ``SyncPlan`` into the structured kernel: Level 2 in, Level 3 out.

Why separate: placement is pure bookkeeping once the plan is final; keeping it apart from
the analysis makes the gap order (``sync_plan`` module doc) the single contract between
what the analysis assumed and what the program does.
"""

from __future__ import annotations

from dataclasses import replace

from ptoc.pto.model import LOOP_OPS, IfOp, Kernel, SyncOp
from ptoc.pto.sync_plan import SyncPlan


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
    key, pairs = (b, g), plan.pairs
    if key not in plan.occupied:
        return []

    def flag(kind: str, pid: int) -> SyncOp:
        p = pairs[pid]
        return SyncOp(kind, src=p.src, dst=p.dst, event=p.event)

    ops = [flag("wait_flag", pid) for pid in plan.early_waits_at.get(key, ())]
    ops += [flag("set_flag", pid) for pid in plan.sets_at.get(key, ())]
    ops += [flag("wait_flag", pid) for pid in plan.post_waits_at.get(key, ())]
    ops += [flag("set_flag", pid) for pid in plan.pre_sets_at.get(key, ())]
    ops += [flag("wait_flag", pid) for pid in plan.waits_at.get(key, ())]
    ops += [flag("set_flag", pid) for pid in plan.late_sets_at.get(key, ())]
    ops += [SyncOp("barrier", pipe=pipe) for pipe in plan.barriers_at.get(key, ())]
    return ops
