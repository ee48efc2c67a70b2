"""The op registry (``ptoc.ops``): one entry per op, shared by parser, printer, verifier, passes."""

from ptoc.ops import tensor_ops, tile_ops  # noqa: F401  (registers the ops)
from ptoc.ops.registry import (
    REQUIRED, OpDef, ParamSpec, all_ops, get_op, has_op, make_call, ops_for_dsl_name, to_expr,
)
