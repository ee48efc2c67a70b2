"""ChooseL0Tile: the exhaustive roofline search behind AutoTileMatmulL0.

Given a matmul ``[M,K] @ [K,N]`` whose operands sit in L1 (Mat), pick the L0 tile
``(m, n, k)``, the loop order (which operand, if any, stays resident) and whether L0C is
double-buffered (dbC), by minimising an estimated wall in core cycles. The model and every
rule below follow reference/pypto-passes.md §2 so that ptoc's decisions equal PyPTO's:

1. validate the config (§2.3);
2. each regime ``(stationarity, dbC)`` fixes the L0 element budgets (§2.4);
3. within a regime every legal ``(m, n, k)`` is enumerated (§2.5), scored (§2.6) and ranked
   lexicographically (§2.7);
4. the baseline regime (output-stationary, one accumulator) is searched first; other
   regimes replace its winner only on a strictly lower wall, and none is tried when the
   whole problem already fits L0 (§2.8).
"""

from __future__ import annotations

import enum
import heapq
import math
from dataclasses import dataclass, fields
from typing import Iterator, NamedTuple

from ptoc.backend.l0_cost_model import A2A3_L0_COST_MODEL, L0CostModel, l0_cost_model_for
from ptoc.backend.targets import Target, get_target
from ptoc.dtypes import MemorySpace
from ptoc.errors import PassError

_A2A3 = get_target("a2a3")
_COST = A2A3_L0_COST_MODEL
_MAX_EXACT_CYCLES = 2 ** 53


class Stationarity(enum.Enum):
    """Which operand the full-K output grid keeps resident in L0 across the inner loop."""

    OutputStationary = "OutputStationary"
    AStationary = "AStationary"
    BStationary = "BStationary"

    def __repr__(self) -> str:
        return f"Stationarity.{self.name}"


# ---------------------------------------------------------------------------------------
# §2.1 / §2.2  inputs and outputs
# ---------------------------------------------------------------------------------------

@dataclass
class L0TileConfig:
    """Problem, capacities and cost constants of one chooser call (PyPTO field names).

    Mutable like PyPTO's bound struct, so ported tests can set fields one by one. Defaults:
    the a2a3 capacities and alignments, the a2a3 ``L0CostModel``, every regime gate closed.
    """

    M: int = 0
    N: int = 0
    K: int = 0
    l0a_bytes: int = _A2A3.capacity(MemorySpace.Left)
    l0b_bytes: int = _A2A3.capacity(MemorySpace.Right)
    l0c_bytes: int = _A2A3.capacity(MemorySpace.Acc)
    bytes_a: int = 2
    bytes_b: int = 2
    bytes_c: int = 4
    # The minimum L0 tile dim equals the fractal on every target (GetMinL0TileDim == 16).
    min_m: int = _A2A3.fractal_alignment
    min_n: int = _A2A3.fractal_alignment
    min_k: int = _A2A3.fractal_alignment
    align_m: int = _A2A3.fractal_alignment
    align_n: int = _A2A3.fractal_alignment
    align_k: int = _A2A3.fractal_alignment
    l0c_align_m: int = _A2A3.acc_row_alignment
    box_align_m: int = 1
    box_align_n: int = 1
    max_n: int = 0
    max_n_pipelined: int = 0
    max_n_nested_pipelined: int = 0
    allow_a_stationary: bool = False
    allow_b_stationary: bool = False
    allow_double_buffer_c: bool = False
    c_read: bool = False
    allow_padding: bool = False
    allow_k_boundary: bool = False
    bw_a: float = _COST.bw_l0a
    bw_b: float = _COST.bw_l0b
    bw_drain: float = _COST.bw_drain
    drain_fixed_cycles: float = _COST.drain_fixed_cycles
    drain_row_cycles: float = _COST.drain_row_cycles
    drain_penalty_cycles: float = _COST.drain_penalty_cycles
    drain_c0_bytes: int = _COST.drain_c0_bytes
    mad_head: float = _COST.mad_head_cycles
    mad_k_fractal_bytes: int = _COST.mad_k_fractal_bytes
    mad_fp32_passes: int = _COST.mad_fp32_passes

    @classmethod
    def for_target(cls, target: "str | Target" = "a2a3", **overrides: object) -> "L0TileConfig":
        """A config with ``target``'s L0 capacities, alignments and cost model.

        ``overrides`` set any field (problem dims, element sizes, gates); an INT32
        accumulator caller should also pass the target's ``l0c_align_m``.
        """
        tgt = get_target(target)
        cost: L0CostModel = l0_cost_model_for(tgt.name)
        base = dict(
            l0a_bytes=tgt.capacity(MemorySpace.Left), l0b_bytes=tgt.capacity(MemorySpace.Right),
            l0c_bytes=tgt.capacity(MemorySpace.Acc),
            min_m=tgt.fractal_alignment, min_n=tgt.fractal_alignment,
            min_k=tgt.fractal_alignment, align_m=tgt.fractal_alignment,
            align_n=tgt.fractal_alignment, align_k=tgt.fractal_alignment,
            l0c_align_m=tgt.acc_row_alignment,
            bw_a=cost.bw_l0a, bw_b=cost.bw_l0b, bw_drain=cost.bw_drain,
            drain_fixed_cycles=cost.drain_fixed_cycles, drain_row_cycles=cost.drain_row_cycles,
            drain_penalty_cycles=cost.drain_penalty_cycles, drain_c0_bytes=cost.drain_c0_bytes,
            mad_head=cost.mad_head_cycles, mad_k_fractal_bytes=cost.mad_k_fractal_bytes,
            mad_fp32_passes=cost.mad_fp32_passes)
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise PassError(f"L0TileConfig has no field(s) {', '.join(unknown)}",
                            hint=f"valid fields: {', '.join(sorted(names))}")
        base.update(overrides)
        return cls(**base)  # type: ignore[arg-type]


