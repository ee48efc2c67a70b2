"""The ``group`` layer of the simulator: one AIC and its AIVs (a cluster) run together.

Each core is a ``ptoc.sim.core`` scalar unit with its own buffers and pipe queues; the cores
share GM and exchange tiles through cross-core pipes (``pipes``: ``tpush`` / ``tpop`` /
``tfree`` over a ring of slots, in GM on a2a3 and in the consumer's buffer on a5). One timing
engine and one happens-before race checker cover all cores; a cross-core deadlock is reported
with every core's partial timeline.

Public API:
    simulate_group(pto, tensors, *, target="a2a3", profile=None, mode="reference",
                   aic=None, aiv=None) -> GroupResult
    is_group_module(module) -> bool
"""

from ptoc.sim.group.result import GroupResult
from ptoc.sim.group.run import group_kernels, is_group_module, simulate_group

__all__ = ["GroupResult", "group_kernels", "is_group_module", "simulate_group"]
