"""Binding user tensors and scalars to kernel parameters."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptoc.errors import SourceLoc, count
from ptoc.pto.model import Kernel, PtrType, ScalarType

from ptoc.sim.errors import SimProgramError
from ptoc.sim.core.memory import MemoryAccessError, bind_tensor
from ptoc.sim.global_memory import GlobalMemory, GMTensor


@dataclass
class Bindings:
    """A kernel's parameters bound for one run.

    ``env`` maps each parameter to its value (a pointer to the typed flat view of its GM
    region, a scalar to its number); ``regions`` maps each pointer parameter to its GM
    region and ``shapes`` to the shape the caller gave (for ``SimResult.outputs``).
    """

    env: dict = field(default_factory=dict)
    regions: dict[str, GMTensor] = field(default_factory=dict)
    shapes: dict[str, tuple] = field(default_factory=dict)

    def outputs(self) -> dict:
        """Every GM parameter's region in the caller's shape (views of GM, not copies);
        a region overhanging its allocation has none (its missing rows cannot be shown)."""
        out = {}
        for name, shape in self.shapes.items():
            if self.regions[name].overhangs:
                continue
            arr = self.regions[name].array()
            out[name] = arr.reshape(shape) if shape else arr
        return out


def bind_params(kernel: Kernel, tensors, filename: str,
                memory: GlobalMemory | None = None) -> Bindings:
    """Map kernel parameters to values: GM pointers to regions of ``memory``, scalars to ints.

    ``tensors`` is a dict keyed by parameter name (with or without ``%``) or a sequence in
    parameter order. A ``GMTensor`` value is bound as it is (the kernel reads and writes
    that region of the shared GM); an array is copied into a new allocation named after the
    parameter.
    """
    params = kernel.params
    loc = SourceLoc(filename, kernel.line, 0)
    if isinstance(tensors, dict):
        given = {str(k).removeprefix("%"): v for k, v in tensors.items()}
    else:
        seq = list(tensors)
        if len(seq) != len(params):
            raise SimProgramError(
                f"kernel @{kernel.name} takes {count(len(params), 'parameter')} "
                f"({', '.join('%' + p.name for p in params)}), {count(len(seq), 'value')} "
                f"{'was' if len(seq) == 1 else 'were'} given",
                loc, hint="pass one value per parameter, or a dict keyed by parameter name")
        given = {p.name: v for p, v in zip(params, seq)}
    names = {p.name for p in params}
    unknown = sorted(set(given) - names)
    if unknown:
        raise SimProgramError(
            f"kernel @{kernel.name} has no parameter {', '.join('%' + u for u in unknown)}", loc,
            hint=f"parameters are {', '.join('%' + p.name for p in params)}")
    memory = memory if memory is not None else GlobalMemory()
    bound = Bindings()
    for p in params:
        if p.name not in given:
            raise SimProgramError(f"no value bound to kernel parameter %{p.name} ({p.type})", loc,
                                  hint=f"pass tensors={{'{p.name}': ...}}")
        value = given[p.name]
        if isinstance(p.type, PtrType):
            bound.shapes[p.name] = tuple(np.shape(value)) if not hasattr(value, "shape") else \
                tuple(value.shape)
            if isinstance(value, GMTensor):
                if value.dtype is not p.type.dtype:
                    raise MemoryAccessError(
                        f"GM tensor {value.describe()} bound to %{p.name} holds "
                        f"{value.dtype.pto_name}, but the kernel declares "
                        f"!pto.ptr<{p.type.dtype.pto_name}>", loc,
                        hint="pass a tensor of the declared element type")
                region = value
            else:
                flat = bind_tensor(p.name, value, p.type.dtype, loc)
                region = memory.alloc(p.name, flat.shape, p.type.dtype, init=flat)
            bound.regions[p.name] = region
            bound.env[p.name] = region.flat()
        elif isinstance(p.type, ScalarType):
            bound.env[p.name] = value.item() if hasattr(value, "item") else value
        else:
            raise SimProgramError(f"parameter %{p.name} has unsupported type {p.type}", loc,
                                  hint="kernel parameters are !pto.ptr<...> or scalars")
    return bound
