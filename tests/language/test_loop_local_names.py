"""A name reused by a later loop with another shape (PyPTO kernels do this with a chunk
variable per loop): the later loop writes it before reading it, so its entry value is dead
and it is no carry; its value after that loop is not kept, and reading it there is an error
naming the loop, never the stale pre-loop value."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import ParseError
from ptoc.language.stmts import written_before_read

SOURCE = """
import ptoc.language as pl

@pl.program
class Chunks:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 256], pl.FP32], out: pl.Out[pl.Tensor[[16, 256], pl.FP32]],
          total: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 256], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        for i in pl.range(1, 4):
            c = pl.load(x, [0, i * 64], [16, 64])
            t = pl.add(t, c)
        total = pl.store(t, [0, 0], total)
        for j in pl.range(2):
            t = pl.load(x, [0, j * 128], [16, 128])
            out = pl.store(pl.mul(t, 2.0), [0, j * 128], out)
{after}        return out
"""


def test_a_name_reused_with_another_shape_is_local_to_the_later_loop():
    compiled = ir.compile(pl.parse_program(SOURCE.format(after=""), filename="chunks.py"), None)
    x = np.random.default_rng(5).standard_normal((16, 256)).astype(np.float32)
    out, total = np.zeros_like(x), np.zeros((16, 64), np.float32)
    result = compiled.run(x, out, total)
    assert result.races == []
    np.testing.assert_array_equal(out, 2 * x)
    np.testing.assert_allclose(total, x.reshape(16, 4, 64).sum(axis=1), rtol=1e-6)


def test_reading_it_after_the_loop_is_an_error_not_the_stale_value():
    after = "        total = pl.store(pl.add(t, t), [0, 0], total)\n"
    with pytest.raises(ParseError, match=r"name 't' has no value here: it is rebound inside "
                       r"the loop at line 14 with another type") as info:
        pl.parse_program(SOURCE.format(after=after), filename="chunks.py")
    assert "init_values" in str(info.value)


def test_a_loop_that_reads_the_name_first_still_reports_the_type_change():
    src = SOURCE.format(after="").replace(
        "            t = pl.load(x, [0, j * 128], [16, 128])",
        "            u = pl.add(t, t)\n            t = pl.load(x, [0, j * 128], [16, 128])")
    with pytest.raises(ParseError, match="carried value 't' changes type inside the loop"):
        pl.parse_program(src, filename="chunks.py")


@pytest.mark.parametrize("body,expected", [
    ("t = f(a)\nu = t", True),
    ("t: T = f(a)", True),
    ("t = f(t)", False),                 # reads its entry value
    ("u = t\nt = f(a)", False),
    ("t[0] = 1", False),                 # a store into it reads it
    ("if c:\n    t = f(a)\nu = t", False),  # bound on one path only
    ("u = f(a)", False),                 # never bound
])
def test_written_before_read(body, expected):
    assert written_before_read("t", ast.parse(body).body) is expected


def test_a_name_first_assigned_inside_a_loop_has_no_value_after_it():
    # PyPTO carries it out with an undefined entry value; ptoc says where it was assigned
    source = SOURCE.format(after="").replace(
        "        total = pl.store(t, [0, 0], total)\n",
        "        total = pl.store(c, [0, 0], total)\n")
    with pytest.raises(ParseError, match=r"name 'c' has no value here: it is first assigned "
                                         r"inside the loop at line 10"):
        pl.parse_program(source, filename="chunks.py")
