"""PassManager: default-pipeline registry, planner filtering, property checks, dumps, profiles."""

from __future__ import annotations

import json

import pytest

from ptoc.errors import PassError
from ptoc.passes import (
    IRProperty, MemoryPlanner, OptimizationStrategy, Pass, PassContext, PassManager, PIPELINE_ORDER,
    default_pipeline_entries, program_pass, register_default_pass, register_property_checker,
    report_diagnostic,
)
from ptoc.passes import manager as manager_mod
from ptoc.passes import properties as properties_mod
from oracle_data import ORACLE_ROOT


@pytest.fixture
def checkers():
    """Property checkers registered by a test are dropped afterwards."""
    saved = dict(properties_mod._CHECKERS)
    yield properties_mod._CHECKERS
    properties_mod._CHECKERS.clear()
    properties_mod._CHECKERS.update(saved)


@pytest.fixture
def registry():
    """An empty default-pipeline registry for the test, restored afterwards."""
    saved = dict(manager_mod._REGISTRY)
    manager_mod._REGISTRY.clear()
    yield manager_mod._REGISTRY
    manager_mod._REGISTRY.clear()
    manager_mod._REGISTRY.update(saved)


def noop(name, **props):
    """A pass factory that renames nothing and only declares properties."""
    @program_pass(name=name, **props)
    def run(program, ctx):
        return program
    return run


def test_get_strategy_orders_by_pypto_order(registry):
    for name in ("AllocateMemoryAddr", "InitMemRef", "InferTileMemorySpace", "MemoryReuse",
                 "AutoTileMatmulL0", "CanonicalizeIOOrder", "LowerPipelineLoops"):
        register_default_pass(noop(name))
    pm = PassManager.get_strategy(OptimizationStrategy.Default)
    assert pm.get_pass_names() == ["AutoTileMatmulL0", "InferTileMemorySpace", "LowerPipelineLoops",
                                   "CanonicalizeIOOrder", "InitMemRef", "MemoryReuse",
                                   "AllocateMemoryAddr"]
    assert pm.strategy is OptimizationStrategy.Default
    assert [e.name for e in default_pipeline_entries()] == pm.get_pass_names()


@pytest.mark.parametrize("planner, expected", [
    (MemoryPlanner.PYPTO, ["InitMemRef", "MemoryReuse", "AllocateMemoryAddr"]),
    (MemoryPlanner.DSA_RP, ["InitMemRef", "AllocateMemoryAddr"]),
    (MemoryPlanner.PTOAS, ["InitMemRef"]),
])
def test_planner_filters_at_construction(registry, planner, expected):
    for name in ("InitMemRef", "MemoryReuse", "AllocateMemoryAddr"):
        register_default_pass(noop(name))
    with PassContext(memory_planner=planner):
        assert PassManager.get_strategy().get_pass_names() == expected


def test_explicit_planners_and_numeric_order(registry):
    register_default_pass(noop("InitMemRef"))
    register_default_pass(noop("PtoasOnly"), order=PIPELINE_ORDER.index("InitMemRef") * 10 + 1,
                          planners={"PTOAS"})
    register_default_pass(noop("Last"), order=10_000, planners=lambda p: p is not MemoryPlanner.DSA_RP)
    with PassContext(memory_planner="PTOAS"):
        assert PassManager.get_strategy().get_pass_names() == ["InitMemRef", "PtoasOnly", "Last"]
    with PassContext(memory_planner="DSA_RP"):
        assert PassManager.get_strategy().get_pass_names() == ["InitMemRef"]


def test_registry_errors(registry):
    register_default_pass(noop("InitMemRef"))
    with pytest.raises(PassError, match="already registered"):
        register_default_pass(noop("InitMemRef"))
    register_default_pass(noop("InitMemRef"), replace=True)
    with pytest.raises(PassError, match="PIPELINE_ORDER"):
        register_default_pass(noop("MyOwnPass"))
    with pytest.raises(PassError, match="unknown planner"):
        register_default_pass(noop("MemoryReuse"), planners={"FAST"})


