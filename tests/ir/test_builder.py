"""The IR builder assembles nested IR from Python blocks; its output verifies and prints."""

from __future__ import annotations

import pytest

from ir_samples import make_matmul_program
from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, MemorySpace
from ptoc.ir.builder import BuilderError, IRBuilder, const
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import BinOp, ConstInt
from ptoc.ir.types import TensorType
from ptoc.ir.verifier import verify

FP32 = DataType.FP32
TT = TensorType((32, 16), FP32)


def _build_loop_program():
    b = IRBuilder()
    with b.function("kernel", FunctionType.InCore, return_types=[TT]) as f:
        x = f.param("x", TT)
        out = f.param("out", TT, Direction.Out)
        t0 = b.op("t0", "tile.load", x, [0, 0], [16, 16], target_memory=MemorySpace.Vec)
        with b.for_range("i", 0, 2, 1, carry=[("acc", t0)], return_names=["acc_out"]) as loop:
            (acc,) = loop.iter_args
            row = b.let("row", BinOp("*", loop.var, ConstInt(16)))
            t = b.op("t", "tile.load", x, [row, 0], [16, 16], target_memory=MemorySpace.Vec)
            with b.if_(BinOp("==", loop.var, ConstInt(0)), result_names=["nxt"]) as br:
                b.yield_(t)
            with b.else_(br):
                b.yield_(b.op("s", "tile.add", acc, t))
            b.yield_(br.return_vars[0])
        (res,) = loop.return_vars
        stored = b.op("stored", "tile.store", res, [0, 0], out)
        b.ret(stored)
    with b.function("orch", FunctionType.Orchestration, return_types=[TT]) as g:
        gx = g.param("x", TT)
        gout = g.param("out", TT, Direction.Out)
        r = b.let("r", b.call_function(b.functions[0], gx, gout))
        b.ret(r)
    return b.to_program("Loop")


def test_builder_output_verifies_and_prints():
    prog = _build_loop_program()
    verify(prog)
    text = prog.as_python()
    assert "for i, (acc,) in pl.range(2, init_values=(t0,)):" in text
    assert "nxt: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(t)" in text
    assert "acc_out: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(nxt)" in text
    assert "r: pl.Tensor[[32, 16], pl.FP32] = self.kernel(x, out)" in text
    assert_structural_equal(prog, _build_loop_program())


def test_builder_pipeline_loop_sets_stage_attr():
    b = IRBuilder()
    with b.function("k") as f:
        with b.for_range("ko", 0, 64, 32, stages=2, attrs={"pipeline_overlap_stores": False}):
            pass
    loop = b.functions[0].body.stmts[0]
    assert loop.kind is ForKind.Pipeline
    assert list(loop.attrs) == ["pipeline_stages", "pipeline_overlap_stores"]
    verify(b.to_program("P"))
    assert "pl.pipeline(0, 64, 32, stage=2, attrs={\"pipeline_overlap_stores\": False})" in \
        b.to_program("P").as_python()


def test_builder_recreates_the_hand_built_matmul():
    ref = make_matmul_program()
    a_t, b_t, out_t = (p.var.type for p in ref.functions[0].params)
    b = IRBuilder()
    with b.function("kernel", FunctionType.InCore, return_types=[out_t],
                    attrs={"level": "CHIP_DIE", "role": "SubWorker"}) as f:
        a = f.param("a", a_t)
        bb = f.param("b", b_t)
        out = f.param("out", out_t, Direction.Out)
        lm = b.op("lm", "tile.load", a, [0, 0], [160, 64], target_memory=MemorySpace.Mat)
        rm = b.op("rm", "tile.load", bb, [0, 0], [64, 160], target_memory=MemorySpace.Mat)
        init = b.op("c_init", "tile.create", [160, 160], dtype=FP32, target_memory=MemorySpace.Acc)
        with b.for_range("ko", 0, 64, 32, stages=2, carry=[("c", init)]) as loop:
            (c,) = loop.iter_args
            ca = b.op("c_a", "tile.extract", lm, 0, loop.var, [160, 32],
                      target_memory=MemorySpace.Left, attrs={"pipeline_membership": "0:0"})
            cb = b.op("c_b", "tile.extract", rm, loop.var, 0, [32, 160],
                      target_memory=MemorySpace.Right)
            with b.if_(BinOp("==", loop.var, ConstInt(0)), result_names=["c_phi"]) as br:
                b.yield_(b.op("c_first", "tile.matmul", ca, cb))
            with b.else_(br):
                b.yield_(b.op("c_acc", "tile.matmul_acc", c, ca, cb))
            b.yield_(br.return_vars[0])
        stored = b.op("out", "tile.store", loop.return_vars[0], [0, 0], out)
        b.ret(stored)
    verify(b.functions[0])
    # the registry infers no TileView for extract and drops default kwargs: compare the loop shape
    built = b.functions[0]
    assert [type(s).__name__ for s in built.body.stmts] == \
        [type(s).__name__ for s in ref.functions[0].body.stmts]


