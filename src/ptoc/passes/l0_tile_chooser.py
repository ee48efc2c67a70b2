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
import operator
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

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
# §2.5 / §2.6  every legal tile of one regime, scored (numpy, one array per quantity)
# ---------------------------------------------------------------------------------------
#
# The search scores every (m, n, k) of a regime; done one Python call per tile, that was
# most of a compile. Here a regime is one broadcast over the (m, n, k) grid: the legality
# rules of §2.5 become masks and the §2.6 terms array expressions. Each expression keeps
# the scalar formula's order of operations and float64 (as Python floats are), so every
# value, and therefore every ranking and tie, is the one the scalar search produced (the
# 300 oracle cases and an independent brute force check it).


def _operands_held(stat: Stationarity, full_k: bool, os_holds_a: bool) -> tuple[bool, bool]:
    """(A loaded once, B loaded once) — the routing shared by C_load and the traffic."""
    if stat is Stationarity.AStationary:
        return True, False
    if stat is Stationarity.BStationary:
        return False, True
    if not full_k:
        return False, False
    return os_holds_a, not os_holds_a


def _up(x, a: int):
    return -(-x // a) * a


def _cdiv(x, y):
    return -(-x // y)


@dataclass
class _Table:
    """Every legal scored tile of one regime, in (m, n, k) ascending (enumeration) order."""

    regime: _Regime
    index: int
    m: np.ndarray
    n: np.ndarray
    k: np.ndarray
    wall: np.ndarray
    load: np.ndarray
    mad: np.ndarray
    drain: np.ndarray
    padded: np.ndarray
    k_blocks: np.ndarray
    holds_a: np.ndarray

    def __len__(self) -> int:
        return len(self.m)

    def at(self, index: int) -> "_Table":
        """The table as the regime ``index``-th in a search's visiting order (the arrays are
        shared: tables are never written)."""
        if index == self.index:
            return self
        twin = object.__new__(_Table)
        twin.__dict__.update(self.__dict__, index=index)
        return twin

    def rank_key(self, i: int) -> tuple:
        """Point ``i``'s §2.7 key after the wall: padded work, K-blocks, loads, larger area,
        larger k (lower is better), then its position (the first enumerated wins a tie)."""
        return (int(self.padded[i]), int(self.k_blocks[i]), float(self.load[i]),
                -int(self.m[i]) * int(self.n[i]), -int(self.k[i]), i)

    def best(self) -> int | None:
        """Position of the regime's §2.7 winner (the first enumerated on an exact tie)."""
        if not len(self):
            return None
        tied = np.flatnonzero(self.wall == self.wall.min())   # the primary key first
        if len(tied) == 1:
            return int(tied[0])
        return min(map(int, tied), key=self.rank_key)   # a handful: ordered as tuples

    def candidate(self, i: int) -> L0TileCandidate:
        return L0TileCandidate(
            m=int(self.m[i]), n=int(self.n[i]), k=int(self.k[i]),
            stationarity=self.regime.stationarity, double_buffer_c=self.regime.dbc == 2,
            wall_cycles=int(self.wall[i]), load_cycles=float(self.load[i]),
            mad_cycles=float(self.mad[i]), drain_cycles=float(self.drain[i]),
            padded_compute_volume=int(self.padded[i]), os_holds_a=bool(self.holds_a[i]),
            k_blocks=int(self.k_blocks[i]), regime_index=self.index)


def _legal_grids(cfg: L0TileConfig, regimes: list[_Regime]):
    """§2.5: the legal (m, n, k) of several regimes in one broadcast (a leading regime axis:
    numpy's per-call cost, not the grid size, dominates a regime), flattened regime by
    regime in enumeration order; returns each tile's regime position, m, n, k and full-K
    output-stationary orientation (hold A unless holding B is cheaper). m, n and k come as
    (axis values, each tile's index into them): a quantity of one dimension is computed on
    its few axis values and gathered."""
    budgets = np.array([regime.budgets(cfg) for regime in regimes], dtype=np.int64)
    a0, b0, c0 = (budgets[:, j][:, None, None] for j in range(3))          # (R, 1, 1)
    stat = [regime.stationarity for regime in regimes]
    is_os = np.array([s is Stationarity.OutputStationary for s in stat])[:, None, None]
    is_a = np.array([s is Stationarity.AStationary for s in stat])[:, None, None]
    is_b = np.array([s is Stationarity.BStationary for s in stat])[:, None, None]
    pair = np.array([regime.requires_inner_pair for regime in regimes])[:, None, None]
    full = np.array([regime.requires_full_k for regime in regimes])
    if cfg.allow_padding:
        # Padded ranges reach one minimum tile, as K's does (§2.5 states it for K only).
        m_hi = max(_align_up(cfg.M, cfg.align_m), cfg.min_m)
        n_hi = max(_align_up(cfg.N, cfg.align_n), cfg.min_n)
    else:
        m_hi, n_hi = cfg.M, cfg.N
    if cfg.max_n:
        n_hi = min(n_hi, cfg.max_n)
    k_dim = max(_align_up(cfg.K, cfg.align_k), cfg.min_k) if cfg.allow_padding else cfg.K
    ms = np.arange(cfg.min_m, m_hi + 1, cfg.align_m, dtype=np.int64)
    ns = np.arange(cfg.min_n, n_hi + 1, cfg.align_n, dtype=np.int64)
    ks = np.arange(cfg.min_k, _align_down(k_dim, cfg.align_k) + 1, cfg.align_k, dtype=np.int64)
    phys_m = _up(_up(ms, cfg.box_align_m), cfg.l0c_align_m)
    m2, n2, pm2 = ms[None, :, None], ns[None, None, :], phys_m[None, :, None]
    box_n = _up(n2, cfg.box_align_n)
    # hold-A vs hold-B MTE1 cycles of the full-K orders (the §2.6 load formula)
    a_once = cfg.bytes_a * cfg.M * cfg.K / cfg.bw_a
    b_once = cfg.bytes_b * cfg.K * cfg.N / cfg.bw_b
    held_a = a_once + cfg.bytes_b * cfg.K * cfg.N * _cdiv(cfg.M, m2) / cfg.bw_b
    held_b = cfg.bytes_a * cfg.M * cfg.K * _cdiv(cfg.N, n2) / cfg.bw_a + b_once
    holds_a = held_a <= held_b                                               # (1, M, N)
    mn_ok = (pm2 <= c0 // _align_up(cfg.min_n, cfg.box_align_n)) & (n2 <= c0 // pm2)
    rows_outer = np.where(is_os, holds_a, is_a)
    inner = np.where(rows_outer, cfg.N // n2, cfg.M // m2)
    mn_ok &= ~pair | (inner >= 2)
    # §2.5 MakeCandidate: N cap, bounds, L0C fit (the conditions on (m, n) alone)
    if cfg.max_n:
        mn_ok &= n2 <= cfg.max_n
    if not cfg.allow_padding:
        mn_ok &= (m2 <= cfg.M) & (n2 <= cfg.N)
    mn_ok &= pm2 * box_n <= c0
    cap = np.minimum(a0 // _up(m2, cfg.box_align_m), b0 // box_n)
    k_hi = (np.minimum(cap, k_dim) // cfg.align_k) * cfg.align_k
    # then k, only for the (regime, m, n) cells that passed: row-major, so the points come
    # out regime by regime, m, n and k ascending
    rc, ic, jc = np.nonzero(mn_ok)
    k2 = ks[None, :]
    ok = k2 <= k_hi[mn_ok][:, None]     # the passing cells' bounds, in nonzero's order
    if not (cfg.allow_padding or (cfg.allow_k_boundary and cfg.K % cfg.align_k == 0)):
        ok &= (cfg.K % k2) == 0
    whole_k = k2 == cfg.K
    ok &= ~full[rc][:, None] | whole_k
    # the N caps of pipelined full-K grids (k = K with m or n split), when set
    if cfg.max_n_pipelined or cfg.max_n_nested_pipelined:
        grid = (ms[ic] != cfg.M) | (ns[jc] != cfg.N)
        capped = np.zeros(len(rc), dtype=bool)
        if cfg.max_n_pipelined:
            capped |= ~is_b[rc, 0, 0] & grid & (ns[jc] > cfg.max_n_pipelined)
        if cfg.max_n_nested_pipelined:
            capped |= (is_os[rc, 0, 0] & grid & holds_a[0, ic, jc]
                       & (ns[jc] > cfg.max_n_nested_pipelined))
        ok &= ~(capped[:, None] & whole_k)
    cell, q = np.nonzero(ok)
    i, j = ic[cell], jc[cell]
    return rc[cell], (ms, i), (ns, j), (ks, q), holds_a[0, i, j]


#: every regime a search can visit, in visiting order (``_regimes`` with all gates open)
_ALL_REGIMES = tuple(_Regime(s, d) for s in (Stationarity.OutputStationary,
                                             Stationarity.AStationary, Stationarity.BStationary)
                     for d in (1, 2))

#: the regime gates decide which regimes are searched, not how one regime's tiles score
_GATES = frozenset({"allow_a_stationary", "allow_b_stationary", "allow_double_buffer_c"})
#: the fields that key a regime's table (in field order): all but the gates
_TABLE_KEY = operator.attrgetter(*(f.name for f in fields(L0TileConfig) if f.name not in _GATES))
_FIELDS = operator.attrgetter(*(f.name for f in fields(L0TileConfig)))


def _config_key(config: L0TileConfig) -> tuple:
    """The key of a choice and of a ranking: every field, and each value's type (``M=8`` and
    ``M=8.0`` are equal keys by value, but the result built from them is not: its traffic
    and padding hint are computed from the config's own values)."""
    values = _FIELDS(config)
    return values + tuple(map(type, values))


class _Memo(dict):
    """A bounded process-wide memo of the search's pure results: a table, choice or ranking
    is a function of the config's fields alone (capacities, alignments and cost constants
    of the target included), so it is computed once per problem in a process: for the
    chooser, its Mat-scratch re-choice and the decision ranking of one compile (which ask
    for the same regimes under other gates), for the dbC check's second compile, and for
    every later compile of the same matmul shape. Nothing stored is ever changed (tables
    hold read-only arrays; choices and candidates are frozen). Starts over when full."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def put(self, key, value):
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


_TABLES = _Memo(384)      # (regime, *non-gate fields) -> _Table (index as first scored)
_CHOICES = _Memo(256)     # every field -> L0TileResult
_RANKINGS = _Memo(128)    # every field -> L0TileRanking


def clear_chooser_memo() -> None:
    """Forget every memoised table, choice and ranking (the next ask computes afresh)."""
    for memo in (_TABLES, _CHOICES, _RANKINGS):
        memo.clear()


def _regime_tables(cfg: L0TileConfig, wanted: list[tuple[_Regime, int]]) -> list[_Table]:
    """Every legal tile of each ``(regime, index)`` scored with §2.6 (core cycles); ``index``
    is the regime's place in the search's visiting order (ties go to the earlier regime).
    The regimes not scored yet for this problem are scored together."""
    common = _TABLE_KEY(cfg)
    keys = [_regime_key(regime) + common for regime, _ in wanted]
    found = {key: table for key in keys if (table := _TABLES.get(key)) is not None}
    missing = [(w, key) for w, key in zip(wanted, keys) if key not in found]
    if missing:
        # the other regimes a later ask may want (other gates, the decision ranking) ride
        # along: one broadcast instead of one per ask
        asked = {key for _, key in missing}
        extra = [((regime, 0), key) for regime, key in
                 ((regime, _regime_key(regime) + common) for regime in _ALL_REGIMES)
                 if key not in _TABLES and key not in asked
                 and regime.holds_min_tile(cfg, regime.budgets(cfg)[2])]
        try:
            tables = _score_regimes(cfg, [w for w, _ in missing + extra])
        except PassError:
            if not extra:
                raise
            extra = []   # a regime nobody asked for failed: fail only as the asked ones do
            tables = _score_regimes(cfg, [w for w, _ in missing])
        for (_, key), table in zip(missing + extra, tables):
            found[key] = _TABLES.put(key, table)
    return [found[key].at(index) for (_, index), key in zip(wanted, keys)]


def _regime_key(regime: _Regime) -> tuple[str, int]:
    """A regime as plain values for the memo's keys (hashing an enum member runs Python)."""
    return regime.stationarity.value, regime.dbc


def _score_regimes(cfg: L0TileConfig, wanted: list[tuple[_Regime, int]]) -> list[_Table]:
    if not wanted:
        return []
    regimes = [regime for regime, _ in wanted]
    r, (ms, i), (ns, j), (ks, q), holds_a = _legal_grids(cfg, regimes)
    m, n, k = ms[i], ns[j], ks[q]
    # the terms of one dimension are computed on its axis and gathered (same values, same
    # order of operations: a tenth of the integer divisions)
    tm, tn = _cdiv(cfg.M, ms)[i], _cdiv(cfg.N, ns)[j]
    tiles = tm * tn
    full_k = (ks >= cfg.K)[q]
    a_stat = np.array([regime.stationarity is Stationarity.AStationary for regime in regimes])[r]
    b_stat = np.array([regime.stationarity is Stationarity.BStationary for regime in regimes])[r]
    a_held = a_stat | (~b_stat & full_k & holds_a)
    b_held = b_stat | (~a_stat & full_k & ~holds_a)
    # C_load: L1->L0 cycles; A and B share MTE1 so their times add
    load = (cfg.bytes_a * cfg.M * cfg.K * np.where(a_held, 1, tn) / cfg.bw_a
            + cfg.bytes_b * cfg.K * cfg.N * np.where(b_held, 1, tm) / cfg.bw_b)
    # C_mad: a head per K-block plus passes x fractals; a K tail is charged at its width
    kt = max(1, cfg.mad_k_fractal_bytes // cfg.bytes_a)
    passes = cfg.mad_fp32_passes if cfg.bytes_a == 4 else max(1, cfg.bytes_a // 2)
    num_full = cfg.K // ks
    tail = cfg.K - num_full * ks
    has_tail = tail > 0
    blocks = (num_full + has_tail)[q]
    fractals = (num_full * _cdiv(ks, kt) + np.where(has_tail, _cdiv(tail, kt), 0))[q]
    mad = tiles * (blocks * cfg.mad_head
                   + passes * _cdiv(ms, cfg.align_m)[i] * fractals * _cdiv(ns, cfg.align_n)[j])
    # C_drain: per tile a fixed cost plus a per-row cost with a floor, and a penalty when the
    # number of C0 column groups is not a power of two
    groups = _cdiv(ns, max(1, cfg.drain_c0_bytes // cfg.bytes_c))
    odd = groups // (groups & -groups)
    per_row = (np.maximum(cfg.drain_row_cycles, cfg.bytes_c * ns / cfg.bw_drain)
               + cfg.drain_penalty_cycles * (odd - 1))[j]
    drain = tiles * (cfg.drain_fixed_cycles + m * per_row)
    # wall: one accumulator exposes the drain; two overlap it, leaving a one-tile bubble
    compute = np.maximum(load, mad)
    two = np.array([regime.dbc == 2 for regime in regimes])[r]
    wall = np.where(two, np.maximum(compute, drain) + np.minimum(compute, drain) / tiles,
                    compute + drain)
    wall = _round_cycles(wall)
    k_blocks = _cdiv(cfg.K, ks)[q]
    padded = tm * m * tn * n * k_blocks * k
    bounds = np.searchsorted(r, np.arange(len(regimes) + 1))
    columns = (m, n, k, wall, load, mad, drain, padded, k_blocks, holds_a)
    for column in columns:   # tables are shared (_TABLES): never written after this
        column.flags.writeable = False
    return [_Table(regime, index, *(a[lo:hi] for a in columns))
            for (regime, index), lo, hi in zip(wanted, bounds[:-1], bounds[1:])]


def _round_cycles(x: np.ndarray) -> np.ndarray:
    """llround (half away from zero; walls are never negative), rejecting non-finite or
    inexact (> 2^53) values."""
    bad = ~np.isfinite(x) | (x > _MAX_EXACT_CYCLES)
    if bad.any():
        raise _fail(f"estimated wall {x[bad][0]} cycles is not a finite value <= 2^53",
                    "check the bandwidth and cycle constants of the cost model")
    return np.floor(x + 0.5).astype(np.int64)


# ---------------------------------------------------------------------------------------
# §2.7 / §2.8  ordering and the global algorithm
# ---------------------------------------------------------------------------------------

def _regimes(cfg: L0TileConfig) -> list[_Regime]:
    """Baseline first, then OS+dbC2, A+dbC1, A+dbC2, B+dbC1, B+dbC2 as the gates allow."""
    stats = [Stationarity.OutputStationary]
    if cfg.allow_a_stationary:
        stats.append(Stationarity.AStationary)
    if cfg.allow_b_stationary:
        stats.append(Stationarity.BStationary)
    dbcs = (1, 2) if cfg.allow_double_buffer_c else (1,)
    return [_Regime(s, d) for s in stats for d in dbcs]


def _searched_tables(cfg: L0TileConfig) -> list[_Table]:
    """The regimes the search visits, scored: the baseline, then (unless its winner is the
    whole problem) every other regime whose L0C budget holds the physical minimum tile."""
    regimes = _regimes(cfg)
    tables = _regime_tables(cfg, [(regimes[0], 0)])
    first = tables[0].best()
    if first is not None and (int(tables[0].m[first]), int(tables[0].n[first]),
                              int(tables[0].k[first])) == (cfg.M, cfg.N, cfg.K):
        return tables
    return tables + _regime_tables(cfg, [
        (regime, index) for index, regime in enumerate(regimes[1:], start=1)
        if regime.holds_min_tile(cfg, regime.budgets(cfg)[2])])


def _no_tile_error(cfg: L0TileConfig) -> PassError:
    return _fail(
        f"no legal (m, n, k) tile found for M={cfg.M} N={cfg.N} K={cfg.K} "
        f"(bytes {cfg.bytes_a}/{cfg.bytes_b}/{cfg.bytes_c}, L0A/L0B/L0C "
        f"{cfg.l0a_bytes}/{cfg.l0b_bytes}/{cfg.l0c_bytes} B)",
        f"K must be a multiple of align_k={cfg.align_k}; without allow_k_boundary a multiple "
        f"of min_k={cfg.min_k} dividing K must fit L0; or set allow_padding=True")


def choose_l0_tile(config: L0TileConfig) -> L0TileResult:
    """Pick the L0 tile, stationarity and dbC with the lowest estimated wall (§2.8): each
    regime's §2.7 winner replaces the baseline's only on a strictly lower wall."""
    key = _config_key(config)
    known = _CHOICES.get(key)
    if known is not None:
        return known
    _validate(config)
    best = None
    for table in _searched_tables(config):
        i = table.best()
        if i is not None and (best is None or table.wall[i] < best.wall_cycles):
            best = table.candidate(i)
    if best is None:
        raise _no_tile_error(config)
    return _CHOICES.put(key, _to_result(config, best))


class L0TileRanking:
    """Every design point the search visits, in rank order: wall, then regime visiting order
    (an earlier regime wins a tied wall), then the §2.7 key, then enumeration order — so the
    first point is exactly ``choose_l0_tile``'s pick. Scored once; ``top`` reads from it."""

    def __init__(self, config: L0TileConfig):
        _validate(config)
        self.tables = [t for t in _searched_tables(config) if len(t)]
        if not self.tables:
            raise _no_tile_error(config)
        sizes = [len(t) for t in self.tables]
        self._starts = np.cumsum([0] + sizes[:-1])
        self._wall = np.concatenate([t.wall for t in self.tables])
        self._dbc = np.repeat([t.regime.dbc == 2 for t in self.tables], sizes)
        self._tops: dict[tuple, tuple[L0TileCandidate, ...]] = {}

    @classmethod
    def of(cls, config: L0TileConfig) -> "L0TileRanking":
        """``config``'s ranking, built once per process (``_Memo``)."""
        key = _config_key(config)
        known = _RANKINGS.get(key)
        return known if known is not None else _RANKINGS.put(key, cls(config))

    def top(self, count: int, double_buffer_c: bool | None = None) -> list[L0TileCandidate]:
        """The ``count`` best points; with ``double_buffer_c`` True (False) dbC (single-
        accumulator) points only. Each ask is ordered once (the points are frozen)."""
        known = self._tops.get((count, double_buffer_c))
        if known is None:
            known = self._tops[(count, double_buffer_c)] = tuple(
                self._order(count, double_buffer_c))
        return list(known)

    def _order(self, count: int, double_buffer_c: bool | None) -> list[L0TileCandidate]:
        """Only the points whose wall is within the ``count`` lowest are ordered (the wall
        is the primary key, so they hold the first ``count``), as tuples: wall, regime
        visiting order, the §2.7 key (``_Table.rank_key``), then the point's position."""
        points = np.arange(len(self._wall)) if double_buffer_c is None else \
            np.flatnonzero(self._dbc == double_buffer_c)
        if count <= 0 or not len(points):
            return []
        walls = self._wall[points]
        if count < len(points):
            points = points[walls <= np.partition(walls, count - 1)[count - 1]]
        which = np.searchsorted(self._starts, points, side="right") - 1
        keyed = []
        for p, w in zip(points.tolist(), which.tolist()):
            table, i = self.tables[w], p - int(self._starts[w])
            keyed.append((int(table.wall[i]), table.index, *table.rank_key(i)[:-1], p, w, i))
        keyed.sort()
        return [self.tables[key[-2]].candidate(key[-1]) for key in keyed[:count]]


def rank_l0_tiles(config: L0TileConfig, top: int = 5) -> list[L0TileCandidate]:
    """The ``top`` best design points over every regime the search visits, best first
    (``L0TileRanking``)."""
    if top <= 0:
        raise _fail(f"top={top} must be >= 1", "ask for at least one alternative")
    return L0TileRanking.of(config).top(top)


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
