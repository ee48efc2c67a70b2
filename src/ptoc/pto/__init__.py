"""The PTO program model: parse and print PTO text, verify it against a target.

Public API:
    parse(text, filename="<pto>") -> Module          syntax + SSA scoping (ptoc.pto.parser)
    print_module(module) -> str                       (ptoc.pto.printer)
    verify(module, target=None) -> Module             semantic checks (ptoc.pto.verify)
    load(text, target=None, filename="<pto>")         parse + verify
    op_info(opcode) / pipe_of(inst, target) / queue_of(op, target) / reads(inst) / writes(inst)
    model classes: Module, Kernel, Instruction, SyncOp, ForOp, WhileOp, ConditionOp, IfOp,
        YieldOp, Value, types
"""

from ptoc.pto.model import (
    Attr, ConditionOp, EnumAttr, ForOp, IfOp, Instruction, Kernel, Module, Op, Param,
    PartitionViewType, PtoType, PtrType, ScalarType, SyncOp, TensorViewType, TileBufType, Value,
    WhileOp, YieldOp, walk,
)
from ptoc.pto.ops import OP_TABLE, OpInfo, Role, op_info, pipe_of, queue_of, reads, writes
from ptoc.pto.parser import parse
from ptoc.pto.printer import print_module, print_op
from ptoc.pto.verify import verify
from ptoc.pto.insert_sync import SyncNote, SyncResult, insert_sync, strip_sync  # noqa: E402


def load(text: str, target=None, filename: str = "<pto>") -> Module:
    """Parse ``text`` and verify it against ``target`` (default: the module's target_arch)."""
    return verify(parse(text, filename), target)


__all__ = [
    "Attr", "ConditionOp", "EnumAttr", "ForOp", "IfOp", "Instruction", "Kernel", "Module", "OP_TABLE", "Op",
    "OpInfo", "Param", "PartitionViewType", "PtoType", "PtrType", "Role", "ScalarType", "SyncOp",
    "TensorViewType", "TileBufType", "Value", "WhileOp", "YieldOp", "load", "op_info", "parse", "pipe_of",
    "print_module", "print_op", "queue_of", "reads", "verify", "walk", "writes",
]
