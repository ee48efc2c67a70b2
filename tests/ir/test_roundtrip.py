"""Printer <-> parser agreement on hand-built IR, and byte-exact agreement with PyPTO's dumps."""

from __future__ import annotations

import glob
import os

import pytest

from ir_samples import INDEX, make_matmul_program
from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, MemorySpace
from ptoc.ir.builder import IRBuilder
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.printer import print_program
from ptoc.ir.nodes import (
    AssignStmt, BinOp, ConstFloat, ConstInt, Function, Param, Program,
    ReturnStmt, SeqStmts, UnaryOp, Var,
)
from ptoc.ir.types import ScalarType, TensorType
from ptoc.ir.verifier import verify
from oracle_data import ORACLE_ROOT

language = pytest.importorskip("ptoc.language")

DUMPS = sorted(glob.glob(os.path.join(str(ORACLE_ROOT), "dumps", "*", "*.py")))
FP32 = DataType.FP32


def roundtrip(program: Program) -> Program:
    """Print, parse back, and require structural equality and a stable text."""
    verify(program)
    text = program.as_python()
    again = language.parse_program(text, filename="<printed>")
    assert_structural_equal(program, again)
    assert again.as_python() == text
    return again


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: "/".join(p.split(os.sep)[-2:]))
def test_printer_reproduces_pypto_dumps_byte_for_byte(path):
    """Parse -> print of what PyPTO printed is the identity (frontend dumps reuse names)."""
    with open(path) as fh:
        source = fh.read()
    program = language.parse_program(source, filename=path)
    assert print_program(program, module="pypto") == source
    ptoc_header = source.replace("# pypto.program:", "# ptoc.program:").replace(
        "import pypto.language as pl", "import ptoc.language as pl")
    assert program.as_python() == ptoc_header


def test_dumps_exist():
    assert len(DUMPS) >= 100


def test_hand_built_matmul_roundtrips():
    roundtrip(make_matmul_program())
    roundtrip(make_matmul_program(with_memref=True))


def test_loop_kinds_carries_and_branches_roundtrip():
    t_out = TensorType((64, 64), FP32)
    b = IRBuilder()
    with b.function("kernel", FunctionType.InCore, return_types=[t_out]) as f:
        x = f.param("x", t_out)
        n = f.param("n", ScalarType(DataType.INDEX))
        out = f.param("out", t_out, Direction.InOut)
        t0 = b.op("t", "tile.load", x, [0, 0], [16, 64], target_memory=MemorySpace.Vec)
        u0 = b.op("t", "tile.load", x, [16, 0], [16, 64], target_memory=MemorySpace.Vec)
        with b.for_range("i", 0, n, 16, carry=[("t", t0), ("u", u0)],
                         attrs={"note": "a\"b", "flag": True}) as loop:
            ta, ua = loop.iter_args
            row = b.let("row", BinOp("*", BinOp("+", loop.var, ConstInt(1)), ConstInt(2)))
            s = b.op("t", "tile.add", ta, ua)
            with b.if_(BinOp("and", BinOp("<", row, n), UnaryOp("not", BinOp("==", row, ConstInt(0)))),
                       result_names=["p", "q"]) as br:
                b.yield_(s, ua)
            with b.else_(br):
                scaled = b.op("t", "tile.muls", s, ConstFloat(0.5))
                b.yield_(ua, scaled)
            b.yield_(*br.return_vars)
        ra, rb = loop.return_vars
        with b.for_range("j", 0, 2, 1, kind=ForKind.Unroll):
            pass
        with b.for_range("k", 0, 4, 1, kind=ForKind.Parallel, carry=[("acc", rb)]) as par:
            b.yield_(b.op("t", "tile.sub", par.iter_args[0], ra))
        (res,) = par.return_vars
        with b.for_range("ko", 0, 64, 32, stages=2, carry=[("c", res)],
                         attrs={"pipeline_overlap_stores": False}) as pipe:
            b.yield_(pipe.iter_args[0])
        st = b.op("out", "tile.store", pipe.return_vars[0], [BinOp("-", n, ConstInt(16)), 0], out)
        b.ret(st)
    roundtrip(b.to_program("Constructs"))


def test_colliding_hints_roundtrip():
    t = TensorType((16, 16), FP32)
    b = IRBuilder()
    with b.function("k", FunctionType.InCore, return_types=[t]) as f:
        x = f.param("x", t)
        v1 = b.op("x_1", "tile.load", x, [0, 0], [16, 16], target_memory=MemorySpace.Vec)
        v2 = b.op("x", "tile.exp", v1)
        v3 = b.op("x", "tile.neg", v2)
        v4 = b.op("in", "tile.relu", v3)
        out = b.op("x", "tile.store", v4, [0, 0], x)
        b.ret(out)
    again = roundtrip(b.to_program("Names"))
    text = again.as_python()
    # x stays live to the store, so the tiles named x get suffixes; each dead x_2 passes its
    # name on to the next same-block definition, as PyPTO prints rebound names
    assert "x_2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.neg(x_2)" in text
    assert "in_: pl.Tile" in text
    assert "x_2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(in_, [0, 0], x)" in text


def test_multiple_returns_and_scalar_arithmetic_roundtrip():
    t = TensorType((16, 16), FP32)
    n = Var("n", INDEX)
    m = Var("m", INDEX)
    expr = Var("e", INDEX)
    body = SeqStmts((
        AssignStmt(m, BinOp("-", n, BinOp("-", ConstInt(4), BinOp("%", n, ConstInt(3))))),
        AssignStmt(expr, BinOp("//", UnaryOp("-", m), ConstInt(2))),
        ReturnStmt((m, expr)),
    ))
    fn = Function("f", (Param(n),), (INDEX, INDEX), body, FunctionType.Opaque)
    roundtrip(Program("Scalars", (fn,)))


def test_function_attrs_constants_and_statement_calls_roundtrip():
    from ptoc.ir.nodes import ConstFloat as CF

    t = TensorType((16, 16), FP32)
    b = IRBuilder()
    with b.function("k", FunctionType.InCore, return_types=[t],
                    attrs={"level": "AIC", "role": "SubWorker", "priority": 2, "tag": "x"}) as f:
        x = f.param("x", t)
        n = f.param("n", ScalarType(DataType.INDEX))
        v = b.op("v", "tile.load", x, [0, 0], [16, 16], target_memory=MemorySpace.Vec)
        w = b.op("w", "tile.adds", v, CF(2.0, DataType.FP16))
        w2 = b.op("w", "tile.muls", w, CF(-1.5))
        with b.if_(BinOp(">", n, ConstInt(-2))):
            b.eval(b.call("tile.store", w2, [0, 0], x))
        with b.for_range("i", 0, 4, 1) as lp:
            b.eval(b.call("tile.store", w2, [lp.var, BinOp("-", ConstInt(0), lp.var)], x))
        b.ret(b.op("o", "tile.store", w2, [0, 0], x))
    text = roundtrip(b.to_program("Attrs")).as_python()
    assert ('@pl.function(type=pl.FunctionType.InCore, level=pl.Level.AIC, role=pl.Role.SubWorker, '
            'attrs={"priority": 2, "tag": "x"})') in text
    assert "pl.tile.adds(v, pl.const(2.0, pl.FP16))" in text
    assert "if n > -2:\n            pl.tile.store(w, [0, 0], x)" in text  # w rebinds the dead w
    assert "def k(x: pl.Tensor" in text  # a SubWorker is printed without self, as PyPTO does
