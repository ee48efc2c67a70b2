"""``out[a:b, c:d] = v`` writes exactly the window: ``v`` must have the window's rank and
size (or the valid extent ``pl.set_validshape`` gave it), as PyPTO checks at parse time. A
smaller value used to leave part of the window unwritten, a larger one wrote past it."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import ParseError

SOURCE = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[{shape}, pl.FP32], i: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        {line}
        return out
"""


@pytest.mark.parametrize("line, shape, message", [
    ("out[0:16, 0:32] = pl.add(src, 1.0)", [8, 32], "axis 0: the window is 16 wide"),
    ("out[:, :] = pl.add(src, 1.0)", [64, 32], "axis 1: the window is 128 wide"),
    ("out[i:i + 8, 0:32] = pl.add(src, 1.0)", [16, 32], "axis 0: the window is 8 wide"),
    ("out[0:1, 0:32] = pl.add(src, 1.0)", [32], "writes a 2-D window .* it must be 2-D"),
    ("out[0:16, 0:6] = pl.set_validshape(pl.add(src, 1.0), 16, 4)", [16, 8],
     "axis 1: the window is 6 wide"),
])
def test_a_value_that_does_not_fill_its_window_is_refused(line, shape, message):
    with pytest.raises(ParseError, match=message):
        pl.parse(SOURCE.format(shape=shape, line=line))


@pytest.mark.parametrize("line, shape, rows, cols", [
    ("out[i:i + 16, 32:64] = pl.add(src, 1.0)", [16, 32], slice(8, 24), slice(32, 64)),
    ("out[8:24, 0:4] = pl.set_validshape(pl.add(src, 1.0), 16, 4)", [16, 8], slice(8, 24),
     slice(0, 4)),
    ("v = pl.set_validshape(pl.add(src, 1.0), 16, 4)\n        out[8:24, 0:4] = v", [16, 8],
     slice(8, 24), slice(0, 4)),
])
def test_a_value_that_fills_its_window_writes_exactly_it(line, shape, rows, cols):
    src = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    out = np.zeros((64, 128), np.float32)
    ir.compile(pl.parse(SOURCE.format(shape=shape, line=line))).run(src, 8, out)
    expected = np.zeros_like(out)
    expected[rows, cols] = (src + 1.0)[:, :cols.stop - cols.start]
    np.testing.assert_array_equal(out, expected)
