"""The opt-in dbC=2 L0C double buffer under the PYPTO planner, end to end (issue 6, items 1, 2
and 6): PyPTO's ``test_dbc2_double_buffer.py`` shapes compiled by ``ir.compile`` with the flag
off and on, run on the simulator, checked against numpy with zero races; the Acc (L0C)
buffers the two memory passes keep; split-K ``matmul_acc`` chains on one buffer.

The PTOAS variants of the same programs live in ``test_ptoas_planner.py``; the simulated
drain/MAD overlap is in ``test_dbc_overlap.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.backend import get_target
from ptoc.dtypes import DataType, MemorySpace
from ptoc.ir.nodes import AssignStmt, ForStmt
from ptoc.passes import MemoryPlanner, PassContext
from ptoc.runtime import RunConfig

import dbc_programs as dp

A2A3 = get_target("a2a3")

# (M, N) -> PyPTO's dbC tile (m, n) with K = 64 FP32 (pypto-passes.md §14.1 / §14.4) and the
# number of output tiles; the 1-D and tail grids follow from the same chooser.
EXPECTED_TILE = {(160, 160): (80, 128, 4), (144, 144): (48, 128, 6), (256, 256): (32, 256, 8),
                 (448, 448): (112, 128, 16), (384, 256): (32, 256, 12), (16, 256): (16, 128, 2),
                 (256, 16): (128, 16, 2), (320, 320): (64, 128, 15)}

_CACHE: dict = {}


def compile_and_run(tmp_path_factory, M, N, flag):
    """Compile (PYPTO planner) and simulate one direct-store grid once per session."""
    key = ("direct", M, N, flag)
    if key not in _CACHE:
        out = tmp_path_factory.mktemp(f"dbc_{M}x{N}_{int(flag)}")
        compiled = ir.compile(dp.direct_store(M, N), out, dump_passes=True,
                              enable_pypto_l0c_double_buffer=flag)
        inputs, golden = dp.direct_store_inputs(M, N)
        result = compiled.run(*inputs, config=RunConfig(rtol=1e-3, atol=1e-3))
        _CACHE[key] = (compiled, result, golden)
    return _CACHE[key]


def acc_depth_hints(compiled) -> list:
    return [d for d in compiled.diagnostics if d.code == "PH-MR-001" and " in Acc," in d.message]


def dbc_markers_after_auto_tile(compiled) -> int:
    dump = next((compiled.output_dir / "passes_dump").glob("*_after_AutoTileMatmulL0.py"))
    return dump.read_text().count('"pipeline_double_buffer_c": True')


def acc_matmuls_by_loop(program, kernel="kernel"):
    """``[(loop body index or None, memref base name)]`` for every Acc-producing matmul of the
    kernel; matmuls directly in the same innermost loop body share a positive index (a body
    holding a nested loop gets a negative one; None: straight-line)."""
    found = []
    bodies = [0]

    def walk(stmts, body):
        for s in stmts:
            if isinstance(s, ForStmt):
                bodies[0] += 1
                innermost = not any(isinstance(t, ForStmt) for t in s.body.stmts)
                walk(s.body.stmts, bodies[0] if innermost else -bodies[0])
            elif (isinstance(s, AssignStmt) and getattr(s.value, "op", "").startswith("tile.matmul")
                  and getattr(s.var.type, "memory_space", None) is MemorySpace.Acc):
                found.append((body, s.var.type.memref.base.name))
    walk(program.get_function(kernel).body.stmts, None)
    return found


# ---- the direct-store grids ------------------------------------------------------------------

GRID_IDS = [f"{m}x{n}" for m, n in dp.DIRECT_STORE_GRIDS]


@pytest.mark.parametrize("M,N", dp.DIRECT_STORE_GRIDS, ids=GRID_IDS)
def test_chooser_picks_pyptos_dbc_tile(M, N):
    m, n, tiles = EXPECTED_TILE[(M, N)]
    res = dp.chooser(M, N, dbc=True)
    assert (res.m, res.n, res.k) == (m, n, 64)
    assert res.double_buffer_c
    assert dp.tile_count(M, N, res.m, res.n) == tiles


@pytest.mark.parametrize("flag", [False, True], ids=["flag_off", "flag_on"])
@pytest.mark.parametrize("M,N", dp.DIRECT_STORE_GRIDS, ids=GRID_IDS)
def test_direct_store_grid(tmp_path_factory, M, N, flag):
    compiled, result, golden = compile_and_run(tmp_path_factory, M, N, flag)
    assert compiled.memory_planner is MemoryPlanner.PYPTO
    assert compiled.enable_pypto_l0c_double_buffer is flag
    assert result.races == []
    np.testing.assert_allclose(result.outputs["out"], golden, rtol=1e-3, atol=1e-3)
    bufs = dp.acc_buffers(compiled)
    assert not acc_depth_hints(compiled)
    if not flag:
        assert len(bufs) == 1 and bufs[0][0] == 0
        assert dbc_markers_after_auto_tile(compiled) == 0
        return
    m, n, _ = EXPECTED_TILE[(M, N)]
    slot = dp.align32(A2A3.acc_physical_bytes(m, n, DataType.FP32))
    # Exactly two L0C buffers, at {0, align32(physical Acc bytes)}; tail tiles reuse them.
    assert [addr for addr, _ in bufs] == [0, slot]
    assert all(size == slot for _, size in bufs)
    assert dbc_markers_after_auto_tile(compiled) == 1


@pytest.mark.parametrize("M,N", [(160, 160), (448, 448), (320, 320)], ids=str)
def test_dbc_pair_is_co_live_in_the_loop(tmp_path_factory, M, N):
    """The two accumulators of one M,M,S,S chunk sit on different buffers; the straight-line
    tail tiles (never double-buffered) coalesce onto the first pair's buffers by lifetime."""
    compiled, _, _ = compile_and_run(tmp_path_factory, M, N, True)
    matmuls = acc_matmuls_by_loop(compiled.program)
    loops: dict[int, list[str]] = {}
    for body, base in matmuls:
        if body is not None:
            loops.setdefault(body, []).append(base)
    # The innermost (dbC) loop bodies hold one M0 M1 chunk each; an outer body holds only
    # the inner loops' single tail clones.
    dbc_loops = {body: bases for body, bases in loops.items() if body > 0}
    assert dbc_loops and all(len(bases) == 2 for bases in dbc_loops.values())
    pair = set(next(iter(dbc_loops.values())))
    assert len(pair) == 2
    assert all(set(bases) == pair for bases in dbc_loops.values())
    assert {base for _, base in matmuls} == pair


