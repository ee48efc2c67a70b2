"""Default inputs for running a PTO kernel without user data (CLI, demos).

Why: ``ptoc sim k.pto`` should run a kernel straight from its text. A GM pointer carries no
shape, so the shape is read from the kernel's first ``make_tensor_view`` of that pointer
(its shape operands must be constants defined at kernel top level); a core group's GM pipe
buffer is sized from the ``initialize_pipe`` that binds it.
"""

from __future__ import annotations

import numpy as np

from ptoc.pto.model import Instruction, Kernel, PtrType

from ptoc.sim.core.issue import SimProgramError
from ptoc.sim.limits import DEFAULT_LIMITS, SimLimits, check


def gm_shapes(kernel: Kernel) -> dict[str, tuple[int, ...]]:
    """{pointer param: shape} from the first constant-shaped tensor view of each pointer."""
    consts: dict[str, int] = {}
    shapes: dict[str, tuple[int, ...]] = {}
    for op in kernel.body:
        if not isinstance(op, Instruction):
            continue
        if op.opcode == "arith.constant" and isinstance(op.attr("value"), int):
            consts[op.result.name] = op.attr("value")
        elif op.opcode.endswith("_initialize_pipe") and len(op.ins) == 3:
            ring = op.attr("slot_num", 0) * op.attr("slot_size", 0)
            nbytes = op.attr("gm_offset", 0) + ring * (2 if op.attr("dir_mask") == 3 else 1)
            ptr = op.ins[2]
            if isinstance(ptr.type, PtrType) and ptr.name not in shapes:
                shapes[ptr.name] = (-(-nbytes // ptr.type.dtype.nbytes),)
        elif op.opcode == "pto.make_tensor_view" and op.ins:
            ptr = op.ins[0].name
            dims = [consts.get(v.name) for v in op.attr("shape", ())]
            strides = [consts.get(v.name) for v in op.attr("strides", ())]
            if ptr not in shapes and None not in dims and None not in strides:
                span = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
                shapes[ptr] = tuple(dims) if span == int(np.prod(dims)) else (span,)
    return shapes


def random_inputs(kernel: "Kernel | list[Kernel]", seed: int = 0, scalars: dict | None = None,
                  skip: set[str] = frozenset(), limits: SimLimits = DEFAULT_LIMITS) -> dict:
    """Standard-normal floats / small random ints for every pointer not in ``skip``;
    scalar parameters take their value from ``scalars``. Several kernels (a core group's,
    which share their parameters) pool what each says about the shapes. The shapes must be
    positive and the arrays fit ``limits.max_bytes`` (checked before anything is made)."""
    kernels = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel]
    kernel = kernels[0]
    rng = np.random.default_rng(seed)
    shapes = {}
    for k in reversed(kernels):
        shapes.update(gm_shapes(k))
    _check_shapes(kernel, {p: s for p, s in shapes.items() if p not in skip}, limits)
    scalars = dict(scalars or {})
    out = {}
    for p in kernel.params:
        if p.name in skip:
            continue
        if isinstance(p.type, PtrType):
            if p.name not in shapes:
                raise SimProgramError(
                    f"cannot infer the shape of %{p.name}: no make_tensor_view with constant "
                    f"shape and strides uses it",
                    hint=f"pass --input {p.name}=FILE.npy")
            dt = p.type.dtype
            if dt.is_float:
                out[p.name] = rng.standard_normal(shapes[p.name]).astype(dt.numpy)
            else:
                out[p.name] = rng.integers(-8, 8, shapes[p.name]).astype(dt.numpy)
        else:
            if p.name not in scalars:
                raise SimProgramError(f"scalar parameter %{p.name} needs a value",
                                      hint=f"pass --scalar {p.name}=VALUE")
            out[p.name] = scalars[p.name]
    return out


def _check_shapes(kernel: Kernel, shapes: dict, limits: SimLimits) -> None:
    """Every inferred shape is positive, and making the arrays (float64 draws first) fits."""
    total = 0
    for name, shape in shapes.items():
        if any(d <= 0 for d in shape):
            raise SimProgramError(
                f"the tensor view of %{name} in @{kernel.name} has shape {list(shape)}; "
                "dimensions must be positive", hint="fix the make_tensor_view shape operands")
        count = 1
        for d in shape:
            count *= d
        total += count * 8
    check(f"making random inputs for @{kernel.name}", limits, instructions=0, scalar_steps=0,
          memory=total, detail=", ".join(f"%{n} {list(s)}" for n, s in shapes.items()))
