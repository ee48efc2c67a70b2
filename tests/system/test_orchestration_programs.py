"""Orchestration functions with control flow, host reads, views and launches, run on the
simulator against numpy."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import RuntimeConfigError

rng = np.random.default_rng(7)

ROWS = """import ptoc.language as pl

@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 64], pl.FP32], s: pl.Scalar[pl.FP32],
              y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        y = pl.store(pl.mul(t, s), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], cfg: pl.Tensor[[2], pl.INT32],
             y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        n = pl.tensor.read(cfg, [0])
        first = pl.tensor.read(cfg, [1])
        for i in pl.range(pl.min(n, pl.tensor.dim(x, 0) // 16)):
            if i == first:
                s = pl.yield_(2.0)
            else:
                s = pl.yield_(3.0)
            xv = pl.slice(x, [16, 64], [i * 16, 0])
            yv = pl.slice(y, [16, 64], [i * 16, 0])
            yv = self.scale(xv, s, yv)
        return y
"""


@pytest.mark.parametrize("n,first", [(3, 0), (4, 2), (0, 0), (9, 1)])
def test_loop_bound_and_branch_come_from_tensor_reads_and_slices_are_task_arguments(n, first):
    compiled = ir.compile(pl.parse_program(ROWS))
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = np.zeros_like(x)
    compiled.run(x, np.array([n, first], np.int32), y)
    want = np.zeros_like(x)
    for i in range(min(n, 4)):
        want[i * 16:(i + 1) * 16] = x[i * 16:(i + 1) * 16] * (2.0 if i == first else 3.0)
    np.testing.assert_array_equal(y, want)


SPMD = """import ptoc.language as pl

@pl.program
class Spmd:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.InOut[pl.Tensor[[64, 32], pl.FP32]]
             ) -> pl.Tensor[[64, 32], pl.FP32]:
        b = pl.tile.get_block_idx()
        n = pl.tile.get_block_num()
        for r in pl.range(b, 4, n):
            t = pl.load(x, [r * 16, 0], [16, 32])
            u = pl.load(y, [r * 16, 0], [16, 32])
            y = pl.store(pl.add(t, u), [r * 16, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.InOut[pl.Tensor[[64, 32], pl.FP32]]
             ) -> pl.Tensor[[64, 32], pl.FP32]:
        with pl.spmd(BLOCKS):
            y = self.rows(x, y)
        for i in pl.spmd(2, sync_start=True):
            t = pl.load(x, [i * 32, 0], [32, 32])
            y = pl.store(pl.mul(t, t), [i * 32, 0], y)
        return y
"""


@pytest.mark.parametrize("blocks", [1, 3, 4])
def test_spmd_blocks_read_their_index_and_count(blocks):
    compiled = ir.compile(pl.parse_program(SPMD.replace("BLOCKS", str(blocks))))
    x = rng.standard_normal((64, 32)).astype(np.float32)
    y = rng.standard_normal((64, 32)).astype(np.float32)
    result = compiled.run(x, y.copy(), config=None)
    np.testing.assert_array_equal(result.outputs["y"], x * x)
    launches = [(run.task.kernel, run.task.block) for run in result.runs]
    assert launches == [("rows", (b, blocks)) for b in range(blocks)] + [
        ("main_incore_0", (b, 2)) for b in range(2)]
    assert [run.task.sync_start for run in result.runs][-1] is True


def test_spmd_rows_are_each_added_once():
    compiled = ir.compile(pl.parse_program(SPMD.replace("BLOCKS", "3").replace(
        "        for i in pl.spmd(2, sync_start=True):\n"
        "            t = pl.load(x, [i * 32, 0], [32, 32])\n"
        "            y = pl.store(pl.mul(t, t), [i * 32, 0], y)\n", "")))
    x = rng.standard_normal((64, 32)).astype(np.float32)
    y = rng.standard_normal((64, 32)).astype(np.float32)
    result = compiled.run(x, y.copy())
    np.testing.assert_allclose(result.outputs["y"], x + y, rtol=1e-6)


PIPE = """import ptoc.language as pl

@pl.program
class Pipe:
    @pl.function
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], c: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        acc = pl.create_tensor([32, 32], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(x, [0, 0], [32, 32]), [0, 0], acc)
        for i in pl.range(3):
            if c == 1:
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
                    a = pl.load(acc, [0, 0], [32, 32])
                    pl.store(pl.add(a, a), [0, 0], acc)
            with pl.at(level=pl.Level.CORE_GROUP):
                a = pl.load(acc, [0, 0], [32, 32])
                lo = pl.add(a, 1.0)
                hi = pl.mul(a, 0.5)
                pl.store(lo, [0, 0], acc)
                pl.store(hi, [0, 0], y)
        return y
"""


@pytest.mark.parametrize("c", [0, 1])
def test_tensors_flow_from_scope_to_scope_through_loops_and_branches(c):
    compiled = ir.compile(pl.parse_program(PIPE))
    x = rng.standard_normal((32, 32)).astype(np.float32)
    y = np.zeros_like(x)
    compiled.run(x, c, y)
    acc = x.copy()
    for _ in range(3):
        if c == 1:
            acc = acc + acc
        out = acc * np.float32(0.5)
        acc = acc + np.float32(1.0)
    np.testing.assert_allclose(y, out, rtol=1e-6)


HIER = """import ptoc.language as pl

@pl.program
class Hier:
    @pl.function
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
             ) -> pl.Tensor[[32, 16], pl.FP32]:
        with pl.at(level=pl.Level.CHIP):
            with pl.cluster():
                with pl.spmd(2):
                    y = self.half(x, y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def half(self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
             ) -> pl.Tensor[[32, 16], pl.FP32]:
        b = pl.tile.get_block_idx()
        y = pl.store(pl.exp(pl.load(x, [b * 16, 0], [16, 16])), [b * 16, 0], y)
        return y
"""


def test_hierarchy_cluster_and_spmd_wrappers_run_their_kernels():
    compiled = ir.compile(pl.parse_program(HIER))
    names = {f.name: f.func_type.value for f in compiled.program.functions}
    assert names == {"main_chip_0": "Opaque", "main_chip_0_cluster_0": "Group",
                     "half": "AIV", "main": "Opaque"}   # ExpandMixedKernel: vector-only -> AIV
    x = rng.standard_normal((32, 16)).astype(np.float32)
    y = np.zeros_like(x)
    result = compiled.run(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-5)
    assert [r.task.block for r in result.runs] == [(0, 2), (1, 2)]


def test_a_column_slice_as_a_task_argument_is_refused_not_misread():
    src = ROWS.replace("pl.slice(x, [16, 64], [i * 16, 0])", "pl.slice(x2, [16, 64], [i * 16, 0])"
                       ).replace("x: pl.Tensor[[64, 64], pl.FP32], cfg", "x: pl.Tensor[[64, 64], "
                                 "pl.FP32], x2: pl.Tensor[[64, 128], pl.FP32], cfg")
    compiled = ir.compile(pl.parse_program(src))
    x = rng.standard_normal((64, 64)).astype(np.float32)
    with pytest.raises(RuntimeConfigError, match="strided slice"):
        compiled.run(x, np.ones((64, 128), np.float32), np.array([1, 0], np.int32),
                     np.zeros_like(x))


CAST = ROWS.split("    @pl.function(type=pl.FunctionType.Orchestration)")[0] + """\
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], cfg: pl.Tensor[[2], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        n = pl.cast(pl.tensor.read(cfg, [0]), pl.INDEX)
        s = pl.cast(pl.cast(pl.tensor.read(cfg, [1]), pl.INT32), pl.FP32)
        for i in pl.range(n):
            xv = pl.slice(x, [16, 64], [i * 16, 0])
            yv = pl.slice(y, [16, 64], [i * 16, 0])
            yv = self.scale(xv, s, yv)
        return y
"""


@pytest.mark.parametrize("count,scale", [(2.9, 3.7), (4.0, -2.5), (-0.5, 1.0)])
def test_scalar_casts_in_orchestration_truncate_as_in_kernels(count, scale):
    """pl.cast of a host scalar: float -> index/int truncates toward zero (arith.fptosi),
    int -> float is exact here; the loop runs int(count) times with int(scale)."""
    compiled = ir.compile(pl.parse_program(CAST))
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = np.zeros_like(x)
    compiled.run(x, np.array([count, scale], np.float32), y)
    want = np.zeros_like(x)
    rows = 16 * max(int(count), 0)
    want[:rows] = x[:rows] * np.float32(int(scale))
    np.testing.assert_array_equal(y, want)
