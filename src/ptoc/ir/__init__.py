"""The ptoc IR: immutable nodes, types, printer, parser entry, structural equality, verifier."""

from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, EvalStmt, Expr, ForStmt, Function,
    IfStmt, IterArg, ListExpr, Param, Program, ReturnStmt, SeqStmts, Stmt, UnaryOp, Var, YieldStmt,
)
from ptoc.ir.types import (
    MemRef, PtrType, ScalarType, TensorType, TileLayout, TileType, TileView, TupleType, Type,
)
from ptoc.ir.printer import format_node, print_function, print_program
from ptoc.ir.equality import assert_structural_equal, first_difference, structural_equal
from ptoc.ir.verifier import verify
from ptoc.ir.visitor import IRMutator, IRVisitor, clone_with_fresh_vars, substitute
from ptoc.ir.builder import IRBuilder


def compile(program, output_dir=None, *, platform="a2a3sim", memory_planner=None,  # noqa: A001
            enable_pypto_l0c_double_buffer=None, dump_passes=True, verification_level=None,
            profiling=False, disabled_diagnostics=None):
    """Compile a program (PyPTO's ``ir.compile``); see ``ptoc.runtime.compile_ir``.

    Lives here for API parity with PyPTO; the work is done by ``ptoc.runtime`` (imported
    lazily, so ``ptoc.ir`` itself stays independent of the layers after it).
    """
    from ptoc.runtime import compile_ir

    return compile_ir(program, output_dir, platform=platform, memory_planner=memory_planner,
                      enable_pypto_l0c_double_buffer=enable_pypto_l0c_double_buffer,
                      dump_passes=dump_passes, verification_level=verification_level,
                      profiling=profiling, disabled_diagnostics=disabled_diagnostics)
