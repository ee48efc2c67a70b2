"""The operator page matches the registry, and PyPTO's catalog is fully accounted for: every
catalog name either reaches a registered op or says why ptoc does not run it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import ptoc.language as pl
from ptoc.ops import all_ops, get_op, has_op
from ptoc.ops.catalog import CATALOG, DIRECTIVES, NOT_RUN, NotRunError

ROOT = Path(__file__).resolve().parents[2]


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_ops", ROOT / "docs" / "gen_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("lang", ["en", "zh-cn"])
def test_ops_page_is_up_to_date(lang):
    gen = load_generator()
    page = gen.PAGES[lang]
    assert page.exists(), f"{page} is missing: run python docs/gen_ops.py"
    assert page.read_text(encoding="utf-8") == gen.render(lang), (
        f"{page.relative_to(ROOT)} is out of date with the op registry: run python docs/gen_ops.py")


def test_every_catalog_name_runs_or_says_why_not():
    gen = load_generator()
    names = {n for fam in CATALOG for n in fam.names}
    for name in sorted(names):
        reachable = bool(gen._ops_of(name)) or name in DIRECTIVES
        assert reachable != (name in NOT_RUN), (
            f"catalog name {name!r}: {'both runs and has' if reachable else 'neither runs nor has'}"
            " a NOT_RUN reason")
    assert set(NOT_RUN) <= names, f"NOT_RUN names outside the catalog: {set(NOT_RUN) - names}"


def test_page_counts_every_registered_op():
    gen = load_generator()
    assert f"**{len(all_ops())} registered ops**" in gen.render("en")


@pytest.mark.parametrize("spelling", [f"pl.{ns}{name}(x, x)" for name in sorted(NOT_RUN)
                                      for ns in ("", "tile.", "tensor.")]
                         + ["pl.gather(x, 0, x)", "pl.matmul_mx(x, x, x, x)"])
def test_a_catalog_op_ptoc_does_not_run_says_why(spelling):
    """Every name ptoc does not run, in every namespace, says so and why (never 'unknown')."""
    src = ("import ptoc.language as pl\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.InCore)\n"
           "    def k(self, x: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:\n"
           f"        y = {spelling}\n        return x\n")
    with pytest.raises(NotRunError, match="in PyPTO's operator catalog but ptoc does not run"):
        pl.parse_program(src, "k.py")


def test_registry_pto_and_simulator_agree():
    """Every op's PTO instruction is in the PTO table; every vector instruction has simulator
    semantics and vice versa; tensor ops name existing tile ops."""
    from ptoc.pto.ops import OP_TABLE
    from ptoc.sim.core.vector import VECTOR_OPS

    for op in all_ops():
        if op.pto is not None:
            assert op.pto.opcode in OP_TABLE, op.name
            info = OP_TABLE[op.pto.opcode]
            assert len(op.pto.ins) >= sum(not r.optional for r in info.ins), op.name
        if op.tile_form is not None:
            assert has_op(op.tile_form.op), op.name
        if op.scalar_variant is not None:
            assert has_op(op.scalar_variant), op.name
    vector = {code for code, info in OP_TABLE.items() if info.category == "vector"}
    assert vector == set(VECTOR_OPS)
    assert get_op("tile.add").family == "elementwise"
