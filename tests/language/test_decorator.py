"""``@pl.program`` on live Python classes: closure folding from the defining scope."""

import pytest

import ptoc.language as pl
from ptoc.errors import PtocError
from ptoc.ir.nodes import Program
from ptoc.language.roundtrip import roundtrip

M, N = 64, 32


@pl.program
class ModuleLevel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        t = pl.load(x, [0, 0], [M, N])
        y = pl.store(pl.relu(t), [0, 0], y)
        return y


def make_program(rows):
    cols = rows * 2

    @pl.program
    class Inner:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[rows, cols], pl.BF16], y: pl.Out[pl.Tensor[[rows, cols], pl.BF16]]) -> pl.Tensor[[rows, cols], pl.BF16]:
            t = pl.load(x, [0, 0], [rows, cols])
            return pl.store(t, [0, 0], y)

    return Inner


def test_decorator_returns_program_with_folded_shapes():
    assert isinstance(ModuleLevel, Program)
    assert ModuleLevel.functions[0].params[0].var.type.shape == (64, 32)
    roundtrip(ModuleLevel)


def test_closure_locals_of_a_factory_fold():
    p16, p32 = make_program(16), make_program(32)
    assert p16.functions[0].params[0].var.type.shape == (16, 32)
    assert p32.functions[0].params[0].var.type.shape == (32, 64)


def test_kernel_functions_cannot_be_called_from_python():
    with pytest.raises(PtocError, match="only meaningful inside a"):
        pl.load(None, [0, 0], [16, 16])
    with pytest.raises(PtocError, match="pl.tile.matmul"):
        pl.tile.matmul(None, None)


def test_pypto_alias_is_accepted():
    src = "import pypto.language as pypl\n@pypl.program\nclass P:\n" \
          "    @pypl.function(type=pypl.FunctionType.InCore)\n" \
          "    def k(self, x: pypl.Tensor[[16, 16], pypl.FP32]):\n" \
          "        t = pypl.load(x, [0, 0], [16, 16])\n"
    assert pl.parse_program(src).functions[0].name == "k"
