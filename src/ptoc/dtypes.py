"""Element data types, memory spaces and enum vocab shared by every ptoc layer (a leaf module).

A dtype knows its byte width, its numpy dtype (bfloat16 through ml_dtypes) and the short
name the PTO text uses; these are facts of the number format, not of any chip.
"""

from __future__ import annotations

import enum
from functools import cached_property

import ml_dtypes
import numpy as np


class DataType(enum.Enum):
    """An element type. ``value`` is the DSL spelling (``pl.FP32``).

    The derived facts are ``cached_property``s: a member keeps each in its ``__dict__`` after
    the first use, so reading one is an attribute lookup (codegen, the printers and the
    passes ask for ``pto_name`` / ``is_float`` / ``nbytes`` tens of thousands of times a
    compile, and a plain property went through the enum's Python-level ``__hash__``)."""

    FP32 = "FP32"
    FP16 = "FP16"
    BF16 = "BF16"
    INT8 = "INT8"
    INT16 = "INT16"
    INT32 = "INT32"
    INT64 = "INT64"
    UINT8 = "UINT8"
    BOOL = "BOOL"
    INDEX = "INDEX"
    TASK_ID = "TASK_ID"  # an orchestration handle on a launched task (never in a kernel)

    @cached_property
    def bits(self) -> int:
        return _BITS[self]

    def get_byte(self) -> int:
        """Byte width (the PyPTO spelling)."""
        return max(1, self.bits // 8)

    @cached_property
    def nbytes(self) -> int:
        return self.get_byte()

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(_NUMPY[self])

    @cached_property
    def pto_name(self) -> str:
        return _PTO[self]

    @cached_property
    def is_float(self) -> bool:
        return self in (DataType.FP32, DataType.FP16, DataType.BF16)

    @cached_property
    def is_int(self) -> bool:
        return not self.is_float and self is not DataType.BOOL

    # members are singletons that compare by identity: hash them by identity too, in C (the
    # enum's own __hash__ hashes the name in Python; dtypes key dicts all over the compiler)
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"pl.{self.value}"

    def astype_hint(self, var: str = "x") -> str:
        """How a user converts a numpy array to this dtype, naming where the type comes
        from: bfloat16 is not numpy's but ml_dtypes' (installed with ptoc)."""
        if self is DataType.BF16:
            return f"{var}.astype(ml_dtypes.bfloat16) after `import ml_dtypes`"
        return f"{var}.astype(numpy.{self.numpy.name})"

    @classmethod
    def from_pto(cls, name: str) -> "DataType":
        return _FROM_PTO[name]

    @classmethod
    def from_numpy(cls, dtype) -> "DataType":
        return _FROM_NUMPY[np.dtype(dtype)]


_BITS = {
    DataType.FP32: 32, DataType.FP16: 16, DataType.BF16: 16, DataType.INT8: 8,
    DataType.INT16: 16, DataType.INT32: 32, DataType.INT64: 64, DataType.UINT8: 8,
    DataType.BOOL: 8, DataType.INDEX: 64, DataType.TASK_ID: 64,
}
_NUMPY = {
    DataType.FP32: np.float32, DataType.FP16: np.float16, DataType.BF16: ml_dtypes.bfloat16,
    DataType.INT8: np.int8, DataType.INT16: np.int16, DataType.INT32: np.int32,
    DataType.INT64: np.int64, DataType.UINT8: np.uint8, DataType.BOOL: np.bool_,
    DataType.INDEX: np.int64, DataType.TASK_ID: np.int64,
}
_PTO = {
    DataType.FP32: "f32", DataType.FP16: "f16", DataType.BF16: "bf16", DataType.INT8: "i8",
    DataType.INT16: "i16", DataType.INT32: "i32", DataType.INT64: "i64", DataType.UINT8: "ui8",
    DataType.BOOL: "i1", DataType.INDEX: "index", DataType.TASK_ID: "task_id",
}
_FROM_PTO = {v: k for k, v in _PTO.items()}
_FROM_NUMPY = {np.dtype(v): k for k, v in _NUMPY.items()
               if k not in (DataType.INDEX, DataType.TASK_ID)}


class MemorySpace(enum.Enum):
    """Where a value lives. ``value`` is the DSL spelling (``pl.Mem.Vec``)."""

    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"

    __hash__ = object.__hash__   # as DataType's

    def __repr__(self) -> str:
        return f"pl.Mem.{self.value}"

    @cached_property
    def lower(self) -> str:
        return self.value.lower()


class DslEnum(enum.Enum):
    """An enum the DSL spells ``pl.<ClassName>.<member>``; prints that way in IR and errors."""

    def __repr__(self) -> str:
        return f"pl.{type(self).__name__}.{self.value}"


class FunctionType(DslEnum):
    """Kind of a function (``pl.FunctionType.X``)."""

    Opaque = "Opaque"
    Orchestration = "Orchestration"
    InCore = "InCore"
    Inline = "Inline"
    AIC = "AIC"
    AIV = "AIV"
    Group = "Group"
    Spmd = "Spmd"

    @cached_property
    def is_kernel(self) -> bool:
        return self in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)


