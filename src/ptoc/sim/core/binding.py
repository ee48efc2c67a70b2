"""Binding user tensors and scalars to kernel parameters."""

from __future__ import annotations

import numpy as np

from ptoc.errors import SourceLoc, count
from ptoc.pto.model import Kernel, PtrType, ScalarType

from ptoc.sim.errors import SimProgramError
from ptoc.sim.core.memory import bind_tensor


def bind_params(kernel: Kernel, tensors, filename: str) -> tuple[dict, dict]:
    """Map kernel parameters to values: GM pointers to flat array copies, scalars to ints.

    ``tensors`` is a dict keyed by parameter name (with or without ``%``) or a sequence in
    parameter order. Returns (env bindings, {param name: original shape}).
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
    env, shapes = {}, {}
    for p in params:
        if p.name not in given:
            raise SimProgramError(f"no value bound to kernel parameter %{p.name} ({p.type})", loc,
                                  hint=f"pass tensors={{'{p.name}': ...}}")
        value = given[p.name]
        if isinstance(p.type, PtrType):
            shapes[p.name] = tuple(np.shape(value)) if not hasattr(value, "shape") else \
                tuple(value.shape)
            env[p.name] = bind_tensor(p.name, value, p.type.dtype, loc)
        elif isinstance(p.type, ScalarType):
            env[p.name] = value.item() if hasattr(value, "item") else value
        else:
            raise SimProgramError(f"parameter %{p.name} has unsupported type {p.type}", loc,
                                  hint="kernel parameters are !pto.ptr<...> or scalars")
    return env, shapes