def test_register_plain_pass_class(registry):
    class InitMemRef(Pass):
        def run(self, program, ctx):
            return program

    register_default_pass(InitMemRef)
    assert PassManager.get_strategy().get_pass_names() == ["InitMemRef"]


def test_unknown_strategy_and_non_pass():
    with pytest.raises(PassError, match="Default"):
        PassManager.get_strategy("Aggressive")
    with pytest.raises(PassError, match="not a Pass"):
        PassManager([noop("X")])  # the factory, not the pass


def test_planner_mismatch_raises_with_both_names(registry, tiny_program):
    register_default_pass(noop("InitMemRef"))
    with PassContext(memory_planner=MemoryPlanner.PTOAS):
        pm = PassManager.get_strategy()
    with pytest.raises(PassError) as info:
        pm.run_passes(tiny_program)
    assert "PTOAS" in str(info.value) and "PYPTO" in str(info.value)
    with PassContext(memory_planner=MemoryPlanner.PTOAS):
        assert pm.run_passes(tiny_program) is tiny_program


def test_runs_passes_in_order(tiny_program, rename):
    order = []

    def suffix_pass(s):
        @program_pass(name=f"Add{s}")
        def run(program, ctx):
            order.append(s)
            return rename(program, s)
        return run()

    out = PassManager([suffix_pass("A"), suffix_pass("B")]).run_passes(tiny_program)
    assert order == ["A", "B"] and out.name == "TinyAB"


def test_required_property_missing_names_both_passes(tiny_program):
    first = noop("MakeTiles", produced={"TileOpsOnly"})()
    needs = noop("CanonicalizeIOOrder", required={IRProperty.PipelineLoopsLowered, IRProperty.TileOpsOnly})()
    with pytest.raises(PassError) as info:
        PassManager([first, needs]).run_passes(tiny_program)
    text = str(info.value)
    assert "CanonicalizeIOOrder" in text and "MakeTiles" in text and "PipelineLoopsLowered" in text


def test_invalidated_property_names_the_invalidating_pass(tiny_program):
    lower = noop("LowerPipelineLoops", produced={"PipelineLoopsLowered"})()
    breaker = noop("Breaker", invalidated={"PipelineLoopsLowered"})()
    needs = noop("CanonicalizeIOOrder", required={"PipelineLoopsLowered"})()
    with pytest.raises(PassError) as info:
        PassManager([lower, breaker, needs]).run_passes(tiny_program)
    text = str(info.value)
    assert "CanonicalizeIOOrder" in text and "Breaker" in text and "invalidated" in text
    assert "LowerPipelineLoops" in info.value.hint
    # re-establishing it after the breaker makes the pipeline valid
    pm = PassManager([lower, breaker, noop("Again", produced={"PipelineLoopsLowered"})(), needs])
    assert pm.run_passes(tiny_program) is tiny_program
    assert IRProperty.PipelineLoopsLowered in pm.available_properties()


def test_properties_checked_before_any_pass_runs(tiny_program):
    ran = []

    @program_pass(name="First")
    def first(program, ctx):
        ran.append("First")
        return program

    with pytest.raises(PassError, match="AddressesAllocated"):
        PassManager([first(), noop("Codegen", required={"AddressesAllocated"})()]).run_passes(tiny_program)
    assert ran == []


def test_initial_properties(tiny_program):
    needs = noop("NeedsSSA", required={"SSAForm"})()
    assert PassManager([needs]).run_passes(tiny_program) is tiny_program
    with pytest.raises(PassError, match="SSAForm"):
        PassManager([needs], initial_properties=()).run_passes(tiny_program)


def test_checker_decides_unproduced_property(tiny_program, checkers):
    needs = noop("NeedsLowered", required={"PipelineLoopsLowered"})()
    register_property_checker("PipelineLoopsLowered", lambda program: program.name == "Tiny")
    assert PassManager([needs]).run_passes(tiny_program) is tiny_program
    assert needs(tiny_program) is tiny_program
    other = tiny_program.__class__("Other", tiny_program.functions)
    with pytest.raises(PassError, match="NeedsLowered requires PipelineLoopsLowered"):
        needs(other)  # a standalone call is checked on the IR
    with pytest.raises(PassError, match="NeedsLowered requires PipelineLoopsLowered"):
        PassManager([needs]).run_passes(other)


