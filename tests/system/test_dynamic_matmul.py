"""Matmuls over a pl.dynamic number of rows: one compile runs every M, the tail block (M not a
multiple of the tile) included, on a2a3 and a5, with fp16/bf16 inputs accumulated in fp32.

What could be silently wrong: the tail block's Acc tile computed and stored over all its
rows (stale L1 rows written past M), the valid rows lost when the L0 K-loop extracts the
operand, or one compile reused for another M with the first M's extents. The tests compare
with float64 numpy, check rows past M keep what they held, and assert no race."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PtocError
from ptoc.ir.nodes import ForStmt
from ptoc.runtime import RunConfig

M = pl.dynamic("M")
NP = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16}


def _windowed(K: int, N: int, T: int, dtype, out_rows=None):
    """PyPTO's form: static [T, K] windows over a, the tail's rows in valid_shape; the
    result goes into ``out`` ([M, N], or a static ``out_rows``-row buffer bigger than M)."""
    rows = M if out_rows is None else out_rows

    @pl.program
    class Windowed:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, K], dtype], b: pl.Tensor[[K, N], dtype],
              out: pl.Out[pl.Tensor[[rows, N], pl.FP32]]) -> pl.Tensor[[rows, N], pl.FP32]:
            m = pl.tensor.dim(a, 0)
            for i in pl.range(0, m, T):
                x = pl.slice(a, [T, K], [i, 0], valid_shape=[pl.min(m - i, T), K])
                out = pl.assemble(out, pl.matmul(x, b), [i, 0])
            return out

    return Windowed


def _whole(K: int, N: int, dtype):
    """The whole-tensor form (a ptoc extension: ConvertTensorToTileOps blocks the rows)."""

    @pl.program
    class Whole:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[M, K], dtype], b: pl.Tensor[[K, N], dtype],
              out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
            out[:] = pl.matmul(a, b)
            return out

    return Whole


def _compile(program, platform):
    return ir.compile(program, platform=f"{platform}sim")


def _run(compiled, platform, m, K, N, dtype, out_rows=None, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, K)).astype(NP[dtype])
    b = rng.standard_normal((K, N)).astype(NP[dtype])
    out = np.full((out_rows or m, N), 7.0, np.float32)
    result = compiled.run(a, b, out, config=RunConfig(platform=f"{platform}sim"))
    assert result.races == []
    return out, a.astype(np.float64) @ b.astype(np.float64)


# (K, N, T): one K block (no L0 tiling), and K = 512 (AutoTileMatmulL0's K-loop extracts
# the operand in 128-column blocks, each carrying the tail's valid rows)
SHAPES = [(64, 32, 16), (512, 64, 128)]
CASES = [(k, n, t, p, d) for (k, n, t) in SHAPES for p, d in (("a2a3", "FP16"), ("a5", "BF16"))]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: "-".join(map(str, c)))
def windowed(request):
    K, N, T, platform, dtype = request.param
    return _compile(_windowed(K, N, T, getattr(pl, dtype)), platform), request.param


@settings(max_examples=8, deadline=None)
@given(m=st.integers(1, 300), seed=st.integers(0, 3))
def test_windows_with_a_valid_tail_run_every_row_count(windowed, m, seed):
    compiled, (K, N, _, platform, dtype) = windowed
    out, want = _run(compiled, platform, m, K, N, dtype, seed=seed)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("K, T", [(64, 16), (512, 128)])
def test_the_tail_block_writes_only_its_rows(K, T):
    """Before: the tail's Acc tile was valid over all T rows and the store wrote them, stale
    L1 rows landing in out past M (out is bigger than M here, so no bound check caught it)."""
    compiled = _compile(_windowed(K, 32, T, pl.FP16, out_rows=2 * T), "a2a3")
    for m in (T + 3, 1, T):                    # the compile is reused for each size
        out, want = _run(compiled, "a2a3", m, K, 32, "FP16", out_rows=2 * T, seed=m)
        np.testing.assert_allclose(out[:m], want, rtol=1e-5, atol=1e-4)
        assert (out[m:] == 7.0).all()


@pytest.fixture(scope="module", params=[(64, 32, "a2a3", "FP16"), (512, 256, "a5", "BF16"),
                                        (512, 64, "a2a3", "BF16")],
                ids=lambda c: "-".join(map(str, c)))
def whole(request):
    K, N, platform, dtype = request.param
    return _compile(_whole(K, N, getattr(pl, dtype)), platform), request.param


@settings(max_examples=8, deadline=None)
@given(m=st.integers(1, 300), seed=st.integers(0, 3))
def test_a_whole_tensor_matmul_runs_every_row_count(whole, m, seed):
    compiled, (K, N, platform, dtype) = whole
    out, want = _run(compiled, platform, m, K, N, dtype, seed=seed)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)


def test_a_whole_tensor_matmul_is_one_loop_over_blocks_of_rows():
    compiled = _compile(_whole(512, 64, pl.BF16), "a2a3")
    loops = [s for s in compiled.program.get_function("k").body.stmts if isinstance(s, ForStmt)]
    assert len(loops) == 1 and loops[0].stop is M.var and loops[0].step.value == 128


def test_a_rhs_too_big_for_mat_is_refused_naming_the_tensor():
    with pytest.raises(PtocError, match=r"tensor 'a' has a dynamic shape \[M, 1024\].*matmul "
                                        r"whose whole rhs fits Mat"):
        _compile(_whole(1024, 512, pl.FP16), "a2a3")
