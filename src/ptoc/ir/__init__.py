"""The ptoc IR: immutable nodes, types, printer, parser entry, structural equality, verifier.

The node and type names exported here are PyPTO's constructors (``ptoc.ir.pypto_api``):
``ir.Var(name, type, span)``, ``ir.Program(functions, name, span)``, ... build ptoc's
nodes, and ``isinstance(x, ir.Var)`` asks ptoc's classes. ptoc's own code constructs the
dataclasses of ``ptoc.ir.nodes`` / ``ptoc.ir.types`` directly.
"""

from ptoc.dtypes import (
    DataType, Direction, ForKind, FunctionType, Level, MemorySpace, Role,
)
from ptoc.errors import SourceLoc as Span
from ptoc.ir.nodes import BinOp, Expr, ListExpr, Node, Param, ScopeStmt, Stmt, TupleGetItem, UnaryOp
from ptoc.ir.types import TileLayout, Type
from ptoc.ir.pypto_api import *  # noqa: F401,F403 - PyPTO's node constructors
from ptoc.ir.pypto_api import __all__ as _PYPTO_NAMES
from ptoc.ir.printer import format_node, print_function, print_program
from ptoc.ir.equality import assert_structural_equal, first_difference, structural_equal
from ptoc.ir.hashing import structural_hash
from ptoc.ir.verifier import verify
from ptoc.ir.visitor import IRMutator, IRVisitor, clone_with_fresh_vars, substitute
from ptoc.ir.builder import IRBuilder
from ptoc.ir.serialize import deserialize, deserialize_from_file, serialize, serialize_to_file

#: PyPTO's names for ptoc's enums and base classes
ParamDirection = Direction
IRNode = Node

def compile(program, output_dir=None, *, platform=None, backend_type=None,  # noqa: A001
            strategy=None, memory_planner=None, enable_pypto_l0c_double_buffer=None,
            dump_passes=True, verification_level=None, profiling=False,
            disabled_diagnostics=None, skip_ptoas=False, diagnostic_phase=None,
            distributed_config=None, analyze_auto_scopes_for_deps=None, emit_source_loc=None,
            dump_ptoas_passes=False, runtime=None, check_dbc=True):
    """Compile a program (PyPTO's ``ir.compile``); see ``ptoc.runtime.compile_ir``.

    Takes PyPTO's keywords: the platform defaults to the simulator of ``backend_type``
    (``a2a3sim``); ``strategy`` has one value; ``skip_ptoas`` is what ptoc always does (it
    stops at PTO text); the device-runtime options are reported once and ignored;
    ``analyze_auto_scopes_for_deps`` switches AutoDeriveTaskDependencies' analysis on. Lives here
    for API parity; the work is done by ``ptoc.runtime`` (imported lazily, so ``ptoc.ir``
    stays independent of the layers after it). ``check_dbc`` (ptoc only): simulate the
    chooser's dbC choice against the flag-off baseline for the decisions report.
    """
    from ptoc.passes import PassManager
    from ptoc.runtime import compile_ir
    from ptoc.runtime.config import report_ignored

    if strategy is not None:
        PassManager.get_strategy(strategy)  # raises for a strategy ptoc does not have
    device_only = {"diagnostic_phase": diagnostic_phase, "distributed_config": distributed_config,
                   "emit_source_loc": emit_source_loc, "dump_ptoas_passes": dump_ptoas_passes,
                   "runtime": runtime}
    report_ignored("ir.compile", {k: v for k, v in device_only.items() if v})
    if platform is None:
        platform = backend_type.value if backend_type is not None else "a2a3sim"
    return compile_ir(program, output_dir, platform=platform, memory_planner=memory_planner,
                      enable_pypto_l0c_double_buffer=enable_pypto_l0c_double_buffer,
                      dump_passes=dump_passes, verification_level=verification_level,
                      profiling=profiling, disabled_diagnostics=disabled_diagnostics,
                      check_dbc=check_dbc,
                      analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)


#: PyPTO's dtype constants on ``ir`` (``ir.FP32``, ...)
globals().update({dtype.name: dtype for dtype in DataType})

#: Names PyPTO's ``ir`` module re-exports from layers that come after ptoc's IR (passes,
#: runtime): resolved on first use, so importing ``ptoc.ir`` still imports no later layer.
_LATER_LAYER_NAMES = {
    "PassManager": "ptoc.passes", "OptimizationStrategy": "ptoc.passes",
    "PassContext": "ptoc.passes", "VerificationLevel": "ptoc.passes",
    "PassDumpLevel": "ptoc.passes",
    "CompiledProgram": "ptoc.runtime",
}


def __getattr__(name: str):
    if name in _LATER_LAYER_NAMES:
        import importlib

        return getattr(importlib.import_module(_LATER_LAYER_NAMES[name]), name)
    raise AttributeError(f"module 'ptoc.ir' has no attribute {name!r}")