def test_flag_off_keeps_one_accumulator_and_drains_each_tile_before_the_next(tmp_path_factory):
    """Without the flag the chooser never returns dbC under PYPTO (§9.5): every tile's MADs
    are followed by its drain before the next tile starts (no ``SS``), on one Acc buffer."""
    for M, N in [(448, 448), (256, 256)]:
        compiled, _, _ = compile_and_run(tmp_path_factory, M, N, False)
        order = dp.op_order(compiled.program)
        assert order.count("S") >= 1 and "SS" not in order, order
        assert len({base for _, base in acc_matmuls_by_loop(compiled.program)}) == 1


# ---- the Mat-scratch chain -------------------------------------------------------------------

@pytest.mark.parametrize("flag", [False, True], ids=["flag_off", "flag_on"])
def test_mat_scratch_chain_256x64x256_bf16(tmp_path, flag):
    compiled = ir.compile(dp.mat_scratch_chain(), tmp_path, dump_passes=True,
                          enable_pypto_l0c_double_buffer=flag)
    inputs, golden = dp.mat_scratch_inputs()
    result = compiled.run(*inputs)
    assert result.races == []
    # The golden rounds the intermediate to BF16 as the FIXPIPE rint cast does.
    np.testing.assert_allclose(result.outputs["out"], golden, rtol=1e-3, atol=1e-3)
    assert not acc_depth_hints(compiled)
    bufs = dp.acc_buffers(compiled)
    if flag:
        # Producer (64x256 tiles, 64 KiB) and consumer (64x64, K=256) each get a dbC loop;
        # the consumer's pair reuses the producer's two buffers.
        assert dbc_markers_after_auto_tile(compiled) == 2
        assert [addr for addr, _ in bufs] == [0, 65536]
        assert dp.op_order(compiled.program) == "MMSSMMSS"
    else:
        assert dbc_markers_after_auto_tile(compiled) == 0
        assert len(bufs) == 1


# ---- split-K matmul_acc chains ---------------------------------------------------------------

def tensor_matmul_assemble(M, K, N):
    """``pl.matmul(a, b, out_dtype=FP32)`` assembled into ``out`` (PyPTO's acc-coalesce ST)."""
    @pl.program
    class TensorMatmul:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[M, K], pl.BF16], b: pl.Tensor[[K, N], pl.BF16],
                   out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
            c = pl.matmul(a, b, out_dtype=pl.FP32)
            out = pl.assemble(out, c, [0, 0])
            return out
    return TensorMatmul


