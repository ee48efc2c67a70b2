"""LowerPipelineLoops: Before/Expected programs, PyPTO conformance and the membership tagger."""

import glob
import os

import pytest

from oracle_data import ORACLE_ROOT
import ptoc.language as pl
from ptoc.dtypes import ForKind
from ptoc.errors import PassError
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import AssignStmt, ForStmt, IfStmt
from ptoc.passes import PassContext
from ptoc.passes.lower_pipeline_loops import lower_pipeline_loops

ORACLE = sorted(glob.glob(os.path.join(str(ORACLE_ROOT), "dumps", "*", "")))


def lower(src: str):
    with PassContext():
        return lower_pipeline_loops()(pl.parse_program(src))


def kernel(body: str, params: str = "x: pl.Tensor[[512, 64], pl.FP32], y: pl.Out[pl.Tensor[[512, 64], pl.FP32]]") -> str:
    return ("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def k(self, {params}) -> pl.Tensor[[512, 64], pl.FP32]:\n" + body)


@pytest.mark.parametrize("folder", ORACLE, ids=lambda p: p.rstrip(os.sep).split(os.sep)[-1])
def test_matches_pypto(folder):
    before = pl.parse_program(open(os.path.join(folder, "28_after_LowerPipelineToSlots.py")).read())
    expected = pl.parse_program(open(os.path.join(folder, "29_after_LowerPipelineLoops.py")).read())
    with PassContext():
        assert_structural_equal(lower_pipeline_loops()(before), expected)


def test_static_trip_with_tail():
    before = kernel("""
        for i in pl.pipeline(0, 5, 1, stage=2):
            t = pl.load(x, [i * 64, 0], [64, 64])
            y = pl.store(pl.exp(t), [i * 64, 0], y)
        return y
""")
    expected = kernel("""
        for i, (yc,) in pl.pipeline(0, 4, 2, stage=1, init_values=(y,)):
            t0 = pl.tile.load(x, [i * 64, 0], [64, 64], [64, 64], attrs={"pipeline_membership": "0:0"})
            e0 = pl.tile.exp(t0, attrs={"pipeline_membership": "0:0"})
            s0 = pl.tile.store(e0, [i * 64, 0], yc)
            t1 = pl.tile.load(x, [(i + 1) * 64, 0], [64, 64], [64, 64], attrs={"pipeline_membership": "0:1"})
            e1 = pl.tile.exp(t1, attrs={"pipeline_membership": "0:1"})
            s1 = pl.tile.store(e1, [(i + 1) * 64, 0], s0)
            y_main = pl.yield_(s1)
        t2 = pl.tile.load(x, [4 * 64, 0], [64, 64], [64, 64], attrs={"pipeline_membership": "1:0"})
        e2 = pl.tile.exp(t2, attrs={"pipeline_membership": "1:0"})
        s2 = pl.tile.store(e2, [4 * 64, 0], y_main)
        y_out = s2
        return y_out
""")
    assert_structural_equal(lower(before), pl.parse_program(expected))


def test_fewer_trips_than_stages_is_tail_only_and_zero_trips_demotes():
    out = lower(kernel("""
        for i in pl.pipeline(0, 1, 1, stage=4):
            y = pl.store(pl.load(x, [i, 0], [64, 64]), [i, 0], y)
        for j in pl.pipeline(3, 3, 1, stage=2):
            y = pl.store(pl.load(x, [j, 0], [64, 64]), [j, 0], y)
        return y
"""))
    stmts = out.functions[0].body.stmts
    assert not any(isinstance(s, ForStmt) and s.attrs.get("pipeline_stages") for s in stmts)
    empty = [s for s in stmts if isinstance(s, ForStmt)][0]
    assert empty.kind is ForKind.Sequential and "pipeline_stages" not in empty.attrs
    tags = [s.value.attrs.get("pipeline_membership") for s in stmts
            if isinstance(s, AssignStmt) and getattr(s.value, "op", None) == "tile.load"]
    assert tags == ["0:0"]


def test_dynamic_bounds_cascade():
    out = lower(kernel("""
        for i in pl.pipeline(0, n, 1, stage=3):
            y = pl.store(pl.load(x, [i, 0], [64, 64]), [i, 0], y)
        return y
""", params="x: pl.Tensor[[512, 64], pl.FP32], y: pl.Out[pl.Tensor[[512, 64], pl.FP32]], n: pl.Scalar[pl.INDEX]"))
    stmts = out.functions[0].body.stmts
    assert [type(s).__name__ for s in stmts[:4]] == ["AssignStmt", "ForStmt", "AssignStmt", "IfStmt"]
    main, cascade = stmts[1], stmts[3]
    assert main.attrs["pipeline_stages"] == 1 and main.step.value == 3
    assert main.stop is stmts[0].var
    assert cascade.cond.rhs.value == 1 and isinstance(cascade.else_body.stmts[0], IfStmt)
    inner = cascade.else_body.stmts[0]
    assert inner.cond.rhs.value == 2
    assert inner.else_body.stmts[-1].values == (main.return_vars[0],)
    groups = {s.value.attrs["pipeline_membership"].split(":")[0]
              for body in (main.body, cascade.then_body, inner.then_body) for s in body.stmts
              if isinstance(s, AssignStmt) and s.value.op == "tile.load"}
    assert groups == {"0", "1", "2"}, "main loop and each cascade branch take their own group"
    assert stmts[-1].values[0] is cascade.return_vars[0]


