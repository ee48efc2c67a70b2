"""PyPTO forms of @pl.jit code: literal scalar arguments, a name_hint equal to the jit name."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.dtypes import FunctionType
from ptoc.errors import ParseError, PtocError
from ptoc.runtime import RunConfig

from jit_forms import (
    calls_vector_kernel, entry_calls_entry, fractional_count, from_signature, hand_scoped,
    host_entry, host_to_a_rank, literal_scalars, same_name, shift, shift_then_halve, via_opaque,
)


@pytest.fixture
def a():
    return np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)


def test_literal_scalar_arguments_take_the_parameter_dtype(a):
    out = np.zeros_like(a)
    literal_scalars(a, out)
    np.testing.assert_allclose(out, a + 3.5, rtol=1e-6)
    program = literal_scalars.specialize(a, out)
    assert [f.name for f in program.functions] == ["add_scalar", "literal_scalars"]


@pytest.mark.parametrize("kernel, match", [
    (fractional_count, "'n' is INT32 but 2.5 is not a whole number"),
    (host_to_a_rank, "device=.*single chip"),
    (entry_calls_entry, "only a @pl.jit.host entry calls other entries"),
])
def test_parse_errors_of_jit_calls(kernel, match, a):
    with pytest.raises(ParseError, match=match):
        kernel(a, np.zeros_like(a))


def test_name_hint_equal_to_the_jit_name(a):
    out = np.zeros_like(a)
    same_name(a, out)
    np.testing.assert_allclose(out, a * 3.0, rtol=1e-6)
    assert [f.name for f in same_name.lower(a, out).functions] == ["same_name_0",
                                                                          "same_name"]


def test_inline_helpers_are_spliced_into_the_entry(a):
    out = np.zeros_like(a)
    shift_then_halve(a, out)
    np.testing.assert_allclose(out, (a - 0.5) * 0.5, rtol=1e-6)
    program = shift_then_halve.specialize(a, out)
    assert [(f.name, f.func_type) for f in program.functions] == [
        ("shift", FunctionType.Inline), ("halve", FunctionType.Inline),
        ("shift_then_halve", FunctionType.Orchestration)]
    lowered = shift_then_halve.lower(a, out)
    assert FunctionType.Inline not in {f.func_type for f in lowered.functions}
    assert len(lowered.functions) == 3  # the entry and one kernel per spliced pl.at


def test_opaque_sub_function_holds_a_loop_of_scopes(a):
    out = np.zeros_like(a)
    via_opaque(a, out)
    np.testing.assert_allclose(out, a + 2.0, rtol=1e-6)
    assert via_opaque.specialize(a, out).functions["rows_twice"].func_type is FunctionType.Opaque


def test_host_entry_runs_the_chip_entry_it_calls(a):
    out = np.zeros_like(a)
    host_entry(a, out)
    np.testing.assert_allclose(out, a + 2.0, rtol=1e-6)
    host = host_entry.specialize(a, out).functions["host_entry"]
    assert host.attrs == {"level": "HOST", "role": "Orchestrator"}


def test_incore_level_is_recorded(a):
    out = np.zeros_like(a)
    calls_vector_kernel(a, out)
    np.testing.assert_allclose(out, -a)
    kernel = calls_vector_kernel.specialize(a, out).functions["vector_kernel"]
    assert kernel.func_type is FunctionType.InCore and kernel.attrs == {"level": "AIV"}


@pytest.mark.parametrize("decorate, match", [
    (lambda f: pl.jit.opaque(auto_scope=False)(f), "does not take auto_scope="),
    (lambda f: pl.jit.incore(auto_scope=False)(f), "does not take auto_scope="),
    (lambda f: pl.jit.inline(level=pl.Level.AIV)(f), "does not take level="),
    (lambda f: pl.jit.incore(level="AIV")(f), "takes a pl.Level"),
])
def test_options_a_kind_does_not_take_are_type_errors(decorate, match):
    with pytest.raises(TypeError, match=match) as info:
        decorate(lambda a: a)
    assert isinstance(info.value, PtocError)


def test_extern_kernels_are_refused():
    with pytest.raises(PtocError, match="hand-written C.. kernel"):
        pl.jit.extern(source="k.cpp", core_type="aiv")(lambda a: a)


def test_calling_a_sub_function_directly_says_how_to_run_it(a):
    with pytest.raises(PtocError, match="runs when a @pl.jit entry calls it"):
        shift(a, np.zeros_like(a))


def test_save_kernels_dir_and_codegen_only_apply_to_jit_calls(a, tmp_path):
    out = np.zeros_like(a)
    compiled = via_opaque.compile(a, out, config=RunConfig(save_kernels_dir=str(tmp_path / "k")))
    assert compiled == tmp_path / "k" and (tmp_path / "k" / "ptoc_manifest.json").is_file()
    assert via_opaque(a, out, config=RunConfig(codegen_only=True)) is None
    assert not out.any(), "codegen_only compiles and does not run"
    via_opaque(a, out, config=RunConfig(save_kernels_dir=str(tmp_path / "k")))
    np.testing.assert_allclose(out, a + 2.0, rtol=1e-6)


def test_auto_scope_false_lets_the_body_place_its_scope(a):
    out = np.zeros_like(a)
    hand_scoped(a, out)
    np.testing.assert_allclose(out, a + 5.0, rtol=1e-6)
    assert hand_scoped.specialize(a, out).functions["hand_scoped"].attrs == {"auto_scope": False}


def test_compile_with_no_arguments_reads_the_signature(a):
    compiled = from_signature.compile()
    assert compiled.param_names == ["a", "out"] and compiled.output_indices == [1]
    assert compiled.platform == "a2a3sim"
    out = np.zeros_like(a)
    compiled(a, out)
    np.testing.assert_allclose(out, a + 0.25, rtol=1e-6)
    with pytest.raises(ParseError, match=r"pl.Tensor\[...\] needs a shape and a dtype"):
        shift_then_halve.compile()
