"""CanonicalizeIOOrder: hand-tagged pipeline bodies reordered; PyPTO conformance."""

import glob
import os

import pytest

import ptoc.language as pl
from ptoc.dtypes import ForKind
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import AssignStmt, ForStmt
from ptoc.passes import PassContext
from ptoc.passes.canonicalize_io_order import canonicalize_io_order
from oracle_data import ORACLE_ROOT

ORACLE = sorted(glob.glob(os.path.join(str(ORACLE_ROOT), "dumps", "*", "")))

HEAD = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
          y: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        am = pl.load(a, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        rb = pl.tile.extract(bm, 0, 0, [64, 64], target_memory=pl.Mem.Right)
"""


LOOP_ATTRS = {"plain": "{}", "no_overlap": '{"pipeline_overlap_stores": False}',
              "dbc": '{"pipeline_overlap_stores": False, "pipeline_double_buffer_c": True}'}


def clone_lines(i, dbc, mm_stage=None):
    """Clone i of a lowered body: L (extract, a load), M (matmul), S (store)."""
    off = f"i + {64 * i}" if i else "i"
    mm_tag = f', attrs={{"pipeline_membership": "0:{i if mm_stage is None else mm_stage}"}}' if dbc else ""
    prev = "yc" if i == 0 else f"s{i - 1}"
    return {
        f"L{i}": f'            la{i} = pl.tile.extract(am, {off}, 0, [64, 64], target_memory=pl.Mem.Left, attrs={{"pipeline_membership": "0:{i}"}})\n',
        f"M{i}": f"            c{i} = pl.tile.matmul(la{i}, rb{mm_tag})\n",
        f"S{i}": f"            s{i} = pl.tile.store(c{i}, [{off}, 0], {prev})\n",
    }


def program(order, policy, stages, *, lowered=True, rotated=False):
    """A lowered loop of ``stages`` clones whose body lines appear in ``order``."""
    lines = {}
    for i in range(stages):
        lines.update(clone_lines(i, policy == "dbc", i % 2 if rotated else None))
    header = (f"pl.pipeline(0, 256, {64 * stages}, stage=1, init_values=(y,), attrs={LOOP_ATTRS[policy]})"
              if lowered else f"pl.range(0, 256, {64 * stages}, init_values=(y,))")
    return (HEAD + f"        for i, (yc,) in {header}:\n" + "".join(lines[k] for k in order)
            + f"            yo = pl.yield_(s{stages - 1})\n        return yo\n")


def run(src):
    with PassContext():
        return canonicalize_io_order()(pl.parse_program(src))


def natural(stages):
    return [f"{x}{i}" for i in range(stages) for x in "LMS"]


def loads(stages):
    return [f"L{i}" for i in range(stages)]


@pytest.mark.parametrize("policy", ["plain", "no_overlap"])
def test_single_accumulator_schedule_is_m0_s0_m1_s1(policy):
    # the stores carry no stage string (their Acc source is untagged), so each store follows
    # its matmul as soon as it is ready, whether or not stores may overlap
    out = run(program(natural(2), policy, 2))
    want = program(loads(2) + ["M0", "S0", "M1", "S1"], policy, 2, lowered=False)
    assert_structural_equal(out, pl.parse_program(want))


def test_loads_hoist_ahead_of_compute_in_later_stages():
    out = run(program(natural(3), "no_overlap", 3))
    want = program(loads(3) + ["M0", "S0", "M1", "S1", "M2", "S2"], "no_overlap", 3, lowered=False)
    assert_structural_equal(out, pl.parse_program(want))


@pytest.mark.parametrize("stages,order", [
    (2, ["M0", "M1", "S0", "S1"]),
    (3, ["M0", "M1", "S0", "S1", "M2", "S2"]),
    (4, ["M0", "M1", "S0", "S1", "M2", "M3", "S2", "S3"]),
])
def test_double_buffer_c_chunks_and_rotates(stages, order):
    out = run(program(natural(stages), "dbc", stages))
    want = program(loads(stages) + order, "dbc", stages, lowered=False, rotated=True)
    assert_structural_equal(out, pl.parse_program(want))
    loop = [s for s in out.functions[0].body.stmts if isinstance(s, ForStmt)][0]
    mm = [s.value.attrs["pipeline_membership"] for s in loop.body.stmts
          if isinstance(s, AssignStmt) and s.value.op == "tile.matmul"]
    extracts = [s.value.attrs["pipeline_membership"] for s in loop.body.stmts
                if isinstance(s, AssignStmt) and s.value.op == "tile.extract"]
    assert sorted(mm) == sorted(f"0:{i % 2}" for i in range(stages)), "accumulators rotate mod 2"
    assert extracts == [f"0:{i}" for i in range(stages)], "operands keep depth F"


def test_leaves_non_pipeline_code_and_demotes_pipelines():
    out = run(program(natural(2), "dbc", 2))
    loop = [s for s in out.functions[0].body.stmts if isinstance(s, ForStmt)][0]
    assert loop.kind is ForKind.Sequential and loop.attrs == {}
    ops = [s.value.op for s in out.functions[0].body.stmts[:3]]
    assert ops == ["tile.load", "tile.load", "tile.extract"]


def test_nested_sequential_loop_uses_enclosing_policy():
    src = HEAD + """        for o, (oc,) in pl.pipeline(0, 1, 1, stage=1, init_values=(y,), attrs={"pipeline_overlap_stores": False}):
            for i, (yc,) in pl.range(0, 256, 128, init_values=(oc,)):
                la0 = pl.tile.extract(am, i, 0, [64, 64], target_memory=pl.Mem.Left, attrs={"pipeline_membership": "0:0"})
                c0 = pl.tile.matmul(la0, rb)
                s0 = pl.tile.store(c0, [i, 0], yc)
                la1 = pl.tile.extract(am, i + 64, 0, [64, 64], target_memory=pl.Mem.Left, attrs={"pipeline_membership": "0:1"})
                c1 = pl.tile.matmul(la1, rb)
                s1 = pl.tile.store(c1, [i + 64, 0], s0)
                r = pl.yield_(s1)
            ro = pl.yield_(r)
        return ro
"""
    out = run(src)
    inner = out.functions[0].body.stmts[-2].body.stmts[0]
    ops = [s.value.op for s in inner.body.stmts if isinstance(s, AssignStmt)]
    assert ops == ["tile.extract", "tile.extract", "tile.matmul", "tile.store", "tile.matmul", "tile.store"]


@pytest.mark.parametrize("folder", ORACLE, ids=lambda p: p.rstrip(os.sep).split(os.sep)[-1])
def test_matches_pypto(folder):
    before = pl.parse_program(open(os.path.join(folder, "29_after_LowerPipelineLoops.py")).read())
    want = pl.parse_program(open(os.path.join(folder, "30_after_CanonicalizeIOOrder.py")).read())
    with PassContext():
        assert_structural_equal(canonicalize_io_order()(before), want)


VEC_HEAD = """import ptoc.language as pl

@pl.program
class V:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[512, 64], pl.FP32], y: pl.Out[pl.Tensor[[512, 64], pl.FP32]]) -> pl.Tensor[[512, 64], pl.FP32]:
"""


def _ops(seq):
    out = []
    for s in seq.stmts:
        if isinstance(s, AssignStmt):
            out.append(s.value.op if hasattr(s.value, "args") else "scalar")
        else:
            out.append(type(s).__name__)
    return out


def test_scalars_lift_loads_hoist_and_the_yield_stays_last():
    src = VEC_HEAD + """        for i, (yc,) in pl.pipeline(0, 512, 128, stage=1, init_values=(y,)):
            t0 = pl.tile.load(x, [i, 0], [64, 64], [64, 64], attrs={"pipeline_membership": "0:0"})
            e0 = pl.tile.exp(t0, attrs={"pipeline_membership": "0:0"})
            s0 = pl.tile.store(e0, [i, 0], yc)
            j = i + 64
            t1 = pl.tile.load(x, [j, 0], [64, 64], [64, 64], attrs={"pipeline_membership": "0:1"})
            e1 = pl.tile.exp(t1, attrs={"pipeline_membership": "0:1"})
            s1 = pl.tile.store(e1, [j, 0], s0)
            r = pl.yield_(s1)
        return r
