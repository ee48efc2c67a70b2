"""InsertSync behaviour on small hand-written Level-2 kernels: which pairs, where, which ids.

Each test states a hazard pattern and checks the Level-3 text InsertSync produces (the
sync lines in program order), then runs it on the simulator: no race, no deadlock, flags
balanced (the simulator rejects a flag left set or set twice), numbers equal to a serial run.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from ptoc.backend.pipes import Pipe
from ptoc.pto import parse, print_module, verify
from ptoc.pto.insert_sync import insert_sync, strip_sync
from ptoc.pto.model import ForOp, IfOp, SyncOp, walk
from ptoc.sim import simulate
from oracle_data import ORACLE_ROOT

VEC = ("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, "
       "blayout=row_major, slayout=none_box, fractal=512, pad=0>")
WIN = "!pto.partition_tensor_view<16x16xf32>"


def vec_kernel(body: str, *, tiles: dict[str, int] | None = None, params: str = "") -> str:
    """A vector kernel over x (read) and y (written), both f32 16 x 64, with Vec tiles
    named in ``tiles`` (name -> byte address). ``body`` may use %wx0..%wx3 / %wy0..%wy3
    (16 x 16 windows of x and y at column 16*i) and %half (0.5 : f32)."""
    tiles = tiles or {"t0": 0, "t1": 1024, "t2": 2048}
    head = [
        'module attributes {pto.target_arch = "a2a3"} {',
        f"  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>{params}) {{",
        "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
        "  %c2 = arith.constant 2 : index", "  %c3 = arith.constant 3 : index",
        "  %c16 = arith.constant 16 : index", "  %c64 = arith.constant 64 : index",
        "  %half = arith.constant 0.5 : f32",
        "  %xv = pto.make_tensor_view %x, shape = [%c16, %c64], strides = [%c64, %c1] "
        "{layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>",
        "  %yv = pto.make_tensor_view %y, shape = [%c16, %c64], strides = [%c64, %c1] "
        "{layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>",
    ]
    for i in range(4):
        head.append(f"  %col{i} = arith.constant {16 * i} : index")
        for v in ("x", "y"):
            head.append(f"  %w{v}{i} = pto.partition_view %{v}v, offsets = [%c0, %col{i}], sizes "
                        f"= [%c16, %c16] : !pto.tensor_view<?x?xf32> -> {WIN}")
    for name, addr in tiles.items():
        head.append(f"  %a_{name} = arith.constant {addr} : i64")
        head.append(f"  %{name} = pto.alloc_tile addr = %a_{name} : {VEC}")
    lines = [ln.strip() for ln in body.strip().splitlines()]
    return "\n".join(head + ["  " + ln for ln in lines] + ["  return", "  }", "}"]) + "\n"


def load(t: str, w: str) -> str:
    return f"pto.tload ins({w} : {WIN}) outs(%{t} : {VEC})"


def store(t: str, w: str) -> str:
    return f"pto.tstore ins(%{t} : {VEC}) outs({w} : {WIN})"


def vop(op: str, dst: str, *srcs: str) -> str:
    ins = ", ".join(f"%{s}" for s in srcs)
    tys = ", ".join(VEC for _ in srcs)
    return f"pto.{op} ins({ins} : {tys}) outs(%{dst} : {VEC})"


def sync_lines(module) -> list[str]:
    """The program with every non-sync instruction reduced to its opcode (and its outs),
    sync lines in full, scalar and descriptor ops dropped."""
    out = []
    lines = print_module(module).splitlines()
    for line in lines[2:lines.index("  return")]:
        s = line.strip()
        if s.startswith(("pto.set_flag", "pto.wait_flag", "pto.barrier")):
            out.append(s.replace("<PIPE_", "<").replace("EVENT_ID", ""))
        elif s.startswith(("pto.t", "scf.", "}")):
            m = re.match(r"(?:%\S+ = )?(\S+)", s)
            outs = re.search(r"outs\((%\w+)", s)
            out.append(m.group(1) + (f" {outs.group(1)}" if outs else ""))
    return out


def run_checked(module, tensors):
    """Simulate ``module`` (Level 3) and its serial Level-2 twin; assert no race and equal
    outputs. Returns the timed result."""
    timed = simulate(module, tensors)
    serial = simulate(strip_sync(module), tensors, mode="serial")
    assert timed.races == [], "\n".join(map(str, timed.races))
    for name, value in serial.outputs.items():
        np.testing.assert_array_equal(timed.outputs[name], value)
    return timed


def xy(seed: int = 0):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((16, 64)).astype(np.float32),
            "y": rng.standard_normal((16, 64)).astype(np.float32)}


# ---------------------------------------------------------------------------------------------
# straight-line placement
# ---------------------------------------------------------------------------------------------


def test_raw_across_pipes_sets_after_producer_and_waits_before_consumer():
    text = vec_kernel("\n".join([load("t0", "%wx0"), load("t1", "%wx1"),
                                 vop("tadd", "t2", "t0", "t1"), store("t2", "%wy0")]))
    result = insert_sync(parse(text))
    assert sync_lines(result.module) == [
        "pto.tload %t0", "pto.tload %t1",
        "pto.set_flag[<MTE2>, <V>, <0>]", "pto.wait_flag[<MTE2>, <V>, <0>]",
        "pto.tadd %t2",
        "pto.set_flag[<V>, <MTE3>, <0>]", "pto.wait_flag[<V>, <MTE3>, <0>]",
        "pto.tstore %wy0",
    ]
    assert result.notes == []
    run_checked(result.module, xy())


def test_transitive_chain_needs_no_direct_pair():
    # MTE2 -> V -> MTE3 on one tile: the store is ordered after the load through V
    text = vec_kernel("\n".join([load("t0", "%wx0"), vop("tabs", "t0", "t0"),
                                 store("t0", "%wy0")]))
    result = insert_sync(parse(text))
    flags = [s for s in sync_lines(result.module) if s.startswith("pto.set_flag")]
    assert flags == ["pto.set_flag[<MTE2>, <V>, <0>]", "pto.set_flag[<V>, <MTE3>, <0>]"]
    run_checked(result.module, xy())


def test_same_pipe_vector_hazard_gets_pipe_barrier_but_dma_does_not():
    text = vec_kernel("\n".join([
        load("t0", "%wx0"), load("t0", "%wx1"),          # WAW on MTE2: in order, nothing
        vop("tabs", "t1", "t0"), vop("tneg", "t2", "t1"),  # RAW on V: pipe barrier
        vop("tneg", "t2", "t0"),                          # WAW on V with the tneg: barrier
        store("t2", "%wy0"), store("t1", "%wy0")]))       # WAW on MTE3 (GM): nothing
    result = insert_sync(parse(text))
    lines = sync_lines(result.module)
    assert lines.count("pto.barrier <V>") == 2
    assert lines.index("pto.barrier <V>") == lines.index("pto.tneg %t2") - 1
    assert not any("<MTE2>, <MTE2>" in s or "<MTE3>, <MTE3>" in s for s in lines)
    assert result.stats["k"]["pipe_barrier"] == 2
    run_checked(result.module, xy())


def test_disjoint_bytes_need_no_sync_and_overlapping_tiles_do():
    body = "\n".join([load("t0", "%wx0"), vop("tabs", "t1", "t1"), store("t1", "%wy0")])
    apart = insert_sync(parse(vec_kernel(body, tiles={"t0": 0, "t1": 1024})))
    assert not any("<MTE2>, <V>" in s for s in sync_lines(apart.module))
    overlap = insert_sync(parse(vec_kernel(body, tiles={"t0": 0, "t1": 512})))
    assert "pto.wait_flag[<MTE2>, <V>, <0>]" in sync_lines(overlap.module)
    run_checked(overlap.module, xy())


def test_gm_windows_compare_as_rectangles():
    # store to y columns 0..15 then load y columns 16..31: no hazard; columns 0..15: RAW
    for window, hazard in (("%wy1", False), ("%wy0", True)):
        text = vec_kernel("\n".join([load("t0", "%wx0"), store("t0", "%wy0"),
                                     load("t1", window), store("t1", "%wy2")]))
        result = insert_sync(parse(text))
        assert any("<MTE3>, <MTE2>" in s for s in sync_lines(result.module)) is hazard
        run_checked(result.module, xy())


# ---------------------------------------------------------------------------------------------
# loops and branches
# ---------------------------------------------------------------------------------------------


LOOP = """
scf.for %i = %c0 to %n step %c1 {
  {load}
  {op}
  {store}
}
"""


def loop_kernel() -> str:
    body = LOOP.replace("{load}", load("t0", "%wx0")).replace(
        "{op}", vop("tabs", "t1", "t0")).replace("{store}", store("t1", "%wy0"))
    return vec_kernel(body, params=", %n: index")


def test_loop_carried_hazards_get_pre_loop_sets_and_post_loop_waits():
    result = insert_sync(parse(loop_kernel()))
    assert sync_lines(result.module) == [
        "pto.set_flag[<V>, <MTE2>, <0>]",          # WAR: tabs(i) reads t0, tload(i+1) writes
        "pto.set_flag[<MTE3>, <V>, <0>]",          # WAR: tstore(i) reads t1, tabs(i+1) writes
        "scf.for",
        "pto.wait_flag[<V>, <MTE2>, <0>]",
        "pto.tload %t0",
        "pto.set_flag[<MTE2>, <V>, <0>]",
        "pto.wait_flag[<MTE2>, <V>, <0>]",
        "pto.wait_flag[<MTE3>, <V>, <0>]",         # (also orders tabs(i) before tabs(i+1):
        "pto.tabs %t1",                            #  its set followed tabs(i) via MTE3)
        "pto.set_flag[<V>, <MTE3>, <0>]",
        "pto.set_flag[<V>, <MTE2>, <0>]",
        "pto.wait_flag[<V>, <MTE3>, <0>]",
        "pto.tstore %wy0",
        "pto.set_flag[<MTE3>, <V>, <0>]",
        "}",
        "pto.wait_flag[<V>, <MTE2>, <0>]",
        "pto.wait_flag[<MTE3>, <V>, <0>]",
    ]
    assert result.stats["k"]["carried"] == 2
    assert result.stats["k"]["pipe_barrier"] == 0


@pytest.mark.parametrize("trips", [0, 1, 2, 5])
def test_loop_sync_is_balanced_for_every_trip_count(trips):
    result = insert_sync(parse(loop_kernel()))
    run_checked(result.module, {**xy(trips), "n": trips})


BRANCH = """
%p = arith.cmpi eq, %n, %c0 : index
{load}
scf.if %p {
  {then}
} else {
  {else}
}
{after}
"""


@pytest.mark.parametrize("n", [0, 1])
def test_branch_waits_before_and_sets_after_so_both_arms_balance(n):
    body = (BRANCH.replace("{load}", load("t0", "%wx0"))
            .replace("{then}", vop("tabs", "t1", "t0"))          # consumer only in one arm
            .replace("{else}", load("t2", "%wx1"))
            .replace("{after}", store("t1", "%wy0") + "\n" + vop("tneg", "t0", "t2")))
    result = insert_sync(parse(vec_kernel(body, params=", %n: index")))
    lines = sync_lines(result.module)
    if_at, end_at = lines.index("scf.if"), len(lines) - 1 - lines[::-1].index("}")
    inside = lines[if_at:end_at]
    assert not any(s.startswith(("pto.set_flag", "pto.wait_flag")) for s in inside)
    assert "pto.wait_flag[<MTE2>, <V>, <0>]" in lines[:if_at]     # hoisted wait
    assert "pto.set_flag[<V>, <MTE3>, <0>]" in lines[end_at:]     # set after the branch
    run_checked(result.module, {**xy(n), "n": n})


def test_newer_producer_inside_region_makes_hoisting_unnecessary():
    # t0 is loaded before the loop and again inside it; the in-loop read only needs the
    # in-loop load, so no wait is hoisted before the loop for the first load
    body = "\n".join([load("t0", "%wx1"), store("t0", "%wy1"),
                      "scf.for %i = %c0 to %c2 step %c1 {", load("t0", "%wx0"),
                      vop("tabs", "t1", "t0"), store("t1", "%wy0"), "}"])
    result = insert_sync(parse(vec_kernel(body)))
    lines = sync_lines(result.module)
    before = lines[:lines.index("scf.for")]
    assert "pto.wait_flag[<MTE2>, <V>, <0>]" not in before
    run_checked(result.module, xy())


# ---------------------------------------------------------------------------------------------
# event ids and the PIPE_ALL fallback
# ---------------------------------------------------------------------------------------------


def many_live_pairs(count: int) -> str:
    tiles = {f"t{i}": 1024 * i for i in range(count)}
    loads = [load(f"t{i}", f"%wx{i % 4}") for i in range(count)]
    uses = [vop("tabs", f"t{i}", f"t{i}") for i in range(count)]
    return vec_kernel("\n".join(loads + uses), tiles=tiles)


def test_overlapping_pairs_get_distinct_ids_up_to_eight():
    result = insert_sync(parse(many_live_pairs(8)))
    ids = {op.event for op in walk(result.module.kernel().body)
           if isinstance(op, SyncOp) and op.kind == "set_flag"}
    assert ids == set(range(8))
    assert result.notes == []
    run_checked(result.module, xy())


def test_ninth_overlapping_pair_falls_back_to_pipe_all_with_a_note():
    result = insert_sync(parse(many_live_pairs(9)))
    (note,) = result.fallbacks
    assert note.kernel == "k" and note.kind == "pipe_all_fallback"
    assert (note.src, note.dst) == (Pipe.PIPE_MTE2, Pipe.PIPE_V)
    assert note.producer[0] == "pto.tload" and note.consumer[0] == "pto.tabs"
    assert note.producer[1] > 0 and note.consumer[1] > note.producer[1]
    assert "event ids" in note.reason and "MTE2->V" in note.reason
    assert "barrier(PIPE_ALL)" in str(note) and "line" in str(note)
    assert result.stats["k"]["barrier_all"] == 1
    run_checked(result.module, xy())


def test_dbc_slots_get_their_own_ids():
    from ptoc.pto.sync_examples import dbc_matmul
    result = insert_sync(parse(dbc_matmul(tiles=4, order="MSMS", accumulators=2)))
    events = {}
    for op in walk(result.module.kernel().body):
        if isinstance(op, SyncOp) and op.kind == "set_flag":
            events.setdefault((op.src.short, op.dst.short), set()).add(op.event)
    assert events[("M", "FIX")] == {0, 1}
    assert events[("FIX", "M")] == {0, 1}


# ---------------------------------------------------------------------------------------------
# module-level behaviour
# ---------------------------------------------------------------------------------------------


def test_output_round_trips_and_verifies():
    from ptoc.pto.sync_examples import kloop_matmul
    result = insert_sync(parse(kloop_matmul()))
    text = print_module(result.module)
    assert parse(text) == result.module
    verify(result.module)
    assert result.text == text


def test_kernels_with_sync_are_left_alone():
    first = insert_sync(parse(loop_kernel()))
    again = insert_sync(first.module)
    assert again.module == first.module
    (note,) = again.notes
    assert note.kind == "skipped" and "already" in str(note)


def test_strip_sync_is_the_inverse():
    module = parse(loop_kernel())
    assert strip_sync(insert_sync(module).module) == module


def test_tiles_without_addresses_alias_their_whole_space():
    text = vec_kernel("\n".join([load("t0", "%wx0"), vop("tabs", "t1", "t1")]))
    text = re.sub(r"addr = %a_t\d ", "", text)
    result = insert_sync(parse(text))
    assert "pto.wait_flag[<MTE2>, <V>, <0>]" in sync_lines(result.module)


def test_scf_structure_is_kept():
    from ptoc.pto.sync_examples import kloop_matmul
    before = parse(kloop_matmul())
    after = insert_sync(before).module
    kinds = [type(op).__name__ for op in walk(after.kernel().body)
             if isinstance(op, (ForOp, IfOp))]
    assert kinds == [type(op).__name__ for op in walk(before.kernel().body)
                     if isinstance(op, (ForOp, IfOp))]


# ---------------------------------------------------------------------------------------------
# nesting, trip counts, several kernels, windows
# ---------------------------------------------------------------------------------------------


def test_inner_loop_carried_pairs_chain_across_the_outer_loop():
    """The K loop's reverse flags (L1/L0 slot free) are set once before the outermost loop
    and waited once after it, as in the hand-written pto-isa GEMM: per inner visit they
    would let the source pipe set a bit twice across outer iterations."""
    from ptoc.sim.examples import dbuf_matmul
    module = strip_sync(parse(dbuf_matmul(128, 256, 256, 64, m=64, n=128)))
    result = insert_sync(module)
    body = result.module.kernel().body
    outer = next(i for i, op in enumerate(body) if isinstance(op, ForOp))
    pre = [op for op in body[:outer] if isinstance(op, SyncOp)]
    post = [op for op in body[outer + 1:] if isinstance(op, SyncOp)]
    assert {(op.src.short, op.dst.short) for op in pre} >= {("MTE1", "MTE2"), ("M", "MTE1"),
                                                            ("FIX", "M")}
    assert sorted((o.src, o.dst, o.event) for o in pre) == \
        sorted((o.src, o.dst, o.event) for o in post)
    assert all(op.kind == "set_flag" for op in pre) and all(op.kind == "wait_flag" for op in post)
    mi = body[outer]
    assert not any(isinstance(op, SyncOp) for op in mi.body if not isinstance(op, ForOp))
    assert result.fallbacks == []


def test_constant_trip_count_keeps_what_the_body_taught():
    # after a loop that surely runs, the store needs only the V flag set inside the loop's
    # last iteration chain; a loop that may run zero times cannot promise that
    def kernel(bound: str) -> str:
        return vec_kernel("\n".join([
            load("t0", "%wx0"),
            f"scf.for %i = %c0 to {bound} step %c1 {{", vop("tabs", "t1", "t0"), "}",
            store("t1", "%wy0")]), params=", %n: index")
    sure = insert_sync(parse(kernel("%c2")))
    maybe = insert_sync(parse(kernel("%n")))
    assert sure.stats["k"]["pairs"] <= maybe.stats["k"]["pairs"]
    run_checked(sure.module, {**xy(), "n": 2})
    for n in (0, 1, 3):
        run_checked(maybe.module, {**xy(), "n": n})


def test_zero_trip_constant_loop_needs_nothing():
    body = "\n".join([load("t0", "%wx0"), "scf.for %i = %c0 to %c0 step %c1 {",
                      vop("tabs", "t1", "t0"), "}"])
    result = insert_sync(parse(vec_kernel(body)))
    assert result.stats["k"]["pairs"] == 0


def test_every_kernel_of_a_module_is_synchronised():
    one = vec_kernel("\n".join([load("t0", "%wx0"), vop("tabs", "t1", "t0")]))
    two = parse(one.replace("@k(", "@k2("))
    module = parse(print_module(replace(parse(one), kernels=parse(one).kernels + two.kernels)))
    assert [k.name for k in module.kernels] == ["k", "k2"]
    result = insert_sync(module)
    assert set(result.stats) == {"k", "k2"}
    for name in ("k", "k2"):
        assert result.stats[name]["pairs"] == 1


def test_extract_reads_only_its_window():
    from ptoc.backend import get_target
    from ptoc.pto.sync_access import AccessResolver
    from ptoc.pto.sync_examples import kloop_matmul
    kernel = parse(kloop_matmul()).kernel()
    resolver = AccessResolver(kernel, get_target("a2a3"))
    extracts = [op for op in walk(kernel.body) if getattr(op, "opcode", "") == "pto.textract"]
    fp = resolver.footprint(extracts[0])
    assert fp.pipe is Pipe.PIPE_MTE1
    (read,) = [a for a in fp.accesses if not a.write]
    (write,) = [a for a in fp.accesses if a.write]
    assert (read.buffer, write.buffer) == ("Mat", "Left")
    assert read.hi - read.lo == 64 * 64 * 2           # the whole 64 x 64 bf16 A panel
    assert not read.conflicts(read)                  # two reads never conflict


def test_textract_window_with_constant_offsets_is_narrowed():
    from ptoc.backend import get_target
    from ptoc.pto.sync_access import AccessResolver
    path = str(ORACLE_ROOT / "dumps/matmul_160x64x160_fp32_dbc_on/kernel.pto")
    try:
        kernel = parse(open(path).read()).kernel()
    except FileNotFoundError:
        pytest.skip("oracle dumps not available")
    resolver = AccessResolver(kernel, get_target("a2a3"))
    extracts = [op for op in walk(kernel.body) if getattr(op, "opcode", "") == "pto.textract"]
    # A rows 0..79 and rows 80..159 of one 160 x 64 f32 Mat tile
    halves = [next(a for a in resolver.footprint(op).accesses if not a.write)
              for op in extracts[1:3]]
    assert halves[0].hi == halves[1].lo == 80 * 64 * 4
    assert halves[0].lo == 0 and halves[1].hi == 160 * 64 * 4


def test_fallback_note_carries_source_locations():
    text = many_live_pairs(9).replace(
        "pto.tabs ins(%t8 : " + VEC + ") outs(%t8 : " + VEC + ")",
        "pto.tabs ins(%t8 : " + VEC + ") outs(%t8 : " + VEC + ') loc("k.py":12:3)')
    (note,) = insert_sync(parse(text)).fallbacks
    assert note.consumer_loc is not None and note.consumer_loc.line == 12


def test_flag_that_could_be_set_twice_gets_a_rendezvous_not_a_barrier():
    """Producer and consumer in different arms of a branch inside a loop: the flag is set
    after the branch every iteration, even when the arm taken has no work on the source
    pipe, so the source could set it again before the destination waited. A reverse pair
    (set right after the wait, waited right before the next set) keeps the bit alternating
    without a PIPE_ALL barrier."""
    body = "\n".join([
        "scf.for %i = %c0 to %n step %c1 {",
        "%p = arith.cmpi eq, %i, %c1 : index",
        "scf.if %p {", load("t0", "%wx0"), "} else {", vop("tabs", "t1", "t0"), "}",
        "}", store("t1", "%wy0")])
    result = insert_sync(parse(vec_kernel(body, params=", %n: index")))
    assert result.fallbacks == []
    assert sync_lines(result.module) == [
        "pto.set_flag[<V>, <MTE2>, <0>]",           # loop-carried: tabs(i) -> tload(i+1)
        "pto.set_flag[<MTE2>, <V>, <0>]",           # loop-carried: tload(i) -> tabs(i+1)
        "scf.for",
        "pto.wait_flag[<V>, <MTE2>, <0>]",
        "pto.wait_flag[<MTE2>, <V>, <0>]",
        "pto.set_flag[<MTE2>, <V>, <1>]",           # rendezvous: MTE2 has passed its wait
        "pto.set_flag[<V>, <MTE2>, <1>]",           # rendezvous: V has passed its wait
        "scf.if",
        "pto.tload %t0",
        "}",
        "pto.barrier <V>",
        "pto.tabs %t1",
        "}",
        "pto.wait_flag[<MTE2>, <V>, <1>]",          # V may set again only after MTE2 waited
        "pto.wait_flag[<V>, <MTE2>, <1>]",
        "pto.set_flag[<V>, <MTE2>, <0>]",
        "pto.set_flag[<MTE2>, <V>, <0>]",
        "}",
        "pto.set_flag[<V>, <MTE3>, <0>]",
        "pto.wait_flag[<V>, <MTE3>, <0>]",
        "pto.tstore %wy0",
        "pto.wait_flag[<V>, <MTE2>, <0>]",          # post-loop waits sink to where they are
        "pto.wait_flag[<MTE2>, <V>, <0>]",          # needed: nothing later needs these two
    ]
    assert result.stats["k"]["barrier_all"] == 0
    for n in range(5):
        run_checked(result.module, {**xy(n), "n": n})


def test_vector_ops_missing_from_the_op_table_are_still_ordered():
    text = vec_kernel("\n".join([load("t0", "%wx0"), vop("trowprod", "t1", "t0"),
                                 store("t1", "%wy0")]))
    lines = sync_lines(insert_sync(parse(text)).module)
    assert "pto.wait_flag[<MTE2>, <V>, <0>]" in lines
    assert "pto.wait_flag[<V>, <MTE3>, <0>]" in lines


def test_unknown_ops_on_other_buffers_are_an_error():
    from ptoc.errors import PtoError
    text = vec_kernel(f"pto.tmystery ins(%wx0 : {WIN}) outs(%t0 : {VEC})")
    with pytest.raises(PtoError, match="tmystery.*not in the PTO op table"):
        insert_sync(parse(text))


def test_user_barriers_are_kept_and_respected():
    # a PIPE_ALL barrier written by the user already orders the load before the vector op
    text = vec_kernel("\n".join([load("t0", "%wx0"), "pto.barrier <PIPE_ALL>",
                                 vop("tabs", "t1", "t0"), "pto.barrier <PIPE_V>",
                                 vop("tneg", "t2", "t1"), store("t2", "%wy0")]))
    result = insert_sync(parse(text))
    assert result.notes == []
    lines = sync_lines(result.module)
    assert lines.count("pto.barrier <ALL>") == 1 and lines.count("pto.barrier <V>") == 1
    assert not any("<MTE2>, <V>" in s for s in lines)       # ordered by the user's barrier
    assert "pto.wait_flag[<V>, <MTE3>, <0>]" in lines
    run_checked(result.module, xy())
