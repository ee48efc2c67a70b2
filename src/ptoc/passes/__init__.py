"""ptoc.passes: the pass pipeline from tile-level IR to IR with allocated MemRefs.

Infrastructure (context, manager, instruments, diagnostics, properties) is re-exported
here; each pass lives in its own module and registers itself in the default pipeline.

Adding a pass (module ``ptoc/passes/init_mem_ref.py``, say)::

    @program_pass(name="InitMemRef", required={"SSAForm", "MemoryInferred"},
                  produced={"MemRefsAssigned"})
    def init_mem_ref(program, ctx):          # ctx: the current PassContext
        ...                                  # build and return a new Program
        report_diagnostic("PH-...", "...", location=stmt.loc)   # findings, never print
        return new_program

    register_default_pass(init_mem_ref)      # slot from PIPELINE_ORDER by name

then import the module below. ``init_mem_ref()(program)`` runs it alone under the current
context (with its instruments); ``PassManager.get_strategy()`` includes it. Use
``@function_pass`` for a per-function rewrite, or subclass ``Pass`` and implement
``run(program, ctx)``. Passes that only run under some planners say so with
``register_default_pass(..., planners={...})`` (MemoryReuse and AllocateMemoryAddr have
defaults in ``manager.DEFAULT_PLANNERS``). New codes: ``register_diagnostic_code``.
"""

from ptoc.passes.l0_tile_chooser import (
    L0TileCandidate, L0TileConfig, L0TileResult, Stationarity, choose_l0_tile, rank_l0_tiles,
)

from ptoc.passes.base import FunctionPass, Pass, PassFactory, current_pass_name, function_pass, program_pass
from ptoc.passes.context import (
    MemoryPlanner, OptimizationStrategy, PassContext, VerificationLevel, resolve_context,
)
from ptoc.passes.diagnostics import (
    CODES, Diagnostic, DiagnosticCode, DiagnosticSink, Severity, explain, register_diagnostic_code,
    report_diagnostic, write_report,
)
from ptoc.passes.instruments import (
    CallbackInstrument, IRDumpInstrument, PassDumpLevel, PassInstrument, RoundTripInstrument,
    TimingInstrument, VerificationInstrument, install_global_instrument, remove_global_instrument,
    suspended_global_instruments,
)
from ptoc.passes.manager import (
    PIPELINE_ORDER, PassManager, default_pipeline_entries, register_default_pass,
    unregister_default_pass,
)
from ptoc.passes.properties import IRProperty, register_property_checker
from ptoc.passes.property_verifier import (
    IRPropertySet, PropertyVerifierRegistry, verify_properties,
)

#: PyPTO's name for the severity enum of diagnostics
DiagnosticSeverity = Severity

# ---- InlineFunctions: Inline helpers spliced into their callers (first pass) ----
from ptoc.passes.inline_functions import inline_functions

# ---- frontend: outlining of with-regions (OutlineHierarchyScopes .. OutlineClusterScopes) ----
from ptoc.passes.frontend import (
    outline_cluster_scopes, outline_hierarchy_scopes, outline_incore_scopes,
)

# ---- ConvertToSSA: the parser builds SSA; the pass certifies it ----
from ptoc.passes.convert_to_ssa import convert_to_ssa

# ---- memory passes (InferTileMemorySpace .. AllocateMemoryAddr) ----
from ptoc.passes.init_mem_ref import init_mem_ref
from ptoc.passes.materialize_semantic_aliases import materialize_semantic_aliases
from ptoc.passes.memory_reuse import memory_reuse

# ---- pipeline lowering (LowerPipelineLoops, CanonicalizeIOOrder) ----
from ptoc.passes.lower_pipeline_loops import lower_pipeline_loops
from ptoc.passes.canonicalize_io_order import canonicalize_io_order
from ptoc.passes.allocate_memory_addr import allocate_memory_addr
from ptoc.passes.fold_no_op_reshape import fold_no_op_reshape
from ptoc.passes.infer_tile_memory_space import infer_tile_memory_space
from ptoc.passes.mixed.lower_auto_vector_split import lower_auto_vector_split
from ptoc.passes.mixed.expand_mixed_kernel import expand_mixed_kernel
from ptoc.passes.mixed.inject_gm_pipe_buffer import inject_gm_pipe_buffer
from ptoc.passes.mixed.split_vector_kernel import split_vector_kernel
from ptoc.passes.mixed.stamp_tfree_split import stamp_tfree_split
from ptoc.passes.mixed.normalize_return_order import normalize_return_order
from ptoc.passes.mixed.skew_cross_core_pipeline import skew_cross_core_pipeline
from ptoc.passes.auto_tile_matmul_l0 import auto_tile_matmul_l0
from ptoc.passes.convert_tensor_to_tile_ops import convert_tensor_to_tile_ops
from ptoc.passes.lower_pipeline_to_slots import lower_pipeline_to_slots

# ---- orchestration / task-graph passes (DeriveCallDirections, ...) ----
from ptoc.passes.tasks import (
    auto_derive_task_dependencies, classify_iter_arg_carry, derive_call_directions,
    expand_manual_phase_fence,
    fuse_create_assemble_to_slice, materialize_runtime_scopes, materialize_valid_shape_symbols,
)
