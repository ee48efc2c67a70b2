"""Chrome / Perfetto trace export of a simulated run.

Why this layout: one track per pipe in the order the PyPTO trace cleaner uses (MTE2, MTE1,
CUBE, VECTOR, FIXPIPE, MTE3), so a simulated trace can sit next to an op-simulator trace;
flags are flow arrows from the ``set_flag`` on the source track to the ``wait_flag`` that
consumed it (written both as v2 slice bindings and as v1 ``s``/``f`` events); each data race is an instant marker on the later instruction's track. Timestamps are cycles written in the trace's microsecond field (1 cycle
shows as 1 us).

Each instruction slice's args name its PTO line (``pto``, ``pto_line``) and, when the op
carries one, its DSL source line (``dsl``, ``dsl_line``). On request (``occupancy=True``;
the run trace bundle always asks) buffer occupancy follows the pipes: one process per
on-chip memory space used, with a ``live bytes`` counter and one thread per written byte
range (sorted by address, so the threads read as address x cycle) holding a ``live`` slice
(category ``occupancy``) while the range holds a value (``ptoc.sim.occupancy``).

``chrome_trace_events`` takes a process id, a time offset and tid base so that a run of
several kernels can place each kernel's tracks side by side in one file.
"""

from __future__ import annotations


from ptoc.backend.pipes import TRACE_LANE_ORDER
from ptoc.files import write_json
from ptoc.sim.occupancy import SPACE_ORDER, live_bytes
from ptoc.sim.occupancy import occupancy as live_spans

_PID = 1
_SCALAR_TID = 0
#: Occupancy threads sort after the pipes (1..6) and SCALAR (99).
_OCC_SORT = 100


def chrome_trace_events(result, *, pid: int = _PID, ts_offset: float = 0.0,
                        tid_base: int = 0, label: str | None = None, region_names=None,
                        pto_file: str | None = None, occupancy: bool = False) -> list[dict]:
    """Trace events of one simulated kernel.

    ``region_names(buffer, lo, hi)`` may name a written byte range (e.g. by its tiles);
    ``pto_file`` overrides the PTO file name in slice args; occupancy processes take the
    process ids after ``pid``.
    """
    tids = {pipe: tid_base + i + 1 for i, pipe in enumerate(TRACE_LANE_ORDER)}
    scalar_tid = tid_base + _SCALAR_TID
    title = label or f"AI Core ({result.target}, {result.profile})"
    events: list[dict] = [{"ph": "M", "pid": pid, "name": "process_name",
                           "args": {"name": title}},
                          {"ph": "M", "pid": pid, "name": "process_sort_index",
                           "args": {"sort_index": pid}}]
    events.append({"ph": "M", "pid": pid, "tid": scalar_tid, "name": "thread_name",
                   "args": {"name": "SCALAR"}})
    events.append({"ph": "M", "pid": pid, "tid": scalar_tid, "name": "thread_sort_index",
                   "args": {"sort_index": 99}})
    for pipe, tid in tids.items():
        events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                       "args": {"name": pipe.lane}})
        events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index",
                       "args": {"sort_index": tid - tid_base}})
    flow_base = pid * 1_000_000
    # Flow v2 (``bind_id`` + ``flow_out``/``flow_in`` on the slices themselves) binds even to
    # the zero-length set/wait slices; the v1 ``s``/``f`` events below serve older viewers.
    bind_out: dict[int, int] = {}
    bind_in: dict[int, int] = {}
    for flow_id, (set_seq, wait_seq) in enumerate(result.flows):
        if set_seq not in bind_out and wait_seq not in bind_in:
            bind_out[set_seq] = bind_in[wait_seq] = flow_base + flow_id
    by_seq = {}
    for rec in result.instructions:
        tid = tids.get(rec.pipe, scalar_tid)
        args = {"seq": rec.seq, "line": rec.line, "pto": f"{pto_file or rec.file}:{rec.line}",
                "pto_line": rec.line}
        if rec.loc is not None:
            args["loc"] = str(rec.loc)
            args["dsl"] = f"{rec.loc.file}:{rec.loc.line}"
            args["dsl_line"] = rec.loc.line
        if rec.flag is not None:
            src, dst, ident = rec.flag
            args["flag"] = f"{src.short}->{dst.short} #{ident}"
        event = {"ph": "X", "pid": pid, "tid": tid, "name": rec.name, "cat": rec.kind,
                 "ts": rec.start + ts_offset, "dur": rec.end - rec.start, "args": args}
        if rec.seq in bind_out:
            event.update(bind_id=bind_out[rec.seq], flow_out=True)
        elif rec.seq in bind_in:
            event.update(bind_id=bind_in[rec.seq], flow_in=True)
        events.append(event)
        by_seq[rec.seq] = (rec, tid)
    for flow_id, (set_seq, wait_seq) in enumerate(result.flows):
        if set_seq not in by_seq or wait_seq not in by_seq:
            continue
        s_rec, s_tid = by_seq[set_seq]
        w_rec, w_tid = by_seq[wait_seq]
        name = "flag"
        events.append({"ph": "s", "pid": pid, "tid": s_tid, "id": flow_base + flow_id,
                       "name": name, "cat": "flag", "ts": s_rec.start + ts_offset,
                       "args": {"set_seq": set_seq, "wait_seq": wait_seq}})
        events.append({"ph": "f", "bp": "e", "pid": pid, "tid": w_tid,
                       "id": flow_base + flow_id, "name": name, "cat": "flag",
                       "ts": w_rec.end + ts_offset,
                       "args": {"set_seq": set_seq, "wait_seq": wait_seq}})
    for race in result.races:
        if race.second_seq not in by_seq:
            continue
        rec, tid = by_seq[race.second_seq]
        events.append({"ph": "i", "s": "t", "pid": pid, "tid": tid, "ts": rec.start + ts_offset,
                       "name": f"{race.kind} race", "cat": "race", "args": {"what": str(race)}})
    if occupancy:
        events.extend(occupancy_events(result, pid=pid, ts_offset=ts_offset,
                                       tid_base=tid_base, label=label,
                                       region_names=region_names))
    return events


