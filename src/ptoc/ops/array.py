"""Orchestration arrays (``pl.array``): a few scalars indexed at run time, such as the task
ids of a loop's launches that a later launch waits for (``deps=[tids]``). An update
returns the array with one element replaced (the IR is SSA: ``tids[i] = t`` rebinds
``tids``). Each ``register`` call is one op's single entry; the orchestration runs them on
the host, never a kernel."""

from __future__ import annotations

from ptoc.dtypes import DataType
from ptoc.errors import TypeCheckError
from ptoc.ir.types import ArrayType, ScalarType
from ptoc.ops import checks
from ptoc.ops.params import kw, pos
from ptoc.ops.registry import REQUIRED, OpDef, register


def _array(op: str, value, loc) -> ArrayType:
    ty = getattr(value, "type", None)
    if not isinstance(ty, ArrayType):
        raise TypeCheckError(f"pl.{op} needs a pl.array, got {value!r}", loc,
                             hint="make one with pl.array.create(n, dtype)")
    return ty


def _infer_create(a, loc):
    size, dtype = a["size"], a["dtype"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise TypeCheckError(f"pl.array.create size must be a positive integer literal, got "
                             f"{size!r}", loc, hint="the runtime sizes the array at compile time")
    if not isinstance(dtype, DataType):
        raise TypeCheckError(f"pl.array.create dtype must be a pl dtype, got {dtype!r}", loc)
    return ArrayType(size, dtype)


def _infer_get(a, loc):
    ty = _array("array.get_element", a["array"], loc)
    checks.scalar_like("array.get_element", "index", a["index"], loc)
    return ScalarType(ty.dtype)


def _infer_update(a, loc):
    ty = _array("array.update_element", a["array"], loc)
    checks.scalar_like("array.update_element", "index", a["index"], loc)
    checks.scalar_like("array.update_element", "value", a["value"], loc)
    return ArrayType(ty.size, ty.dtype)


register(OpDef("array.create", (pos("size", "static"), kw("dtype", default=REQUIRED,
                                                         also_positional=True)),
               _infer_create, level="system", doc="A zero-filled array of `size` scalars"))
register(OpDef("array.get_element", (pos("array"), pos("index")), _infer_get, level="system",
               doc="One element of an array"))
register(OpDef("array.update_element", (pos("array"), pos("index"), pos("value")),
               _infer_update, level="system", reuses_input=0,
               doc="The array with element `index` replaced by `value`"))


def _infer_task_dummy(a, loc):
    for dep in a["deps"].items:
        ty = getattr(dep, "type", None)
        if not (isinstance(ty, (ScalarType, ArrayType)) and ty.dtype is DataType.TASK_ID):
            raise TypeCheckError(f"pl.system.task_dummy deps must be task ids, got {dep!r}", loc)
    return ScalarType(DataType.TASK_ID)


register(OpDef("system.task_dummy", (kw("deps", "list", default=REQUIRED, also_positional=True),),
               _infer_task_dummy, level="system",
               doc="A task that does no work and completes when all of `deps` have: one id "
                   "that stands for several (a phase fence)"))
