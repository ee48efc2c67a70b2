"""``TensorSpec``: one named tensor of a system test and how to initialise it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ptoc.dtypes import DataType
from ptoc.errors import RuntimeConfigError


@dataclass(frozen=True)
class TensorSpec:
    """A tensor the test passes to the program, in the program's parameter order.

    ``init_value``: None (inputs: standard normal from the case's seeded generator;
    outputs: zeros), a number (filled), an array (copied), or a callable. A callable is
    first called with the shape as positional arguments (``np.random.randn``,
    ``torch.randn``); if it does not accept them it is called with no arguments.
    """

    name: str
    shape: list[int] | tuple[int, ...]
    dtype: DataType
    init_value: Any = None
    is_output: bool = False

    def create(self, rng: np.random.Generator) -> np.ndarray:
        shape = tuple(self.shape)
        np_dtype = self.dtype.numpy
        value = self.init_value
        if value is None:
            data = np.zeros(shape) if self.is_output else _random(rng, shape, self.dtype)
        elif callable(value):
            try:
                data = value(*shape)
            except TypeError:
                data = value()
        else:
            data = value
        data = _as_numpy(data, self.name)
        try:
            return np.broadcast_to(data, shape).astype(np_dtype).copy()
        except ValueError:
            raise RuntimeConfigError(
                f"TensorSpec '{self.name}': init_value of shape {list(np.shape(data))} does not "
                f"fit {list(shape)}") from None


def _random(rng: np.random.Generator, shape: tuple, dtype: DataType) -> np.ndarray:
    if dtype.is_float:
        return rng.standard_normal(shape)
    if dtype is DataType.BOOL:
        return rng.integers(0, 2, shape)
    info = np.iinfo(dtype.numpy)
    return rng.integers(max(info.min, -8), min(info.max, 8) + 1, shape)


def _as_numpy(value, name: str) -> np.ndarray:
    if type(value).__module__.startswith("torch"):
        from ptoc.runtime.tensors import to_numpy

        return to_numpy(value, name).astype(np.float64) if value.is_floating_point() else \
            to_numpy(value, name)
    return np.asarray(value)