@pytest.mark.parametrize("M,K,N,acc_bytes", [(512, 192, 512, 131072), (16, 2048, 64, 4096)],
                         ids=["512x192x512_splitk_grid", "16x2048x64_k_loop"])
def test_split_k_accumulator_chain_coalesces_onto_one_buffer(tmp_path, M, K, N, acc_bytes):
    """Each output tile's ``matmul`` + loop-carried ``matmul_acc`` chain (the peeled
    ``ko == 0`` if-phi) lives on ONE L0C buffer: 512x192x512 uses 128x256 tiles whose 128 KiB
    accumulator is the whole L0C, so a phantom second copy (PyPTO #1924) could not fit."""
    compiled = ir.compile(tensor_matmul_assemble(M, K, N), tmp_path, dump_passes=False)
    assert dp.acc_buffers(compiled) == [(0, acc_bytes)]
    assert "MM" in dp.op_order(compiled.program)  # a chain, not one MAD per drain
    rng = np.random.default_rng(M + K + N)
    a = rng.standard_normal((M, K)).astype(dp.BF16)
    b = rng.standard_normal((K, N)).astype(dp.BF16)
    result = compiled.run(a, b, np.zeros((M, N), np.float32), config=RunConfig(sim_mode="fast"))
    assert result.races == []
    np.testing.assert_allclose(result.outputs["out"], a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-3, atol=1e-3)


def test_k_loop_accumulator_stays_single_with_the_flag(tmp_path):
    """K-only loops never carry dbC (§3.3): the flag changes nothing for 16x2048x64."""
    off = ir.compile(tensor_matmul_assemble(16, 2048, 64), tmp_path / "off", dump_passes=False)
    on = ir.compile(tensor_matmul_assemble(16, 2048, 64), tmp_path / "on", dump_passes=False,
                    enable_pypto_l0c_double_buffer=True)
    assert dp.acc_buffers(on) == dp.acc_buffers(off) == [(0, 4096)]
    assert on.pto_text == off.pto_text


def test_user_k_loop_with_matmul_acc_keeps_one_buffer(tmp_path):
    """A user-written K loop (matmul_acc with init_cond) is left alone and stays on one Acc."""
    from cases import KLoopInitCond

    with PassContext(enable_pypto_l0c_double_buffer=True):
        compiled = ir.compile(KLoopInitCond().get_program(), tmp_path, dump_passes=False)
    assert len(dp.acc_buffers(compiled)) == 1


# ---- PyPTO's own dumps: the same Acc allocations, no perf hint from MemoryReuse --------------

# (M, K, N, dtype, flag) -> PyPTO's Acc tile.allocs after AllocateMemoryAddr: [(name, bytes)]
# and addresses, read from pypto-oracle/dumps/*/35_after_AllocateMemoryAddr.py.
DUMPED = {(160, 64, 160, "FP32", False): ([("mem_acc_5", 102400)], [0]),
          (160, 64, 160, "FP32", True): ([("mem_acc_8", 40960), ("mem_acc_9", 40960)], [0, 40960]),
          (256, 64, 256, "BF16", False): ([("mem_acc_8", 131072)], [0]),
          (256, 64, 256, "BF16", True): ([("mem_acc_8", 65536), ("mem_acc_9", 65536)], [0, 65536])}


@pytest.mark.parametrize("key", list(DUMPED), ids=lambda k: f"{k[0]}x{k[1]}x{k[2]}_{k[3]}_{int(k[4])}")
def test_oracle_dump_programs_allocate_like_pypto_without_depth_hints(tmp_path, key):
    """PyPTO reports no PH-MR-001 at all for these programs (their perf_hints.log holds
    only PH001 granularity hints), flag off or on; ptoc's Acc allocs match by name and size."""
    M, K, N, dtype, flag = key
    compiled = ir.compile(dp.direct_store(M, N, K, dtype), tmp_path, dump_passes=False,
                          enable_pypto_l0c_double_buffer=flag)
    assert not [d for d in compiled.diagnostics if d.code == "PH-MR-001"]
    allocs, addrs = DUMPED[key]
    acc = compiled.allocations_in(MemorySpace.Acc)
    assert sorted((a.name, a.size) for a in acc) == allocs
    assert sorted(a.addr for a in acc) == addrs
