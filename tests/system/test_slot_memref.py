"""PyPTO's explicit slot placement ``pl.MemRef("ub", slots=N)[i % N]`` on a tile annotation:
ptoc accepts the spelling, warns that its own planner places the tile, and the numbers match
numpy; a malformed slot annotation is refused."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.errors import ParseError
from ptoc.language.annotations import SlotPlacementIgnoredWarning

a = np.random.default_rng(3).standard_normal((256, 64)).astype(np.float32)


@pl.jit
def rotated(x: pl.Tensor[[256, 64], pl.FP32], out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t: pl.Tile[[64, 64], pl.FP32, pl.MemRef("ub", slots=2)[i % 2], pl.Mem.Vec] = pl.load(
                x, [i * 64, 0], [64, 64], target_memory=pl.Mem.Vec)
            pl.store(pl.exp(t), [i * 64, 0], out)
    return out


@pl.jit
def slots_not_a_number(x: pl.Tensor[[256, 64], pl.FP32],
                       out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t: pl.Tile[[256, 64], pl.FP32, pl.MemRef("ub", slots=0)[0]] = pl.load(x, [0, 0], [256, 64])
        out = pl.store(t, [0, 0], out)
    return out


def test_slot_placement_runs_with_a_warning():
    out = np.full_like(a, np.nan)
    with pytest.warns(SlotPlacementIgnoredWarning, match=r"pl.pipeline\(\.\.\., stage=2\)"):
        rotated(a, out)
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-6)


def test_a_slot_count_below_one_is_refused():
    with pytest.raises(ParseError, match="is not a slot placement"):
        slots_not_a_number(a, np.zeros_like(a))
