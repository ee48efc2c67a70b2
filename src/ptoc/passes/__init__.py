"""ptoc.passes: the pass pipeline from tile-level IR to IR with allocated MemRefs.

Infrastructure (context, manager, instruments, diagnostics, properties) is re-exported
here; each pass lives in its own module and registers itself in the default pipeline.
"""

from ptoc.passes.l0_tile_chooser import L0TileConfig, L0TileResult, Stationarity, choose_l0_tile

from ptoc.passes.base import FunctionPass, Pass, PassFactory, current_pass_name, function_pass, program_pass
from ptoc.passes.context import (
    MemoryPlanner, OptimizationStrategy, PassContext, VerificationLevel, resolve_context,
)
from ptoc.passes.diagnostics import (
    CODES, Diagnostic, DiagnosticCode, DiagnosticSink, Severity, explain, register_diagnostic_code,
    report_diagnostic, write_report,
)
from ptoc.passes.instruments import (
    CallbackInstrument, IRDumpInstrument, PassInstrument, RoundTripInstrument, TimingInstrument,
    VerificationInstrument, install_global_instrument, remove_global_instrument,
    suspended_global_instruments,
)
from ptoc.passes.manager import (
    PIPELINE_ORDER, PassManager, default_pipeline_entries, register_default_pass,
    unregister_default_pass,
)
from ptoc.passes.properties import IRProperty, register_property_checker
