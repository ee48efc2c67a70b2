"""Tensor-level ops larger than Vec: ConvertTensorToTileOps computes them in row blocks
(ptoc.passes.tensor_chunking), and programs that fit are left exactly as PyPTO lowers them.
Also: loops and branches that carry tensor values computed on chip carry their tiles."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

import ptoc.language as pl
from ptoc.backend import get_target
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext, convert_tensor_to_tile_ops
from ptoc.passes.tensor_chunking import chunk_tensor_runs
from ptoc.runtime import compile_program

HEADER = "import ptoc.language as pl\n\n@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"


def kernel(params: str, ret: str, body: str) -> str:
    return HEADER + f"    def k(self, {params}) -> {ret}:\n" + body


def relu_program(rows: int, cols: int) -> str:
    t = f"pl.Tensor[[{rows}, {cols}], pl.FP32]"
    return kernel(f"x: {t}, out: pl.Out[{t}]", t, """\
        y = pl.relu(x)
        out = pl.assemble(out, y, [0, 0])
        return out
""")


# (shape, loop var, step, block shape, block offset):
# rows: one block holds x and y, 2 x 32 rows x 1 KiB = 64 KiB, twice (double buffered) fits
#   the 184 KiB of Vec; 64 rows would not.
# columns: one row of x and y is 256 KiB, so column blocks of both rows: [2, 4096] blocks of
#   x and y are 64 KiB, twice fits; [2, 8192] (128 KiB) twice would not.
BLOCK_LOOPS = [((512, 256), "ci", 32, (32, 256), "[ci, 0]"),
               ((2, 32768), "cj", 4096, (2, 4096), "[0, cj]")]


@pytest.mark.parametrize("shape,var,step,block,at", BLOCK_LOOPS)
def test_a_run_that_overflows_vec_becomes_a_double_buffered_block_loop(shape, var, step,
                                                                        block, at):
    program = pl.parse_program(relu_program(*shape))
    chunked = chunk_tensor_runs(program.get_function("k"), get_target("a2a3"))
    t, blk = (f"pl.Tensor[[{shape[0]}, {shape[1]}], pl.FP32]",
              f"pl.Tensor[[{block[0]}, {block[1]}], pl.FP32]")
    stop = shape[0] if var == "ci" else shape[1]
    expected = kernel(f"x: {t}, out: pl.Out[{t}]", t, f"""\
        for {var}, (out_iter,) in pl.pipeline(0, {stop}, {step}, init_values=(out,), stage=2):
            x_blk: {blk} = pl.tensor.slice(x, [{block[0]}, {block[1]}], {at})
            y: {blk} = pl.tensor.relu(x_blk)
            out2: {t} = pl.tensor.assemble(out_iter, y, {at})
            out3 = pl.yield_(out2)
        return out3
""")
    assert_structural_equal(chunked, pl.parse_program(expected).get_function("k"))


def test_a_run_that_fits_is_left_as_written():
    function = pl.parse_program(relu_program(64, 256)).get_function("k")
    assert chunk_tensor_runs(function, get_target("a2a3")) is function


def test_a_value_used_after_the_run_keeps_it_unchunked():
    t = "pl.Tensor[[512, 256], pl.FP32]"
    src = kernel(f"x: {t}, out: pl.Out[{t}]", t, """\
        y = pl.relu(x)
        out = pl.assemble(out, y, [0, 0])
        s = pl.col_sum(y)
        return out
""")
    function = pl.parse_program(src).get_function("k")
    assert chunk_tensor_runs(function, get_target("a2a3")) is function


def _run(src: str, *arrays):
    with tempfile.TemporaryDirectory() as work:
        compiled = compile_program(pl.parse_program(src), work)
        result = compiled.run(*arrays)
        decisions = (Path(work) / "report" / "decisions.md").read_text()
    assert not result.races, result.races
    return result.outputs["out"], decisions


@pytest.mark.parametrize("rows,cols", [(384, 512), (512, 1024)])
def test_issue_relu_shapes_run(rows, cols):
    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    out, decisions = _run(relu_program(rows, cols), x)
    assert np.array_equal(out, np.maximum(x, 0))
    assert "Tensor ops computed in row or column blocks" in decisions


@pytest.mark.parametrize("rows,cols", [(4, 32768), (1, 65536)])
def test_wide_columnwise_runs_with_row_and_column_vectors(rows, cols):
    """[R, 1] operands stay whole in every column block, [1, C] ones are cut with it."""
    t = f"pl.Tensor[[{rows}, {cols}], pl.FP32]"
    src = kernel(f"x: {t}, s: pl.Tensor[[{rows}, 1], pl.FP32], "
                 f"b: pl.Tensor[[1, {cols}], pl.FP32], out: pl.Out[{t}]", t, """\
        y = pl.col_expand_add(pl.row_expand_mul(pl.relu(x), s), b)
        out = pl.assemble(out, y, [0, 0])
        return out
