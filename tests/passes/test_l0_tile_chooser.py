"""ChooseL0Tile: PyPTO's own answers, the reference pins, an independent brute force, errors.

The brute force below is deliberately written from reference/pypto-passes.md §2 without
importing anything from the implementation but the public config/result types: plain nested
loops over every (regime, m, n, k), direct footprint checks instead of loop bounds, and a
fully spelled-out sort key.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from pathlib import Path

import pytest

from ptoc.backend.l0_cost_model import A2A3_L0_COST_MODEL, A5_L0_COST_MODEL, l0_cost_model_for
from ptoc.backend.targets import get_target
from ptoc.dtypes import MemorySpace
from ptoc.errors import PassError, PtocError
from ptoc.passes import L0TileConfig, L0TileResult, Stationarity, choose_l0_tile
from ptoc.passes.l0_tile_chooser import (
    L0TileCandidate, L0TileRanking, clear_chooser_memo, rank_l0_tiles,
)
from oracle_data import ORACLE_ROOT

OS, AS, BS = Stationarity.OutputStationary, Stationarity.AStationary, Stationarity.BStationary
ORACLE = (ORACLE_ROOT / "chooser_cases.json")
ALL_GATES = dict(allow_a_stationary=True, allow_b_stationary=True, allow_double_buffer_c=True,
                 allow_k_boundary=True)
FP32 = dict(bytes_a=4, bytes_b=4, bytes_c=4)


def tile(r: L0TileResult) -> tuple[int, int, int]:
    return (r.m, r.n, r.k)


# ---------------------------------------------------------------------------------------
# (a) PyPTO's own answers
# ---------------------------------------------------------------------------------------

def _oracle_cases() -> list:
    if not ORACLE.exists():
        return []
    return json.loads(ORACLE.read_text())["cases"]


@pytest.mark.skipif(not ORACLE.exists(), reason="PyPTO oracle data not available")
@pytest.mark.parametrize("case", _oracle_cases(), ids=lambda c: "M{M}N{N}K{K}b{bytes_a}".format(
    **c["config"]))
def test_matches_pypto_oracle(case):
    r = choose_l0_tile(L0TileConfig(**case["config"]))
    exp = case["expected"]
    assert tile(r) == (exp["m"], exp["n"], exp["k"])
    assert r.stationarity.value == exp["stationarity"]
    assert r.double_buffer_c == exp["double_buffer_c"]
    assert r.os_holds_a == exp["os_holds_a"]
    assert abs(r.estimated_cost_cycles - exp["wall"]) <= 1


def test_oracle_has_300_cases():
    if ORACLE.exists():
        assert len(_oracle_cases()) == 300


# ---------------------------------------------------------------------------------------
# (b) reference values (pypto-passes.md §2.9) and the chooser test pins (§14.5)
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("M,N,expected_tile,stat,holds_a,tiles,acc_bytes", [
    (160, 160, (80, 128, 64), OS, False, 4, 40960),
    (144, 144, (48, 128, 64), OS, False, 6, 24576),
    (256, 256, (32, 256, 64), BS, None, 8, 32768),
    (448, 448, (112, 128, 64), OS, None, 16, 57344),
    (384, 256, (32, 256, 64), BS, None, 12, 32768),
    (320, 320, (64, 128, 64), OS, None, 15, 32768),
    (16, 256, (16, 128, 64), OS, True, 2, 8192),
    (256, 16, (128, 16, 64), OS, False, 2, 8192),
])
def test_fp32_dbc_reference_table(M, N, expected_tile, stat, holds_a, tiles, acc_bytes):
    r = choose_l0_tile(L0TileConfig(M=M, N=N, K=64, **FP32, **ALL_GATES))
    assert tile(r) == expected_tile
    assert r.stationarity is stat
    assert r.double_buffer_c
    if holds_a is not None:
        assert r.os_holds_a is holds_a
    assert math.ceil(M / r.m) * math.ceil(N / r.n) == tiles
    assert r.m * r.n * 4 == acc_bytes


@pytest.mark.parametrize("cfg,expected_tile,dbc", [
    (dict(M=256, N=256, K=64, **ALL_GATES), (64, 256, 64), True),      # 256x64x256 chained producer
    (dict(M=256, N=64, K=256, **ALL_GATES), (64, 64, 256), True),      # its consumer
    (dict(M=256, N=256, K=64, allow_k_boundary=True), (128, 256, 64), False),
    (dict(M=320, N=320, K=64, allow_k_boundary=True), (160, 128, 64), False),
    (dict(M=16, N=256, K=512), (16, 256, 64), False),
    (dict(M=4096, N=4096, K=4096), (128, 256, 64), False),
    (dict(M=4096, N=4096, K=4096, allow_double_buffer_c=True), (128, 256, 64), False),
    (dict(M=128, N=128, K=192), (128, 128, 96), False),                # not the largest k
    (dict(M=256, N=256, K=64), (128, 256, 64), False),
    (dict(M=272, N=272, K=64), (144, 128, 64), False),
    (dict(M=320, N=320, K=64), (160, 128, 64), False),
    (dict(M=256, N=256, K=256, **FP32), (128, 256, 32), False),
    (dict(M=512, N=512, K=64, allow_double_buffer_c=True), (64, 256, 64), True),
    (dict(M=16, N=256, K=128, allow_double_buffer_c=True), (16, 128, 128), True),
    (dict(M=256, N=16, K=128, allow_double_buffer_c=True), (128, 16, 128), True),
])
def test_bf16_reference_pins(cfg, expected_tile, dbc):
    r = choose_l0_tile(L0TileConfig(**cfg))
    assert tile(r) == expected_tile
    assert r.double_buffer_c is dbc
    assert r.perf_hint == ""


def test_model_walls_of_hw_model_table():
    """hw-model.md §5.4: dbC=1 and dbC=2 walls of the OS-only port for 256x256x64 / 512x512x64."""
    assert choose_l0_tile(L0TileConfig(M=256, N=256, K=64)).estimated_cost_cycles == 3616
    assert choose_l0_tile(L0TileConfig(M=512, N=512, K=64)).estimated_cost_cycles == 14462
    r = choose_l0_tile(L0TileConfig(M=512, N=512, K=64, allow_double_buffer_c=True))
    assert r.estimated_cost_cycles == 11787


def test_double_buffer_c_chosen_when_drain_bound():
    off = choose_l0_tile(L0TileConfig(M=512, N=512, K=64))
    on = choose_l0_tile(L0TileConfig(M=512, N=512, K=64, allow_double_buffer_c=True))
    assert not off.double_buffer_c and on.double_buffer_c
    assert on.k == 64 and on.estimated_cost_cycles < off.estimated_cost_cycles


def test_already_l0_sized_never_becomes_a_grid():
    """16x256x64 fits L0 whole (wall 702); the dbC grid (16,128,64) would model at 670 but
    is never explored, and rank_l0_tiles lists baseline tiles only."""
    cfg = L0TileConfig(M=16, N=256, K=64, **ALL_GATES)
    r = choose_l0_tile(cfg)
    assert tile(r) == (16, 256, 64) and r.estimated_cost_cycles == 702
    assert r.stationarity is OS and not r.double_buffer_c
    ranked = rank_l0_tiles(cfg, top=100)
    assert all(c.stationarity is OS and not c.double_buffer_c for c in ranked)


def test_operand_stationary_requires_gate():
    gated = choose_l0_tile(L0TileConfig(M=256, N=256, K=256, allow_double_buffer_c=True))
    assert gated.stationarity is OS
    opened = choose_l0_tile(L0TileConfig(M=256, N=256, K=256, **ALL_GATES))
    assert opened.stationarity in (AS, BS) and opened.k == 256


def test_aspect_swap_broken_by_per_row_drain():
    """256x256x64: (128,256) and (256,128) do the same work; fewer drained rows wins."""
    r = choose_l0_tile(L0TileConfig(M=256, N=256, K=64))
    assert tile(r) == (128, 256, 64)


def test_k_must_divide_K_without_boundary_flag():
    r = choose_l0_tile(L0TileConfig(M=16, N=320, K=128))
    assert 128 % r.k == 0
    peel = choose_l0_tile(L0TileConfig(M=16, N=320, K=176, allow_k_boundary=True))
    assert peel.k % 16 == 0


@pytest.mark.parametrize("flag", [False, True])
def test_non_16_aligned_k_raises_with_and_without_boundary_flag(flag):
    with pytest.raises(PassError, match="no legal"):
        choose_l0_tile(L0TileConfig(M=64, N=64, K=40, allow_k_boundary=flag))


def test_padding_only_with_allow_padding():
    with pytest.raises(PassError, match="allow_padding=false but M=7"):
        choose_l0_tile(L0TileConfig(M=7, N=64, K=64))
    r = choose_l0_tile(L0TileConfig(M=7, N=64, K=64, allow_padding=True))
    assert tile(r) == (16, 64, 64)
    assert "M=7" in r.perf_hint
    aligned = choose_l0_tile(L0TileConfig(M=64, N=64, K=64, allow_padding=True))
    assert aligned.perf_hint == ""


def test_c_read_raises_traffic_only():
    plain = choose_l0_tile(L0TileConfig(M=256, N=256, K=128))
    read = choose_l0_tile(L0TileConfig(M=256, N=256, K=128, c_read=True))
    assert tile(plain) == tile(read)
    assert read.estimated_cost_cycles == plain.estimated_cost_cycles
    assert read.estimated_traffic_bytes - plain.estimated_traffic_bytes == 4 * 256 * 256


@pytest.mark.parametrize("cfg,expected_tile", [
    (dict(M=16, N=192, K=128, min_n=128, align_n=128), (16, 128, 128)),
    (dict(M=192, N=16, K=128, min_m=128, align_m=128), (128, 16, 128)),
])
def test_peeled_tail_is_not_a_dbc_stage(cfg, expected_tile):
    r = choose_l0_tile(L0TileConfig(**cfg, allow_double_buffer_c=True))
    assert tile(r) == expected_tile
    assert not r.double_buffer_c


def test_int32_accumulator_uses_physical_rows():
    int8 = dict(bytes_a=1, bytes_b=1, bytes_c=4, l0c_align_m=32)
    assert tile(choose_l0_tile(L0TileConfig(M=16, N=1024, K=32, **int8))) == (16, 1024, 32)
    r = choose_l0_tile(L0TileConfig(M=16, N=1152, K=32, **int8))
    assert r.n < 1152
    assert 32 * r.n * 4 <= 131072


def test_box_alignment_charged_before_selection():
    for box in (dict(box_align_m=48), dict(box_align_n=96)):
        cfg = L0TileConfig(M=256, N=256, K=64, **box)
        r = choose_l0_tile(cfg)
        rows = -(-(-(-r.m // cfg.box_align_m) * cfg.box_align_m) // 16) * 16
        cols = -(-r.n // cfg.box_align_n) * cfg.box_align_n
        assert rows * cols * 4 <= cfg.l0c_bytes


def test_boxed_operand_limits_k():
    # m=16 boxed to 512 rows: the A tile 512 x k must fit half of L0A (16384 elements).
    r = choose_l0_tile(L0TileConfig(M=16, N=64, K=256, box_align_m=512, allow_k_boundary=True))
    assert 512 * r.k <= 16384


@pytest.mark.parametrize("M,N,K,ba", [
    (128, 128, 64, 2), (512, 384, 256, 2), (1024, 1024, 1024, 2), (80, 1200, 96, 2),
    (2000, 48, 512, 4), (96, 96, 2048, 4), (640, 640, 128, 1), (33, 500, 64, 2),
])
def test_invariants_capacity_alignment_divisibility(M, N, K, ba):
    for gates in ({}, ALL_GATES):
        cfg = L0TileConfig(M=M, N=N, K=K, bytes_a=ba, bytes_b=ba, **gates)
        r = choose_l0_tile(cfg)
        db_a = 1 if r.stationarity is AS else 2
        db_b = 1 if r.stationarity is BS else 2
        assert r.m % 16 == r.n % 16 == r.k % 16 == 0
        assert r.m <= M and r.n <= N and r.k <= K
        assert r.m * r.k * ba * db_a <= cfg.l0a_bytes
        assert r.k * r.n * ba * db_b <= cfg.l0b_bytes
        assert r.m * r.n * 4 * (2 if r.double_buffer_c else 1) <= cfg.l0c_bytes
        if not cfg.allow_k_boundary:
            assert K % r.k == 0
        if r.double_buffer_c or r.stationarity is not OS:
            assert r.k == K


def test_n_caps():
    assert choose_l0_tile(L0TileConfig(M=512, N=512, K=512, max_n=64)).n <= 64
    capped = L0TileConfig(M=512, N=512, K=64, max_n=256, max_n_pipelined=64,
                          max_n_nested_pipelined=32, **ALL_GATES)
    for c in rank_l0_tiles(capped, top=400):
        full_k_grid = c.k == 64 and (c.m, c.n) != (512, 512)
        if full_k_grid and c.stationarity is not BS:
            assert c.n <= 64
            if c.stationarity is OS and c.os_holds_a:
                assert c.n <= 32
        assert c.n <= 256


def test_traffic_metadata_matches_held_operands():
    M, N, K = 512, 512, 64
    r = choose_l0_tile(L0TileConfig(M=M, N=N, K=K))
    tm, tn = -(-M // r.m), -(-N // r.n)
    assert r.k == K and r.stationarity is OS
    a = 2 * M * K * (1 if r.os_holds_a else tn)
    b = 2 * K * N * (tm if r.os_holds_a else 1)
    assert r.estimated_traffic_bytes == a + b + 4 * M * N
    split = choose_l0_tile(L0TileConfig(M=256, N=256, K=256, **FP32))
    assert split.k < 256
    tm, tn = 256 // split.m, 256 // split.n
    assert split.estimated_traffic_bytes == (4 * 256 * 256 * tn + 4 * 256 * 256 * tm
                                             + 4 * 256 * 256)
    assert split.padded_compute_volume == 256 * 256 * 256


# ---------------------------------------------------------------------------------------
# rank_l0_tiles

@pytest.mark.skipif(not ORACLE.exists(), reason="PyPTO oracle data not available")
def test_memo_changes_no_answer():
    """The process-wide memo scores a regime once per problem whatever the regime gates,
    and keeps each choice and ranking: every flag combination of every oracle problem,
    asked in a shuffled order with everything remembered (and each ask twice), gives the
    choice (or error) and the top-12 ranking it gives computed afresh."""
    flags = ("allow_a_stationary", "allow_b_stationary", "allow_double_buffer_c",
             "allow_k_boundary")   # the last one does change scores: it must not be shared
    asks = [dataclasses.replace(L0TileConfig(**case["config"]), **dict(zip(flags, bits)))
            for case in _oracle_cases()
            for bits in [(a, b, d, p) for a in (False, True) for b in (False, True)
                         for d in (False, True) for p in (False, True)]]
    random.Random(7).shuffle(asks)
    def answer(c):
        try:
            return choose_l0_tile(c), rank_l0_tiles(c, top=12), L0TileRanking.of(c).top(3, True)
        except PassError as exc:
            return str(exc)

    def alone(c):
        clear_chooser_memo()
        return answer(c)

    fresh = [alone(c) for c in asks]
    clear_chooser_memo()
    assert [answer(c) for c in asks] == fresh
    assert [answer(c) for c in asks] == fresh


def test_memo_is_keyed_on_every_field():
    """A remembered answer is never given to a config that differs in any field: the same
    problem on another target, with other element sizes or another cost constant."""
    base = L0TileConfig.for_target("a2a3", M=256, N=256, K=256, **ALL_GATES)
    variants = [base, L0TileConfig.for_target("a5", M=256, N=256, K=256, **ALL_GATES),
                dataclasses.replace(base, bytes_a=4, bytes_b=4),
                dataclasses.replace(base, bw_drain=base.bw_drain / 4),
                dataclasses.replace(base, allow_double_buffer_c=False)]
    clear_chooser_memo()
    warm = [(choose_l0_tile(c), rank_l0_tiles(c, top=12)) for c in variants]
    cold = []
    for c in variants:
        clear_chooser_memo()
        cold.append((choose_l0_tile(c), rank_l0_tiles(c, top=12)))
    assert warm == cold
    assert len({(r.m, r.n, r.k, r.estimated_cost_cycles) for r, _ in warm}) > 1


def test_memo_tells_an_int_field_from_an_equal_float():
    """``M=8`` and ``M=8.0`` are equal keys by value, but the result is built from the
    config's own values (traffic, the padding hint): a remembered answer to one is not
    given to the other."""
    ints = L0TileConfig(M=8, N=64, K=64, allow_padding=True)
    floats = dataclasses.replace(ints, M=8.0)
    clear_chooser_memo()
    fresh = choose_l0_tile(floats)
    clear_chooser_memo()
    choose_l0_tile(ints)
    warm = choose_l0_tile(floats)
    assert "M=8.0 <" in fresh.perf_hint
    assert warm.perf_hint == fresh.perf_hint
    assert type(warm.estimated_traffic_bytes) is type(fresh.estimated_traffic_bytes)


def test_memoised_tables_are_read_only():
    clear_chooser_memo()
    ranking = L0TileRanking.of(L0TileConfig(M=256, N=256, K=64, **ALL_GATES))
    with pytest.raises(ValueError):
        ranking.tables[0].wall[0] = 0

# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("cfg", [
    dict(M=512, N=512, K=64, allow_double_buffer_c=True),
    dict(M=256, N=256, K=256, **ALL_GATES),
    dict(M=160, N=160, K=64, **FP32, **ALL_GATES),
    dict(M=4096, N=4096, K=4096),
])
def test_rank_first_is_the_choice_and_sorted(cfg):
    chosen = choose_l0_tile(L0TileConfig(**cfg))
    ranked = rank_l0_tiles(L0TileConfig(**cfg), top=7)
    assert len(ranked) == 7 and all(isinstance(c, L0TileCandidate) for c in ranked)
    first = ranked[0]
    assert (first.m, first.n, first.k, first.stationarity, first.double_buffer_c) == (
        chosen.m, chosen.n, chosen.k, chosen.stationarity, chosen.double_buffer_c)
    assert first.wall_cycles == chosen.estimated_cost_cycles
    walls = [c.wall_cycles for c in ranked]
    assert walls == sorted(walls)


def test_rank_rejects_non_positive_top():
    with pytest.raises(PassError, match="top=0"):
        rank_l0_tiles(L0TileConfig(M=64, N=64, K=64), top=0)


# ---------------------------------------------------------------------------------------
# defaults and the backend cost model
# ---------------------------------------------------------------------------------------

def test_config_defaults_are_a2a3_with_gates_closed():
    cfg = L0TileConfig()
    a2a3 = get_target("a2a3")
    assert (cfg.l0a_bytes, cfg.l0b_bytes, cfg.l0c_bytes) == (
        a2a3.capacity(MemorySpace.Left), a2a3.capacity(MemorySpace.Right),
        a2a3.capacity(MemorySpace.Acc)) == (65536, 65536, 131072)
    assert (cfg.bytes_a, cfg.bytes_b, cfg.bytes_c) == (2, 2, 4)
    assert (cfg.min_m, cfg.align_k, cfg.l0c_align_m, cfg.box_align_m) == (16, 16, 16, 1)
    assert (cfg.bw_a, cfg.bw_b, cfg.bw_drain, cfg.mad_head) == (129.7, 85.4, 118.0, 21)
    assert (cfg.drain_fixed_cycles, cfg.drain_row_cycles, cfg.drain_penalty_cycles) == (
        164.0, 4.45, 2.6)
    assert (cfg.drain_c0_bytes, cfg.mad_k_fractal_bytes, cfg.mad_fp32_passes) == (32, 32, 2)
    assert not (cfg.allow_a_stationary or cfg.allow_b_stationary or cfg.allow_double_buffer_c
                or cfg.c_read or cfg.allow_padding or cfg.allow_k_boundary)
    assert cfg.max_n == cfg.max_n_pipelined == cfg.max_n_nested_pipelined == 0


def test_config_for_a5_target():
    cfg = L0TileConfig.for_target("a5sim", M=512, N=512, K=64)
    assert cfg.l0c_bytes == 262144
    assert (cfg.bw_a, cfg.bw_b, cfg.bw_drain, cfg.mad_head, cfg.mad_fp32_passes) == (
        206.3, 223.8, 30.0, 25.0, 8)
    assert cfg.M == 512
    with pytest.raises(PassError, match="no field"):
        L0TileConfig.for_target("a2a3", MM=3)


def test_cost_model_lookup():
    assert l0_cost_model_for("a2a3") is A2A3_L0_COST_MODEL
    assert l0_cost_model_for("a5sim") is A5_L0_COST_MODEL
    assert get_target("a5").l0_cost_model is A5_L0_COST_MODEL
    with pytest.raises(PtocError):
        l0_cost_model_for("gpu")


# ---------------------------------------------------------------------------------------
# (d) validation errors: each names the field and the value
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("override,match", [
    (dict(M=0), "M=0"), (dict(N=-3), "N=-3"), (dict(K=0), "K=0"),
    (dict(l0a_bytes=0), "l0a_bytes=0"), (dict(l0b_bytes=-1), "l0b_bytes=-1"),
    (dict(l0c_bytes=0), "l0c_bytes=0"),
    (dict(bytes_a=0), "bytes_a=0"), (dict(bytes_b=0), "bytes_b=0"), (dict(bytes_c=0), "bytes_c=0"),
    (dict(min_m=0), "min_m=0"), (dict(min_n=0), "min_n=0"), (dict(min_k=0), "min_k=0"),
    (dict(max_n=8), "max_n=8"), (dict(max_n=-16), "max_n=-16"),
    (dict(max_n=64, max_n_pipelined=128), "max_n_pipelined=128"),
    (dict(max_n_pipelined=-1), "max_n_pipelined=-1"),
    (dict(max_n_pipelined=64, max_n_nested_pipelined=128), "max_n_nested_pipelined=128"),
    (dict(max_n_nested_pipelined=-2), "max_n_nested_pipelined=-2"),
    (dict(align_m=0), "align_m=0"), (dict(align_n=0), "align_n=0"), (dict(align_k=0), "align_k=0"),
    (dict(l0c_align_m=0), "l0c_align_m=0"), (dict(box_align_m=0), "box_align_m=0"),
    (dict(box_align_n=0), "box_align_n=0"),
    (dict(bw_a=0.0), "bw_a=0.0"), (dict(bw_b=-1.0), "bw_b=-1.0"), (dict(bw_drain=0), "bw_drain=0"),
    (dict(drain_c0_bytes=0), "drain_c0_bytes=0"),
    (dict(drain_fixed_cycles=-1), "drain_fixed_cycles=-1"),
    (dict(drain_row_cycles=-0.5), "drain_row_cycles=-0.5"),
    (dict(drain_penalty_cycles=-1), "drain_penalty_cycles=-1"),
    (dict(mad_head=-1), "mad_head=-1"), (dict(mad_k_fractal_bytes=0), "mad_k_fractal_bytes=0"),
    (dict(mad_fp32_passes=0), "mad_fp32_passes=0"),
    (dict(M=8), "allow_padding=false but M=8"), (dict(N=15), "allow_padding=false but N=15"),
    (dict(K=4), "allow_padding=false but K=4"),
    (dict(l0a_bytes=512), "l0a_bytes=512"), (dict(l0b_bytes=512), "l0b_bytes=512"),
    (dict(l0c_bytes=512), "l0c_bytes=512"),
    (dict(box_align_n=4096), "l0b_bytes"),
    (dict(K=40), "no legal"),
])
def test_validation_errors(override, match):
    cfg = dict(M=64, N=64, K=64)
    cfg.update(override)
    with pytest.raises(PassError, match=match) as info:
        choose_l0_tile(L0TileConfig(**cfg))
    assert info.value.hint


def test_valid_n_caps_accepted():
    r = choose_l0_tile(L0TileConfig(M=64, N=64, K=64, max_n=64, max_n_pipelined=64,
                                    max_n_nested_pipelined=32))
    assert r.n <= 64


# ---------------------------------------------------------------------------------------
# (c) an independent brute-force re-enumeration of the same model
# ---------------------------------------------------------------------------------------

def _up(x: int, a: int) -> int:
    return ((x + a - 1) // a) * a


def _brute_wall(c, stat, dbc, m, n, k):
    """Score one tile straight from §2.6; returns (wall as float, C_load, os_holds_a)."""
    M, N, K = c.M, c.N, c.K
    Tm, Tn = (M + m - 1) // m, (N + n - 1) // n
    T = Tm * Tn
    hold_a_cost = c.bytes_a * M * K / c.bw_a + c.bytes_b * K * N * Tm / c.bw_b
    hold_b_cost = c.bytes_a * M * K * Tn / c.bw_a + c.bytes_b * K * N / c.bw_b
    holds_a = hold_a_cost <= hold_b_cost
    if stat == "A":
        load = hold_a_cost
    elif stat == "B":
        load = hold_b_cost
    elif k >= K:
        load = hold_a_cost if holds_a else hold_b_cost
    else:
        load = c.bytes_a * M * K * Tn / c.bw_a + c.bytes_b * K * N * Tm / c.bw_b
    kt = max(1, c.mad_k_fractal_bytes // c.bytes_a)
    if c.bytes_a == 4:
        cpr = c.mad_fp32_passes
    else:
        cpr = max(1, c.bytes_a // 2)
    full = K // k
    rest = K - full * k
    blocks = full + (rest > 0)
    fractals = full * ((k + kt - 1) // kt) + ((rest + kt - 1) // kt if rest > 0 else 0)
    mad = T * (blocks * c.mad_head
               + cpr * ((m + c.align_m - 1) // c.align_m) * fractals
               * ((n + c.align_n - 1) // c.align_n))
    n0 = max(1, c.drain_c0_bytes // c.bytes_c)
    groups = (n + n0 - 1) // n0
    while groups % 2 == 0:
        groups //= 2
    row = max(c.drain_row_cycles, c.bytes_c * n / c.bw_drain) + c.drain_penalty_cycles * (groups - 1)
    drain = T * (c.drain_fixed_cycles + m * row)
    compute = max(load, mad)
    if dbc == 1:
        wall = compute + drain
    else:
        wall = max(compute, drain) + min(compute, drain) / T
    return wall, load, holds_a


def _brute_regime(c, stat, dbc, full_k, pair):
    """Best (key, answer) over every legal tile of one regime, by plain nested loops."""
    dba = 1 if stat == "A" else 2
    dbb = 1 if stat == "B" else 2
    a0 = c.l0a_bytes // (c.bytes_a * dba)
    b0 = c.l0b_bytes // (c.bytes_b * dbb)
    c0 = c.l0c_bytes // (c.bytes_c * dbc)
    peel = c.allow_k_boundary and c.K % c.align_k == 0
    best = None
    for m in range(c.min_m, c.M + 1, c.align_m):
        for n in range(c.min_n, c.N + 1, c.align_n):
            bm, bn = _up(m, c.box_align_m), _up(n, c.box_align_n)
            if _up(bm, c.l0c_align_m) * bn > c0:
                continue
            if c.max_n and n > c.max_n:
                continue
            for k in range(c.min_k, c.K + 1, c.align_k):
                if bm * k > a0 or bn * k > b0:
                    continue
                if not peel and c.K % k != 0:
                    continue
                if full_k and k != c.K:
                    continue
                wall, load, holds_a = _brute_wall(c, stat, dbc, m, n, k)
                if pair:
                    rows_outer = stat == "A" or (stat == "OS" and holds_a)
                    if (c.N // n if rows_outer else c.M // m) < 2:
                        continue
                if k == c.K and (m, n) != (c.M, c.N) and stat != "B":
                    if c.max_n_pipelined and n > c.max_n_pipelined:
                        continue
                    if stat == "OS" and holds_a and c.max_n_nested_pipelined \
                            and n > c.max_n_nested_pipelined:
                        continue
                wall_i = math.floor(wall + 0.5)
                nk = -(-c.K // k)
                padded = -(-c.M // m) * m * (-(-c.N // n)) * n * nk * k
                key = (wall_i, padded, nk, load, -m * n, -k, m, n, k)
                if best is None or key < best[0]:
                    best = (key, (m, n, k, stat, dbc == 2, wall_i))
    return best


def brute_force_choose(c):
    """§2.8 global algorithm over the brute-force regimes; None when nothing is legal."""
    base = _brute_regime(c, "OS", 1, False, False)
    if base is not None and base[1][:3] == (c.M, c.N, c.K):
        return base[1]
    best = base
    stats = ["OS"] + (["A"] if c.allow_a_stationary else []) + (["B"] if c.allow_b_stationary
                                                               else [])
    for stat in stats:
        for dbc in ((1, 2) if c.allow_double_buffer_c else (1,)):
            if (stat, dbc) == ("OS", 1):
                continue
            got = _brute_regime(c, stat, dbc, True, dbc == 2)
            if got is not None and (best is None or got[0][0] < best[0][0]):
                best = got
    return None if best is None else best[1]


_STAT_NAMES = {OS: "OS", AS: "A", BS: "B"}


def _random_config(rng: random.Random) -> L0TileConfig:
    def dim(lo_units: int, hi_units: int) -> int:
        v = 16 * rng.randint(lo_units, hi_units)
        return v + rng.choice([0, 0, 0, 0, 5, 8]) if rng.random() < 0.2 else v

    ba = rng.choice([1, 2, 2, 4])
    cfg = L0TileConfig(
        M=dim(1, 20), N=dim(1, 20), K=16 * rng.randint(1, 20),
        bytes_a=ba, bytes_b=ba, bytes_c=4,
        l0a_bytes=rng.choice([16384, 32768, 65536]), l0b_bytes=rng.choice([16384, 32768, 65536]),
        l0c_bytes=rng.choice([32768, 65536, 131072, 262144]),
        l0c_align_m=rng.choice([16, 16, 32]),
        allow_a_stationary=rng.random() < 0.5, allow_b_stationary=rng.random() < 0.5,
        allow_double_buffer_c=rng.random() < 0.6, allow_k_boundary=rng.random() < 0.5,
        c_read=rng.random() < 0.3)
    if rng.random() < 0.25:
        cfg.box_align_m = rng.choice([1, 32, 48])
        cfg.box_align_n = rng.choice([1, 32, 64])
    if rng.random() < 0.25:
        cfg.max_n = rng.choice([0, 64, 128])
        cfg.max_n_pipelined = rng.choice([0, 32, 64])
        cfg.max_n_nested_pipelined = rng.choice([0, 16, 32])
    if rng.random() < 0.1:
        cfg.min_m = cfg.align_m = 32
    if rng.random() < 0.3:  # other cost constants (a5-like or arbitrary) and an fp16 output
        cfg.bw_a, cfg.bw_b = rng.uniform(40, 250), rng.uniform(40, 250)
        cfg.bw_drain = rng.uniform(20, 150)
        cfg.drain_fixed_cycles = rng.uniform(0, 400)
        cfg.drain_row_cycles = rng.uniform(0, 6)
        cfg.drain_penalty_cycles = rng.uniform(0, 3)
        cfg.mad_head = rng.choice([0, 6, 21, 25])
        cfg.mad_fp32_passes = rng.choice([2, 8])
        cfg.bytes_c = rng.choice([4, 4, 2])
    return cfg


_RNG = random.Random(20261130)
BRUTE_CASES = [_random_config(_RNG) for _ in range(240)]


@pytest.mark.parametrize("cfg", BRUTE_CASES, ids=[f"r{i}" for i in range(len(BRUTE_CASES))])
def test_matches_bruteforce_optimum(cfg):
    cfg = dataclasses.replace(cfg)
    expected = brute_force_choose(cfg)
    if expected is None:
        with pytest.raises(PassError):
            choose_l0_tile(cfg)
        return
    r = choose_l0_tile(cfg)
    got = (r.m, r.n, r.k, _STAT_NAMES[r.stationarity], r.double_buffer_c,
           r.estimated_cost_cycles)
    assert got == expected


def test_bruteforce_cases_cover_every_regime():
    """The random configs reach each regime, so the comparison above is not vacuous."""
    seen = set()
    for cfg in BRUTE_CASES:
        try:
            r = choose_l0_tile(dataclasses.replace(cfg))
        except PassError:
            seen.add("error")
            continue
        seen.add((r.stationarity, r.double_buffer_c))
    assert {(OS, False), (OS, True), (AS, True), (BS, True), "error"} <= seen


def test_wall_beyond_exact_integers_is_rejected():
    with pytest.raises(PassError, match="2\\^53"):
        choose_l0_tile(L0TileConfig(M=64, N=64, K=64, bw_a=1e-300))


def _oracle_rankings():
    """The ranking of every oracle problem the chooser accepts, with every gate open."""
    from ptoc.passes.l0_tile_chooser import L0TileRanking

    for case in _oracle_cases():
        try:
            yield L0TileRanking(dataclasses.replace(L0TileConfig(**case["config"]), **ALL_GATES))
        except PassError:
            continue


@pytest.mark.skipif(not ORACLE.exists(), reason="PyPTO oracle data not available")
def test_top_orders_only_the_lowest_walls_and_equals_the_full_order():
    """``L0TileRanking.top(count)`` sorts only the points within the ``count`` lowest walls:
    on every oracle problem, with every gate open, each class's top 1 / 5 / 12 is the head
    of the whole ranking of that class."""
    for ranking in _oracle_rankings():
        everything = sum(len(t) for t in ranking.tables)
        for dbc in (None, True, False):
            whole = ranking.top(everything, dbc)
            for count in (1, 5, 12):
                assert ranking.top(count, dbc) == whole[:count]


@pytest.mark.skipif(not ORACLE.exists(), reason="PyPTO oracle data not available")
def test_decision_best_per_class_read_from_the_shown_head():
    """The dbC record's best dbC / single-accumulator points, taken from the shown top 5
    (all points, or the single-accumulator ones when the gate is closed) when it holds one,
    are ``top(1, class)`` on every oracle problem."""
    from ptoc.passes.auto_tile_decisions import TOP, _first

    for ranking in _oracle_rankings():
        for shown_class in (None, False):
            shown = ranking.top(TOP, shown_class)
            for dbc in (True, False):
                assert _first(ranking, shown, dbc) == next(iter(ranking.top(1, dbc)), None)
