"""``RunConfig``: how a compiled program runs (platform, tolerances, planner, simulator knobs).

Field names and defaults follow PyPTO's ``RunConfig`` so harness code ports unchanged. The
fields that steer a real device (``device_id``, swimlane/PMU/dump collection, runtime ring
sizes, ...) are accepted so PyPTO scripts run as written; setting one reports once per
process that it does not apply to the simulator (a ``SimulatorIgnoredWarning``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields

from ptoc.errors import RuntimeConfigError
from ptoc.messages import user_stacklevel

SIM_MODES = ("reference", "fast", "serial")
#: what a run that returns outputs does when the simulator found data races
ON_RACE = ("error", "warn")


class _DefaultPlatform(str):
    """The platform of a RunConfig that did not name one: equal to ``"a2a3sim"`` (what a
    compile uses), but recognisable by identity, so running an already compiled program
    takes that program's own platform instead of refusing a5sim for a2a3sim."""


DEFAULT_PLATFORM = _DefaultPlatform("a2a3sim")


class SimulatorIgnoredWarning(UserWarning):
    """A PyPTO ``RunConfig`` field that only a real device uses was set; ptoc ignores it."""


#: device-only fields and what each controls on a device; the value given is ignored
DEVICE_ONLY = {
    "device_id": "which NPU runs the program",
    "enable_chip_swimlane": "per-task swimlane records from the device runtime",
    "enable_dump_args": "per-task argument dumps from the device runtime",
    "enable_pmu": "AICore PMU counters",
    "enable_dep_gen": "the device runtime's dependency-edge capture",
    "enable_scope_stats": "the device runtime's ring-fill statistics",
    "golden_data_dir": "PyPTO's generated golden.py data files",
    "aicpu_thread_num": "the AICPU scheduler's thread count",
    "ring_task_window": "the device runtime's task ring",
    "ring_heap": "the device runtime's output heap",
    "ring_dep_pool": "the device runtime's dependency pool",
    "distributed_config": "multi-chip (L3) execution",
    "dump_ptoas_passes": "dumps of the external ptoas assembler's passes",
    "diagnostic_phase": "PyPTO's diagnostic phase gate",
}

_reported: set[str] = set()


def report_ignored(owner: str, values: dict, *, what: dict | None = None) -> None:
    """Warn once per process for each ``owner.name`` that a device-only setting is ignored."""
    what = what or DEVICE_ONLY
    for name, value in values.items():
        key = f"{owner}.{name}"
        if key in _reported:
            continue
        _reported.add(key)
        reason = f" ({what[name]})" if name in what else ""
        warnings.warn(f"ptoc: {key}={value!r} does not apply to the simulator{reason}; ignored",
                      SimulatorIgnoredWarning, stacklevel=user_stacklevel())


