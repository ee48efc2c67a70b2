"""``RunConfig``: how a compiled program runs (platform, tolerances, planner, simulator knobs).

Field names and defaults follow PyPTO's ``RunConfig`` so harness code ports unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.errors import RuntimeConfigError

SIM_MODES = ("reference", "fast", "serial")


@dataclass(frozen=True)
class RunConfig:
    platform: str = "a2a3sim"
    rtol: float = 1e-5
    atol: float = 1e-5
    memory_planner: object = None
    profile: str | None = None
    sim_mode: str = "reference"
    trace: bool = False
    enable_pypto_l0c_double_buffer: bool | None = None
    dump_passes: bool = False

    def __post_init__(self) -> None:
        if self.sim_mode not in SIM_MODES:
            raise RuntimeConfigError(f"RunConfig.sim_mode {self.sim_mode!r} is not one of "
                                     f"{', '.join(SIM_MODES)}")
        if self.rtol < 0 or self.atol < 0:
            raise RuntimeConfigError(f"RunConfig tolerances must be >= 0 (rtol={self.rtol}, "
                                     f"atol={self.atol})")

    @property
    def target(self) -> str:
        return target_of_platform(self.platform)


def target_of_platform(platform: str) -> str:
    """``a2a3sim`` -> ``a2a3``; unknown names raise with the valid list."""
    from ptoc.backend import get_target

    return get_target(platform).name
