"""``PTOTestCase``: a system test a user writes (PyPTO's hook names, so tests port).

Override ``get_name``, ``define_tensors``, ``get_program`` and ``compute_expected``;
optionally ``get_memory_planner``, ``get_enable_pypto_l0c_double_buffer``,
``get_platform``, ``get_rtol``/``get_atol`` and ``get_sim_mode``. ``run()`` compiles,
simulates, compares with the golden and fails on any simulator race.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ptoc.dtypes import DataType
from ptoc.testing.specs import TensorSpec


class PTOTestCase:
    """Base class of system tests; see the module docstring for the hooks."""

    seed: int = 0

    def get_name(self) -> str:
        return type(self).__name__

    def define_tensors(self) -> list[TensorSpec]:
        raise NotImplementedError(f"{type(self).__name__} must define define_tensors()")

    def get_program(self):
        raise NotImplementedError(f"{type(self).__name__} must define get_program()")

    def compute_expected(self, tensors: dict[str, np.ndarray], params=None) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define compute_expected()")

    def get_memory_planner(self):
        return None

    def get_enable_pypto_l0c_double_buffer(self):
        return None

    def get_platform(self) -> str:
        return "a2a3sim"

    def get_rtol(self) -> float:
        return 1e-5

    def get_atol(self) -> float:
        return 1e-5

    def get_sim_mode(self) -> str:
        return "reference"

    def run(self, work_dir: str | Path | None = None):
        """Compile, simulate and compare; returns the TestOutcome (raises on failure)."""
        from ptoc.testing.runner import run_case

        return run_case(self, work_dir)


__all__ = ["DataType", "PTOTestCase", "TensorSpec"]
