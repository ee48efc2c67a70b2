"""MaterializeValidShapeSymbols: a valid_shape-only pl.dynamic symbol becomes the kernel's
leading INDEX parameter and every call passes its argument's valid extent."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.ir.printer import format_node
from ptoc.errors import PtocError
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.tasks import materialize_valid_shape_symbols

HEAD = '''import ptoc.language as pl

Q = pl.dynamic("Q")
VALID = pl.dynamic("VALID")

@pl.program
class P:
'''

KERNEL = '''    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, {lead}s: pl.Tensor[[Q, 64], pl.FP32, pl.TensorView(valid_shape=[Q, {slot}], stride=[], layout=pl.TensorLayout.ND)], n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[Q, 64], pl.FP32]]) -> pl.Tensor[[Q, 64], pl.FP32]:
        x = pl.load(s, [0, 0], [16, 64], valid_shape=[16, n])
        o = pl.store(x, [0, 0], out)
        return o
'''

ORCH = '''    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        v = pl.slice(x, [16, 64], [0, 0], valid_shape=[16, {ext}])
        out = self.kern({lead}v, n, out)
        return out
'''


def program(lead_param="", slot="VALID", lead_arg="", ext="n"):
    return pl.parse_program(HEAD + KERNEL.format(lead=lead_param, slot=slot)
                            + ORCH.format(lead=lead_arg, ext=ext))


def run(prog):
    with PassContext():
        return materialize_valid_shape_symbols()(prog)


def test_the_symbol_leads_the_signature_and_each_call_passes_the_extent():
    after = run(program())
    expected = program(lead_param="VALID: pl.Scalar[pl.INDEX], ", lead_arg="n, ")
    assert_structural_equal(after, expected)
    kern = after.get_function("kern")
    assert kern.params[0].var is kern.params[1].var.type.view.valid_shape[1], \
        "the symbol itself is the parameter, so the annotation binds to it"
    assert 'VALID = pl.dynamic("VALID")' in after.as_python()


def test_a_static_extent_is_passed_as_a_constant():
    after = run(program(ext="48"))
    expected = program(lead_param="VALID: pl.Scalar[pl.INDEX], ", lead_arg="48, ", ext="48")
    assert_structural_equal(after, expected)


def test_a_symbol_bound_by_a_physical_dim_or_nothing_to_do_is_unchanged():
    prog = program(slot="Q")      # Q is a physical dim of s: the kernel binds it itself
    assert run(prog) is prog


def test_a_compound_slot_is_refused():
    with pytest.raises(PtocError, match=r"cannot be inverted to VALID"):
        run(program(slot="VALID * 2"))


TWO_SLOTS = HEAD + '''    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, s: pl.Tensor[[16, 64], pl.FP32, pl.TensorView(valid_shape=[16, VALID], stride=[], layout=pl.TensorLayout.ND)], t: pl.Tensor[[16, 64], pl.FP32, pl.TensorView(valid_shape=[16, VALID], stride=[], layout=pl.TensorLayout.ND)], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        x = pl.load(s, [0, 0], [16, 64])
        y = pl.load(t, [0, 0], [16, 64])
        o = pl.store(pl.add(x, y), [0, 0], out)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        v = pl.slice(x, [16, 64], [0, 0], valid_shape=[16, {first}])
        w = pl.slice(x, [16, 64], [0, 0], valid_shape=[16, {second}])
        out = self.kern(v, w, out)
        return out
'''


@pytest.mark.parametrize("first, second", [("n", "m"), ("48", "32"), ("n", "32")])
def test_one_symbol_given_two_different_extents_is_refused_naming_both(first, second):
    prog = pl.parse_program(TWO_SLOTS.format(first=first, second=second))
    with pytest.raises(PtocError, match=rf"symbol VALID is the valid_shape of parameter 's' axis "
                                        rf"1 and of 't' axis 1, but the arguments give it "
                                        rf"different extents \({first} and {second}\)"):
        run(prog)


@pytest.mark.parametrize("extent", ["n", "48"])
def test_one_symbol_given_the_same_extent_twice_is_passed_once(extent):
    after = run(pl.parse_program(TWO_SLOTS.format(first=extent, second=extent)))
    call = after.get_function("main").body.stmts[2].value
    assert len(call.args) == 4 and format_node(call.args[0]) == extent


def test_agreeing_extents_run_over_the_valid_part_only():
    compiled = ir.compile(pl.parse_program(TWO_SLOTS.format(first="n", second="n")))
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    out = np.full((16, 64), -1.0, np.float32)
    compiled(x, 5, 5, out)
    np.testing.assert_array_equal(out[:, :5], 2 * x[:, :5])
    np.testing.assert_array_equal(out[:, 5:], -1.0)      # past the valid region: not written