def test_builtin_tile_checkers(tiny_program, make_program):
    """MemoryInferred / MemRefsAssigned are facts about tile types, checked on real IR."""
    needs_space = noop("InitMemRef", required={"MemoryInferred"})()
    assert PassManager([needs_space]).run_passes(tiny_program) is tiny_program  # Vec tile given

    unspaced = make_program(space=None)
    with PassContext(verification_level="NONE"):
        with pytest.raises(PassError, match="InitMemRef requires MemoryInferred"):
            needs_space(unspaced)
    needs_memref = noop("MemoryReuse", required={"MemRefsAssigned"})()
    with pytest.raises(PassError, match="MemoryReuse requires MemRefsAssigned"):
        PassManager([needs_memref]).run_passes(tiny_program)


def test_dump_ir_writes_numbered_files(tmp_path, tiny_program, rename):
    @program_pass(name="AddA")
    def add_a(program, ctx):
        return rename(program, "A")

    @program_pass(name="AddB")
    def add_b(program, ctx):
        return rename(program, "B")

    stale = tmp_path / "passes_dump" / "07_after_Old.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    keep = tmp_path / "passes_dump" / "notes.txt"
    keep.write_text("mine")
    out = PassManager([add_a(), add_b()]).run_passes(tiny_program, dump_ir=True, output_dir=tmp_path)
    dump = tmp_path / "passes_dump"
    assert sorted(p.name for p in dump.iterdir()) == [
        "00_frontend.py", "01_after_AddA.py", "02_after_AddB.py", "notes.txt"]
    assert (dump / "00_frontend.py").read_text() == tiny_program.as_python()
    assert (dump / "01_after_AddA.py").read_text() == rename(tiny_program, "A").as_python()
    assert (dump / "02_after_AddB.py").read_text() == out.as_python()
    assert "class TinyAB" in out.as_python()


def test_dump_dir_from_context(tmp_path, tiny_program):
    with PassContext(dump_dir=tmp_path / "build"):
        PassManager([noop("Nop")()]).run_passes(tiny_program, dump_ir=True)
    assert (tmp_path / "build" / "passes_dump" / "01_after_Nop.py").exists()


def test_dump_ir_without_directory_raises(tiny_program):
    with pytest.raises(PassError, match="output_dir"):
        PassManager([noop("Nop")()]).run_passes(tiny_program, dump_ir=True)


def test_profiling_writes_report(tmp_path, tiny_program):
    pm = PassManager([noop("Alpha")(), noop("Beta")()])
    with PassContext(profiling=True):
        pm.run_passes(tiny_program, output_dir=tmp_path)
    txt = (tmp_path / "report" / "pipeline_profile.txt").read_text()
    data = json.loads((tmp_path / "report" / "pipeline_profile.json").read_text())
    assert "Alpha" in txt and "Beta" in txt and "2 passes" in txt
    assert [p["name"] for p in data["passes"]] == ["Alpha", "Beta"]
    assert data["pass_count"] == 2 and all(p["ms"] >= 0 for p in data["passes"])
    assert pm.last_profile == data


def test_no_profile_without_profiling(tmp_path, tiny_program):
    pm = PassManager([noop("Alpha")()])
    pm.run_passes(tiny_program, output_dir=tmp_path)
    assert not (tmp_path / "report" / "pipeline_profile.txt").exists()
    assert pm.last_profile is None


