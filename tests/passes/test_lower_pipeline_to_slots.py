"""LowerPipelineToSlots (PTOAS only): Before/Expected, the §11.1 eligibility rules, declines,
its place in the pipeline, and a simulated run of a slotted loop."""

import glob
import os

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import ForKind
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import ForStmt, IfStmt
from ptoc.passes import MemoryPlanner, PassContext, PassManager
from ptoc.passes.lower_pipeline_to_slots import lower_pipeline_to_slots
from oracle_data import ORACLE_ROOT

ORACLE = sorted(glob.glob(os.path.join(str(ORACLE_ROOT), "dumps", "*", "")))

SIG = ("x: pl.Tensor[[128, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]]"
       ") -> pl.Tensor[[128, 64], pl.FP32]")


def program(body: str, with_main: bool = False) -> str:
    src = ("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.InCore)\n"
           f"    def k(self, {SIG}:\n" + body)
    if with_main:
        src += ("\n    @pl.function(type=pl.FunctionType.Orchestration)\n"
                f"    def main(self, {SIG}:\n"
                "        y = self.k(x, y)\n        return y\n")
    return src


def slots(src: str, target: str = "a2a3"):
    with PassContext(memory_planner=MemoryPlanner.PTOAS, target=target):
        return lower_pipeline_to_slots()(pl.parse_program(src))


def unchanged(src: str) -> None:
    before = pl.parse_program(src)
    assert_structural_equal(slots(src), before)


def loop_of(prog) -> ForStmt:
    return next(s for s in prog.get_function("k").body.stmts if isinstance(s, ForStmt))


PIPE = """\
        for i, (o,) in pl.pipeline({start}, 8, {step}, stage={F}, init_values=(y,)):
            t = pl.load(x, [i * 16, 0], [16, 64], target_memory=pl.Mem.Vec)
            e = pl.exp(t)
            o2 = pl.store(e, [i * 16, 0], o)
            o3 = pl.yield_(o2)
        return o3
"""


def pipe(start=0, step=1, F=2) -> str:
    return program(PIPE.format(start=start, step=step, F=F))


def test_two_slots_before_expected():
    expected = program("""\
        for i, (o,) in pl.range(0, 8, 1, init_values=(y,)):
            if i % 2 == 0:
                t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 64], [16, 64], target_memory=pl.Mem.Vec, attrs={"pipeline_slot": "0/2"})
                e: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
                o2: pl.Tensor[[128, 64], pl.FP32] = pl.tile.store(e, [i * 16, 0], o)
                o3_s0: pl.Tensor[[128, 64], pl.FP32] = pl.yield_(o2)
            else:
                t_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 64], [16, 64], target_memory=pl.Mem.Vec, attrs={"pipeline_slot": "1/2"})
                e_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t_1)
                o2_1: pl.Tensor[[128, 64], pl.FP32] = pl.tile.store(e_1, [i * 16, 0], o)
                o3_s0: pl.Tensor[[128, 64], pl.FP32] = pl.yield_(o2_1)
            o3: pl.Tensor[[128, 64], pl.FP32] = pl.yield_(o3_s0)
        return o3
""")
    assert_structural_equal(slots(pipe()), pl.parse_program(expected))


def test_demoted_loop_is_sequential_without_pipeline_attrs():
    loop = loop_of(slots(pipe()))
    assert loop.kind is ForKind.Sequential
    assert not any(k.startswith("pipeline_") for k in loop.attrs)


def test_four_slots_make_a_cascade_with_one_arm_per_slot():
    loop = loop_of(slots(pipe(F=4)))
    tags, node = [], loop.body.stmts[0]
    while isinstance(node, IfStmt):
        tags.append(node.then_body.stmts[0].value.attrs["pipeline_slot"])
        tail = node.else_body.stmts[0]
        if not isinstance(tail, IfStmt):
            tags.append(tail.value.attrs["pipeline_slot"])
        node = tail
    assert tags == ["0/4", "1/4", "2/4", "3/4"]


@pytest.mark.parametrize("args", [dict(step=2), dict(start=1), dict(F=17)],
                         ids=["step_not_1", "start_not_multiple_of_F", "F_above_16"])
def test_loops_outside_the_rules_are_declined(args):
    unchanged(pipe(**args))


def test_loop_without_a_load_is_declined():
    unchanged(program("""\
        xt = pl.load(x, [0, 0], [128, 64], target_memory=pl.Mem.Vec)
        for i, (o,) in pl.pipeline(0, 8, 1, stage=2, init_values=(y,)):
            e = pl.exp(xt)
            o2 = pl.store(e, [0, 0], o)
            o3 = pl.yield_(o2)
        return o3
"""))


