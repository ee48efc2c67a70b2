"""pl.parse / pl.loads, module-level @pl.function kernels, ir.serialize / deserialize."""

from __future__ import annotations

import runpy
import textwrap

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import ParseError, PtocError
from ptoc.ir import Function, Program, assert_structural_equal
from ptoc.runtime import RunConfig, run

from program_forms import Quadruple, TwoScales, doubled, jit_calls_inline, scale

FUNCTION = """
@pl.function
def double(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    y: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
    return y
"""

PROGRAM = "import ptoc.language as pl\n" + textwrap.dedent("""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
          ) -> pl.Tensor[[16, 64], pl.FP32]:
        pl.store(pl.exp(pl.load(x, [0, 0], [16, 64])), [0, 0], y)
        return y
""")


def test_parse_reads_a_function_without_an_import_line():
    fn = pl.parse(FUNCTION)
    assert isinstance(fn, Function) and fn.name == "double"
    assert [p.var.name for p in fn.params] == ["x"] and len(fn.return_types) == 1


def test_parse_reads_a_program_and_parse_program_insists_on_one():
    assert isinstance(pl.parse(PROGRAM), Program)
    with pytest.raises(ParseError, match="found @pl.function 'double' but no @pl.program"):
        pl.parse_program(FUNCTION)


@pytest.mark.parametrize("text, phrase", [
    ("x = 1\n", "no @pl.program class or @pl.function found"),
    (FUNCTION + FUNCTION.replace("double", "triple"), "found 2 @pl.program classes / "
                                                      "@pl.function definitions"),
])
def test_parse_errors(text, phrase):
    with pytest.raises(ParseError, match=phrase):
        pl.parse(text)


def test_loads_reads_a_file(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(PROGRAM)
    assert_structural_equal(pl.loads(path), pl.parse(PROGRAM))
    assert isinstance(pl.loads_program(str(path)), Program)
    with pytest.raises(PtocError, match="cannot read .*absent.py"):
        pl.loads(tmp_path / "absent.py")


def test_module_level_function_is_an_ir_function():
    assert isinstance(scale, Function) and scale.name == "scale"


def test_module_level_function_joins_the_program_once_and_runs():
    assert [f.name for f in TwoScales.functions] == ["shift", "scale", "main"]
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    y = np.zeros_like(x)
    run(TwoScales, x, y)
    np.testing.assert_allclose(y, (2 * x + 1) * 2, rtol=1e-6)


@pytest.mark.parametrize("body, phrase", [
    ("    @pl.function(type=pl.FunctionType.InCore)\n"
     "    def scale(self, x: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:\n"
     "        return x\n", "the program already has a function of that name"),
    ("", "two different module-level @pl.functions are named 'scale'"),
])
def test_external_function_name_conflicts(tmp_path, body, phrase):
    source = textwrap.dedent("""
        import ptoc.language as pl
        from program_forms import scale
        other = pl.parse('''
        @pl.function(type=pl.FunctionType.InCore)
        def scale(x: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
            return x
        ''')

        @pl.program
        class Clash:
        BODY
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
                     ) -> pl.Tensor[[16, 64], pl.FP32]:
                y = scale(x, y)
                z = other(x)
                return y
    """).replace("BODY\n", body)
    path = tmp_path / "clash.py"
    path.write_text(source)
    with pytest.raises(ParseError, match=phrase):
        runpy.run_path(str(path))


@pytest.mark.parametrize("node", [TwoScales, pl.parse(FUNCTION)], ids=["program", "function"])
def test_serialize_round_trip(node, tmp_path):
    data = ir.serialize(node)
    assert isinstance(data, bytes)
    assert_structural_equal(ir.deserialize(data), node)
    ir.serialize_to_file(node, tmp_path / "ir.bin")
    assert_structural_equal(ir.deserialize_from_file(tmp_path / "ir.bin"), node)


def test_deserialize_rejects_foreign_bytes():
    with pytest.raises(ParseError, match="were not written by ir.serialize"):
        ir.deserialize(b"\x93\x01\x02")


def test_pl_inline_helpers_are_spliced_at_their_call_sites(tmp_path):
    from ptoc.dtypes import FunctionType

    assert isinstance(doubled, Function) and doubled.func_type is FunctionType.Inline
    assert [f.func_type for f in Quadruple.functions] == [
        FunctionType.Inline, FunctionType.Inline, FunctionType.Orchestration]
    x = np.random.default_rng(3).standard_normal((16, 64)).astype(np.float32)
    y = np.zeros_like(x)
    compiled = run(Quadruple, x, y, config=RunConfig(save_kernels_dir=str(tmp_path)))
    np.testing.assert_allclose(y, 4 * x, rtol=1e-6)
    assert FunctionType.Inline not in {f.func_type for f in compiled.program.functions}


def test_an_inline_helper_is_spliced_into_a_jit_entry_and_its_incore_callee():
    """PyPTO's @pl.inline from a @pl.jit body (was 'name twice is not defined'); on 1-D
    tensors, whose [1, 64] tiles store into a 64-element window."""
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    out, out3 = np.zeros_like(x), np.zeros_like(x)
    jit_calls_inline(x, out, out3)
    np.testing.assert_allclose(out, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(out3, 3 * x, rtol=1e-6)
    program = jit_calls_inline.lower(x, out, out3)
    assert "twice" not in program.functions.keys()  # spliced, no function left behind