def test_nested_pipelines_lower_inside_out_and_rerun_is_identity():
    src = kernel("""
        for o in pl.pipeline(0, 4, 1, stage=2):
            for i in pl.pipeline(0, 2, 1, stage=2):
                y = pl.store(pl.load(x, [o * 128 + i * 64, 0], [64, 64]), [o * 128 + i * 64, 0], y)
        return y
""")
    out = lower(src)
    outer = [s for s in out.functions[0].body.stmts if isinstance(s, ForStmt)][0]
    inner_loops = [s for s in outer.body.stmts if isinstance(s, ForStmt)]
    assert len(inner_loops) == 2
    tags = [s.value.attrs["pipeline_membership"] for loop in inner_loops for s in loop.body.stmts
            if isinstance(s, AssignStmt) and getattr(s.value, "op", None) == "tile.load"]
    assert tags == ["0:0;1:0", "0:1;1:0", "0:0;1:1", "0:1;1:1"]
    with PassContext():
        again = lower_pipeline_loops()(out)
    assert_structural_equal(again, out)


MEMBERSHIP_SRC = """
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
          y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        am = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        for i in pl.pipeline(0, 2, 1, stage=2, attrs=ATTRS):
            la = pl.move(am, target_memory=pl.Mem.Left)
            rb = pl.move(bm, target_memory=pl.Mem.Right)
            c = pl.matmul(la, rb)
            e = pl.tile.extract(c, 0, 0, [64, 64], target_memory=pl.Mem.Acc)
            y = pl.store(e, [0, 0], y)
        return y
"""


def _tags(program, op):
    loop = [s for s in program.functions[0].body.stmts if isinstance(s, ForStmt)][0]
    return [s.value.attrs.get("pipeline_membership") for s in loop.body.stmts
            if isinstance(s, AssignStmt) and s.value.op == op]


def test_accumulator_membership():
    out = lower(MEMBERSHIP_SRC.replace("ATTRS", "{}"))
    assert _tags(out, "tile.matmul") == [None, None], "cube accumulators are not tagged"
    assert _tags(out, "tile.extract") == ["0:0", "0:1"], "non-MAD Acc producers stay tagged"
    assert _tags(out, "tile.move") == ["0:0", "0:0", "0:1", "0:1"]


def test_double_buffer_c_loop_tags_its_accumulators():
    out = lower(MEMBERSHIP_SRC.replace("ATTRS", '{"pipeline_double_buffer_c": True}'))
    assert _tags(out, "tile.matmul") == ["0:0", "0:1"]


def test_dbc_inside_outer_pipeline_is_flat_depth_two():
    src = MEMBERSHIP_SRC.replace(
        "        for i in pl.pipeline(0, 2, 1, stage=2, attrs=ATTRS):\n",
        "        for o in pl.pipeline(0, 2, 1, stage=2):\n"
        "          for i in pl.pipeline(0, 2, 1, stage=2, attrs={\"pipeline_double_buffer_c\": True}):\n")
    src = src.replace("\n            ", "\n              ")
    out = lower(src)
    outer = [s for s in out.functions[0].body.stmts if isinstance(s, ForStmt)][0]
    mm = [s.value.attrs.get("pipeline_membership") for inner in outer.body.stmts
          if isinstance(inner, ForStmt) for s in inner.body.stmts
          if isinstance(s, AssignStmt) and s.value.op == "tile.matmul"]
    assert mm == ["0:0", "0:1", "0:0", "0:1"], "the enclosing pipeline never tags accumulators"
    moves = [s.value.attrs.get("pipeline_membership") for inner in outer.body.stmts
             if isinstance(inner, ForStmt) for s in inner.body.stmts
             if isinstance(s, AssignStmt) and s.value.op == "tile.move"]
    assert moves[:4] == ["0:0;1:0", "0:0;1:0", "0:1;1:0", "0:1;1:0"]