def test_yielded_load_is_not_a_candidate():
    unchanged(program("""\
        t0 = pl.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        for i, (t,) in pl.pipeline(0, 8, 1, stage=2, init_values=(t0,)):
            t2 = pl.load(x, [i * 16, 0], [16, 64], target_memory=pl.Mem.Vec)
            t3 = pl.yield_(t2)
        y = pl.store(t3, [0, 0], y)
        return y
"""))


def test_load_feeding_a_view_is_not_a_candidate():
    unchanged(program("""\
        for i, (o,) in pl.pipeline(0, 8, 1, stage=2, init_values=(y,)):
            t = pl.load(x, [i * 16, 0], [16, 64], target_memory=pl.Mem.Vec)
            s = pl.slice(t, [8, 64], [0, 0])
            e = pl.exp(s)
            o2 = pl.store(e, [i * 16, 0], o)
            o3 = pl.yield_(o2)
        return o3
"""))


def test_slots_that_do_not_fit_the_space_are_declined():
    # 16 slots of a 128x64 f32 Vec tile (32 KiB each) need 512 KiB; UB holds 184 KiB.
    unchanged(program("""\
        for i, (o,) in pl.pipeline(0, 16, 1, stage=16, init_values=(y,)):
            t = pl.load(x, [0, 0], [128, 64], target_memory=pl.Mem.Vec)
            e = pl.exp(t)
            o2 = pl.store(e, [0, 0], o)
            o3 = pl.yield_(o2)
        return o3
"""))


def test_pipeline_inside_a_declined_pipeline_is_declined():
    unchanged(program("""\
        for j, (p,) in pl.pipeline(0, 2, 2, stage=2, init_values=(y,)):
            for i, (o,) in pl.pipeline(0, 8, 1, stage=2, init_values=(p,)):
                t = pl.load(x, [i * 16, 0], [16, 64], target_memory=pl.Mem.Vec)
                e = pl.exp(t)
                o2 = pl.store(e, [i * 16, 0], o)
                o3 = pl.yield_(o2)
            p2 = pl.yield_(o3)
        return p2
"""))


@pytest.mark.parametrize("folder", ORACLE, ids=lambda p: p.rstrip(os.sep).split(os.sep)[-1])
def test_matches_pypto_on_the_oracle_dumps(folder):
    """PyPTO declines every pipeline loop of the matmul dumps (their operands are extracts)."""
    before = pl.parse_program(open(os.path.join(folder, "27_after_SkewCrossCorePipeline.py")).read())
    expected = pl.parse_program(open(os.path.join(folder, "28_after_LowerPipelineToSlots.py")).read())
    with PassContext(memory_planner=MemoryPlanner.PTOAS):
        assert_structural_equal(lower_pipeline_to_slots()(before), expected)


def test_runs_only_under_ptoas_and_before_lower_pipeline_loops():
    def names(planner):
        with PassContext(memory_planner=planner):
            return [p.name for p in PassManager.get_strategy().passes]
    ptoas = names(MemoryPlanner.PTOAS)
    assert ptoas.index("LowerPipelineToSlots") + 1 == ptoas.index("LowerPipelineLoops")
    assert "LowerPipelineToSlots" not in names(MemoryPlanner.PYPTO)


@pytest.mark.parametrize("F", [2, 3])
def test_slotted_loop_compiles_and_simulates(F, tmp_path):
    src = program(PIPE.format(start=0, step=1, F=F), with_main=True)
    compiled = ir.compile(pl.parse_program(src), output_dir=tmp_path,
                          memory_planner=MemoryPlanner.PTOAS, dump_passes=False)
    pto = compiled.pto_text["k"]
    assert "scf.if" in pto and pto.count("pto.tload") == F
    x = np.random.default_rng(F).standard_normal((128, 64)).astype(np.float32)
    result = compiled.run(x, np.zeros_like(x))
    assert result.races == []
    np.testing.assert_allclose(result.outputs["y"], np.exp(x), rtol=1e-5)


def test_load_already_bound_to_a_memref_is_not_a_candidate():
    unchanged(program("""\
        for i, (o,) in pl.pipeline(0, 8, 1, stage=2, init_values=(y,)):
            t: pl.Tile[[16, 64], pl.FP32, pl.MemRef("mem_vec_0", pl.const(0, pl.INT64), 4096), pl.Mem.Vec] = pl.load(x, [i * 16, 0], [16, 64], target_memory=pl.Mem.Vec)
            e = pl.exp(t)
            o2 = pl.store(e, [i * 16, 0], o)
            o3 = pl.yield_(o2)
        return o3
"""))


def test_dynamic_valid_shape_is_not_a_candidate():
    unchanged(program("""\
        for i, (o,) in pl.pipeline(0, 8, 1, stage=2, init_values=(y,)):
            t = pl.load(x, [i * 16, 0], [16, 64], [16, 64 - i], target_memory=pl.Mem.Vec)
            e = pl.exp(t)
            o2 = pl.store(e, [i * 16, 0], o)
            o3 = pl.yield_(o2)
        return o3
"""))
