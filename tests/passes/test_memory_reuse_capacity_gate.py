"""MemoryReuse's pipeline-stage guard and capacity gate (reference §9.3), re-expressing
PyPTO's ``TestCapacityGatedReuse`` cases (§14.3) on a2a3 (Right = L0B = 64 KiB).

Stage operands are hand-tagged Right moves whose lifetimes do not overlap, so only the
stage guard can keep them apart; "r0 == r1" means they landed in the same buffer.
"""

from __future__ import annotations

import os
import sys

import pytest

from ptoc.dtypes import MemorySpace
from ptoc.errors import AllocationError
from ptoc.passes import PassContext
from ptoc.passes.memory_packing import footprint

sys.path.insert(0, os.path.dirname(__file__))
from _memory_programs import Operand, allocs, buffers, cube_program, hints, run_memory_passes

# Right operand shapes (bf16): 2 KiB, 16 KiB, 20 KiB, 24 KiB, 32 KiB, 48 KiB, 128 KiB
KN = {2: (32, 32), 16: (64, 128), 20: (80, 128), 24: (96, 128), 32: (128, 128),
      48: (128, 192), 128: (512, 128)}


def ops(kib: int, tags: list[str | None], prefix: str = "r") -> list[Operand]:
    k, n = KN[kib]
    return [Operand(f"{prefix}{i}", k, n, tag) for i, tag in enumerate(tags)]


def same(bufs, a, b) -> bool:
    return bufs[a] == bufs[b]


def test_separates_affordable_cross_stage_right_operands():
    ctx = PassContext()
    out = run_memory_passes(cube_program(ops(2, ["0:0", "0:1"])), ctx)
    bufs = buffers(out)
    assert not same(bufs, "r0", "r1")
    assert hints(ctx) == []
    assert "pipeline_membership" not in out.as_python()


def test_untagged_disjoint_operands_still_merge():
    out = run_memory_passes(cube_program(ops(2, [None, None])))
    assert same(buffers(out), "r0", "r1")


def test_merges_when_slot_too_large_to_double_buffer_and_says_why():
    ctx = PassContext()
    out = run_memory_passes(cube_program(ops(48, ["0:0", "0:1"])), ctx)
    assert same(buffers(out), "r0", "r1")          # F = max(1, min(2, 64 // 48)) = 1
    [hint] = hints(ctx)
    assert "requested depth 2" in hint and "only 1 of 2 buffers" in hint
    assert "shrink the per-stage tile" in hint
    assert hint == (
        "software pipelining requested depth 2 for pipeline group 0 in Right, but only 1 of 2 "
        "buffers fit (49152 B per stage, 65536 B free) \u2014 stages 1 apart share storage and "
        "serialize. This operand alone needs 98304 B for depth 2; shrink the per-stage tile to "
        "<= 32768 B, or reduce the pipeline depth (e.g. `pl.pipeline(stage=)`) to 1.")
    [diag] = [d for d in ctx.diagnostics if d.code == "PH-MR-001"]
    assert diag.pass_name == "MemoryReuse"


def test_finds_max_affordable_double_buffer_depth():
    out = run_memory_passes(cube_program(ops(32, ["0:0", "0:1", "0:2"])))
    bufs = buffers(out)
    assert same(bufs, "r0", "r2") and not same(bufs, "r0", "r1")
    assert len({bufs[f"r{i}"] for i in range(3)}) == 2


def test_merges_same_stage_operands():
    out = run_memory_passes(cube_program(ops(32, ["0:0", "0:0"])))
    assert same(buffers(out), "r0", "r1")


def test_separates_sparse_stage_ids():
    """Stages 0 and 2 are dense ordinals 0 and 1, so they differ modulo F = 2."""
    out = run_memory_passes(cube_program(ops(32, ["0:0", "0:2"])))
    assert not same(buffers(out), "r0", "r1")


def test_sheds_depth_when_coresident_tile_would_overflow():
    ctx = PassContext()
    blocker = Operand("blocker", *KN[32])
    out = run_memory_passes(cube_program(ops(32, ["0:0", "0:1"]), blocker=blocker), ctx)
    bufs = buffers(out)
    assert same(bufs, "r0", "r1") and not same(bufs, "r0", "blocker")
    assert sum(allocs(out, "Right")) == 65536          # allocation succeeded, exactly full
    [hint] = hints(ctx)
    assert "over-subscribe the space" in hint
    assert "shrink the per-stage tile" not in hint
    assert hint.endswith("reduce the pipeline depth to 1.")


def test_is_deterministic():
    program = cube_program(ops(32, ["0:0", "0:1", "0:2", "0:3"]), blocker=Operand("b", *KN[16]))
    first = run_memory_passes(program).as_python()
    assert all(run_memory_passes(program).as_python() == first for _ in range(3))