def test_perf_hints_log_and_summary(tmp_path, tiny_program, capsys):
    @program_pass(name="Hinter")
    def hinter(program, ctx):
        report_diagnostic("PH-AT-007", "K = 40 is not a multiple of 16")
        report_diagnostic("PH-MR-001", "only 1 of 2 buffers fit")
        return program

    # PH001 (the post-pipeline row-width check) would also fire on the tiny program's loads
    with PassContext(disabled_diagnostics={"PH-MR-001", "PH001"}) as ctx:
        PassManager([hinter()]).run_passes(tiny_program, output_dir=tmp_path)
    log = (tmp_path / "report" / "perf_hints.log").read_text().splitlines()
    assert log == ["[perf_hint PH-AT-007] AutoTileMatmulL0: K = 40 is not a multiple of 16"]
    assert [d.code for d in ctx.diagnostics] == ["PH-AT-007"]
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == f"ptoc: 1 perf hint, see {tmp_path / 'report' / 'perf_hints.log'}"


def test_report_can_be_deferred(tmp_path, tiny_program):
    PassManager([noop("Nop")()]).run_passes(tiny_program, output_dir=tmp_path, write_report=False)
    assert not (tmp_path / "report" / "perf_hints.log").exists()


ORACLE = (ORACLE_ROOT
          / "dumps" / "matmul_160x64x160_fp32_dbc_on")


@pytest.mark.skipif(not ORACLE.is_dir(), reason="PyPTO oracle dumps not available")
@pytest.mark.parametrize("dump", ["00_frontend.py", "35_after_AllocateMemoryAddr.py"])
def test_full_run_on_parsed_oracle_program(tmp_path, dump):
    """Real parser, printer, verifier and round trip through a dumping, profiled pipeline."""
    from ptoc.language import parse_program

    program = parse_program((ORACLE / dump).read_text(), filename="program.py")
    names = ["InferTileMemorySpace", "InitMemRef", "AllocateMemoryAddr"]
    passes = [noop(n)() for n in names]
    with PassContext(verification_level="ROUNDTRIP", profiling=True, enable_pypto_l0c_double_buffer=True):
        out = PassManager(passes).run_passes(program, dump_ir=True, output_dir=tmp_path)
    assert out is program
    files = sorted(p.name for p in (tmp_path / "passes_dump").iterdir())
    assert files == ["00_frontend.py"] + [f"{i:02d}_after_{n}.py" for i, n in enumerate(names, 1)]
    for name in files:
        assert (tmp_path / "passes_dump" / name).read_text() == program.as_python()
    assert json.loads((tmp_path / "report" / "pipeline_profile.json").read_text())["pass_count"] == 3
    hints = (tmp_path / "report" / "perf_hints.log").read_text().splitlines()
    assert all(h.startswith("[perf_hint PH001] ") for h in hints)  # the post-pipeline check


def test_tile_checkers_look_inside_loops():
    """The MemRefsAssigned / MemoryInferred checkers find the tiles without a MemRef (memory
    space) when those are defined only inside loop bodies (nested ones included); a function
    once seen to hold is remembered, and that never answers for a different function."""
    import sys
    from pathlib import Path

    from ptoc.ir import nodes
    from ptoc.ir.types import TileType
    from ptoc.ir.visitor import IRMutator
    from ptoc.runtime.compile import lower_ir

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from _programs import direct_store

    lowered = lower_ir(direct_store(160, 64, 160))   # a pipelined grid: tiles in loops

    class _Strip(IRMutator):
        """Drop the MemRef and memory space of the tiles defined at loop depth >= 1."""

        depth = 0

        def mutate_for_stmt(self, node):
            self.depth += 1
            try:
                return super().mutate_for_stmt(node)
            finally:
                self.depth -= 1

        def mutate_type(self, ty):
            if self.depth and isinstance(ty, TileType):
                return nodes.replace(ty, memref=None, memory_space=None)
            return super().mutate_type(ty)

    stripped = _Strip().mutate(lowered)
    assert stripped is not lowered
    for _ in range(2):   # the second round answers from the remembered functions
        assert properties_mod.tiles_have_memref(lowered)
        assert properties_mod.tiles_have_memory_space(lowered)
        assert not properties_mod.tiles_have_memref(stripped)
        assert not properties_mod.tiles_have_memory_space(stripped)
