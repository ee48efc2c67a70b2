"""AutoTileMatmulL0's existing-pipeline dbC recogniser (pypto-passes.md §3.6), re-expressing
PyPTO's ``TestAutoTileMatmulL0ExistingPipelineDbC`` (§14.4).

The helper kernel: ``q[tile_m, 128]`` moved to Left outside the loops; an outer
``pl.pipeline(0, 4, 1, stage=2)`` loads ``b[128, width]`` into Mat; the inner
``pl.pipeline(0, width, tile_n, stage=inner_stage)`` extracts a Right panel, multiplies and
stores into ``out``.
"""

import pytest

import ptoc.language as pl
from ptoc.dtypes import MemorySpace
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import ForStmt
from ptoc.passes import MemoryPlanner, PassContext, PassManager, auto_tile_matmul_l0

DBC = "pipeline_double_buffer_c"
OVERLAP = "pipeline_overlap_stores"


def pipeline_kernel(tile_m=16, tile_n=128, stage=2, width=512, dt="BF16", *, moving_left=False,
                    before="", inner_extra="", drain=None, outer_stage=2, k=128) -> str:
    acc = "INT32" if dt == "INT8" else "FP32"
    rows = 4 * tile_m
    if moving_left:
        # q streamed (moving Left), one b panel held in Right.
        load = (f"        bm0 = pl.load(b, [0, 0], [{k}, {tile_n}], target_memory=pl.Mem.Mat)\n"
                f"        br = pl.move(bm0, target_memory=pl.Mem.Right)\n")
        outer_load = f"            qm = pl.load(q2, [j * {width}, 0], [{width}, {k}], target_memory=pl.Mem.Mat)\n"
        moving = f"                ql = pl.tile.extract(qm, n, 0, [{tile_m}, {k}], target_memory=pl.Mem.Left)\n"
        store = f"                o3 = pl.store(c, [j * {width} + n, 0], o2)\n"
        params = (f"q2: pl.Tensor[[{4 * width}, {k}], pl.{dt}], b: pl.Tensor[[{k}, {tile_n}], pl.{dt}], "
                  f"out: pl.Out[pl.Tensor[[{4 * width}, {tile_n}], pl.{acc}]]")
        ret = f"pl.Tensor[[{4 * width}, {tile_n}], pl.{acc}]"
        inner_range = f"0, {width}, {tile_m}"
    else:
        load = (f"        qm = pl.load(q, [0, 0], [{tile_m}, {k}], target_memory=pl.Mem.Mat)\n"
                f"        ql = pl.move(qm, target_memory=pl.Mem.Left)\n")
        outer_load = f"            bm = pl.load(b, [j * {k}, 0], [{k}, {width}], target_memory=pl.Mem.Mat)\n"
        moving = f"                br = pl.tile.extract(bm, 0, n, [{k}, {tile_n}], target_memory=pl.Mem.Right)\n"
        store = f"                o3 = pl.store(c, [j * {tile_m}, n], o2)\n"
        params = (f"q: pl.Tensor[[{tile_m}, {k}], pl.{dt}], b: pl.Tensor[[{4 * k}, {width}], pl.{dt}], "
                  f"out: pl.Out[pl.Tensor[[{rows}, {width}], pl.{acc}]]")
        ret = f"pl.Tensor[[{rows}, {width}], pl.{acc}]"
        inner_range = f"0, {width}, {tile_n}"
    body = (load + before
            + f"        for j, (o1,) in pl.pipeline(0, 4, 1, stage={outer_stage}, init_values=(out,)):\n"
            + outer_load
            + f"            for n, (o2,) in pl.pipeline({inner_range}, stage={stage}, init_values=(o1,)):\n"
            + moving
            + "                c = pl.matmul(ql, br)\n"
            + inner_extra
            + (drain if drain is not None else store)
            + "                o4 = pl.yield_(o3)\n"
            + "            o5 = pl.yield_(o4)\n"
            + "        return o5\n")
    return ("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def k(self, {params}) -> {ret}:\n" + body)


def run(src, **options):
    prog = pl.parse_program(src)
    with PassContext(**options):
        out = auto_tile_matmul_l0()(prog)
    return prog, out


def pipeline_loops(prog):
    found = []

    def walk(stmts):
        for s in stmts:
            if isinstance(s, ForStmt):
                found.append(s)
                walk(s.body.stmts)

    walk(prog.functions[0].body.stmts)
    return found


def marked(prog):
    return [loop for loop in pipeline_loops(prog) if loop.attrs.get(DBC)]


def acc_allocs(prog):
    from ptoc.passes.memref_rewrite import is_alloc

    fn = prog.functions[0]
    return [s for s in fn.body.stmts if is_alloc(s) and s.value.args[0] is MemorySpace.Acc]


def allocs_in(prog, space):
    from ptoc.passes.memref_rewrite import is_alloc

    return [s for s in prog.functions[0].body.stmts if is_alloc(s) and s.value.args[0] is space]


