"""Replay the data effects of a scheduled run: reads at start, commits at end.

Why two paths: when the race checker found no race, every pair of conflicting accesses is
ordered by happens-before, so *any* order that respects happens-before gives the bytes a
timed replay would — the scheduler's commit order is one, and replaying it instruction by
instruction needs no buffered payloads. With races, the replay follows simulated time
(commits before reads at equal times), so a missing flag yields the stale or
half-updated data the hardware would produce, deterministically.
"""

from __future__ import annotations

from ptoc.sim.instr import Instr
from ptoc.sim.schedule import Schedule


def execute(instrs: list[Instr], sch: Schedule, *, timed: bool) -> None:
    if not timed:
        for seq in sch.order:
            ins = instrs[seq]
            if ins.commit is not None:
                ins.commit(ins.read())
        return
    events = []
    for ins in instrs:
        if ins.commit is None:
            continue
        start, end = sch.start[ins.seq], sch.end[ins.seq]
        events.append((start, 1, ins.seq))
        events.append((end, 0, ins.seq))
    events.sort()
    payloads: dict[int, object] = {}
    for _, phase, seq in events:
        ins = instrs[seq]
        if phase == 1:
            payloads[seq] = ins.read()
        else:
            ins.commit(payloads.pop(seq))