"""
    loop = run(src).functions[0].body.stmts[0]
    assert _ops(loop.body) == ["scalar", "tile.load", "tile.load", "tile.exp", "tile.store",
                               "tile.exp", "tile.store", "YieldStmt"]


def test_outside_pipelines_nothing_moves():
    src = VEC_HEAD + """        t0 = pl.tile.load(x, [0, 0], [64, 64], [64, 64])
        e0 = pl.tile.exp(t0)
        t1 = pl.tile.load(x, [64, 0], [64, 64], [64, 64])
        y = pl.tile.store(e0, [0, 0], y)
        return y
"""
    before = pl.parse_program(src)
    assert_structural_equal(run(src), before)


def test_non_l0_extract_is_compute_and_nested_pipelines_are_demoted():
    src = VEC_HEAD + """        for o, (oc,) in pl.pipeline(0, 2, 1, stage=1, init_values=(y,)):
            for i, (yc,) in pl.pipeline(0, 512, 128, stage=1, init_values=(oc,)):
                t = pl.tile.load(x, [i, 0], [64, 64], [64, 64], attrs={"pipeline_membership": "0:0"})
                e = pl.tile.exp(t, attrs={"pipeline_membership": "0:0"})
                w = pl.tile.extract(e, 0, 0, [64, 64], target_memory=pl.Mem.Vec, attrs={"pipeline_membership": "0:0"})
                t2 = pl.tile.load(x, [i + 64, 0], [64, 64], [64, 64], attrs={"pipeline_membership": "0:1"})
                s = pl.tile.store(w, [i, 0], yc)
                r = pl.yield_(s)
            ro = pl.yield_(r)
        return ro
"""
    outer = run(src).functions[0].body.stmts[0]
    inner = outer.body.stmts[0]
    assert outer.kind is ForKind.Sequential and inner.kind is ForKind.Sequential
    assert _ops(inner.body) == ["tile.load", "tile.load", "tile.exp", "tile.extract", "tile.store",
                                "YieldStmt"], "a Vec extract stays with compute; loads lift"
