"""``A[i, j]`` with an index per dimension reads one element (``pl.read``), on a tensor or a
tile, as in PyPTO; an index among windows (PyPTO's rank-reducing view) is an error saying
how to keep the dimension."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import ParseError, TypeCheckError

SOURCE = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 128], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
          out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        r = idx[1]
        s = {read}
        t = pl.load(a, [0, 0], [16, 128])
        u = t[2, r + 3]
        out = pl.store(pl.add(pl.mul(t, s), u), [0, 0], out)
        return out
"""


def test_an_index_per_dimension_reads_one_element_of_a_tensor_or_a_tile():
    program = pl.parse(SOURCE.format(read="a[r, 5]"))
    rng = np.random.default_rng(11)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    idx = np.array([0, 7, 0, 0], np.int32)
    out = np.zeros((16, 128), np.float32)
    ir.compile(program).run(a, idx, out)
    np.testing.assert_array_equal(out, a[:16] * a[7, 5] + a[2, 10])


@pytest.mark.parametrize("read", ["a[r]", "a[r, 0:64]", "a[0:8, r]"])
def test_an_index_that_would_drop_a_dimension_is_refused(read):
    with pytest.raises(ParseError, match="drops a dimension") as info:
        pl.parse(SOURCE.format(read=read))
    assert "one-wide window" in str(info.value)


@pytest.mark.parametrize("read, shown", [
    ("a[True, 5]", "True of type BOOL"), ("a[r, False]", "False of type BOOL"),
    ("pl.read(a, [1, True])", "True of type BOOL"),
    ("a[pl.read(a, [0, 0]), 5]", "a scalar of type FP32")])
def test_an_index_that_is_not_an_integer_is_refused(read, shown):
    """A bool is a Python int, so ``a[True, 5]`` used to read row 1 without a word; a float
    scalar index was only refused by code generation, far from the line."""
    with pytest.raises(TypeCheckError, match="not an integer") as info:
        pl.parse(SOURCE.format(read=read))
    assert shown in str(info.value)
    assert info.value.loc is not None


@pytest.mark.parametrize("read, said", [("a[r, 5, 0]", "indexes 3 dimensions of a rank-2"),
                                        ("a[0:8, 0:8, 0:1]", "indexes 3 dimensions of a rank-2"),
                                        ("a[0:8]", "indexes 1 dimension of a rank-2")])
def test_a_subscript_with_the_wrong_number_of_dimensions_says_how_many(read, said):
    """More indices than dimensions used to be called 'fewer dimensions than the value has'."""
    with pytest.raises(ParseError, match=said) as info:
        pl.parse(SOURCE.format(read=read))
    assert "fewer" not in str(info.value) and "one index or 'start:stop' window" in str(info.value)
