"""The orchestration (task-graph) passes: what the runtime needs to launch kernels as tasks.

Each module is one PyPTO pass and registers itself in the default pipeline.
"""

from ptoc.passes.tasks.derive_call_directions import derive_call_directions
from ptoc.passes.tasks.fuse_create_assemble_to_slice import fuse_create_assemble_to_slice
from ptoc.passes.tasks.materialize_valid_shape_symbols import materialize_valid_shape_symbols

__all__ = ["derive_call_directions", "fuse_create_assemble_to_slice",
           "materialize_valid_shape_symbols"]
