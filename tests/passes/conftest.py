"""Shared helpers for pass tests: a tiny hand-built program and property-set fakes."""

from __future__ import annotations

import dataclasses

import pytest

from ptoc.dtypes import DataType, Direction, FunctionType, MemorySpace
from ptoc.ir.nodes import AssignStmt, Call, ConstInt, Function, ListExpr, Param, Program, ReturnStmt, SeqStmts, Var
from ptoc.ir.types import TensorType, TileType


def build_tiny_program(name: str = "Tiny", rows: int = 16,
                       space: MemorySpace | None = MemorySpace.Vec) -> Program:
    """``kernel(a, out)``: load a [rows, 16] FP32 tile into ``space`` and store it to ``out``."""
    def lst(*xs):
        return ListExpr(tuple(ConstInt(x) for x in xs))

    tensor = TensorType((rows, 16), DataType.FP32)
    a, out, out_1 = Var("a", tensor), Var("out", tensor), Var("out", tensor)
    tile_t = TileType((rows, 16), DataType.FP32, space, None, None)
    t = Var("t", tile_t)
    body = SeqStmts((
        AssignStmt(t, Call("tile.load", (a, lst(0, 0), lst(rows, 16), lst(rows, 16)),
                           (("target_memory", MemorySpace.Vec),), tile_t)),
        AssignStmt(out_1, Call("tile.store", (t, lst(0, 0), out), (), tensor)),
        ReturnStmt((out_1,)),
    ))
    kernel = Function("kernel", (Param(a), Param(out, Direction.Out)), (tensor,), body,
                      FunctionType.InCore)
    return Program(name, (kernel,))


def renamed(program: Program, suffix: str) -> Program:
    """A visible, printable change a fake pass can make."""
    return dataclasses.replace(program, name=program.name + suffix)


@pytest.fixture
def tiny_program() -> Program:
    return build_tiny_program()


@pytest.fixture
def make_program():
    """Factory fixture: ``make_program(name="Tiny", rows=16, space=MemorySpace.Vec)``."""
    return build_tiny_program


@pytest.fixture
def rename():
    """``rename(program, suffix)``: the program with ``suffix`` appended to its name."""
    return renamed
