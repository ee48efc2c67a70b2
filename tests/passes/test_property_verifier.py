"""PyPTO's property-verification API (IRPropertySet, verify_properties, the registry) on
ptoc's IR verifier and property checkers: a valid program passes, a broken one is reported,
and a property ptoc cannot check is an error rather than a pass."""

from __future__ import annotations

from dataclasses import replace

import pytest

import ptoc.language as pl
from ptoc import passes
from ptoc.errors import PassError
from ptoc.ir.nodes import AssignStmt, SeqStmts
from ptoc.passes import IRProperty, IRPropertySet, PropertyVerifierRegistry, verify_properties
from ptoc.passes.infer_tile_memory_space import infer_tile_memory_space

SOURCE = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.tile.create([16, 16], dtype=pl.FP32)
        u = pl.load(a, [0, 0], [16, 16])
        v = pl.add(u, u)
        out = pl.store(v, [0, 0], out)
        return out
"""


def _props(*names) -> IRPropertySet:
    props = IRPropertySet()
    for name in names:
        props.insert(getattr(passes.IRProperty, name))
    return props


def test_property_set_has_pypto_set_operations():
    a, b = _props("SSAForm", "TypeChecked"), _props("TypeChecked", "UseAfterDef")
    assert a.contains(IRProperty.SSAForm) and IRProperty.TypeChecked in a and len(a) == 2
    assert a.union_with(b).to_list() == [IRProperty.SSAForm, IRProperty.TypeChecked,
                                          IRProperty.UseAfterDef]
    assert a.intersection(b) == _props("TypeChecked") and a.difference(b) == _props("SSAForm")
    assert a.union_with(b).contains_all(a) and not a.contains_all(b)
    a.remove(IRProperty.SSAForm)
    assert a == _props("TypeChecked") and not a.empty() and IRPropertySet().empty()
    with pytest.raises(TypeError):
        hash(a)


def test_a_valid_program_has_the_verifier_properties():
    program = pl.parse_program(SOURCE)
    props = _props("SSAForm", "UseAfterDef", "TypeChecked")
    assert PropertyVerifierRegistry.verify(props, program) == []
    verify_properties(props, program, "after parse")
    PropertyVerifierRegistry.verify_or_throw(props, program)


def test_a_use_before_its_definition_is_reported():
    program = pl.parse_program(SOURCE)
    fn = program.functions["k"]
    stmts = list(fn.body.stmts)
    stmts[1], stmts[2] = stmts[2], stmts[1]          # v = add(u, u) before u = load(...)
    broken = replace(program, functions=(replace(fn, body=SeqStmts(tuple(stmts))),))
    found = PropertyVerifierRegistry.verify(_props("UseAfterDef"), broken)
    assert [d.severity for d in found] == [passes.DiagnosticSeverity.Error]
    assert "'u'" in found[0].message
    with pytest.raises(PassError, match="my check: IR property check failed"):
        verify_properties(_props("UseAfterDef"), broken, "my check")
    assert PropertyVerifierRegistry.generate_report(found).startswith("[error IRVerifier]")


def test_a_property_with_a_checker_is_checked_on_the_ir():
    program = pl.parse_program(SOURCE)            # the create has no memory space yet
    assert isinstance(program.functions["k"].body.stmts[0], AssignStmt)
    assert [d.code for d in PropertyVerifierRegistry.verify(_props("MemoryInferred"), program)] \
        == ["MemoryInferred"]
    inferred = infer_tile_memory_space()(program)
    assert PropertyVerifierRegistry.verify(_props("MemoryInferred"), inferred) == []


def test_a_property_ptoc_cannot_check_is_an_error_not_a_pass():
    with pytest.raises(PassError, match="cannot verify the IR property L0Tiled"):
        PropertyVerifierRegistry.verify(_props("L0Tiled"), pl.parse_program(SOURCE))
