"""Printer <-> parser agreement on hand-built IR, and byte-exact agreement with PyPTO's dumps."""

from __future__ import annotations

import glob
import os
import re

import pytest

from ir_samples import INDEX, make_matmul_program
from ptoc.errors import ParseError
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


TWO_RESULTS = '''# ptoc.program: Carries
import ptoc.language as pl

@pl.program
class Carries:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, x: pl.Tensor[[8, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 2048)], flag: pl.Scalar[pl.INT32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 2048)]]) -> pl.Tensor[[8, 64], pl.FP32]:
        mem_vec_2: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 2048)
        mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 2048)
        acc: pl.Tile[[8, 64], pl.FP32, pl.MemRef(mem_vec_2, pl.const(0, pl.INT64), 2048), pl.Mem.Vec] = pl.tile.load(x, [0, 0], [8, 64], [8, 64], target_memory=pl.Mem.Vec)
        for i, (out_1, acc_1,) in pl.range(2, init_values=(out, acc,)):
            out_2: pl.Tensor[[8, 64], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 2048)] = pl.tile.store(acc_1, [0, 0], out_1)
            acc_2: pl.Tile[[8, 64], pl.FP32, pl.MemRef(mem_vec_3, pl.const(0, pl.INT64), 2048), pl.Mem.Vec] = pl.tile.add(acc_1, acc_1)
            if flag > 0:
                p: pl.Tile[[8, 64], pl.FP32, pl.MemRef(mem_vec_2, pl.const(0, pl.INT64), 2048), pl.Mem.Vec]
                p, q = pl.yield_(acc_2, out_2)
            else:
                p: pl.Tile[[8, 64], pl.FP32, pl.MemRef(mem_vec_2, pl.const(0, pl.INT64), 2048), pl.Mem.Vec]
                p, q = pl.yield_(acc_1, out_2)
            out_3: pl.Tensor[[8, 64], pl.FP32, pl.MemRef("mem_ddr_4", pl.const(0, pl.INT64), 2048)]
            out_3, acc_3 = pl.yield_(q, p)
        return out_3
'''


def test_several_loop_and_if_results_keep_types_the_parser_would_not_derive():
    # a multi-value yield prints no types (as PyPTO's); a result whose type differs from
    # what the parser derives (the init's / the then-value's) gets a bare annotation first
    program = language.parse_program(TWO_RESULTS, filename="<two>")
    loop = [s for s in program.functions["k"].body.stmts if type(s).__name__ == "ForStmt"][0]
    assert loop.return_vars[0].type.memref.base == "mem_ddr_4"
    assert program.as_python() == TWO_RESULTS
    roundtrip(program)


@pytest.mark.parametrize("line, message", [
    ("            zz: pl.Scalar[pl.INDEX]\n            out_3, acc_3 = pl.yield_(q, p)",
     "'zz' is annotated before a pl.yield_ that does not bind it"),
    ("            out_3: pl.Scalar[pl.INDEX]\n            out_4 = out_2\n"
     "            out_3, acc_3 = pl.yield_(q, p)",
     "a bare annotation declares the type of a result of the pl.yield_ right after it"),
])
def test_a_bare_annotation_must_type_the_yield_after_it(line, message):
    text = TWO_RESULTS.replace(
        '            out_3: pl.Tensor[[8, 64], pl.FP32, pl.MemRef("mem_ddr_4", pl.const(0, '
        'pl.INT64), 2048)]\n            out_3, acc_3 = pl.yield_(q, p)', line)
    assert text != TWO_RESULTS
    with pytest.raises(ParseError, match=re.escape(message)):
        language.parse_program(text, filename="<two>")
