"""The op registry (``ptoc.ops``): one entry per op, shared by parser, printer, verifier, passes.

One module per op family registers that family's tile- and tensor-level ops.
"""

from ptoc.ops import (  # noqa: F401  (registers the ops)
    array, block, broadcast, cast, compare, creation, cross_core, elementwise, layout, matmul,
    memory, reduction, scalar, trig,
)
from ptoc.ops.registry import (
    REQUIRED, OpDef, ParamSpec, all_ops, get_op, has_op, make_call, ops_for_dsl_name, to_expr,
)