def test_stage4_uses_balanced_modulo_coloring():
    out = run_memory_passes(cube_program(ops(32, ["0:0", "0:1", "0:2", "0:3"])))
    bufs = buffers(out)
    assert same(bufs, "r0", "r2") and same(bufs, "r1", "r3") and not same(bufs, "r0", "r1")


def test_sequential_groups_time_share_without_false_shed():
    ctx = PassContext()
    program = cube_program(ops(24, ["1:0", "1:1"], "a") + ops(16, ["2:0", "2:1"], "b"))
    out = run_memory_passes(program, ctx)
    bufs = buffers(out)
    assert not same(bufs, "a0", "a1") and not same(bufs, "b0", "b1")
    assert len({bufs[n] for n in ("a0", "a1", "b0", "b1")}) == 2
    assert hints(ctx) == []


def test_multi_group_shed_prefers_largest_slot():
    ctx = PassContext()
    program = cube_program(ops(24, ["1:0", "1:1"], "a") + ops(16, ["2:0", "2:1"], "b"),
                           blocker=Operand("blk", *KN[24]))
    out = run_memory_passes(program, ctx)
    bufs = buffers(out)
    assert same(bufs, "a0", "a1")                      # group 1 (24 KiB) shed to depth 1
    assert not same(bufs, "b0", "b1")                  # group 2 (16 KiB) keeps depth 2
    assert sum(allocs(out, "Right")) == 65536          # fits at exactly 64 KiB
    [hint] = hints(ctx)
    assert "pipeline group 1 in Right" in hint and "only 1 of 2" in hint


def test_unknown_capacity_keeps_legacy_load_separation_not_merge_all():
    """Without capacities the legacy rule applies: Vec load stages stay apart."""
    from _memory_programs import program
    prog = program(
        "x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]",
        "pl.Tensor[[64, 64], pl.FP32]",
        ['t0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [64, 64], '
         '[64, 64], target_memory=pl.Mem.Vec, attrs={"pipeline_membership": "0:0"})',
         "o0: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(t0, [0, 0], out)",
         't1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [64, 64], '
         '[64, 64], target_memory=pl.Mem.Vec, attrs={"pipeline_membership": "0:1"})',
         "o1: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(t1, [0, 0], o0)",
         "return o1"])
    out = run_memory_passes(prog, allocate=False, capacities={})
    assert not same(buffers(out), "t0", "t1")
    # and the L0 spaces are never separated by the legacy rule
    legacy_right = run_memory_passes(cube_program(ops(2, ["0:0", "0:1"])), allocate=False,
                                     capacities={})
    assert same(buffers(legacy_right), "r0", "r1")


def test_fallback_repacks_legacy_on_genuine_overflow():
    ctx = PassContext()
    out = run_memory_passes(cube_program(ops(20, ["0:0", "0:1", "0:2", "0:3"]), colive=True),
                            ctx, allocate=False)
    bufs = buffers(out)
    assert len({bufs[f"r{i}"] for i in range(4)}) == 4
    [warning] = hints(ctx, "W-MR-001")
    assert "fell back to the legacy packing" in warning
    assert "(which also overflows \u2014 reduce tile size or stage count)" in warning
    assert hints(ctx) == []                            # no PH-MR-001 after a fallback
    with pytest.raises(AllocationError, match=r"Right buffer usage \(81920 bytes\)"):
        run_memory_passes(cube_program(ops(20, ["0:0", "0:1", "0:2", "0:3"]), colive=True))


def test_intrinsically_oversized_buffer_defers_to_allocator_without_warning():
    ctx = PassContext()
    with pytest.raises(AllocationError,
                       match=r"Right buffer usage \(131072 bytes\).*\(65536 bytes\)") as err:
        run_memory_passes(cube_program(ops(128, [None])), ctx)
    assert "r0" in str(err.value) and "mem_right" in str(err.value)
    assert hints(ctx, "W-MR-001") == [] and hints(ctx) == []


def test_footprint_is_a_32_byte_bump():
    class B:  # a stand-in buffer with a slot
        def __init__(self, slot):
            self.slot = slot
    assert footprint([B(10), B(40), B(32)]) == 32 + 64 + 32
    assert footprint([B(10)], reserved=100) == 128


def test_disabled_hint_is_not_reported():
    ctx = PassContext(disabled_diagnostics=("PH-MR-001",))
    run_memory_passes(cube_program(ops(48, ["0:0", "0:1"])), ctx)
    assert hints(ctx) == []
    assert MemorySpace.Right.value == "Right"


# ---- reserved region -------------------------------------------------------------------

VEC48 = "pl.Tile[[96, 128], pl.FP32, pl.Mem.Vec]"        # 48 KiB


