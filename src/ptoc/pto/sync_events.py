"""Event-id allocation for InsertSync: at most ``NUM_EVENT_IDS`` ids per (src, dst) pipe pair.

Why not plain lifetime intervals: a flag is a bit, so two pairs may share an id only if the
first one's wait has *happened* (not merely been issued) before the second one's set fires.
Program order does not give that: the source pipe can run ahead of the destination pipe and
set the bit a second time. So two dynamic instances ``u`` and ``v`` of one (src, dst) are
compatible when ``u``'s wait happens before ``v``'s set (or the other way round) in the
walk's vector clocks, or when they sit in different arms of one ``scf.if`` instance. Pairs
are the nodes of an interference graph (an edge when any of their instances are
incompatible), coloured greedily in order of their first set. Double-buffered slots whose
FIX drain overlaps the next MAD therefore get distinct ids, while a slot reused only after
its wait has retired shares one.

A pair that cannot get an id (all eight taken by interfering pairs), or whose own instances
overlap (the bit would be set twice: ``SELF_OVERLAP``), is returned to the caller, which
answers the second case with a rendezvous pair first and falls back to ``barrier(PIPE_ALL)``
otherwise.
"""

from __future__ import annotations

from ptoc.backend.pipes import NUM_EVENT_IDS
from ptoc.pto.sync_plan import SyncPlan
from ptoc.pto.sync_walk import IDX, Instance


#: Reason of a pair whose consecutive uses could set the bit twice (answered by a rendezvous
#: pair first, by PIPE_ALL if that does not help).
SELF_OVERLAP = "two of its own instances overlap (the flag would be set twice before its wait)"


def _exclusive(p: tuple, q: tuple) -> bool:
    if not p or not q:
        return False
    arms = dict(p)
    return any(tag in arms and arms[tag] != arm for tag, arm in q)


def _compatible(u: Instance, v: Instance, d: int, *, own: bool = False) -> bool:
    """Whether one bit can serve both instances: one's wait happens before the other's set.
    Instances of one pair are compared with the set on the walked path (they alternate
    along it); instances of two pairs with the lower bound over every path."""
    if _exclusive(u.path, v.path):
        return True
    us, vs = (u.set_snap, v.set_snap) if own else (u.bound or u.set_snap, v.bound or v.set_snap)
    return vs[d] >= u.wait_stamp or us[d] >= v.wait_stamp


def allocate_events(plan: SyncPlan, instances: dict[int, list[Instance]],
                    limit: int = NUM_EVENT_IDS) -> list[tuple[int, str]]:
    """Give every pair of ``plan`` an event id; return (pair id, reason) of the pairs that
    must fall back to ``barrier(PIPE_ALL)``."""
    failed: list[tuple[int, str]] = []
    groups: dict[tuple, list[int]] = {}
    for pid, pair in plan.pairs.items():
        groups.setdefault((pair.src, pair.dst), []).append(pid)
    for (src, dst), pids in groups.items():
        d = IDX[dst]
        insts = {pid: instances.get(pid, []) for pid in pids}
        usable = []
        for pid in pids:
            own = [x for x in insts[pid] if not x.zero_trip]
            if any(not _compatible(a, b, d, own=True)
                   for i, a in enumerate(own) for b in own[i + 1:]):
                failed.append((pid, SELF_OVERLAP))
            else:
                usable.append(pid)
        usable.sort(key=lambda p: (min((x.set_stamp for x in insts[p]), default=0), p))
        colour: dict[int, int] = {}
        for pid in usable:
            taken: set[int] = set()
            for q, c in colour.items():   # a colour already taken needs no second look
                if c not in taken and any(not _compatible(a, b, d)
                                          for a in insts[pid] for b in insts[q]):
                    taken.add(c)
            free = next((c for c in range(limit) if c not in taken), None)
            if free is None:
                failed.append((pid, f"all {limit} event ids of {src.short}->{dst.short} are "
                                    f"held by overlapping pairs"))
                continue
            colour[pid] = free
            plan.pairs[pid].event = free
    return failed
