"""Small hand-written kernels and task builders for the chip tests."""

from __future__ import annotations

from ptoc.pto import parse
from ptoc.sim.examples import vector_add
from ptoc.sim.task import Task

R, C = 16, 64


def add_kernel(name: str = "add", *, scale_loop: int = 1) -> object:
    """z = x + y (``ptoc.sim.examples.vector_add``), the add repeated ``scale_loop`` times."""
    return parse(vector_add(R, C, repeat=scale_loop, name=name), filename=f"{name}.pto")


def add_task(index: int, module, x, y, z, *, deps=(), launch=None, block=None) -> Task:
    """z = x + y as task ``index`` (x, y read; z written)."""
    return Task(index, module.kernels[0].name, module, (x, y, z), (x, y), (z,), tuple(deps),
                params=("x", "y", "z"), launch=launch, block=block)
