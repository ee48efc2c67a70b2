"""Slice windows whose size needs algebra (``x[i * 32:(i + 1) * 32]``, ``r0:r0 + R`` with
``r0 = i * R``, ``k0:k0 + KS`` with ``KS = K // 4`` bound in the body) run and match numpy; a window whose size depends on a loop variable is
refused with the window named."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.errors import ParseError

R = 32
x = np.random.default_rng(5).standard_normal((128, 64)).astype(np.float32)


@pl.jit
def product_bounds(a: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    for i in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.exp(a[i * 32:(i + 1) * 32, :])
            out[i * 32:i * 32 + 32, :] = t
    return out


@pl.jit
def bound_offsets(a: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    for i in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP):
            r0 = i * 64 + 16
            t = pl.exp(a[r0 - 16:(i + 1) * 64, 2 * R - 64:2 * R])
            out[-16 + r0:r0 + 48, :] = t
    return out


@pl.jit
def reversed_blocks(a: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    S = 128 // 4  # a constant bound in the body: windows fold through it too
    for i in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            r0 = (3 - i) * S
            out[i * R:(i + 1) * R, :] = pl.add(a[r0:r0 + S, :], a[r0:r0 + R, :])
    return out


@pl.jit
def growing(a: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    for i in pl.range(1, 3):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[0:i * 32, :] = pl.exp(a[0:i * 32, :])
    return out


@pytest.mark.parametrize("fn", [product_bounds, bound_offsets], ids=["product", "bound_var"])
def test_algebraic_windows_cover_every_row(fn):
    out = np.full_like(x, np.nan)
    fn(x, out)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)


def test_windows_move_with_the_loop_variable():
    out = np.full_like(x, np.nan)
    reversed_blocks(x, out)
    golden = np.concatenate([2 * x[(3 - i) * R:(4 - i) * R] for i in range(4)])
    np.testing.assert_array_equal(out, golden)


def test_a_size_that_depends_on_the_loop_variable_is_refused():
    with pytest.raises(ParseError, match=r"window '0:i \* 32' has no constant size"):
        growing(x, np.zeros_like(x))


@pl.jit
def backwards(a: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    for i in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[i * 32:i * 32 + 32, :] = pl.exp(a[(i + 1) * 32:i * 32, :])
    return out


def test_a_window_with_stop_before_start_is_refused():
    with pytest.raises(ParseError, match=r"window '\(i \+ 1\) \* 32:i \* 32' has size -32"):
        backwards(x, np.zeros_like(x))


WINDOW_HEAD = """
import ptoc.language as pl
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
             ) -> pl.Tensor[[16, 32], pl.FP32]:
        {line}
        return o
"""


@pytest.mark.parametrize("line, message", [
    # a fractional bound was truncated where the window is written: a silent shift
    ("o[0.5:16.5, :] = a", r"window '0.5:16.5' in 'o\[0.5:16.5, :\]' has a bound that is not an "
                           r"integer"),
    ("o[:, False:True] = a[:, 0:1]", r"window 'False:True' .* not an integer"),
    ("o = pl.exp(a[0:16.0, :])", r"window '0:16.0' .* not an integer"),
    # a constant window past either end was only reported by the generated code, with no line
    ("o[8:24, :] = a", r"window '8:24' in 'o\[8:24, :\]' covers \[8, 24\) but the dimension has "
                       r"16 elements"),
    ("o = pl.exp(a[-8:8, :])", r"window '-8:8' .* covers \[-8, 8\)"),
])
def test_a_constant_window_is_integer_and_inside_the_tensor(line, message):
    with pytest.raises(ParseError, match=message) as caught:
        pl.parse_program(WINDOW_HEAD.format(line=line))
    assert caught.value.loc.line == 8    # the line written
