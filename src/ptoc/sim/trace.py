"""Chrome / Perfetto trace export of a simulated run.

Why this layout: one track per pipe in the order the PyPTO trace cleaner uses (MTE2, MTE1,
CUBE, VECTOR, FIXPIPE, MTE3), so a simulated trace can sit next to an op-simulator trace;
flags are flow arrows from the ``set_flag`` on the source track to the ``wait_flag`` that
consumed it; each data race is an instant marker on the later instruction's track. Timestamps are cycles written in the trace's microsecond field (1 cycle
shows as 1 us).
"""

from __future__ import annotations

import json

from ptoc.backend.pipes import TRACE_LANE_ORDER, Pipe

_PID = 1
_SCALAR_TID = 0


def chrome_trace_events(result) -> list[dict]:
    tids = {pipe: i + 1 for i, pipe in enumerate(TRACE_LANE_ORDER)}
    events: list[dict] = [{"ph": "M", "pid": _PID, "name": "process_name",
                           "args": {"name": f"AI Core ({result.target}, {result.profile})"}}]
    events.append({"ph": "M", "pid": _PID, "tid": _SCALAR_TID, "name": "thread_name",
                   "args": {"name": "SCALAR"}})
    events.append({"ph": "M", "pid": _PID, "tid": _SCALAR_TID, "name": "thread_sort_index",
                   "args": {"sort_index": 99}})
    for pipe, tid in tids.items():
        events.append({"ph": "M", "pid": _PID, "tid": tid, "name": "thread_name",
                       "args": {"name": pipe.lane}})
        events.append({"ph": "M", "pid": _PID, "tid": tid, "name": "thread_sort_index",
                       "args": {"sort_index": tid}})
    by_seq = {}
    for rec in result.instructions:
        tid = tids.get(rec.pipe, _SCALAR_TID)
        args = {"seq": rec.seq, "line": rec.line}
        if rec.loc is not None:
            args["loc"] = str(rec.loc)
        if rec.flag is not None:
            src, dst, ident = rec.flag
            args["flag"] = f"{src.short}->{dst.short} #{ident}"
        events.append({"ph": "X", "pid": _PID, "tid": tid, "name": rec.name,
                       "cat": rec.kind, "ts": rec.start, "dur": rec.end - rec.start,
                       "args": args})
        by_seq[rec.seq] = (rec, tid)
    for flow_id, (set_seq, wait_seq) in enumerate(result.flows):
        if set_seq not in by_seq or wait_seq not in by_seq:
            continue
        s_rec, s_tid = by_seq[set_seq]
        w_rec, w_tid = by_seq[wait_seq]
        name = "flag"
        events.append({"ph": "s", "pid": _PID, "tid": s_tid, "id": flow_id, "name": name,
                       "cat": "flag", "ts": s_rec.start})
        events.append({"ph": "f", "bp": "e", "pid": _PID, "tid": w_tid, "id": flow_id,
                       "name": name, "cat": "flag", "ts": w_rec.end})
    for race in result.races:
        if race.second_seq not in by_seq:
            continue
        rec, tid = by_seq[race.second_seq]
        events.append({"ph": "i", "s": "t", "pid": _PID, "tid": tid, "ts": rec.start,
                       "name": f"{race.kind} race", "cat": "race", "args": {"what": str(race)}})
    return events


def write_chrome_trace(result, path) -> None:
    doc = {"traceEvents": chrome_trace_events(result), "displayTimeUnit": "ns",
           "otherData": {"wall_cycles": result.wall_cycles,
                         "binding_pipe": result.binding_pipe.short if result.binding_pipe
                         else None,
                         "races": [str(r) for r in result.races]}}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)


__all__ = ["chrome_trace_events", "write_chrome_trace", "Pipe"]