""")
    rng = np.random.default_rng(cols)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    s = rng.standard_normal((rows, 1)).astype(np.float32)
    b = rng.standard_normal((1, cols)).astype(np.float32)
    out, decisions = _run(src, x, s, b)
    assert np.array_equal(out, np.maximum(x, 0) * s + b)
    assert "blocks of" in decisions and "columns" in decisions


def test_a_wide_row_with_a_row_reduction_is_left_as_written():
    t = "pl.Tensor[[2, 65536], pl.FP32]"
    src = kernel(f"x: {t}, out: pl.Out[{t}]", t, """\
        out = pl.assemble(out, pl.row_expand_sub(x, pl.row_max(x)), [0, 0])
        return out
""")
    function = pl.parse_program(src).get_function("k")
    assert chunk_tensor_runs(function, get_target("a2a3")) is function


def test_issue_softmax_64x1024_runs():
    t = "pl.Tensor[[64, 1024], pl.FP32]"
    src = kernel(f"x: {t}, out: pl.Out[{t}]", t, """\
        m = pl.row_max(x)
        e = pl.row_expand_expdif(x, m)
        s = pl.row_sum(e)
        out = pl.assemble(out, pl.row_expand_div(e, s), [0, 0])
        return out
""")
    x = np.random.default_rng(3).standard_normal((64, 1024)).astype(np.float32)
    out, decisions = _run(src, x)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-9)
    assert "double-buffered" in decisions


def test_a_loop_carries_the_tile_of_an_on_chip_value():
    """The qwen3 RMSNorm shape: a partial sum computed on chip is a loop carry."""
    t, w = "pl.Tensor[[16, 256], pl.FP32]", "pl.Tensor[[1, 256], pl.FP32]"
    src = kernel(f"x: {t}, w: {w}, out: pl.Out[{t}]", t, """\
        partial = pl.full([1, 16], dtype=pl.FP32, value=0.0)
        for kb, (acc,) in pl.range(4, init_values=(partial,)):
            k0 = kb * 64
            xc = x[:, k0:k0 + 64]
            sq = pl.row_sum(pl.mul(xc, xc))
            acc2 = pl.add(acc, pl.reshape(sq, [1, 16]))
            tot = pl.yield_(acc2)
        var = pl.reshape(pl.adds(pl.muls(tot, 0.00390625), 1e-6), [16, 1])
        inv = pl.recip(pl.sqrt(var))
        for kb in pl.range(4):
            k0 = kb * 64
            nrm = pl.col_expand_mul(pl.row_expand_mul(x[:, k0:k0 + 64], inv), w[:, k0:k0 + 64])
            out = pl.assemble(out, nrm, [0, k0])
        return out
""")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 256)).astype(np.float32)
    wt = rng.standard_normal((1, 256)).astype(np.float32)
    out, _ = _run(src, x, wt)
    ref = x / np.sqrt((x.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-6) * wt
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_a_branch_yields_the_tile_of_an_on_chip_value():
    t = "pl.Tensor[[16, 64], pl.FP32]"
    src = kernel(f"x: {t}, flag: pl.Scalar[pl.INDEX], out: pl.Out[{t}]", t, """\
        if flag > 0:
            y = pl.exp(x)
            r = pl.yield_(y)
        else:
            z = pl.neg(x)
            r = pl.yield_(z)
        out = pl.assemble(out, r, [0, 0])
        return out
""")
    x = np.random.default_rng(2).standard_normal((16, 64)).astype(np.float32)
    with PassContext():
        converted = convert_tensor_to_tile_ops()(pl.parse_program(src))
    assert "pl.tile.exp" in converted.as_python() and "pl.tile.neg" in converted.as_python()
    for flag, want in ((1, np.exp(x.astype(np.float64)).astype(np.float32)), (0, -x)):
        with tempfile.TemporaryDirectory() as work:
            result = compile_program(pl.parse_program(src), work).run(x, flag)
        assert not result.races
        np.testing.assert_array_equal(result.outputs["out"], want)


def test_a_mixed_kernel_is_not_chunked():
    """A scope with a matmul and its vector epilogue is split across cores later (its AIVs
    hold half the rows each); chunking would slice the tiles LowerAutoVectorSplit splits."""
    import importlib.util
    from pathlib import Path

    from ptoc import ir

    path = Path(__file__).resolve().parents[2] / "examples" / "06_mixed_kernel.py"
    spec = importlib.util.spec_from_file_location("example_06", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import tempfile

    with tempfile.TemporaryDirectory() as out:
        compiled = ir.compile(module.MixedMatmulBias, out, dump_passes=False)
    assert "tpop_from_aic" in compiled.pto_text["mixed_up_down"]
