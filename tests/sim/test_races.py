"""The vector-clock race checker equals a brute-force happens-before closure, on one core and
on a core group (lanes are (core, pipe) pairs; barriers are per core; cross-core deps)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend import QUEUE_PIPES, Pipe
from ptoc.sim.instr import BARRIER, SET, WAIT, WORK, Access, Instr
from ptoc.sim.races import find_races
from ptoc.sim.schedule import schedule

PAIRS = [(s, d) for s in QUEUE_PIPES for d in QUEUE_PIPES if s is not d]


@st.composite
def programs(draw):
    """Random straight-line programs: work ops touching byte ranges of two buffers, flag
    pairs (a fresh flag per pair, so never a double set) and PIPE_ALL barriers."""
    steps = draw(st.integers(2, 40))
    prog, open_flags, next_flag = [], [], 0
    for _ in range(steps):
        choice = draw(st.sampled_from(["work", "work", "work", "set", "wait", "barrier"]))
        if choice == "set" and next_flag < len(PAIRS) * 8:
            src, dst = PAIRS[next_flag % len(PAIRS)]
            flag = (src, dst, next_flag // len(PAIRS))
            next_flag += 1
            prog.append(("set", src, flag))
            open_flags.append(flag)
        elif choice == "wait" and open_flags:
            flag = open_flags.pop(draw(st.integers(0, len(open_flags) - 1)))
            prog.append(("wait", flag[1], flag))
        elif choice == "barrier" and draw(st.integers(0, 3)) == 0:
            prog.append(("barrier", Pipe.PIPE_ALL, None))
        else:
            pipe = draw(st.sampled_from(QUEUE_PIPES))
            buf = draw(st.sampled_from(["Mat", "Acc"]))
            lo = draw(st.integers(0, 12)) * 32
            hi = lo + draw(st.integers(1, 4)) * 32
            write = draw(st.booleans())
            cost = draw(st.integers(1, 50))
            prog.append(("work", pipe, (buf, lo, hi, write, cost)))
    for flag in open_flags:
        prog.append(("wait", flag[1], flag))
    return prog


def build(prog, cost_scale=1):
    instrs = []
    for i, (kind, pipe, data) in enumerate(prog):
        if kind == "work":
            buf, lo, hi, write, cost = data
            acc = (Access(buf, lo, hi),)
            instrs.append(Instr(i, pipe, WORK, f"w{i}", None, cost * cost_scale,
                                reads=() if write else acc, writes=acc if write else (),
                                static_id=i, line=i))
        else:
            k = {"set": SET, "wait": WAIT, "barrier": BARRIER}[kind]
            instrs.append(Instr(i, pipe, k, kind, None, 0, flag=data, static_id=i, line=i))
    return instrs


def brute_force(instrs, sch):
    """Races by the definition: conflicting accesses with no path of happens-before edges
    (per-core program order per pipe, per-core barriers, flag matches, cross-core deps)."""
    n = len(instrs)
    succ = {i: set() for i in range(n)}
    last = {}
    for ins in instrs:
        for dep in ins.deps:
            succ[dep].add(ins.seq)
        if ins.kind == BARRIER:
            for j in range(n):
                if instrs[j].core == ins.core:
                    (succ[j].add(ins.seq) if j < ins.seq else
                     succ[ins.seq].add(j) if j > ins.seq else None)
            continue
        key = (ins.core, ins.pipe)
        if key in last:
            succ[last[key]].add(ins.seq)
        last[key] = ins.seq
    for wait, set_ in sch.matched_set.items():
        succ[set_].add(wait)
    reach = {}
    for i in range(n):
        seen, stack = set(), [i]
        while stack:
            for j in succ[stack.pop()]:
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
        reach[i] = seen
    races = set()
    work = [x for x in instrs if x.kind == WORK]
    for a, b in itertools.combinations(work, 2):
        for acc_a, wa in [(x, False) for x in a.reads] + [(x, True) for x in a.writes]:
            for acc_b, wb in [(x, False) for x in b.reads] + [(x, True) for x in b.writes]:
                if (wa or wb) and acc_a.overlaps(acc_b) and b.seq not in reach[a.seq] \
                        and a.seq not in reach[b.seq]:
                    races.add((a.seq, b.seq))
    return races


@settings(max_examples=120, deadline=None)
@given(programs())
def test_vector_clocks_match_brute_force_happens_before(prog):
    instrs = build(prog)
    sch = schedule(instrs)
    found = {(r.first_seq, r.second_seq) for r in find_races(instrs, sch)}
    assert found == brute_force(instrs, sch)


@settings(max_examples=60, deadline=None)
@given(programs())
def test_races_do_not_depend_on_costs(prog):
    one = build(prog, 1)
    other = build(prog, 7)
    r1 = {(r.kind, r.first_seq, r.second_seq) for r in find_races(one, schedule(one))}
    r2 = {(r.kind, r.first_seq, r.second_seq) for r in find_races(other, schedule(other))}
    assert r1 == r2


def test_race_report_names_both_instructions_buffer_and_bytes():
    a = Instr(0, Pipe.PIPE_MTE2, WORK, "pto.tload", None, 10, writes=(Access("Mat", 0, 512),),
              static_id=0, line=7)
    b = Instr(1, Pipe.PIPE_MTE1, WORK, "pto.textract", None, 10,
              reads=(Access("Mat", 256, 1024),), static_id=1, line=9)
    races = find_races([a, b], schedule([a, b]))
    assert len(races) == 1
    r = races[0]
    assert (r.kind, r.buffer, r.lo, r.hi) == ("RAW", "Mat", 256, 512)
    text = str(r)
    assert "pto.tload" in text and "pto.textract" in text
    assert "line 7" in text and "line 9" in text and "[256, 512)" in text


def test_same_pipe_order_and_flags_order_accesses():
    w = Instr(0, Pipe.PIPE_MTE2, WORK, "w", None, 5, writes=(Access("Mat", 0, 64),), static_id=0)
    w2 = Instr(1, Pipe.PIPE_MTE2, WORK, "w2", None, 5, writes=(Access("Mat", 0, 64),),
               static_id=1)
    s = Instr(2, Pipe.PIPE_MTE2, SET, "set", None, flag=(Pipe.PIPE_MTE2, Pipe.PIPE_MTE1, 0),
              static_id=2)
    wt = Instr(3, Pipe.PIPE_MTE1, WAIT, "wait", None, flag=(Pipe.PIPE_MTE2, Pipe.PIPE_MTE1, 0),
               static_id=3)
    r = Instr(4, Pipe.PIPE_MTE1, WORK, "r", None, 5, reads=(Access("Mat", 0, 64),), static_id=4)
    prog = [w, w2, s, wt, r]
    assert find_races(prog, schedule(prog)) == []


def test_gm_windows_of_one_view_compare_exactly():
    """Column blocks of a row-major tensor have overlapping byte hulls but no common element."""
    left = Access("GM %arg2", 0, 4096, (("arg2", (64, 1)), 0, 16, 0, 32))
    right = Access("GM %arg2", 128, 4224, (("arg2", (64, 1)), 0, 16, 32, 64))
    assert not left.overlaps(right)
    assert left.overlaps(Access("GM %arg2", 0, 4096, (("arg2", (64, 1)), 8, 9, 31, 33)))


@settings(max_examples=80, deadline=None)
@given(programs())
def test_schedule_invariants(prog):
    """In-order pipes, waits after their sets, barriers drain, serial is the slowest."""
    instrs = build(prog)
    sch = schedule(instrs)
    last_end = {}
    barrier_at = 0.0
    for ins in instrs:
        start, end = sch.start[ins.seq], sch.end[ins.seq]
        if ins.kind == BARRIER:          # spans from its issue to the drain of every queue
            assert end >= max(last_end.values(), default=0.0)
            barrier_at = end
            continue
        assert end - start == (ins.cost if ins.kind == WORK else 0)
        assert start >= barrier_at
        assert start >= last_end.get(ins.pipe, 0.0)
        last_end[ins.pipe] = end
    for wait, set_ in sch.matched_set.items():
        assert sch.start[wait] >= sch.end[set_]
    wall = max(sch.end)
    busy = sum(i.cost for i in instrs if i.kind == WORK)
    per_pipe = {}
    for i in instrs:
        if i.kind == WORK:
            per_pipe[i.pipe] = per_pipe.get(i.pipe, 0) + i.cost
    assert wall >= max(per_pipe.values(), default=0)
    serial = schedule(instrs, serial=True)
    assert max(serial.end) >= wall
    assert max(serial.end) >= busy


# -- several cores (a core group): lanes are (core, pipe) pairs --------------------------------

@st.composite
def group_programs(draw):
    """Per core, a straight-line program (work on a shared and a private buffer, flag pairs,
    barriers); some work waits for an earlier instruction of another core (a pipe dep)."""
    ncores = draw(st.integers(2, 3))
    instrs, open_flags = [], {}
    for core in range(ncores):
        steps = draw(st.integers(1, 14))
        flags = open_flags.setdefault(core, [])
        used = 0
        for _ in range(steps):
            seq = len(instrs)
            choice = draw(st.sampled_from(["work", "work", "work", "set", "wait", "barrier"]))
            if choice == "set" and used < len(PAIRS):
                src, dst = PAIRS[used]
                used += 1
                flags.append((src, dst, 0))
                instrs.append(Instr(seq, src, SET, "set", None, flag=(src, dst, 0), core=core))
            elif choice == "wait" and flags:
                flag = flags.pop(draw(st.integers(0, len(flags) - 1)))
                instrs.append(Instr(seq, flag[1], WAIT, "wait", None, flag=flag, core=core))
            elif choice == "barrier" and draw(st.integers(0, 3)) == 0:
                instrs.append(Instr(seq, Pipe.PIPE_ALL, BARRIER, "barrier", None, core=core))
            else:
                pipe = draw(st.sampled_from(QUEUE_PIPES))
                buf = draw(st.sampled_from(["GM", f"Vec@{core}"]))
                lo = draw(st.integers(0, 6)) * 32
                acc = (Access(buf, lo, lo + draw(st.integers(1, 3)) * 32),)
                write = draw(st.booleans())
                others = [i for i in instrs if i.core != core and i.kind == WORK]
                deps = ()
                if others and draw(st.integers(0, 2)) == 0:
                    deps = (draw(st.sampled_from(others)).seq,)
                instrs.append(Instr(seq, pipe, WORK, f"w{seq}", None, draw(st.integers(1, 40)),
                                    reads=() if write else acc, writes=acc if write else (),
                                    static_id=seq, core=core, deps=deps))
        for flag in flags:
            instrs.append(Instr(len(instrs), flag[1], WAIT, "wait", None, flag=flag, core=core))
        flags.clear()
    return instrs


@settings(max_examples=150, deadline=None)
@given(group_programs())
def test_lane_clocks_match_brute_force_across_cores(instrs):
    sch = schedule(instrs)
    found = {(r.first_seq, r.second_seq) for r in find_races(instrs, sch)}
    assert found == brute_force(instrs, sch)


@settings(max_examples=60, deadline=None)
@given(group_programs())
def test_a_dependence_starts_after_its_source_ends(instrs):
    sch = schedule(instrs, dep_latency=7.0)
    for ins in instrs:
        for dep in ins.deps:
            assert sch.start[ins.seq] >= sch.end[dep] + 7.0


def test_a_barrier_orders_only_its_own_core():
    w0 = Instr(0, Pipe.PIPE_MTE2, WORK, "w0", None, 5, writes=(Access("GM", 0, 64),), core=0)
    bar = Instr(1, Pipe.PIPE_ALL, BARRIER, "barrier", None, core=0)
    r0 = Instr(2, Pipe.PIPE_V, WORK, "r0", None, 5, reads=(Access("GM", 0, 64),), core=0)
    r1 = Instr(3, Pipe.PIPE_V, WORK, "r1", None, 5, reads=(Access("GM", 0, 64),), core=1)
    instrs = [w0, bar, r0, r1]
    races = find_races(instrs, schedule(instrs))
    assert [(r.first_seq, r.second_seq) for r in races] == [(0, 3)]
