"""What the ops an orchestration function may use mean on the host.

The orchestration runs on the control processor: it allocates GM tensors, takes views of
them, reads scalars out of them (``pl.tensor.read``, after the tasks that write that tensor,
as PyPTO's runtime does), asks their extents and does scalar arithmetic.
Anything else is device work and belongs in a kernel.

Each function takes the evaluated arguments of the call (GM tensors, Python numbers, lists
of numbers) and returns the value.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ptoc.dtypes import DataType
from ptoc.errors import PtocError, RuntimeConfigError
from ptoc.sim.core.scalars import cast
from ptoc.sim.global_memory import GMTensor


def element_index(tensor: GMTensor, index, op: str, loc) -> tuple[int, ...]:
    """One flat row-major index or one index per dimension, checked against the extents."""
    items = [int(i) for i in (index if isinstance(index, (list, tuple)) else [index])]
    shape = tensor.shape
    if len(items) == 1 and len(shape) != 1:
        flat, total = items[0], int(np.prod(shape))
        if not 0 <= flat < total:
            raise RuntimeConfigError(f"pl.{op}: flat index {flat} is outside {tensor.describe()} "
                                     f"({total} elements)", loc)
        return tuple(int(i) for i in np.unravel_index(flat, shape))
    if len(items) != len(shape):
        raise RuntimeConfigError(f"pl.{op} of {tensor.describe()} (rank {len(shape)}) got "
                                 f"{len(items)} indices", loc,
                                 hint="give one flat index or one index per dimension")
    for axis, (i, dim) in enumerate(zip(items, shape)):
        if not 0 <= i < dim:
            raise RuntimeConfigError(f"pl.{op}: index {i} is outside dimension {axis} (size "
                                     f"{dim}) of {tensor.describe()}", loc,
                                     hint=f"use 0..{dim - 1}")
    return tuple(items)


def _scalar(value, dtype: DataType):
    """A number as the element type says: Python int for integers, float for floats."""
    if dtype.is_float:
        return float(value)
    if dtype is DataType.BOOL:
        return bool(value)
    return int(value)


def tensor_read(args: dict, loc):
    tensor = args["tensor"]
    element = tensor.array()[element_index(tensor, args["indices"], "tensor.read", loc)]
    return _scalar(element, tensor.dtype)


def tensor_write(args: dict, loc):
    tensor = args["tensor"]
    tensor.array()[element_index(tensor, args["indices"], "tensor.write", loc)] = args["value"]
    return tensor


def tensor_dim(args: dict, loc):
    tensor, axis = args["tensor"], args["axis"]
    return int(tensor.shape[axis])


def tensor_slice(args: dict, loc):
    tensor = args["x"]
    return tensor.slice([int(o) for o in args["offset"]], [int(s) for s in args["shape"]])


def tensor_assemble(args: dict, loc):
    """Copy ``source`` into ``target`` at ``offset`` (a host copy; a fused
    create+assemble never gets here, FuseCreateAssembleToSlice turns it into a view)."""
    target, source = args["target"], args["source"]
    if not isinstance(source, GMTensor):
        raise RuntimeConfigError("pl.assemble in an orchestration function needs a tensor "
                                 "source", loc, hint="assemble tiles inside a kernel")
    window = _assembly_window(target, source, args["offset"])
    window.array()[...] = source.array().reshape(window.shape)
    return target


def _assembly_window(target: GMTensor, source: GMTensor, offset) -> GMTensor:
    """The window of ``target`` that ``source`` is assembled into (a lower-rank source
    stands for leading unit dimensions)."""
    pad = len(target.shape) - len(source.shape)
    return target.slice([int(o) for o in offset], (1,) * pad + tuple(source.shape))


def _element(args: dict, op: str, loc) -> GMTensor:
    tensor = args["tensor"]
    index = element_index(tensor, args["indices"], op, loc)
    return tensor.slice(index, (1,) * len(index))


def _assembled(args: dict, loc) -> tuple[list, list]:
    source = args["source"]
    if not isinstance(source, GMTensor):
        return [], []                    # refused by tensor_assemble itself
    return [source], [_assembly_window(args["target"], source, args["offset"])]


#: the GM regions a host op reads and writes (for the never-written-read check,
#: ``ptoc.sim.unwritten``); ops not named here touch no tensor data
_GM_REGIONS: dict[str, Callable] = {
    "tensor.read": lambda args, loc: ([_element(args, "tensor.read", loc)], []),
    "tensor.write": lambda args, loc: ([], [_element(args, "tensor.write", loc)]),
    "tensor.assemble": _assembled,
}


def gm_regions(op: str, args: dict, loc) -> tuple[list, list]:
    """(regions read, regions written) by host op ``op`` on its evaluated ``args``."""
    found = _GM_REGIONS.get(op)
    return found(args, loc) if found is not None else ([], [])


def task_ids(values) -> tuple[int, ...]:
    """The task indices a ``deps=[...]`` list names: a task id is the tuple of the tasks one
    launch made (the blocks of an SPMD launch); an array holds task ids (unset: ``()``)."""
    found: set[int] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        else:
            found.add(int(value))
    return tuple(sorted(found))


def array_create(args: dict, loc):
    fill = () if args["dtype"] is DataType.TASK_ID else 0
    return [fill] * int(args["size"])


def _array_index(array: list, index, loc) -> int:
    index = int(index)
    if not 0 <= index < len(array):
        raise RuntimeConfigError(f"pl.array index {index} is outside the array (size "
                                 f"{len(array)})", loc, hint=f"use 0..{len(array) - 1}")
    return index


def array_get(args: dict, loc):
    return args["array"][_array_index(args["array"], args["index"], loc)]


def array_update(args: dict, loc):
    array = list(args["array"])
    array[_array_index(array, args["index"], loc)] = args["value"]
    return array


def task_dummy(args: dict, loc):
    """A task that does nothing: its id stands for every task it waits on."""
    return task_ids(args["deps"])


def scalar_extreme(pick: Callable):
    def evaluate(args: dict, loc):
        return pick(args["lhs"], args["rhs"])
    return evaluate


def scalar_cast(args: dict, loc):
    """``pl.cast`` of a scalar with the kernel's meaning (``arith`` casts: a float becomes an
    integer truncated toward zero, fixed-width integers wrap, floats round to the dtype)."""
    dtype = args["target_type"]
    code = "arith.sitofp" if dtype.is_float else "arith.fptosi"
    try:
        return cast(code, args["value"], "cast", dtype)
    except PtocError as exc:
        raise RuntimeConfigError(f"orchestration: pl.cast({args['value']!r}, {dtype.name}) "
                                 f"fails: {exc.message}", loc, hint=exc.hint) from None


#: op name -> evaluate(args, loc)
HOST_OPS: dict[str, Callable] = {
    "tensor.read": tensor_read, "tensor.write": tensor_write, "tensor.dim": tensor_dim,
    "tensor.slice": tensor_slice, "tensor.assemble": tensor_assemble,
    "tile.max": scalar_extreme(max), "tile.min": scalar_extreme(min),
    "array.create": array_create, "array.get_element": array_get,
    "array.update_element": array_update, "system.task_dummy": task_dummy,
    "scalar.cast": scalar_cast,
}