@dataclass(frozen=True)
class RunConfig:
    platform: str = DEFAULT_PLATFORM
    rtol: float = 1e-5
    atol: float = 1e-5
    memory_planner: object = None
    profile: str | None = None
    sim_mode: str = "reference"
    trace: bool = False
    sim_limits: object = None          # ptoc.sim.SimLimits; None: the simulator's defaults
    chip: bool = False                 # run the task graph on the simulated chip (ptoc.sim.chip)
    chip_clusters: int | None = None   # core groups of the chip (None: all of the target's)
    enable_pypto_l0c_double_buffer: bool | None = None
    on_race: str = "error"             # races in a call returning outputs: raise, or warn
    dump_passes: object = False
    # PyPTO's fields that apply to ptoc
    strategy: object = None
    backend_type: object = None
    save_kernels: bool = False
    save_kernels_dir: str | None = None
    codegen_only: bool = False
    compile_profiling: bool = False
    disabled_diagnostics: object = None
    analyze_auto_scopes_for_deps: bool = False  # AutoDeriveTaskDependencies' analysis
    # PyPTO's device-only fields (see DEVICE_ONLY); accepted, reported once, ignored
    device_id: int = 0
    enable_chip_swimlane: int | bool = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    golden_data_dir: str | None = None
    aicpu_thread_num: int | None = None
    ring_task_window: object = None
    ring_heap: object = None
    ring_dep_pool: object = None
    distributed_config: object = None
    dump_ptoas_passes: bool = False
    diagnostic_phase: object = None

    def __post_init__(self) -> None:
        if self.sim_mode not in SIM_MODES:
            raise RuntimeConfigError(f"RunConfig.sim_mode {self.sim_mode!r} is not one of "
                                     f"{', '.join(SIM_MODES)}")
        if self.on_race not in ON_RACE:
            raise RuntimeConfigError(f"RunConfig.on_race {self.on_race!r} is not one of "
                                     f"{', '.join(ON_RACE)}")
        if self.chip and self.sim_mode == "serial":
            raise RuntimeConfigError("RunConfig(chip=True) times tasks side by side; it has no "
                                     "serial mode", hint="use sim_mode='reference' or 'fast'")
        if self.chip_clusters is not None and not self.chip:
            raise RuntimeConfigError("RunConfig.chip_clusters applies to chip runs only",
                                     hint="also pass chip=True")
        if self.rtol < 0 or self.atol < 0:
            raise RuntimeConfigError(f"RunConfig tolerances must be >= 0 (rtol={self.rtol}, "
                                     f"atol={self.atol})")
        for name, (phrase, ok) in RING_LIMITS.items():
            _check_ring_size(name, getattr(self, name), phrase, ok)
        target = target_of_platform(self.platform)
        from ptoc.backend import BackendType

        # as in PyPTO, the platform decides the backend; a backend_type given is overridden
        object.__setattr__(self, "backend_type", BackendType(target))
        defaults = {f.name: f.default for f in fields(self)}
        report_ignored("RunConfig", {name: getattr(self, name) for name in DEVICE_ONLY
                                     if getattr(self, name) != defaults[name]})

    @property
    def target(self) -> str:
        return target_of_platform(self.platform)

    @property
    def names_platform(self) -> bool:
        """True when the platform was given (not left at its default)."""
        return self.platform is not DEFAULT_PLATFORM

    def compile_options(self) -> dict:
        """The ``compile_ir`` keywords this config sets (planner, dbC, dumps, diagnostics)."""
        return {"platform": self.platform, "memory_planner": self.memory_planner,
                "enable_pypto_l0c_double_buffer": self.enable_pypto_l0c_double_buffer,
                "dump_passes": bool(self.dump_passes), "profiling": self.compile_profiling,
                "disabled_diagnostics": self.disabled_diagnostics,
                "analyze_auto_scopes_for_deps": self.analyze_auto_scopes_for_deps}


#: PyPTO's limits on the device-only ring sizes (the device runtime's), checked although
#: the simulator ignores the values, so a script that ptoc accepts is one PyPTO accepts
RING_DEPTH = 4
RING_LIMITS = {
    "ring_task_window": ("be a power of 2 >= 4", lambda v: _is_pow2(v) and v >= 4),
    "ring_heap": ("be a power of 2 >= 1024 (bytes per ring)", lambda v: _is_pow2(v) and v >= 1024),
    "ring_dep_pool": ("be in [4, INT32_MAX]", lambda v: 4 <= v <= 2**31 - 1),
}


def _is_pow2(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _check_ring_size(name: str, value, phrase: str, ok) -> None:
    """A scalar for every ring, or one entry per ring (0 keeps that ring's default)."""
    def is_int(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if value is None:
        return
    if isinstance(value, (list, tuple)):
        if len(value) != RING_DEPTH:
            raise RuntimeConfigError(f"RunConfig.{name} must have {RING_DEPTH} entries (one per "
                                     f"scope-depth ring), got {len(value)}")
        bad = [v for v in value if not is_int(v) or (v != 0 and not ok(v))]
        if bad:
            raise RuntimeConfigError(f"RunConfig.{name} entries must {phrase} (or 0 to keep the "
                                     f"default), got {bad[0]!r}")
    elif not is_int(value) or not ok(value):
        raise RuntimeConfigError(f"RunConfig.{name} must {phrase}, got {value!r}",
                                 hint="PyPTO's device runtime refuses it; the simulator ignores "
                                      "the ring sizes")


def target_of_platform(platform: str) -> str:
    """``a2a3sim`` -> ``a2a3``; unknown names raise with the valid list."""
    from ptoc.backend import get_target

    return get_target(platform).name