def test_builder_misuse_raises_builder_errors():
    b = IRBuilder()
    with pytest.raises(BuilderError):
        b.ret()
    with pytest.raises(BuilderError):
        with b.function("f"):
            with b.function("g"):
                pass
    b2 = IRBuilder()
    with b2.function("f"):
        with b2.if_(ConstInt(1)) as br:
            pass
        b2.ret()
        with pytest.raises(BuilderError):
            with b2.else_(br):
                pass
    with pytest.raises(TypeError, match="cannot turn 'x' into an IR expression"):
        const("x")


def test_const_helper():
    assert const(3).dtype is DataType.INDEX
    assert const(3, DataType.INT32).dtype is DataType.INT32
    assert const(0.5).dtype is DataType.FP32
    assert const(True).value is True
    c = ConstInt(1)
    assert const(c) is c


# ---- PyPTO's builder API ----------------------------------------------------------------------

def test_pypto_style_program_with_a_loop_a_branch_and_a_call():
    from ptoc import ir

    span = ir.Span.unknown()
    i64 = ir.ScalarType(DataType.INT64)
    ib = IRBuilder()
    with ib.program("Built") as p:
        helper = p.declare_function("helper")
        with ib.function("helper", type=ir.FunctionType.Opaque) as h:
            v = h.param("v", i64)
            h.return_type(i64)
            ib.return_stmt(ir.Mul(v, ir.ConstInt(2, DataType.INT64, span), DataType.INT64, span))
        p.add_function(h.get_result())
        with ib.function("main") as f:
            n = f.param("n", i64)
            f.return_type(i64)
            i = ib.var("i", ir.ScalarType(DataType.INDEX))
            with ib.for_loop(i, 0, 8, 1) as loop:
                acc = loop.iter_arg("acc", n)
                loop.return_var("acc_out")
                ib.emit(ir.YieldStmt([ir.Add(acc, n, DataType.INT64, span)], span))
            total = ib.let("total", ir.Call(helper, [loop.output()], span))
            with ib.if_stmt(ir.Gt(total, n, DataType.BOOL, span)) as br:
                phi = br.return_var("phi", i64)
                ib.emit(ir.YieldStmt([total], span))
                br.else_()
                ib.emit(ir.YieldStmt([n], span))
            ib.return_stmt(br.output())
        p.add_function(f.get_result())
    prog = p.get_result()
    assert [fn.name for fn in prog.functions] == ["helper", "main"]
    assert total.type.dtype is DataType.INT64  # typed by the callee (it was UnknownType)
    assert phi is br.output() and f.get_result().func_type is ir.FunctionType.Opaque
    verify(prog)
    text = prog.as_python()
    assert "total: pl.Scalar[pl.INT64] = self.helper(acc_out)" in text
    assert_structural_equal(prog, pl_parse(text))


def test_pypto_style_builder_errors_are_runtime_errors():
    from ptoc import ir

    ib = IRBuilder()
    with pytest.raises(RuntimeError, match="Cannot begin function"):
        with ib.function("outer"):
            with ib.function("inner"):
                pass
    ib = IRBuilder()
    with pytest.raises(RuntimeError, match="1 iter args but 0 return vars"):
        with ib.function("f"):
            with ib.for_loop(ib.var("i", ir.ScalarType(DataType.INDEX)), 0, 4, 1) as loop:
                loop.iter_arg("s", 0)
    with pytest.raises(RuntimeError, match="not yet complete"):
        from ptoc.ir.pypto_builder import ForLoopBuilder

        ForLoopBuilder().outputs()


def pl_parse(text):
    from ptoc.language import parse_program

    return parse_program(text)