class Level(DslEnum):
    """Hierarchy level a function runs at (``pl.Level.X``); recorded, not interpreted."""

    AIC = "AIC"
    AIV = "AIV"
    CORE_GROUP = "CORE_GROUP"
    CHIP_DIE = "CHIP_DIE"
    CHIP = "CHIP"
    HOST = "HOST"
    CLUSTER = "CLUSTER"


class Role(DslEnum):
    """Role of a function in the runtime (``pl.Role.X``); recorded, not interpreted."""

    Orchestrator = "Orchestrator"
    SubWorker = "SubWorker"
    Worker = "Worker"


class ScopeKind(DslEnum):
    """What a ``with`` scope of a function body marks: a kernel region (``pl.at`` at
    CORE_GROUP), a co-scheduled cube+vector group (``pl.cluster``), a multi-block launch
    (``pl.spmd``), a hierarchy region (``pl.at`` at another level) or a runtime dependency
    scope (``pl.scope`` / ``pl.manual_scope``)."""

    InCore = "InCore"
    Cluster = "Cluster"
    Spmd = "Spmd"
    Hierarchy = "Hierarchy"
    Runtime = "Runtime"


class ScopeMode(DslEnum):
    """Dependency tracking of a runtime scope (``pl.scope(mode=pl.ScopeMode.X)``)."""

    AUTO = "AUTO"
    MANUAL = "MANUAL"


class AtomicType(DslEnum):
    """Atomic mode of a store or tensor assemble (``pl.AtomicType.X``)."""

    None_ = "None_"
    Add = "Add"


class PadValue(DslEnum):
    """What fills a tile outside its valid region (``pl.PadValue``); the int is the PTO
    ``pad`` code of the tile type."""

    null = 0
    zero = 1
    max = 2
    min = 3

    def __repr__(self) -> str:
        return f"pl.PadValue.{self.name}"


class SplitMode(DslEnum):
    """How a mixed kernel's vector work is split across the two AIV lanes
    (``pl.split(pl.SplitMode.X)``); ``code`` is the split code the IR and PTO carry."""

    NONE = "NONE"
    UP_DOWN = "UP_DOWN"
    LEFT_RIGHT = "LEFT_RIGHT"

    @property
    def code(self) -> int:
        return {"NONE": 0, "UP_DOWN": 1, "LEFT_RIGHT": 2}[self.value]

    @property
    def axis(self) -> int | None:
        """The tile axis halved: 0 (rows) for UP_DOWN, 1 (columns) for LEFT_RIGHT."""
        return {"NONE": None, "UP_DOWN": 0, "LEFT_RIGHT": 1}[self.value]


class ForKind(DslEnum):
    """Kind of a for loop."""

    Sequential = "Sequential"
    Pipeline = "Pipeline"
    Unroll = "Unroll"
    Parallel = "Parallel"


class Direction(DslEnum):
    """Direction of a function parameter."""

    In = "In"
    Out = "Out"
    InOut = "InOut"


class ArgDirection(DslEnum):
    """How one argument of a task launch is tracked by the runtime (``pl.adir.x``), as
    DeriveCallDirections resolves it from the callee's parameter direction: ``input`` waits
    for the buffer's last writer; ``output_existing`` becomes the buffer's writer without
    waiting; ``inout`` does both; ``no_dep`` neither; ``scalar`` is not a buffer;
    ``output`` (a fresh runtime-allocated buffer) is never derived."""

    Input = "input"
    Output = "output"
    OutputExisting = "output_existing"
    InOut = "inout"
    NoDep = "no_dep"
    Scalar = "scalar"

    def __repr__(self) -> str:
        return f"pl.adir.{self.value}"

    @property
    def reads(self) -> bool:
        return self in (ArgDirection.Input, ArgDirection.InOut)

    @property
    def writes(self) -> bool:
        return self in (ArgDirection.Output, ArgDirection.OutputExisting, ArgDirection.InOut)
