"""``TensorSpec``: a named torch tensor described by shape, dtype and how to fill it.

PyPTO's runtime offers it so a script can list a program's tensors once and make them
with ``spec.create_tensor()``; ``is_output`` marks the ones the script checks. torch is
an optional extra of ptoc, so it is imported when a tensor is made, not with this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ptoc.errors import RuntimeConfigError


@dataclass
class TensorSpec:
    """``init_value``: None (zeros), a number (every element), a tensor (converted to
    ``dtype``), one of ``torch.randn/rand/zeros/ones`` (called with the shape and dtype), or
    another callable taking no arguments whose result is converted to ``dtype``."""

    name: str
    shape: list[int]
    dtype: Any
    init_value: Any = field(default=None)
    is_output: bool = False

    def create_tensor(self):
        torch = _torch(self.name)
        value = self.init_value
        if value is None:
            return torch.zeros(self.shape, dtype=self.dtype)
        if not isinstance(value, (int, float, torch.Tensor)) and not callable(value):
            raise RuntimeConfigError(
                f"TensorSpec {self.name!r}: init_value is a {type(value).__name__}",
                hint="use None, a number, a torch tensor or a callable returning a tensor")
        if isinstance(value, (int, float)):
            return torch.full(self.shape, value, dtype=self.dtype)
        if isinstance(value, torch.Tensor):
            return value.to(dtype=self.dtype)
        if value in (torch.randn, torch.rand, torch.zeros, torch.ones):
            return value(self.shape, dtype=self.dtype)
        return torch.as_tensor(value(), dtype=self.dtype)


def _torch(name: str):
    try:
        import torch
    except ImportError:
        raise RuntimeConfigError(f"TensorSpec {name!r} makes a torch tensor, but torch is not "
                                 "installed", hint="pip install 'ptoc[torch]'") from None
    return torch