def occupancy_events(result, *, pid: int = _PID, ts_offset: float = 0.0, tid_base: int = 0,
                     label: str | None = None, region_names=None) -> list[dict]:
    """A process per on-chip space used: a ``live bytes`` counter and a thread per region."""
    from ptoc.backend import get_target
    from ptoc.errors import PtocError

    spans = live_spans(result.instructions)
    try:
        capacities = {s.value: c for s, c in get_target(result.target).capacities.items()}
    except PtocError:  # an unknown target only loses the capacity in the track names
        capacities = {}
    events: list[dict] = []
    tid = tid_base + _OCC_SORT
    order = [b for b in SPACE_ORDER if b in spans] + sorted(set(spans) - set(SPACE_ORDER))
    for index, buffer in enumerate(order):
        opid = pid + 1 + index
        cap = capacities.get(buffer)
        title = f"{buffer} occupancy" + (f" ({cap // 1024} KiB)" if cap else "")
        if label:
            title = f"{label} · {title}"
        events.append({"ph": "M", "pid": opid, "name": "process_name", "args": {"name": title}})
        events.append({"ph": "M", "pid": opid, "name": "process_sort_index",
                       "args": {"sort_index": opid}})
        for t, nbytes in live_bytes(spans[buffer]):
            events.append({"ph": "C", "pid": opid, "name": "live bytes", "ts": t + ts_offset,
                           "cat": "occupancy", "args": {"bytes": nbytes}})
        regions = sorted({(s.lo, s.hi) for s in spans[buffer]})
        region_tid = {}
        for lo, hi in regions:
            tid += 1
            region_tid[(lo, hi)] = tid
            name = f"{buffer} [{lo:#07x}, {hi:#07x})"
            tiles = region_names(buffer, lo, hi) if region_names else None
            if tiles:
                name += f" {tiles}"
            events.append({"ph": "M", "pid": opid, "tid": tid, "name": "thread_name",
                           "args": {"name": name}})
            events.append({"ph": "M", "pid": opid, "tid": tid, "name": "thread_sort_index",
                           "args": {"sort_index": _OCC_SORT + len(region_tid)}})
        ordered = sorted(spans[buffer], key=lambda s: (s.lo, s.hi, s.start))
        for span, after in zip(ordered, ordered[1:] + [None]):
            end = span.end
            if after is not None and (after.lo, after.hi) == (span.lo, span.hi):
                end = min(end, after.start)     # slices of one thread must not overlap
            args = {"buffer": buffer, "lo": span.lo, "hi": span.hi, "bytes": span.nbytes,
                    "writer_seq": span.writer, "reads": span.readers}
            events.append({"ph": "X", "pid": opid, "tid": region_tid[(span.lo, span.hi)],
                           "name": "live", "cat": "occupancy", "ts": span.start + ts_offset,
                           "dur": max(end - span.start, 0), "args": args})
    return events


def write_chrome_trace(result, path, *, occupancy: bool = False) -> None:
    doc = {"traceEvents": chrome_trace_events(result, occupancy=occupancy),
           "displayTimeUnit": "ns",
           "otherData": {"wall_cycles": result.wall_cycles,
                         "binding_pipe": result.binding_pipe.short if result.binding_pipe
                         else None,
                         "races": [str(r) for r in result.races]}}
    write_json(path, doc)


__all__ = ["chrome_trace_events", "occupancy_events", "write_chrome_trace", "Pipe"]
