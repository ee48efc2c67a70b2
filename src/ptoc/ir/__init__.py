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