def test_marks_only_direct_inner_pipeline_when_two_accumulators_fit():
    before, out = run(pipeline_kernel())
    outer, inner = pipeline_loops(out)
    assert inner.attrs == {"pipeline_stages": 2, OVERLAP: False, DBC: True}
    assert outer.attrs == {"pipeline_stages": 2}  # an enclosing pipeline never inherits it
    assert out.as_python().count(DBC) == 1
    # Nothing else changes.
    b_outer, b_inner = pipeline_loops(before)
    assert inner.body is b_inner.body


def test_marked_pipeline_gets_two_acc_buffers_in_the_default_pipeline():
    """Default pipeline, no flag: 1 Left, 2 Right, 2 Acc allocations."""
    with PassContext():
        out = PassManager.get_strategy().run_passes(pl.parse_program(pipeline_kernel()),
                                                    write_report=False)
    assert len(allocs_in(out, MemorySpace.Acc)) == 2
    assert len(allocs_in(out, MemorySpace.Left)) == 1
    assert len(allocs_in(out, MemorySpace.Right)) == 2


@pytest.mark.parametrize("stage,width", [(3, 384), (4, 512)])
def test_deeper_pipeline_is_marked(stage, width):
    _, out = run(pipeline_kernel(tile_n=32, stage=stage, width=width))
    (loop,) = marked(out)
    assert loop.attrs["pipeline_stages"] == stage


def test_rejects_pipeline_with_separately_lowered_tail_group():
    before, out = run(pipeline_kernel(width=384))  # 3 trips, stage 2
    assert not marked(out) and out is before


def test_defers_single_compute_drain_pair():
    before, out = run(pipeline_kernel(width=256))  # 2 trips: nothing to hide
    assert not marked(out)


def test_marks_exact_half_l0c_accumulator():
    _, out = run(pipeline_kernel(tile_m=128))  # [128, 128] fp32 = 64 KiB = L0C / 2
    assert len(marked(out)) == 1


def test_rejects_accumulator_over_half_l0c():
    _, out = run(pipeline_kernel(tile_m=192))  # 192 x 128 fp32 = 96 KiB
    assert not marked(out)


@pytest.mark.parametrize("tile_n,expect", [(512, 1), (768, 0)])
def test_int32_physical_rows_gate_pipeline_double_buffer_capacity(tile_n, expect):
    """INT8 -> INT32 with M = 16: 32 physical rows on 910B, so [16, 512] is 64 KiB."""
    _, out = run(pipeline_kernel(tile_n=tile_n, width=4 * tile_n, dt="INT8", k=64))
    assert len(marked(out)) == expect


def test_ptoas_planner_leaves_existing_pipeline_unchanged():
    before, out = run(pipeline_kernel(), memory_planner=MemoryPlanner.PTOAS)
    assert out is before
    before, out = run(pipeline_kernel(), memory_planner=MemoryPlanner.DSA_RP)
    assert out is before


def test_flag_only_changes_the_capacity_formula():
    """With the flag, worst = 2 x total: still marked for a small accumulator."""
    _, out = run(pipeline_kernel(), enable_pypto_l0c_double_buffer=True)
    assert len(marked(out)) == 1
    # 112 x 128 fp32 = 56 KiB: 2 x 56 fits; 2 x (56 + an extra 16 KiB Acc) does not.
    extra = "        side = pl.tile.create([32, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
    _, off = run(pipeline_kernel(tile_m=112, before=extra))
    _, on = run(pipeline_kernel(tile_m=112, before=extra), enable_pypto_l0c_double_buffer=True)
    assert len(marked(off)) == 1 and not marked(on)


def test_preserves_explicit_one_accumulator_policy_on_rerun():
    """A chooser-emitted grid carries pipeline_overlap_stores; a second run never marks it."""
    src = ("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.InCore)\n"
           "    def k(self, a: pl.Tensor[[256, 64], pl.BF16], b: pl.Tensor[[64, 256], pl.BF16], out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:\n"
           "        am = pl.load(a, [0, 0], [256, 64], target_memory=pl.Mem.Mat)\n"
           "        bm = pl.load(b, [0, 0], [64, 256], target_memory=pl.Mem.Mat)\n"
           "        c = pl.matmul(am, bm)\n        out = pl.store(c, [0, 0], out)\n        return out\n")
    _, first = run(src)
    assert OVERLAP in first.as_python() and DBC not in first.as_python()
    with PassContext():
        assert auto_tile_matmul_l0()(first) is first


def test_marks_pipeline_with_moving_left_operand():
    _, out = run(pipeline_kernel(moving_left=True, width=64))
    assert len(marked(out)) == 1


MAT_SCRATCH = ("                o3 = pl.tile.assemble(o2, c, [0, n])\n")


