"""The ptoc DSL (``import ptoc.language as pl``): kernels are parsed from source, never executed.

The names here mirror PyPTO's ``pypto.language`` so kernels port mechanically. Op
functions (``pl.load``, ``pl.tile.matmul``, ...) exist so that Python can resolve them;
their meaning comes from the op registry (``ptoc.ops``) via the AST parser.
"""

from types import SimpleNamespace as _Namespace

from ptoc.dtypes import (
    ArgDirection, AtomicType, DataType, Direction, ForKind, FunctionType, Level, MemorySpace,
    PadValue, Role, ScopeMode, SplitMode,
)
from ptoc.ir.types import TensorLayout, TileLayout
from ptoc.language.dynamic import DynVar, dynamic
from ptoc.language.program import (
    function, inline, loads, loads_program, parse, parse_program, program,
)
from ptoc.language.surface import (
    Array, InOut, MemRef, OpNamespace, Out, Ptr, Scalar, Tensor, TensorView, Tile, TileView, Tuple,
    kernel_only,
)
from ptoc.ops import all_ops as _all_ops

Mem = MemorySpace
#: call-site directions as printed IR spells them (``pl.adir.output_existing``)
adir = _Namespace(**{d.value: d for d in ArgDirection})

FP32 = DataType.FP32
FP16 = DataType.FP16
BF16 = DataType.BF16
INT8 = DataType.INT8
INT16 = DataType.INT16
INT32 = DataType.INT32
INT64 = DataType.INT64
UINT8 = DataType.UINT8
BOOL = DataType.BOOL
INDEX = DataType.INDEX
TASK_ID = DataType.TASK_ID

#: Loops, scopes and directives: meaningful only inside kernels (``pl.range``, ``pl.at``, ...).
KERNEL_ONLY = ("range", "pipeline", "unroll", "parallel", "yield_", "const", "static_assert",
               "static_print", "func_attr", "at", "spmd", "cluster", "scope", "manual_scope",
               "split", "cross_core_slot", "submit", "spmd_submit", "no_dep")
globals().update({_name: kernel_only(_name) for _name in KERNEL_ONLY})

tile = OpNamespace("tile", sorted(op.short_name for op in _all_ops() if op.namespace == "tile"))
tensor = OpNamespace("tensor", sorted(op.short_name for op in _all_ops() if op.namespace == "tensor"))
array = OpNamespace("array", sorted(op.short_name for op in _all_ops() if op.namespace == "array"))
system = OpNamespace("system", sorted(op.short_name for op in _all_ops() if op.namespace == "system"))

for _name in sorted({n for _op in _all_ops() for n in _op.dsl_names}):
    globals()[_name] = kernel_only(_name)
del _name


def __getattr__(name):
    """``pl.jit`` loads lazily: ``ptoc.jit`` sits after the runtime in the layers."""
    if name == "jit":
        from ptoc.jit import jit

        return jit
    if name.startswith("__"):
        raise AttributeError(f"module 'ptoc.language' has no attribute {name!r}")
    from ptoc.errors import MissingApiError

    raise MissingApiError(f"pl.{name} is not part of ptoc's DSL (module 'ptoc.language' has no "
                          f"attribute {name!r})",
                          hint="see the op catalogue in docs/en/dsl.md for what ptoc provides")
