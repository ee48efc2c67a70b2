"""``pl.tile.full`` lowers to ``pto.texpands`` and the simulator fills the tile."""

import numpy as np

import ptoc.language as pl
from ptoc.testing import DataType, PTOTestCase, TensorSpec


class AddConstantTile(PTOTestCase):
    def define_tensors(self):
        return [TensorSpec("x", [32, 64], DataType.FP32),
                TensorSpec("y", [32, 64], DataType.FP32, is_output=True)]

    def get_program(self):
        @pl.program
        class Full:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[32, 64], pl.FP32],
                  y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
                f = pl.tile.full([32, 64], pl.FP32, -1.25)
                y = pl.store(pl.add(pl.load(x, [0, 0], [32, 64]), f), [0, 0], y)
                return y
        return Full

    def compute_expected(self, t, params=None):
        t["y"][:] = t["x"] - 1.25


def test_full_tile_fills_with_the_scalar(tmp_path):
    outcome = AddConstantTile().run(tmp_path)
    assert "pto.texpands" in next(iter(outcome.compiled.pto_text.values()))
    np.testing.assert_array_equal(outcome.outputs["y"], outcome.expected["y"])