def test_dynamic_step_is_rejected():
    src = kernel("""
        for i in pl.pipeline(0, 8, 2, stage=2):
            y = pl.store(pl.load(x, [i, 0], [64, 64]), [i, 0], y)
        return y
""")
    program = pl.parse_program(src)
    from dataclasses import replace
    from ptoc.ir.nodes import Var, ConstInt
    from ptoc.ir.types import ScalarType
    from ptoc.dtypes import DataType
    loop = program.functions[0].body.stmts[0]
    bad = replace(loop, step=Var("s", ScalarType(DataType.INDEX)))
    fn = replace(program.functions[0], body=replace(program.functions[0].body,
                                                     stmts=(bad,) + program.functions[0].body.stmts[1:]))
    with PassContext(verification_level="NONE"), pytest.raises(PassError, match="compile-time step"):
        lower_pipeline_loops()(replace(program, functions=(fn,)))


def _loop_shapes(program):
    """(start, stop, step) of each top-level loop and the loads' offsets expressions."""
    from ptoc.ir.printer import format_node

    loops = [(format_node(s.start), format_node(s.stop), format_node(s.step), s.attrs.get("pipeline_stages"))
             for s in program.functions[0].body.stmts if isinstance(s, ForStmt)]
    return loops


def _load_rows(stmts):
    from ptoc.ir.printer import format_node

    return [format_node(s.value.args[1].items[0]) for s in stmts
            if isinstance(s, AssignStmt) and getattr(s.value, "op", None) == "tile.load"]


LOOP_SRC = """
        for i in pl.pipeline({start}, {stop}, 1, stage={stages}):
            y = pl.store(pl.load(x, [i, 0], [64, 64]), [i, 0], y)
        return y
"""


@pytest.mark.parametrize("trips,stages,loops,tail_rows", [
    (8, 4, [("0", "8", "4", 1)], []),                 # clean divide
    (10, 4, [("0", "8", "4", 1)], ["8", "9"]),        # static remainder: two bare tail clones
    (4, 4, [("0", "4", "4", 1)], []),                  # F == trip
])
def test_static_trip_counts(trips, stages, loops, tail_rows):
    out = lower(kernel(LOOP_SRC.format(start=0, stop=trips, stages=stages)))
    assert _loop_shapes(out) == loops
    loop = [s for s in out.functions[0].body.stmts if isinstance(s, ForStmt)][0]
    assert _load_rows(loop.body.stmts) == ["i"] + [f"i + {k}" for k in range(1, stages)]
    assert _load_rows(out.functions[0].body.stmts) == tail_rows


def test_stage_one_is_left_alone():
    src = kernel(LOOP_SRC.format(start=0, stop=8, stages=1))
    before = pl.parse_program(src)
    assert_structural_equal(lower(src), before)


def test_dynamic_non_unit_step_uses_iteration_units():
    from ptoc.ir.printer import format_node

    out = lower(kernel("""
        for i in pl.pipeline(0, n, 2, stage=2):
            y = pl.store(pl.load(x, [i, 0], [64, 64]), [i, 0], y)
        return y
""", params="x: pl.Tensor[[512, 64], pl.FP32], y: pl.Out[pl.Tensor[[512, 64], pl.FP32]], n: pl.Scalar[pl.INDEX]"))
    stmts = out.functions[0].body.stmts
    assert format_node(stmts[0].value) == "0 + (n - 0 + 1) // 2 // 2 * 4"
    assert format_node(stmts[2].value) == "(n - 0 + 1) // 2 - (n - 0 + 1) // 2 // 2 * 2"
    assert stmts[1].step.value == 4
    assert _load_rows(stmts[1].body.stmts) == ["i", "i + 2"]


FIRST_STEP_SRC = """
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16],
          y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        am = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        acc0 = pl.tile.create([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for i, (acc,) in pl.pipeline(0, 2, 1, stage=2, init_values=(acc0,)):
            la = pl.move(am, target_memory=pl.Mem.Left)
            rb = pl.move(bm, target_memory=pl.Mem.Right)
            if i == 0:
                z = pl.tile.create([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
                c1 = pl.tile.matmul_acc(z, la, rb)
                r = pl.yield_(c1)
            else:
                c2 = pl.tile.matmul_acc(acc, la, rb)
                r = pl.yield_(c2)
            nxt = pl.yield_(r)
        y = pl.store(nxt, [0, 0], y)
        return y
"""


def test_a_fresh_accumulator_that_becomes_the_carry_is_not_tagged():
    """The first-step arm's Acc tile is the loop's one carried L0C buffer: a per-stage copy
    could only rejoin it by an Acc -> Acc move, which does not exist (qwen3's K loop)."""
    out = lower(FIRST_STEP_SRC)
    loop = [s for s in out.functions[0].body.stmts if isinstance(s, ForStmt)][0]
    arms = [s.then_body for s in loop.body.stmts if isinstance(s, IfStmt)]
    creates = [s.value.attrs.get("pipeline_membership") for arm in arms for s in arm.stmts
               if isinstance(s, AssignStmt) and s.value.op == "tile.create"]
    assert creates == [None, None]
    assert _tags(out, "tile.move") == ["0:0", "0:0", "0:1", "0:1"], "other tiles stay tagged"
