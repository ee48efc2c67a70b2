"""The PTO program model: parse and print PTO text, verify it against a target.

Public API (see each module):
    ptoc.pto.model   frozen dataclasses (Module, Kernel, Instruction, SyncOp, ForOp, IfOp, ...)
"""

from ptoc.pto.model import (
    Attr, EnumAttr, ForOp, IfOp, Instruction, Kernel, Module, Op, Param, PartitionViewType,
    PtoType, PtrType, ScalarType, SyncOp, TensorViewType, TileBufType, Value, YieldOp, walk,
)

__all__ = [
    "Attr", "EnumAttr", "ForOp", "IfOp", "Instruction", "Kernel", "Module", "Op", "Param",
    "PartitionViewType", "PtoType", "PtrType", "ScalarType", "SyncOp", "TensorViewType",
    "TileBufType", "Value", "YieldOp", "walk",
]
