"""Cost-model constants of the L0 tile chooser (PyPTO's ``L0CostModel``).

The chooser ranks (m, n, k, stationarity, dbC) design points by an estimated wall in core
cycles built from three terms: L1->L0 operand loads (MTE1), cube MADs and FIXPIPE drains.
These are the calibrated constants of those terms, per target. They live here, in the
backend, so the chooser and the simulator's timing profiles read one set of numbers.

Sources: reference/pypto-passes.md §1.3 (pypto ``include/pypto/backend/common/backend_handler.h``
a2a3 defaults, ``include/pypto/backend/950/backend_950_handler.h`` a5 overrides) and
reference/hw-model.md §5.1 (provenance of each fit).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class L0CostModel:
    """Calibrated L1->L0 / MAD / FIXPIPE constants of one target (field names follow PyPTO's
    backend handler; the chooser config renames ``bw_l0a``->``bw_a``, ``bw_l0b``->``bw_b`` and
    ``mad_head_cycles``->``mad_head``)."""

    bw_l0a: float               # L1->L0A bytes per cycle (MTE1)
    bw_l0b: float               # L1->L0B bytes per cycle (MTE1)
    bw_drain: float             # FIXPIPE bytes per cycle per drained M-row
    drain_fixed_cycles: float   # per-drain overhead, independent of the tile size
    drain_row_cycles: float     # per-M-row floor of a drain
    drain_penalty_cycles: float  # per M-row per extra drain pass, x (odd(ceil(n/N0)) - 1)
    drain_c0_bytes: int         # NZ fractal C0 width in bytes (N0 = drain_c0_bytes / bytes_c)
    mad_head_cycles: float      # fixed cycles per TMATMUL (one per K-block)
    mad_k_fractal_bytes: int    # bytes of one K-fractal (kt = mad_k_fractal_bytes / bytes_a)
    mad_fp32_passes: int        # cube passes per K-fractal for fp32 operands


# a2a3 (Ascend 910B / 910_93): pypto-passes.md §1.3 "a2a3 default" column [S];
# provenance per hw-model.md §5.1.
A2A3_L0_COST_MODEL = L0CostModel(
    bw_l0a=129.7,               # on-device MTE1 sweep, R^2 0.993 [S] hw-model.md §5.1
    bw_l0b=85.4,                # on-device MTE1 sweep [S] hw-model.md §5.1
    bw_drain=118.0,             # FIXPIPE sweep [S] hw-model.md §5.1
    drain_fixed_cycles=164.0,   # sweep intercept [S] hw-model.md §5.1
    drain_row_cycles=4.45,      # per-row floor [S] hw-model.md §5.1
    drain_penalty_cycles=2.6,   # device-anchored at n = 80 [S] hw-model.md §5.1
    drain_c0_bytes=32,          # ISA C0 [S] pypto-passes.md §1.3
    mad_head_cycles=21.0,       # op-sim fit, device within ~2 % [S] hw-model.md §5.1
    mad_k_fractal_bytes=32,     # kt = 32 / bytes_a [S] pypto-passes.md §1.3
    mad_fp32_passes=2,          # fp32 = 2 cube passes per K-fractal [S] pypto-passes.md §1.3
)

# a5 (Ascend 950): pypto-passes.md §1.3 "a5 override" column [S] (a5-sim fits, hw-model.md §5.1).
A5_L0_COST_MODEL = L0CostModel(
    bw_l0a=206.3,               # a5-sim LOAD_2Dv2 fit [S] hw-model.md §5.1
    bw_l0b=223.8,               # a5-sim [S] hw-model.md §5.1
    bw_drain=30.0,              # a5-sim, ~4x slower than device [S] hw-model.md §5.1
    drain_fixed_cycles=343.4,   # [S] pypto-passes.md §1.3
    drain_row_cycles=4.59,      # [S] pypto-passes.md §1.3
    drain_penalty_cycles=0.26,  # [S] pypto-passes.md §1.3
    drain_c0_bytes=32,          # ISA C0 [S] pypto-passes.md §1.3
    mad_head_cycles=25.0,       # mmad = 25 + 8 * fractals, R^2 = 1 [S] hw-model.md §5.1
    mad_k_fractal_bytes=32,     # [S] pypto-passes.md §1.3
    mad_fp32_passes=8,          # [S] pypto-passes.md §1.3
)

L0_COST_MODELS: Mapping[str, L0CostModel] = MappingProxyType({
    "a2a3": A2A3_L0_COST_MODEL,
    "a5": A5_L0_COST_MODEL,
})


def l0_cost_model_for(target: str) -> L0CostModel:
    """The chooser cost model of ``target`` (a target name, a platform alias or a Target)."""
    name = getattr(target, "name", target)
    key = str(name).strip().lower()
    if key not in L0_COST_MODELS:
        from ptoc.backend.targets import get_target  # noqa: PLC0415 - resolves aliases, errors

        key = get_target(key).name
    return L0_COST_MODELS[key]
