"""PyPTO forms of @pl.jit code: literal scalar arguments, a name_hint equal to the jit name."""

from __future__ import annotations

import numpy as np
import pytest

from ptoc.errors import ParseError

from jit_forms import fractional_count, literal_scalars, same_name


@pytest.fixture
def a():
    return np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)


def test_literal_scalar_arguments_take_the_parameter_dtype(a):
    out = np.zeros_like(a)
    literal_scalars(a, out)
    np.testing.assert_allclose(out, a + 3.5, rtol=1e-6)
    program = literal_scalars.specialize(a, out)
    assert [f.name for f in program.functions] == ["add_scalar", "literal_scalars"]


def test_fractional_literal_for_an_integer_scalar_is_an_error(a):
    with pytest.raises(ParseError, match="'n' is INT32 but 2.5 is not a whole number"):
        fractional_count(a, np.zeros_like(a))


def test_name_hint_equal_to_the_jit_name(a):
    out = np.zeros_like(a)
    same_name(a, out)
    np.testing.assert_allclose(out, a * 3.0, rtol=1e-6)
    assert [f.name for f in same_name.lower(a, out).functions] == ["same_name_0",
                                                                          "same_name"]
