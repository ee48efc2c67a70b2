"""MaterializeValidShapeSymbols: a valid_shape-only pl.dynamic symbol becomes the kernel's
leading INDEX parameter and every call passes its argument's valid extent."""

import pytest

import ptoc.language as pl
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
