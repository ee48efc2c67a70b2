"""Mixed cube + vector kernels end to end (issue 12 acceptance): one pl.at scope compiles into
AIC + AIV kernels that run on the simulated core group with numpy-exact numerics and no race,
at a2a3 and a5; deleting any cross-core handshake from the generated PTO is reported; the
fused linear layer keeps its busiest pipe busy."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptoc.language as pl
from handshakes import handshake_mutants, reported
from ptoc import ir
from ptoc.ir.types import TensorType
from ptoc.pto import parse
from ptoc.runtime import RunConfig
from ptoc.sim import simulate_group

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PLATFORMS = ("a2a3sim", "a5sim")
BF16 = ml_dtypes.bfloat16


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FUSED = _example("07_fused_linear")
ATTENTION = _example("08_attention")
M, K, N = 128, 128, 128


@pl.program
class GemmVecGemm:
    @pl.function
    def main(self, a: pl.Tensor[[M, K], pl.BF16], b: pl.Tensor[[K, N], pl.BF16],
             bias: pl.Tensor[[M, N], pl.FP32], e: pl.Tensor[[N, N], pl.BF16],
             d: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)],
                   name_hint="gemm_vec_gemm"):
            h = pl.cast(pl.relu(pl.add(pl.matmul(a, b, out_dtype=pl.FP32), bias)), pl.BF16,
                        mode="rint")
            d[:] = pl.matmul(h, e, out_dtype=pl.FP32)
        return d


@pl.program
class GemmGemm:
    @pl.function
    def main(self, a: pl.Tensor[[M, K], pl.BF16], b: pl.Tensor[[K, N], pl.BF16],
             e: pl.Tensor[[N, N], pl.BF16], d: pl.Out[pl.Tensor[[M, N], pl.FP32]],
             h: pl.Out[pl.Tensor[[M, N], pl.BF16]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_gemm"):
            hb = pl.matmul(a, b, out_dtype=pl.BF16)
            h[:] = pl.matmul(a, b, out_dtype=pl.BF16)
            d[:] = pl.matmul(hb, e, out_dtype=pl.FP32)
        return d, h


def _f(x):
    return np.asarray(x, dtype=np.float64)


def _gemm_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((M, K)).astype(BF16), rng.standard_normal((K, N)).astype(BF16),
            rng.standard_normal((M, N)).astype(np.float32), rng.standard_normal((N, N)).astype(BF16))


def _run(program, args, platform, tmp_path):
    compiled = ir.compile(program, tmp_path / platform, platform=platform)
    with np.errstate(over="ignore"):
        result = compiled.run(*args, config=RunConfig(platform=platform))
    return compiled, result


@pytest.mark.parametrize("platform", PLATFORMS)
def test_fused_linear_1024_is_exact_race_free_and_keeps_the_busiest_pipe_busy(platform, tmp_path):
    x, w, bias, y = FUSED.inputs(1024)
    compiled, result = _run(FUSED.fused_linear(1024), (x, w, bias, y), platform, tmp_path)
    assert sorted(compiled.pto_text) == ["fused_linear"]            # one core group
    kinds = {k.name: k.attr("pto.kernel_kind").value
             for k in compiled.pto_module("fused_linear").kernels}
    assert kinds == {"fused_linear_aic": "cube", "fused_linear_aiv": "vector"}
    want = FUSED.reference(x, w, bias)
    assert np.abs(_f(y) - want).max() <= 2 ** -7 * np.abs(want).max()   # bf16 output rounding
    assert result.races == []
    group = result.runs[0].sim
    bound = max(group.pipe_busy.values())
    assert group.wall_cycles <= 1.15 * bound


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_gemm_feeding_a_vector_op_feeding_a_gemm_is_one_scope(platform, tmp_path):
    a, b, bias, e = _gemm_inputs()
    d = np.zeros((M, N), np.float32)
    compiled, result = _run(GemmVecGemm, (a, b, bias, e, d), platform, tmp_path)
    h = np.maximum(_f(a) @ _f(b) + bias, 0).astype(np.float32).astype(BF16)
    np.testing.assert_allclose(d, _f(h) @ _f(e), rtol=1e-5, atol=1e-3)
    assert result.races == []
    assert "tpop_from_aiv" in compiled.pto_text["gemm_vec_gemm"]      # vector -> cube


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_bf16_gemm_feeding_a_gemm_stays_on_the_cube(platform, tmp_path):
    a, b, _, e = _gemm_inputs(1)
    d, h = np.zeros((M, N), np.float32), np.zeros((M, N), BF16)
    compiled, result = _run(GemmGemm, (a, b, e, d, h), platform, tmp_path)
    hb = (_f(a) @ _f(b)).astype(np.float32).astype(BF16)
    np.testing.assert_allclose(_f(h), _f(hb), rtol=2 ** -7, atol=0)  # FIXPIPE: one bf16 ulp
    np.testing.assert_allclose(d, _f(h) @ _f(e), rtol=1e-5, atol=1e-3)   # from the kernel's h
    assert result.races == []
    text = compiled.pto_text["gemm_gemm"]
    assert "#pto.kernel_kind<cube>" in text and "vector" not in text and "tcvt" not in text


@pytest.mark.parametrize("platform", PLATFORMS)
def test_single_head_attention_over_512_keys(platform, tmp_path):
    q, kt, v, o = ATTENTION.inputs()
    assert ATTENTION.SEQ >= 512
    compiled, result = _run(ATTENTION.Attention, (q, kt, v, o), platform, tmp_path)
    assert np.abs(o - ATTENTION.reference(q, kt, v)).max() < 5e-3
    assert result.races == []
    text = compiled.pto_text["attention"]
    for op in ("tpush_to_aiv", "tpop_from_aic", "tpush_to_aic", "tpop_from_aiv", "trowmax",
               "trowsum"):
        assert op in text


def _group_args(compiled, name, named: dict) -> list:
    """The group's arguments in parameter order (by name); the GM pipe buffer (a2a3) is
    zero-filled."""
    args = []
    for p in compiled.program.get_function(name).params:
        ty = p.var.type
        assert isinstance(ty, TensorType)
        args.append(named[p.var.name] if p.var.name in named else
                    np.zeros(tuple(ty.shape), ty.dtype.numpy))
    return args


def _fused_case():
    x, w, bias, y = FUSED.inputs(256)
    return {"x": x, "w": w, "bias": bias, "y": y}, {"y": FUSED.reference(x, w, bias)}, 2e-2


def _gvg_case():
    a, b, bias, e = _gemm_inputs()
    h = np.maximum(_f(a) @ _f(b) + bias, 0).astype(np.float32).astype(BF16)
    named = {"a": a, "b": b, "bias": bias, "e": e, "d": np.zeros((M, N), np.float32)}
    return named, {"d": _f(h) @ _f(e)}, 1e-3


def _attention_case():
    q, kt, v, o = ATTENTION.inputs()
    return {"q": q, "kt": kt, "v": v, "o": o}, {"o": ATTENTION.reference(q, kt, v)}, 5e-3


CASES = {"fused_linear": (lambda: FUSED.fused_linear(256), _fused_case),
         "gemm_vec_gemm": (lambda: GemmVecGemm, _gvg_case),
         "attention": (lambda: ATTENTION.Attention, _attention_case)}


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_deleting_any_cross_core_handshake_of_the_generated_pto_is_reported(case, platform,
                                                                            tmp_path):
    make, inputs = CASES[case]
    compiled = ir.compile(make(), tmp_path / case, platform=platform)
    text = compiled.pto_text[case]
    named, want, tol = inputs()
    params = [p.var.name for p in compiled.program.get_function(case).params]
    golden = {f"arg{params.index(name)}": value for name, value in want.items()}
    args = _group_args(compiled, case, named)
    target = platform.removesuffix("sim")

    def run(pto):
        with np.errstate(over="ignore"):
            return simulate_group(parse(pto), [a.copy() for a in args], target=target)
    assert reported(lambda: run(text), golden, rtol=tol, atol=tol) is None
    mutants = list(handshake_mutants(text))
    assert len(mutants) >= 4
    for label, mutant in mutants:
        how = reported(lambda: run(mutant), golden, rtol=tol, atol=tol)
        assert how is not None, f"{case} on {platform}: deleting {label} went unnoticed"


def test_a_core_group_run_writes_a_trace_with_a_process_per_core(tmp_path):
    a, b, bias, _ = _gemm_inputs()
    d = np.zeros((M, N), np.float32)
    compiled = ir.compile(GemmVecGemm, tmp_path / "c")
    result = compiled.run(a, b, bias, _gemm_inputs()[3], d, config=RunConfig(trace=True))
    path = result.runs[0].trace_path
    import json

    names = {e["args"]["name"].split(" ")[0] for e in json.loads(path.read_text())["traceEvents"]
             if e.get("name") == "process_name"}
    assert {"aic", "aiv0", "aiv1"} <= names


@pl.program
class MatmulAndVector:
    """A direct-store GEMM and an unrelated vector op in one mixed scope (no split)."""

    @pl.function
    def main(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[64, 256], pl.FP32],
             x: pl.Tensor[[64, 128], pl.FP32], d: pl.Out[pl.Tensor[[256, 256], pl.FP32]],
             e: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_and_vec"):
            d[:] = pl.matmul(a, b, out_dtype=pl.FP32)
            e[:] = pl.relu(x)
        return d, e


@pl.program
class MatmulEpilogue:
    """A tensor-level GEMM whose result feeds a vector epilogue (pushed to the AIVs)."""

    @pl.function
    def main(self, a: pl.Tensor[[128, 256], pl.BF16], b: pl.Tensor[[256, 128], pl.BF16],
             bias: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)],
                   name_hint="mm_bias"):
            out[:] = pl.relu(pl.add(pl.matmul(a, b, out_dtype=pl.FP32), bias))
        return out


def _decisions(out, kind):
    import json

    data = json.loads((out / "report" / "decisions.json").read_text())["decisions"]
    return [d for d in data if d["kind"] == kind]


def test_the_cube_part_of_a_mixed_scope_keeps_dbc_and_the_unsplit_aivs_do_not_race(tmp_path):
    """dbC, L0 tiling and the flag check apply to the AIC's GEMM; without a split, lane 1 of
    the AIVs replays no work, so the two AIVs never store the same bytes (PyPTO's no-split
    dual dispatch)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((256, 64)).astype(np.float32), \
        rng.standard_normal((64, 256)).astype(np.float32)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    d, e = np.zeros((256, 256), np.float32), np.zeros((64, 128), np.float32)
    out = tmp_path / "c"
    compiled = ir.compile(MatmulAndVector, out, enable_pypto_l0c_double_buffer=True)
    result = compiled.run(a, b, x, d, e)
    np.testing.assert_allclose(d, _f(a) @ _f(b), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(e, np.maximum(x, 0))
    assert result.races == []
    (choice,) = _decisions(out, "tile_choice")
    assert choice["double_buffer_c"] and choice["m"] < 256       # an L0 grid, dbC=2
    (dbc,) = _decisions(out, "dbc")
    assert dbc["accepted"] and dbc["gate"] == "chooser" and "simulated_speedup" in dbc
    kinds = {k.attr("pto.kernel_kind").value for k in compiled.pto_module("mm_and_vec").kernels}
    assert kinds == {"cube", "vector"}


def test_a_gemm_epilogue_scope_tiles_and_pipelines_the_cube_part(tmp_path):
    """The GEMM feeding the epilogue gets its L0 tiles and a pipelined K loop on the AIC; its
    dbC is turned down at the placement gate, as PyPTO's (the result is pushed to the AIVs,
    neither stored to GM nor kept in a Mat scratch)."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((128, 256)).astype(BF16)
    b = rng.standard_normal((256, 128)).astype(BF16)
    bias = rng.standard_normal((128, 128)).astype(np.float32)
    o = np.zeros((128, 128), np.float32)
    out = tmp_path / "c"
    compiled = ir.compile(MatmulEpilogue, out, enable_pypto_l0c_double_buffer=True)
    result = compiled.run(a, b, bias, o)
    np.testing.assert_allclose(o, np.maximum(_f(a) @ _f(b) + bias, 0), rtol=1e-5, atol=1e-3)
    assert result.races == []
    (choice,) = _decisions(out, "tile_choice")
    assert choice["k"] < 256 or choice["m"] < 128
    gates = {(d["gate"], d["accepted"]) for d in _decisions(out, "dbc")}
    assert ("placement", False) in gates
    aic = (out / "passes_dump").glob("*_after_SkewCrossCorePipeline.py")
    text = next(aic).read_text()
    assert "def mm_bias_aic" in text and "pl.pipeline(" in text.split("def mm_bias_aiv")[0]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_under_ptoas_plan_memory_places_the_rings_below_the_tiles(platform, tmp_path):
    """PTOAS: codegen leaves each ring's base AUTO (-1) and the PTO planner puts it at the
    bottom of its space, tiles above; the kernels stay exact and race-free."""
    a, b, bias, e = _gemm_inputs()
    d = np.zeros((M, N), np.float32)
    compiled = ir.compile(GemmVecGemm, tmp_path / "g", platform=platform,
                          memory_planner="PTOAS")
    with np.errstate(over="ignore"):
        result = compiled.run(a, b, bias, e, d, config=RunConfig(platform=platform))
    h = np.maximum(_f(a) @ _f(b) + bias, 0).astype(np.float32).astype(BF16)
    np.testing.assert_allclose(d, _f(h) @ _f(e), rtol=1e-5, atol=1e-3)
    assert result.races == []
    text = compiled.pto_text["gemm_vec_gemm"]
    assert "base = -1" not in text and "pto.reserve_buffer" in text
    q, kt, v, o = ATTENTION.inputs()
    compiled = ir.compile(ATTENTION.Attention, tmp_path / "a", platform=platform,
                          memory_planner="PTOAS")
    with np.errstate(over="ignore"):
        result = compiled.run(q, kt, v, o, config=RunConfig(platform=platform))
    assert np.abs(o - ATTENTION.reference(q, kt, v)).max() < 5e-3 and result.races == []