def _vec_stages():
    from _memory_programs import program
    io = "x: pl.Tensor[[96, 128], pl.FP32], out: pl.Out[pl.Tensor[[96, 128], pl.FP32]]"
    lines = []
    prev = "out"
    for i in range(2):
        lines += [f'v{i}: {VEC48} = pl.tile.load(x, [0, 0], [96, 128], [96, 128], '
                  f'target_memory=pl.Mem.Vec, attrs={{"pipeline_membership": "0:{i}"}})',
                  f"o{i}: pl.Tensor[[96, 128], pl.FP32] = pl.tile.store(v{i}, [0, 0], {prev})"]
        prev = f"o{i}"
    return program(io, "pl.Tensor[[96, 128], pl.FP32]", lines + [f"return {prev}"])


def test_reserved_region_reduces_available_capacity():
    ctx = PassContext()
    assert not same(buffers(run_memory_passes(_vec_stages(), ctx)), "v0", "v1")
    assert hints(ctx) == []                              # 96 KiB of 184 KiB: both stages fit
    reserve = {MemorySpace.Vec: 128 * 1024}
    ctx = PassContext()
    from ptoc.passes.allocate_memory_addr import allocate_memory_addr
    from ptoc.passes.init_mem_ref import init_mem_ref
    from ptoc.passes.memory_reuse import memory_reuse
    with ctx:
        out = allocate_memory_addr(reserved=reserve)(
            memory_reuse(reserved=reserve)(init_mem_ref()(_vec_stages())))
    bufs = buffers(out)
    assert same(bufs, "v0", "v1") and bufs["v0"][1] == 128 * 1024
    [hint] = hints(ctx)
    assert "(49152 B per stage, 57344 B free after 131072 B reserved)" in hint
    assert "shrink the per-stage tile to <= 28672 B" in hint


# ---- stage separation through the real LowerPipelineLoops ------------------------------

def _lowered(lines: list[str]):
    from ptoc.passes import default_pipeline_entries
    if "LowerPipelineLoops" not in {e.name for e in default_pipeline_entries()}:
        pytest.skip("LowerPipelineLoops is not registered")
    from ptoc.passes.lower_pipeline_loops import lower_pipeline_loops
    from _memory_programs import program
    io = "x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]"
    prog = program(io, "pl.Tensor[[64, 64], pl.FP32]", lines)
    with PassContext():
        return lower_pipeline_loops()(prog)


VEC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]"
LOOP = [
    "for i, (acc,) in pl.pipeline(0, 4, 1, stage=2, init_values=(out,)):",
    f"    t: {VEC} = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)",
    "    o: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(t, [0, 0], acc)",
    "    r: pl.Tensor[[64, 64], pl.FP32] = pl.yield_(o)",
    "return r"]


def test_stage_tiles_get_distinct_buffers():
    from _memory_programs import buffers_named
    out = run_memory_passes(_lowered(LOOP))
    tiles = buffers_named(out, "t")
    assert len(tiles) == 2 and len(set(tiles)) == 2
    assert "pipeline_membership" not in out.as_python()


def test_load_buffers_separate_but_compute_may_coalesce():
    lines = [
        "for i, (acc,) in pl.pipeline(0, 4, 1, stage=2, init_values=(out,)):",
        f"    t: {VEC} = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)",
        f"    e: {VEC} = pl.tile.exp(t)",
        "    o: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(e, [0, 0], acc)",
        "    r: pl.Tensor[[64, 64], pl.FP32] = pl.yield_(o)",
        "return r"]
    from _memory_programs import buffers_named
    out = run_memory_passes(_lowered(lines))
    loads, exps = buffers_named(out, "t"), buffers_named(out, "e")
    assert len(loads) == 2 and len(set(loads)) == 2
    assert len(set(loads + exps)) < len(loads + exps)


def test_disjoint_non_pipeline_tiles_still_merge():
    lines = [line.replace("pl.pipeline(0, 4, 1, stage=2,", "pl.range(0, 4, 1,") for line in LOOP]
    lines = [f"t0: {VEC} = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)",
             "o0: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(t0, [0, 0], out)",
             f"t1: {VEC} = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)",
             "o1: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(t1, [0, 0], o0)", "return o1"]
    bufs = buffers(run_memory_passes(_lowered(lines)))
    assert same(bufs, "t0", "t1")


def test_right_tiles_of_different_shapes_may_share():
    out = run_memory_passes(cube_program([Operand("big", *KN[32]), Operand("small", *KN[2])]))
    bufs = buffers(out)
    assert same(bufs, "big", "small")
    assert allocs(out, "Right") == [32768]


def test_perf_hints_log_carries_the_ph_mr_001_line(tmp_path):
    from ptoc.passes.diagnostics import write_report
    import io
    ctx = PassContext()
    run_memory_passes(cube_program(ops(48, ["0:0", "0:1"])), ctx)
    path = write_report(ctx.diagnostics, tmp_path, stream=io.StringIO())
    log = path.read_text()
    assert "[perf_hint PH-MR-001] MemoryReuse: software pipelining requested depth 2" in log
    assert "only 1 of 2 buffers" in log and "shrink the per-stage tile" in log
