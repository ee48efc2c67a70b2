"""Issue 13 acceptance: a paged-attention decode step — several KV blocks per request read
through a block table (``pl.tensor.read`` in the kernels), SPMD over requests, per-request
sequence lengths — runs with numerics against numpy, in order and on the simulated chip."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.runtime import RunConfig

from paged_decode import D, Q, golden, inputs, program_source

POOL = 20


@pytest.mark.parametrize("lens,cores", [
    ([40, 16, 57], 2),     # a partial last block, one single-block request, the longest 4 blocks
    ([1, 64, 33], 3),      # one token; exactly MAXB full blocks; one block plus one token
    ([20, 9, 48, 5], 1),   # one block runs every request in turn
])
def test_paged_decode_matches_numpy_in_order(lens, cores):
    compiled = ir.compile(pl.parse_program(program_source(len(lens), POOL, cores)))
    q, kc, vc, table, lens = inputs(lens, POOL, seed=len(lens) + cores)
    out = np.zeros((len(lens) * Q, D), np.float32)
    result = compiled.run(q, kc, vc, table, lens, 0.125, out)
    np.testing.assert_allclose(out, golden(q, kc, vc, table, lens, 0.125), rtol=1e-5, atol=1e-5)
    blocks = {run.task.block for run in result.runs}
    assert blocks == {(b, cores) for b in range(cores)}, "every stage is an SPMD launch"


def test_paged_decode_on_the_chip_is_race_free_and_exact():
    lens = [40, 16, 57]
    compiled = ir.compile(pl.parse_program(program_source(3, POOL, 2)))
    q, kc, vc, table, lens = inputs(lens, POOL)
    out = np.zeros((3 * Q, D), np.float32)
    result = compiled.run(q, kc, vc, table, lens, 0.125, out, config=RunConfig(chip=True))
    np.testing.assert_allclose(out, golden(q, kc, vc, table, lens, 0.125), rtol=1e-5, atol=1e-5)
    assert result.races == []


def test_scratch_reused_across_steps_is_a_reported_race():
    """Write-after-read is not ordered by the runtime (PyPTO's TensorMap): reusing the
    score buffer across block steps lets step j+1's scores overtake step j's softmax."""
    src = program_source(3, POOL, 2)
    hoisted = "            s = pl.create_tensor([R * Q, BS], dtype=pl.FP32)\n"
    src = src.replace(hoisted, "").replace("        for j in pl.range(steps):\n",
                                           hoisted[4:] + "        for j in pl.range(steps):\n")
    compiled = ir.compile(pl.parse_program(src))
    q, kc, vc, table, lens = inputs([40, 16, 57], POOL)
    result = compiled.run(q, kc, vc, table, lens, 0.125, np.zeros((3 * Q, D), np.float32),
                          config=RunConfig(chip=True))
    kinds = {race.kind for _, race in result.races}
    assert kinds == {"WAR"}


def test_auto_derived_task_dependencies_change_nothing_on_the_chip():
    """analyze_auto_scopes_for_deps=True: the decode's loops carry buffers from one
    iteration to the next, so AutoDeriveTaskDependencies leaves them to the runtime."""
    outs, chips = [], []
    for analyze in (False, True):
        compiled = ir.compile(pl.parse_program(program_source(3, 20, 2)),
                              analyze_auto_scopes_for_deps=analyze)
        q, kc, vc, table, lens = inputs([40, 16, 57], 20)
        out = np.zeros((3 * Q, D), np.float32)
        result = compiled.run(q, kc, vc, table, lens, 0.125, out, config=RunConfig(chip=True))
        np.testing.assert_allclose(out, golden(q, kc, vc, table, lens, 0.125), rtol=1e-5,
                                   atol=1e-5)
        assert result.races == []
        outs.append(out)
        chips.append([t.deps for t in result.chip.tasks])
    assert np.array_equal(*outs) and chips[0] == chips[1]
