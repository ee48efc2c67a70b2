"""Pass-level conformance with PyPTO on its own dumps (data/pypto-oracle/dumps/README.md).

For every oracle folder and every mirrored memory pass, PyPTO's input file is parsed, the
ptoc pass runs under the same planner and dbC flag (the folder name says which), and the
result must be structurally equal to PyPTO's output file. Structural equality ignores
variable names, so the printed text is compared as well (the MemRef names ``mem_acc_10``
etc. decide AllocateMemoryAddr's order, and must match PyPTO's numbering exactly).

Deliberate differences: none. The PTOAS folder has no MemoryReuse/AllocateMemoryAddr files
(PyPTO skips both under PTOAS), so only the earlier passes are compared there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ptoc.ir import assert_structural_equal
from ptoc.language import parse_program
from ptoc.passes import MemoryPlanner, PassContext
from ptoc.passes.allocate_memory_addr import allocate_memory_addr
from ptoc.passes.infer_tile_memory_space import infer_tile_memory_space
from ptoc.passes.init_mem_ref import init_mem_ref
from ptoc.passes.materialize_semantic_aliases import materialize_semantic_aliases
from ptoc.passes.memory_reuse import memory_reuse
from oracle_data import ORACLE_ROOT, pypto_exact_pipeline

DUMPS = (ORACLE_ROOT / "dumps")
FOLDERS = sorted(p.name for p in DUMPS.iterdir() if p.is_dir()) if DUMPS.is_dir() else []

PASSES = {
    "InferTileMemorySpace": (infer_tile_memory_space, 17, 18),
    "InitMemRef": (init_mem_ref, 31, 32),
    "MaterializeSemanticAliases": (materialize_semantic_aliases, 32, 33),
    "MemoryReuse": (memory_reuse, 33, 34),
    "AllocateMemoryAddr": (allocate_memory_addr, 34, 35),
}

pytestmark = pytest.mark.skipif(not FOLDERS, reason="PyPTO oracle dumps not available")


def _context(folder: str) -> PassContext:
    planner = MemoryPlanner.PTOAS if folder.endswith("ptoas") else MemoryPlanner.PYPTO
    return PassContext(memory_planner=planner,
                       enable_pypto_l0c_double_buffer=folder.endswith("dbc_on"))


def _dump(folder: str, number: int) -> Path | None:
    found = sorted((DUMPS / folder).glob(f"{number:02d}_after_*.py"))
    return found[0] if found else None


def _body_lines(text: str) -> list[str]:
    """The printed program below the header, with the printer's ``self, `` difference removed."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("@pl.program"))
    return [line.replace("(self, ", "(") for line in lines[start:]]


CASES = [(folder, name) for folder in FOLDERS for name in PASSES]


@pytest.mark.parametrize("folder,pass_name", CASES)
def test_pass_matches_pypto_dump(folder, pass_name):
    factory, before_no, after_no = PASSES[pass_name]
    before, after = _dump(folder, before_no), _dump(folder, after_no)
    if before is None or after is None or pass_name not in after.name:
        pytest.skip(f"PyPTO does not run {pass_name} for {folder}")
    ctx = _context(folder)
    with ctx:
        out = factory()(parse_program(before.read_text()))
    expected_text = after.read_text()
    assert_structural_equal(out, parse_program(expected_text))
    assert _body_lines(out.as_python()) == _body_lines(expected_text)
    assert not [d for d in ctx.diagnostics if d.code in ("PH-MR-001", "W-MR-001")]


@pytest.mark.parametrize("folder", [f for f in FOLDERS if not f.endswith("ptoas")])
def test_memory_chain_matches_pypto(folder):
    """InitMemRef -> MaterializeSemanticAliases -> MemoryReuse -> AllocateMemoryAddr, 31 -> 35."""
    with _context(folder):
        program = parse_program(_dump(folder, 31).read_text())
        for factory in (init_mem_ref, materialize_semantic_aliases, memory_reuse,
                        allocate_memory_addr):
            program = factory()(program)
    assert_structural_equal(program, parse_program(_dump(folder, 35).read_text()))


def test_ptoas_folder_keeps_two_distinct_accumulators():
    """Under PTOAS nothing merges the dbC pair: two Acc allocations survive InitMemRef/MSA."""
    folder = "matmul_256x64x256_bf16_ptoas"
    if folder not in FOLDERS:
        pytest.skip("folder missing")
    with _context(folder):
        program = parse_program(_dump(folder, 31).read_text())
        program = materialize_semantic_aliases()(init_mem_ref()(program))
    text = program.as_python()
    assert text.count("pl.tile.alloc(pl.Mem.Acc, 65536)") == 2


@pytest.mark.parametrize("folder", FOLDERS)
def test_default_pipeline_from_autotile_input_matches_pypto(folder):
    """The whole default pipeline (AutoTileMatmulL0 ... AllocateMemoryAddr) on PyPTO's
    AutoTile input gives PyPTO's final kernel body.

    Deliberate differences: the kernel's function type (PyPTO's ExpandMixedKernel renames
    it AIC) and its return statement (PyPTO's NormalizeReturnOrder returns the Out
    parameter) come from passes ptoc does not mirror, so only the statements before the
    return are compared. Under PTOAS the last mirrored dump is MaterializeSemanticAliases.
    """
    import dataclasses

    from ptoc.passes import default_pipeline_entries

    names = {e.name for e in default_pipeline_entries()}
    if not {"AutoTileMatmulL0", "LowerPipelineLoops", "CanonicalizeIOOrder"} <= names:
        pytest.skip("the tiling passes are not registered")
    last = 33 if folder.endswith("ptoas") else 35
    with _context(folder) as ctx:
        out = pypto_exact_pipeline().run_passes(parse_program(_dump(folder, 15).read_text()),
                                                write_report=False)
    expected = parse_program(_dump(folder, last).read_text())

    def body_without_return(program):
        body = program.get_function("kernel").body
        return dataclasses.replace(body, stmts=body.stmts[:-1])

    assert_structural_equal(body_without_return(out), body_without_return(expected),
                            enable_auto_mapping=True)
    assert not [d for d in ctx.diagnostics if d.code in ("PH-MR-001", "W-MR-001")]
