"""The ptoc IR: immutable nodes, types, printer, parser entry, structural equality, verifier."""

from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, EvalStmt, Expr, ForStmt, Function,
    IfStmt, IterArg, ListExpr, Param, Program, ReturnStmt, SeqStmts, Stmt, UnaryOp, Var, YieldStmt,
)
from ptoc.ir.types import (
    MemRef, PtrType, ScalarType, TensorType, TileLayout, TileType, TileView, TupleType, Type,
)
