"""The chip around the cores: how many core groups, the shared L2 and HBM behind GM, and
what the device runtime costs per task — the numbers the chip simulator (``ptoc.sim.chip``)
uses.

Tags as in hw-model.md: [S] sourced, [D] derived, [A] assumption, [F] fitted (by the timing
profile's calibration, ``ptoc.backend.profiles``).

Memory model (all cores share it):

* each core's own GM paths keep the timing profile's per-transfer costs (the pto-isa flat
  table: GM->L1 78.4 B/cycle, ...) — the per-core MTE2/MTE3 limits;
* every GM transfer goes through the L2, whose aggregate bandwidth the cores moving data at
  the same moment share;
* bytes the L2 does not hold come from HBM, whose bandwidth the cores missing at the same
  moment share. The L2 keeps recently touched lines (``l2_line_bytes``) up to its capacity,
  so 24 cores reading the same A or B panel fetch it from HBM once: the published GEMM's
  cores each load 68-85 B/cycle, 1640-2050 B/cycle together, more than HBM delivers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.backend.cross_core import cluster_model
from ptoc.backend.targets import TargetError, get_target

MIB = 1024 * 1024


@dataclass(frozen=True)
class ChipModel:
    """One target's chip.

    Fields:
        target: target name.
        clusters: core groups (one AIC and ``aiv_per_aic`` AIVs each) the runtime uses.
        aiv_per_aic: vector cores per cube core.
        l2_bytes: shared L2 capacity.
        l2_line_bytes: L2 line (what residency is tracked by).
        l2_bytes_per_cycle: aggregate L2 <-> cores bandwidth.
        hbm_bytes_per_cycle: aggregate HBM bandwidth (L2 misses and write-backs).
        launch_cycles / dispatch_cycles: a run's launch, and the device scheduler's time to
            hand one task to a core, used when the profile has no launch floor
            (``TimingProfile.launch``).
        sources: where each number comes from.
    """

    target: str
    clusters: int
    aiv_per_aic: int
    l2_bytes: int
    l2_line_bytes: int
    l2_bytes_per_cycle: float
    hbm_bytes_per_cycle: float
    launch_cycles: float
    dispatch_cycles: float
    sources: tuple[str, ...] = ()

    @property
    def aiv_cores(self) -> int:
        return self.clusters * self.aiv_per_aic


_A2A3 = ChipModel(
    target="a2a3",
    # 24 usable AICore clusters per die (25 in silicon) [S] hw-model.md §1.1 (pypto soc.cpp
    # Create910BSoC; simpler src/a2a3/docs/hardware.md); 1 AIC + 2 AIV each [S] §1.1.
    clusters=24,
    aiv_per_aic=cluster_model("a2a3").aiv_per_aic,
    # [A] pto-isa's L2 schedule reference says "on the order of tens of MiB of shared L2" and
    # keeps a 32 MiB B panel plus an A panel within 0.9 of it (so L2 > 36 MiB); 64 MiB is
    # taken inside that range. No published figure in the reference set.
    l2_bytes=64 * MIB,
    l2_line_bytes=get_target("a2a3").l2_cache_line_bytes,      # 512 B [S] hw-model.md §1.3
    # [D] a2a3-published.json: the reference GEMM's 24 cores each load up to 85.4 B/cycle
    # at once (derived_per_instruction_cycles.tload_gm_to_l1_bytes_per_cycle_per_core), so
    # the L2 serves at least 24 x 85.4 = 2050 B/cycle; taken as its aggregate bandwidth.
    l2_bytes_per_cycle=24 * 85.4,
    # [A] 4 HBM2E stacks x ~410 GB/s = ~1.6 TB/s = 885 B/cycle at 1.85 GHz (public product
    # figures, not in the reference set); below the 1640-2050 B/cycle the published GEMM's
    # 24 cores load together, which is why the L2 must be modelled.
    hbm_bytes_per_cycle=885.0,
    # [F] used only without a profile launch floor: the a2a3-device fit (3214 cycles to
    # launch, 730 per further block) [F] a2a3-published.json via ptoc.backend.profiles.
    launch_cycles=3214.0,
    dispatch_cycles=730.0,
    sources=("clusters [S] hw-model.md §1.1", "L2 64 MiB [A]", "L2 line 512 B [S] §1.3",
             "L2 2050 B/cycle [D] a2a3-published.json", "HBM 885 B/cycle [A]",
             "launch 3214 + 730 per task [F] a2a3-device launch floor"),
)

_A5 = ChipModel(
    target="a5",
    # 18 clusters per die, 2 dies presented as one device -> 36 per device [S] hw-model.md
    # §1.1 (pypto soc.cpp Create950SoC; simpler src/a5/docs/hardware.md).
    clusters=36,
    aiv_per_aic=cluster_model("a5").aiv_per_aic,
    l2_bytes=64 * MIB,                                          # [A] as a2a3 (no figure)
    l2_line_bytes=get_target("a5").l2_cache_line_bytes,        # 512 B [S] hw-model.md §1.3
    l2_bytes_per_cycle=24 * 85.4 * 36 / 24,                     # [A] a2a3's per-core share
    hbm_bytes_per_cycle=885.0 * 2,                              # [A] two dies' HBM
    launch_cycles=3214.0,                                       # [A] as a2a3
    dispatch_cycles=730.0,                                      # [A] as a2a3
    sources=("clusters [S] hw-model.md §1.1", "everything else [A] from a2a3"),
)

_MODELS = {"a2a3": _A2A3, "a5": _A5}


def chip_model(target) -> ChipModel:
    """The chip model of ``target`` (a name or a ``Target``)."""
    name = get_target(target).name
    try:
        return _MODELS[name]
    except KeyError:  # pragma: no cover - every target has one
        raise TargetError(f"target {name} has no chip model",
                          hint=f"use one of {', '.join(_MODELS)}") from None