@dataclass(frozen=True)
class L0TileResult:
    """The chosen design point.

    ``estimated_cost_cycles`` is the ranked wall; ``estimated_traffic_bytes`` is for
    inspection only. ``os_holds_a`` is the full-K output-stationary loop orientation (True:
    A held, rows outer) recomputed for the final tile whatever its regime. ``perf_hint`` is
    non-empty only when padding lifted a dimension below its minimum.
    """

    m: int
    n: int
    k: int
    estimated_traffic_bytes: int
    estimated_cost_cycles: int
    padded_compute_volume: int
    stationarity: Stationarity
    os_holds_a: bool
    double_buffer_c: bool
    perf_hint: str = ""


@dataclass(frozen=True)
class L0TileCandidate:
    """One scored legal design point (for decision reports: see ``rank_l0_tiles``)."""

    m: int
    n: int
    k: int
    stationarity: Stationarity
    double_buffer_c: bool
    wall_cycles: int
    load_cycles: float
    mad_cycles: float
    drain_cycles: float
    padded_compute_volume: int
    k_blocks: int
    os_holds_a: bool
    regime_index: int = 0

    @property
    def rank_key(self) -> tuple:
        """§2.7 order inside a regime: wall, padded work, fewer K-blocks, cheaper loads,
        larger area, larger k (lower is better)."""
        return (self.wall_cycles, self.padded_compute_volume, self.k_blocks, self.load_cycles,
                -self.m * self.n, -self.k)