def scratch_kernel(tile_m, trips, *, k=128, scratch_dtype="FP32"):
    """The inner loop assembles each [tile_m, 128] Acc into a carried Mat scratch."""
    width = 128 * trips
    src = pipeline_kernel(tile_m=tile_m, width=width, drain=MAT_SCRATCH, k=k)
    # The loops carry a Mat scratch instead of the output tensor; store it at the end.
    src = src.replace("init_values=(out,)", "init_values=(scr,)")
    src = src.replace("        for j, (o1,)",
                      f"        scr = pl.tile.create([{tile_m}, {width}], dtype=pl.{scratch_dtype}, "
                      "target_memory=pl.Mem.Mat)\n"
                      "        for j, (o1,)")
    src = src.replace("        return o5\n", "        res = pl.store(o5, [0, 0], out)\n        return res\n")
    src = src.replace(f"out: pl.Out[pl.Tensor[[{4 * tile_m}, {width}], pl.FP32]]) -> pl.Tensor[[{4 * tile_m}, {width}], pl.FP32]",
                      f"out: pl.Out[pl.Tensor[[{tile_m}, {width}], pl.FP32]]) -> pl.Tensor[[{tile_m}, {width}], pl.FP32]")
    return src


@pytest.mark.parametrize("tile_m,trips,expect", [(16, 8, 0), (32, 8, 0), (64, 4, 0), (64, 8, 1)])
def test_applies_path_specific_mat_scratch_profitability(tile_m, trips, expect):
    """Mat scratch needs T >= 8 and an accumulator of at least L0C/4 (32 KiB)."""
    _, out = run(scratch_kernel(tile_m, trips))
    assert len(marked(out)) == expect


# ---- rejections ------------------------------------------------------------------------------

def test_rejects_loop_carried_operand():
    src = pipeline_kernel()
    src = src.replace("init_values=(o1,)", "init_values=(o1, ql)").replace(
        "for n, (o2,)", "for n, (o2, qc)").replace("pl.matmul(ql, br)", "pl.matmul(qc, br)").replace(
        "o4 = pl.yield_(o3)", "o4, q4 = pl.yield_(o3, qc)")
    _, out = run(src)
    assert not marked(out)


def test_rejects_non_canonical_assemble_target():
    """The assemble writes a fresh tile, not the carried scratch."""
    src = scratch_kernel(64, 8).replace(
        "                o3 = pl.tile.assemble(o2, c, [0, n])\n",
        "                fresh = pl.tile.create([64, 1024], dtype=pl.FP32, target_memory=pl.Mem.Mat)\n"
        "                o3 = pl.tile.assemble(fresh, c, [0, n])\n")
    _, out = run(src)
    assert not marked(out)


def test_rejects_when_other_acc_values_exhaust_l0c():
    # 8 KiB candidate, 120 KiB of other Acc: 128 + 8 > 128 KiB.
    extra = "        side = pl.tile.create([240, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
    _, out = run(pipeline_kernel(before=extra))
    assert not marked(out)


@pytest.mark.parametrize("shape,expect", [((112, 256), 1), ((128, 240), 0)])
def test_pipeline_replicated_non_cube_acc_counts_per_stage(shape, expect):
    """A non-MAD Acc defined in a stage-2 pipeline is replicated: it counts twice."""
    rows, cols = shape
    staged = ("        for s, (t0,) in pl.pipeline(0, 2, 1, stage=2, init_values=(out,)):\n"
              f"            st = pl.tile.create([{rows}, {cols}], dtype=pl.BF16, target_memory=pl.Mem.Acc)\n"
              "            t1 = pl.yield_(t0)\n")
    src = pipeline_kernel(before=staged)
    _, out = run(src)
    assert len(marked(out)) == expect


def test_rejects_other_acc_definition_in_the_body():
    extra = "                side = pl.tile.create([16, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
    _, out = run(pipeline_kernel(inner_extra=extra))
    assert not marked(out)


def test_rejects_additional_store():
    extra = "                o2b = pl.store(c, [0, 0], o2)\n"
    src = pipeline_kernel(inner_extra=extra).replace("o3 = pl.store(c, [j * 16, n], o2)",
                                                     "o3 = pl.store(c, [j * 16, n], o2b)")
    _, out = run(src)
    assert not marked(out)


def test_rejects_gemv_side_accumulator():
    """Another accumulator read in the body (a side matmul_acc chain) disqualifies the loop."""
    before = "        side = pl.tile.create([16, 128], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
    extra = "                side2 = pl.matmul_acc(side, ql, br)\n"
    _, out = run(pipeline_kernel(before=before, inner_extra=extra))
    assert not marked(out)


def test_rejects_two_matmuls_in_one_body():
    extra = "                c2 = pl.matmul(ql, br)\n"
    _, out = run(pipeline_kernel(inner_extra=extra))
    assert not marked(out)


def test_recogniser_output_round_trips_and_equals_hand_marked_loop():
    _, out = run(pipeline_kernel())
    expected = pipeline_kernel().replace(
        "pl.pipeline(0, 512, 128, stage=2, init_values=(o1,))",
        'pl.pipeline(0, 512, 128, stage=2, init_values=(o1,), '
        'attrs={"pipeline_overlap_stores": False, "pipeline_double_buffer_c": True})')
    assert_structural_equal(out, pl.parse_program(expected))
