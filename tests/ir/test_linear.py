"""Linear forms of index expressions: the size of a slice window ``stop - start`` folds to a
constant exactly when the two ends differ by a constant, whatever the spelling."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from ptoc.dtypes import DataType
from ptoc.ir.linear import constant_difference, linear_form
from ptoc.ir.nodes import BinOp, ConstFloat, ConstInt, UnaryOp, Var
from ptoc.ir.types import ScalarType

I = Var("i", ScalarType(DataType.INDEX))
J = Var("j", ScalarType(DataType.INDEX))


def c(v: int) -> ConstInt:
    return ConstInt(v, DataType.INDEX)


def test_product_by_a_constant_distributes():
    # (i + 1) * 32 - i * 32 == 32
    assert constant_difference(BinOp("*", BinOp("+", I, c(1)), c(32)), BinOp("*", I, c(32))) == 32
    # 32 * i + 32 - i * 32 == 32 (constant on either side of the product)
    assert constant_difference(BinOp("+", BinOp("*", c(32), I), c(32)),
                               BinOp("*", I, c(32))) == 32


def test_negation_and_python_ints():
    assert constant_difference(BinOp("-", c(8), UnaryOp("-", I)), I) == 8
    assert constant_difference(96, 32) == 64


def test_non_linear_subterms_compare_structurally():
    half = BinOp("//", I, c(2))
    half_again = BinOp("//", I, c(2))  # a different node, structurally equal
    assert constant_difference(BinOp("+", BinOp("*", half, c(8)), c(8)),
                               BinOp("*", half_again, c(8))) == 8
    assert constant_difference(BinOp("+", BinOp("*", I, J), c(4)), BinOp("*", I, J)) == 4


def test_different_variables_or_coefficients_do_not_fold():
    assert constant_difference(BinOp("+", J, c(4)), I) is None
    assert constant_difference(BinOp("*", I, c(33)), BinOp("*", I, c(32))) is None
    assert constant_difference(BinOp("//", BinOp("+", I, c(64)), c(2)),
                               BinOp("//", I, c(2))) is None  # not linear: (i+64)//2 - i//2


def test_definitions_expand_bound_variables():
    r0 = Var("r0", ScalarType(DataType.INDEX))
    defs = {r0: BinOp("*", I, c(64))}
    stop = BinOp("*", BinOp("+", I, c(1)), c(64))
    assert constant_difference(stop, r0, defs) == 64
    assert constant_difference(stop, r0) is None


def test_floats_are_not_index_expressions():
    assert linear_form(ConstFloat(1.0, DataType.FP32)) is None
    assert linear_form(True) is None


_atoms = st.sampled_from([I, J])


def _exprs():
    leaf = st.one_of(_atoms, st.integers(-50, 50).map(c))
    return st.recursive(leaf, lambda sub: st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "//"]), sub, sub).map(
            lambda t: BinOp(t[0], t[1], t[2])),
        sub.map(lambda e: UnaryOp("-", e))), max_leaves=8)


def _evaluate(e, env):
    if isinstance(e, ConstInt):
        return e.value
    if isinstance(e, Var):
        return env[e]
    if isinstance(e, UnaryOp):
        return -_evaluate(e.operand, env)
    a, b = _evaluate(e.lhs, env), _evaluate(e.rhs, env)
    if e.op == "//":
        return a // b if b else 0  # consistent: the same node evaluates the same
    return {"+": a + b, "-": a - b, "*": a * b}[e.op]


@settings(max_examples=300, deadline=None)
@given(start=_exprs(), stop=_exprs(),
       points=st.lists(st.tuples(st.integers(-20, 20), st.integers(-20, 20)),
                       min_size=4, max_size=4))
def test_a_folded_difference_holds_at_every_point(start, stop, points):
    """Never a wrong size: when the difference folds, stop - start equals it for every value
    of the loop variables."""
    size = constant_difference(stop, start)
    if size is None:
        return
    for i, j in points:
        env = {I: i, J: j}
        assert _evaluate(stop, env) - _evaluate(start, env) == size


@settings(max_examples=200, deadline=None)
@given(start=_exprs(), size=st.integers(1, 200))
def test_start_plus_a_size_always_folds(start, size):
    assert constant_difference(BinOp("+", start, c(size)), start) == size
    assert constant_difference(BinOp("+", c(size), start), start) == size