def _align_up(x: int, a: int) -> int:
    return -(-x // a) * a


def _align_down(x: int, a: int) -> int:
    return (x // a) * a


def _ceil_div(x: int, y: int) -> int:
    return -(-x // y)


# ---------------------------------------------------------------------------------------
# §2.3  validation
# ---------------------------------------------------------------------------------------

def _fail(message: str, hint: str) -> PassError:
    return PassError(f"ChooseL0Tile: {message}", hint=hint)


def _validate(cfg: L0TileConfig) -> None:
    """Reject configs the search cannot answer, naming the field, its value and the fix."""
    for name in ("M", "N", "K"):
        if getattr(cfg, name) <= 0:
            raise _fail(f"{name}={getattr(cfg, name)} must be > 0",
                        f"pass the matmul's positive {name} dimension")
    for name in ("l0a_bytes", "l0b_bytes", "l0c_bytes", "bytes_a", "bytes_b", "bytes_c",
                 "min_m", "min_n", "min_k"):
        if getattr(cfg, name) <= 0:
            raise _fail(f"{name}={getattr(cfg, name)} must be > 0",
                        f"set {name} to a positive value")
    if cfg.max_n < 0 or (cfg.max_n != 0 and cfg.max_n < cfg.min_n):
        raise _fail(f"max_n={cfg.max_n} must be 0 (no cap) or >= min_n={cfg.min_n}",
                    "raise max_n or set it to 0")
    if cfg.max_n_pipelined < 0 or (cfg.max_n and cfg.max_n_pipelined
                                   and cfg.max_n_pipelined > cfg.max_n):
        raise _fail(f"max_n_pipelined={cfg.max_n_pipelined} must be in [0, max_n={cfg.max_n}]",
                    "lower max_n_pipelined or set it to 0 (no cap)")
    if cfg.max_n_nested_pipelined < 0 or (
            cfg.max_n_pipelined and cfg.max_n_nested_pipelined
            and cfg.max_n_nested_pipelined > cfg.max_n_pipelined):
        raise _fail(f"max_n_nested_pipelined={cfg.max_n_nested_pipelined} must be in "
                    f"[0, max_n_pipelined={cfg.max_n_pipelined}]",
                    "lower max_n_nested_pipelined or set it to 0 (no cap)")
    for name in ("align_m", "align_n", "align_k", "l0c_align_m", "box_align_m", "box_align_n",
                 "bw_a", "bw_b", "bw_drain", "drain_c0_bytes", "mad_k_fractal_bytes",
                 "mad_fp32_passes"):
        if not getattr(cfg, name) > 0:
            raise _fail(f"{name}={getattr(cfg, name)} must be > 0",
                        f"set {name} to a positive value")
    for name in ("drain_fixed_cycles", "drain_row_cycles", "drain_penalty_cycles", "mad_head"):
        if not getattr(cfg, name) >= 0:
            raise _fail(f"{name}={getattr(cfg, name)} must be >= 0",
                        f"set {name} to a non-negative cycle count")
    if not cfg.allow_padding:
        for dim, low in (("M", "min_m"), ("N", "min_n"), ("K", "min_k")):
            if getattr(cfg, dim) < getattr(cfg, low):
                raise _fail(f"allow_padding=false but {dim}={getattr(cfg, dim)} < "
                            f"{low}={getattr(cfg, low)}",
                            f"set allow_padding=True or make {dim} at least {getattr(cfg, low)}")
    base = _Regime(Stationarity.OutputStationary, 1)
    a0, b0, c0 = base.budgets(cfg)
    if _align_up(cfg.min_m, cfg.box_align_m) > a0 // cfg.min_k:
        raise _fail(f"l0a_bytes={cfg.l0a_bytes} cannot hold a double-buffered minimum A tile "
                    f"({cfg.min_m}x{cfg.min_k} of {cfg.bytes_a}-byte elements)",
                    "raise l0a_bytes or lower min_m/min_k/box_align_m")
    if _align_up(cfg.min_n, cfg.box_align_n) > b0 // cfg.min_k:
        raise _fail(f"l0b_bytes={cfg.l0b_bytes} cannot hold a double-buffered minimum B tile "
                    f"({cfg.min_k}x{cfg.min_n} of {cfg.bytes_b}-byte elements)",
                    "raise l0b_bytes or lower min_n/min_k/box_align_n")
    if not base.holds_min_tile(cfg, c0):
        raise _fail(f"l0c_bytes={cfg.l0c_bytes} cannot hold the physical minimum accumulator "
                    f"({cfg.min_m}x{cfg.min_n}, rows padded to {cfg.l0c_align_m}, "
                    f"{cfg.bytes_c}-byte elements)",
                    "raise l0c_bytes or lower min_m/min_n/l0c_align_m")


# ---------------------------------------------------------------------------------------
# §2.4  regimes and budgets
# ---------------------------------------------------------------------------------------

class _Regime(NamedTuple):
    """A search regime: loop stationarity and the number of L0C accumulators (1 or 2)."""

    stationarity: Stationarity
    dbc: int

    def budgets(self, cfg: L0TileConfig) -> tuple[int, int, int]:
        """Element budgets (A0, B0, C0); a resident operand is single-buffered, a moving one
        double-buffered."""
        db_a = 1 if self.stationarity is Stationarity.AStationary else 2
        db_b = 1 if self.stationarity is Stationarity.BStationary else 2
        return (cfg.l0a_bytes // (cfg.bytes_a * db_a), cfg.l0b_bytes // (cfg.bytes_b * db_b),
                cfg.l0c_bytes // (cfg.bytes_c * self.dbc))

    def holds_min_tile(self, cfg: L0TileConfig, c0: int) -> bool:
        return _physical_m(cfg, cfg.min_m) * _align_up(cfg.min_n, cfg.box_align_n) <= c0

    @property
    def requires_full_k(self) -> bool:
        return self.stationarity is not Stationarity.OutputStationary or self.dbc == 2

    @property
    def requires_inner_pair(self) -> bool:
        return self.dbc == 2


def _physical_m(cfg: L0TileConfig, m: int) -> int:
    """Rows an m-row accumulator occupies in L0C: boxed, then padded to the L0C row grid."""
    return _align_up(_align_up(m, cfg.box_align_m), cfg.l0c_align_m)


# ---------------------------------------------------------------------------------------
# §2.6  cost model (core cycles)
# ---------------------------------------------------------------------------------------

def _held_loads(cfg: L0TileConfig, tm: int, tn: int) -> tuple[float, float]:
    """MTE1 cycles of the two full-K orders: hold A (B re-streamed per row block) and hold B."""
    a_once = cfg.bytes_a * cfg.M * cfg.K / cfg.bw_a
    b_once = cfg.bytes_b * cfg.K * cfg.N / cfg.bw_b
    held_a = a_once + cfg.bytes_b * cfg.K * cfg.N * tm / cfg.bw_b
    held_b = cfg.bytes_a * cfg.M * cfg.K * tn / cfg.bw_a + b_once
    return held_a, held_b


def _operands_held(stat: Stationarity, full_k: bool, os_holds_a: bool) -> tuple[bool, bool]:
    """(A loaded once, B loaded once) — the routing shared by C_load and the traffic."""
    if stat is Stationarity.AStationary:
        return True, False
    if stat is Stationarity.BStationary:
        return False, True
    if not full_k:
        return False, False
    return os_holds_a, not os_holds_a


def _load_cycles(cfg: L0TileConfig, a_held: bool, b_held: bool, tm: int, tn: int) -> float:
    """L1->L0 cycles; A and B share MTE1 so their times add."""
    return (cfg.bytes_a * cfg.M * cfg.K * (1 if a_held else tn) / cfg.bw_a
            + cfg.bytes_b * cfg.K * cfg.N * (1 if b_held else tm) / cfg.bw_b)


def _mad_cycles(cfg: L0TileConfig, m: int, n: int, k: int, tiles: int) -> float:
    """Cube cycles: a head per K-block plus passes x fractals; a K tail is charged at its width."""
    kt = max(1, cfg.mad_k_fractal_bytes // cfg.bytes_a)
    passes = cfg.mad_fp32_passes if cfg.bytes_a == 4 else max(1, cfg.bytes_a // 2)
    num_full = cfg.K // k
    tail = cfg.K - num_full * k
    k_blocks = num_full + (1 if tail > 0 else 0)
    k_fractals = num_full * _ceil_div(k, kt) + (_ceil_div(tail, kt) if tail > 0 else 0)
    per_tile = (k_blocks * cfg.mad_head
                + passes * _ceil_div(m, cfg.align_m) * k_fractals * _ceil_div(n, cfg.align_n))
    return tiles * per_tile


def _odd_part(x: int) -> int:
    while x > 0 and x % 2 == 0:
        x //= 2
    return x


def _drain_cycles(cfg: L0TileConfig, m: int, n: int, tiles: int) -> float:
    """FIXPIPE cycles: per tile a fixed cost plus a per-row cost with a floor, and a penalty
    when the number of C0 column groups is not a power of two."""
    n0 = max(1, cfg.drain_c0_bytes // cfg.bytes_c)
    per_row = (max(cfg.drain_row_cycles, cfg.bytes_c * n / cfg.bw_drain)
               + cfg.drain_penalty_cycles * (_odd_part(_ceil_div(n, n0)) - 1))
    return tiles * (cfg.drain_fixed_cycles + m * per_row)


def _wall(compute: float, drain: float, tiles: int, dbc: int) -> float:
    """One accumulator exposes the drain; two overlap it, leaving a one-tile bubble."""
    if dbc == 1:
        return compute + drain
    return max(compute, drain) + min(compute, drain) / tiles


def _round_cycles(x: float) -> int:
    """llround (half away from zero; walls are never negative), rejecting non-finite or
    inexact (> 2^53) values."""
    if not math.isfinite(x) or x > _MAX_EXACT_CYCLES:
        raise _fail(f"estimated wall {x} cycles is not a finite value <= 2^53",
                    "check the bandwidth and cycle constants of the cost model")
    return int(math.floor(x + 0.5))


def _os_holds_a(cfg: L0TileConfig, m: int, n: int) -> bool:
    """Full-K output-stationary orientation: hold A unless holding B is strictly cheaper."""
    held_a, held_b = _held_loads(cfg, _ceil_div(cfg.M, m), _ceil_div(cfg.N, n))
    return held_a <= held_b


def _score(cfg: L0TileConfig, regime: _Regime, m: int, n: int, k: int,
           os_holds_a: bool, regime_index: int) -> L0TileCandidate:
    tm, tn = _ceil_div(cfg.M, m), _ceil_div(cfg.N, n)
    tiles = tm * tn
    a_held, b_held = _operands_held(regime.stationarity, k >= cfg.K, os_holds_a)
    load = _load_cycles(cfg, a_held, b_held, tm, tn)
    mad = _mad_cycles(cfg, m, n, k, tiles)
    drain = _drain_cycles(cfg, m, n, tiles)
    wall = _wall(max(load, mad), drain, tiles, regime.dbc)
    k_blocks = _ceil_div(cfg.K, k)
    return L0TileCandidate(
        m=m, n=n, k=k, stationarity=regime.stationarity, double_buffer_c=regime.dbc == 2,
        wall_cycles=_round_cycles(wall), load_cycles=load, mad_cycles=mad, drain_cycles=drain,
        padded_compute_volume=tm * m * tn * n * k_blocks * k, os_holds_a=os_holds_a,
        k_blocks=k_blocks, regime_index=regime_index)


# ---------------------------------------------------------------------------------------
# §2.5  enumeration of the legal tiles of one regime
# ---------------------------------------------------------------------------------------

def _legal_ks(cfg: L0TileConfig, a0: int, b0: int, m: int, n: int) -> Iterator[int]:
    """Every k whose boxed operand tiles fit their budgets and that K's handling allows:
    any k with padding or an align_k-aligned K peel, otherwise only divisors of K."""
    cap = min(a0 // _align_up(m, cfg.box_align_m), b0 // _align_up(n, cfg.box_align_n))
    k_dim = max(_align_up(cfg.K, cfg.align_k), cfg.min_k) if cfg.allow_padding else cfg.K
    k_hi = _align_down(min(cap, k_dim), cfg.align_k)
    any_k = cfg.allow_padding or (cfg.allow_k_boundary and cfg.K % cfg.align_k == 0)
    for k in range(cfg.min_k, k_hi + 1, cfg.align_k):
        if any_k or cfg.K % k == 0:
            yield k


def _has_inner_pair(cfg: L0TileConfig, regime: _Regime, m: int, n: int,
                    os_holds_a: bool) -> bool:
    """dbC needs >= 2 full tiles on the moving inner loop (a peeled tail does not count)."""
    rows_outer = (regime.stationarity is Stationarity.AStationary
                  or (regime.stationarity is Stationarity.OutputStationary and os_holds_a))
    inner = cfg.N // n if rows_outer else cfg.M // m
    return inner >= 2


def _passes_filter(cfg: L0TileConfig, regime: _Regime, c0: int, m: int, n: int, k: int,
                   os_holds_a: bool) -> bool:
    """§2.5 MakeCandidate: N caps (tighter for pipelined full-K grids), bounds, L0C fit."""
    if m < cfg.min_m or n < cfg.min_n or k < cfg.min_k:
        return False
    if cfg.max_n and n > cfg.max_n:
        return False
    full_k_grid = k == cfg.K and (m != cfg.M or n != cfg.N)
    if full_k_grid and regime.stationarity is not Stationarity.BStationary:
        if cfg.max_n_pipelined and n > cfg.max_n_pipelined:
            return False
        if (regime.stationarity is Stationarity.OutputStationary and os_holds_a
                and cfg.max_n_nested_pipelined and n > cfg.max_n_nested_pipelined):
            return False
    if not cfg.allow_padding and (m > cfg.M or n > cfg.N):
        return False
    return _physical_m(cfg, m) * _align_up(n, cfg.box_align_n) <= c0


def _regime_candidates(cfg: L0TileConfig, regime: _Regime,
                       regime_index: int) -> Iterator[L0TileCandidate]:
    """Every legal scored tile of ``regime``, in (m, n, k) ascending order."""
    a0, b0, c0 = regime.budgets(cfg)
    if cfg.allow_padding:
        # Padded ranges reach one minimum tile, as K's does (§2.5 states it for K only).
        m_hi = max(_align_up(cfg.M, cfg.align_m), cfg.min_m)
        n_hi = max(_align_up(cfg.N, cfg.align_n), cfg.min_n)
    else:
        m_hi, n_hi = cfg.M, cfg.N
    if cfg.max_n:
        n_hi = min(n_hi, cfg.max_n)
    row_cap = c0 // _align_up(cfg.min_n, cfg.box_align_n)
    for m in range(cfg.min_m, m_hi + 1, cfg.align_m):
        physical_m = _physical_m(cfg, m)
        if physical_m > row_cap:
            break
        for n in range(cfg.min_n, min(n_hi, c0 // physical_m) + 1, cfg.align_n):
            holds_a = _os_holds_a(cfg, m, n)
            if regime.requires_inner_pair and not _has_inner_pair(cfg, regime, m, n, holds_a):
                continue
            for k in _legal_ks(cfg, a0, b0, m, n):
                if regime.requires_full_k and k != cfg.K:
                    continue
                if _passes_filter(cfg, regime, c0, m, n, k, holds_a):
                    yield _score(cfg, regime, m, n, k, holds_a, regime_index)


# ---------------------------------------------------------------------------------------
# §2.7 / §2.8  ordering and the global algorithm
# ---------------------------------------------------------------------------------------

def _best(candidates: Iterator[L0TileCandidate]) -> L0TileCandidate | None:
    """Lowest §2.7 key; the first enumerated wins an exact tie."""
    return min(candidates, key=lambda c: c.rank_key, default=None)


def _regimes(cfg: L0TileConfig) -> list[_Regime]:
    """Baseline first, then OS+dbC2, A+dbC1, A+dbC2, B+dbC1, B+dbC2 as the gates allow."""
    stats = [Stationarity.OutputStationary]
    if cfg.allow_a_stationary:
        stats.append(Stationarity.AStationary)
    if cfg.allow_b_stationary:
        stats.append(Stationarity.BStationary)
    dbcs = (1, 2) if cfg.allow_double_buffer_c else (1,)
    return [_Regime(s, d) for s in stats for d in dbcs]


def _explored_regimes(cfg: L0TileConfig) -> Iterator[tuple[int, _Regime]]:
    """Regimes the search visits after the baseline, skipping any whose L0C budget cannot
    hold the physical minimum tile."""
    for index, regime in enumerate(_regimes(cfg)):
        if index == 0:
            continue
        if regime.holds_min_tile(cfg, regime.budgets(cfg)[2]):
            yield index, regime


def _is_whole_problem(cfg: L0TileConfig, cand: L0TileCandidate | None) -> bool:
    return cand is not None and (cand.m, cand.n, cand.k) == (cfg.M, cfg.N, cfg.K)


def _no_tile_error(cfg: L0TileConfig) -> PassError:
    return _fail(
        f"no legal (m, n, k) tile found for M={cfg.M} N={cfg.N} K={cfg.K} "
        f"(bytes {cfg.bytes_a}/{cfg.bytes_b}/{cfg.bytes_c}, L0A/L0B/L0C "
        f"{cfg.l0a_bytes}/{cfg.l0b_bytes}/{cfg.l0c_bytes} B)",
        f"K must be a multiple of align_k={cfg.align_k}; without allow_k_boundary a multiple "
        f"of min_k={cfg.min_k} dividing K must fit L0; or set allow_padding=True")


def choose_l0_tile(config: L0TileConfig) -> L0TileResult:
    """Pick the L0 tile, stationarity and dbC with the lowest estimated wall (§2.8)."""
    _validate(config)
    regimes = _regimes(config)
    best = _best(_regime_candidates(config, regimes[0], 0))
    if not _is_whole_problem(config, best):
        for index, regime in _explored_regimes(config):
            cand = _best(_regime_candidates(config, regime, index))
            if cand is not None and (best is None or cand.wall_cycles < best.wall_cycles):
                best = cand
    if best is None:
        raise _no_tile_error(config)
    return _to_result(config, best)


def rank_l0_tiles(config: L0TileConfig, top: int = 5) -> list[L0TileCandidate]:
    """The ``top`` best design points over every regime the search visits, best first.

    Ordered by wall, then regime visiting order (an earlier regime wins a tied wall), then
    the §2.7 key, so the first entry is exactly ``choose_l0_tile``'s pick.
    """
    if top <= 0:
        raise _fail(f"top={top} must be >= 1", "ask for at least one alternative")
    _validate(config)
    regimes = _regimes(config)
    baseline = list(_regime_candidates(config, regimes[0], 0))
    pool: list[L0TileCandidate] = list(baseline)
    if not _is_whole_problem(config, _best(iter(baseline))):
        for index, regime in _explored_regimes(config):
            pool.extend(_regime_candidates(config, regime, index))
    if not pool:
        raise _no_tile_error(config)
    # nsmallest is stable: exact ties keep enumeration order, as the search does.
    return heapq.nsmallest(
        top, pool, key=lambda c: (c.wall_cycles, c.regime_index, c.rank_key[1:]))


def _to_result(cfg: L0TileConfig, best: L0TileCandidate) -> L0TileResult:
    tm, tn = _ceil_div(cfg.M, best.m), _ceil_div(cfg.N, best.n)
    a_held, b_held = _operands_held(best.stationarity, best.k >= cfg.K, best.os_holds_a)
    traffic = (cfg.bytes_a * cfg.M * cfg.K * (1 if a_held else tn)
               + cfg.bytes_b * cfg.K * cfg.N * (1 if b_held else tm)
               + (2 if cfg.c_read else 1) * cfg.bytes_c * cfg.M * cfg.N)
    return L0TileResult(
        m=best.m, n=best.n, k=best.k, estimated_traffic_bytes=traffic,
        estimated_cost_cycles=best.wall_cycles,
        padded_compute_volume=best.padded_compute_volume, stationarity=best.stationarity,
        os_holds_a=best.os_holds_a, double_buffer_c=best.double_buffer_c,
        perf_hint=_padding_hint(cfg, best))


def _padding_hint(cfg: L0TileConfig, best: L0TileCandidate) -> str:
    """Say which dimensions were padded up to the minimum tile, and how much MAD work is waste."""
    if not cfg.allow_padding:
        return ""
    small = [f"{d}={getattr(cfg, d)} < {lo}={getattr(cfg, lo)}"
             for d, lo in (("M", "min_m"), ("N", "min_n"), ("K", "min_k"))
             if getattr(cfg, d) < getattr(cfg, lo)]
    if not small:
        return ""
    useful = cfg.M * cfg.N * cfg.K
    waste = 100.0 * (1 - useful / best.padded_compute_volume)
    return (f"ChooseL0Tile padded the problem ({', '.join(small)}) to the L0 tile "
            f"({best.m}, {best.n}, {best.k}); {waste:.0f}% of the cube work is padding")
