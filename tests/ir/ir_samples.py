"""Hand-built IR programs shared by the ptoc.ir tests (imported as ``ir_samples``)."""

from __future__ import annotations

from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, ForStmt, Function, IfStmt, IterArg, ListExpr, Param,
    Program, ReturnStmt, SeqStmts, Var, YieldStmt,
)
from ptoc.ir.types import MemRef, PtrType, ScalarType, TensorType, TileLayout, TileType, TileView

FP32 = DataType.FP32
INDEX = ScalarType(DataType.INDEX)


def lst(*items):
    return ListExpr(tuple(ConstInt(i) if isinstance(i, int) else i for i in items))


def tile(shape, space=None, dtype=FP32, memref=None, view=None):
    return TileType(tuple(shape), dtype, space, memref, view)


def make_matmul_program(k_extent: int = 64, stage: int = 2, with_memref: bool = False) -> Program:
    """The K-pipelined matmul of ``16_after_AutoTileMatmulL0`` (160x64x160 FP32), built by hand."""
    def mr(base, offset, size):
        return MemRef(base, ConstInt(offset, DataType.INT64), size) if with_memref else None

    a = Var("a", TensorType((160, k_extent), FP32, mr("mem_ddr_0", 0, 40960)))
    b = Var("b", TensorType((k_extent, 160), FP32, mr("mem_ddr_1", 0, 40960)))
    out = Var("out", TensorType((160, 160), FP32, mr("mem_ddr_2", 0, 102400)))
    stmts = []
    ptr = None
    if with_memref:
        ptr = Var("mem_mat_3", PtrType())
        stmts.append(AssignStmt(ptr, Call("tile.alloc", (MemorySpace.Mat, 40960), (), PtrType())))

    def mr_var(size):
        return MemRef(ptr, ConstInt(0, DataType.INT64), size) if with_memref else None

    lm_t = tile((160, k_extent), MemorySpace.Mat, memref=mr_var(40960))
    lm = Var("lm", lm_t)
    stmts.append(AssignStmt(lm, Call("tile.load", (a, lst(0, 0), lst(160, k_extent), lst(160, k_extent)),
                                     (("target_memory", MemorySpace.Mat),), lm_t)))
    rm_t = tile((k_extent, 160), MemorySpace.Mat)
    rm = Var("rm", rm_t)
    stmts.append(AssignStmt(rm, Call("tile.load", (b, lst(0, 0), lst(k_extent, 160), lst(k_extent, 160)),
                                     (("target_memory", MemorySpace.Mat),), rm_t)))
    acc_t = tile((160, 160), MemorySpace.Acc)
    init = Var("c_init", acc_t)
    stmts.append(AssignStmt(init, Call("tile.create", (lst(160, 160),),
                                       (("dtype", FP32), ("target_memory", MemorySpace.Acc)), acc_t)))
    ko = Var("ko", INDEX)
    c = IterArg("c", acc_t, init=init)
    left_t = tile((160, 32), MemorySpace.Left, view=TileView((("blayout", TileLayout.row_major),)))
    a_l = Var("c_a", left_t)
    right_t = tile((32, 160), MemorySpace.Right)
    b_r = Var("c_b", right_t)
    first = Var("c_first", acc_t)
    accd = Var("c_acc", acc_t)
    phi = Var("c_phi", acc_t)
    branch = IfStmt(
        BinOp("==", ko, ConstInt(0)),
        SeqStmts((AssignStmt(first, Call("tile.matmul", (a_l, b_r), (), acc_t)), YieldStmt((first,)))),
        SeqStmts((AssignStmt(accd, Call("tile.matmul_acc", (c, a_l, b_r), (), acc_t)),
                  YieldStmt((accd,)))),
        (phi,),
    )
    body = SeqStmts((
        AssignStmt(a_l, Call("tile.extract", (lm, ConstInt(0), ko, lst(160, 32)),
                             (("target_memory", MemorySpace.Left),), left_t,
                             attrs={"pipeline_membership": "0:0"})),
        AssignStmt(b_r, Call("tile.extract", (rm, ko, ConstInt(0), lst(32, 160)),
                             (("target_memory", MemorySpace.Right),), right_t)),
        branch,
        YieldStmt((phi,)),
    ))
    c_out = Var("c", acc_t)
    loop = ForStmt(ko, ConstInt(0), ConstInt(k_extent), ConstInt(32), (c,), body, (c_out,),
                   ForKind.Pipeline, {"pipeline_stages": stage})
    stmts.append(loop)
    out1 = Var("out", out.type)
    stmts.append(AssignStmt(out1, Call("tile.store", (c_out, lst(0, 0), out), (), out.type)))
    stmts.append(ReturnStmt((out1,)))
    kernel = Function("kernel", (Param(a), Param(b), Param(out, Direction.Out)), (out.type,),
                      SeqStmts(tuple(stmts)), FunctionType.InCore,
                      {"level": "CHIP_DIE", "role": "SubWorker"})
    oa, ob = Var("a", a.type), Var("b", b.type)
    oo = Var("out", out.type)
    or1 = Var("out", out.type)
    orch = Function("orchestrator", (Param(oa), Param(ob), Param(oo, Direction.Out)), (out.type,),
                    SeqStmts((AssignStmt(or1, Call("kernel", (oa, ob, oo), (), out.type,
                                                   is_function=True)),
                              ReturnStmt((or1,)))),
                    FunctionType.Orchestration, {"level": "CHIP", "role": "Orchestrator"})
    return Program("OracleMatmul", (kernel, orch))
