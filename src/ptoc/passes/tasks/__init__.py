"""The orchestration (task-graph) passes: what the runtime needs to launch kernels as tasks.

Each module is one PyPTO pass and registers itself in the default pipeline.
"""

from ptoc.passes.tasks.derive_call_directions import derive_call_directions
from ptoc.passes.tasks.auto_derive_task_dependencies import auto_derive_task_dependencies
from ptoc.passes.tasks.fuse_create_assemble_to_slice import fuse_create_assemble_to_slice
from ptoc.passes.tasks.materialize_runtime_scopes import materialize_runtime_scopes
from ptoc.passes.tasks.classify_iter_arg_carry import classify_iter_arg_carry
from ptoc.passes.tasks.expand_manual_phase_fence import expand_manual_phase_fence
from ptoc.passes.tasks.materialize_valid_shape_symbols import materialize_valid_shape_symbols

__all__ = ["auto_derive_task_dependencies", "classify_iter_arg_carry", "derive_call_directions", "expand_manual_phase_fence",
           "fuse_create_assemble_to_slice", "materialize_runtime_scopes",
           "materialize_valid_shape_symbols"]
