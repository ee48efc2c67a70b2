"""The op table: pipes, operand roles, reads/writes, unknown ops."""

from __future__ import annotations

import glob

import pytest

from ptoc.backend import Pipe
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtoError
from ptoc.pto import (
    OP_TABLE, Instruction, PartitionViewType, ScalarType, TileBufType, Value, op_info, parse,
    pipe_of, reads, writes,
)
from oracle_data import ORACLE_ROOT

INDEX = ScalarType(DataType.INDEX)


def T(loc: MemorySpace, dtype: str = "f32", rows: int = 16, cols: int = 64) -> TileBufType:
    return TileBufType(loc, DataType.from_pto(dtype), rows, cols, rows, cols)


def test_every_entry_is_consistent():
    for name, info in OP_TABLE.items():
        assert info.opcode == name
        assert info.syntax in {"dps", "constant", "binary", "cmpi", "select", "cast",
                               "make_tensor_view", "partition_view", "alloc_tile", "treshape",
                               "subview", "sync", "for", "while", "condition", "if", "yield",
                               "call"}
        if info.category == "vector":
            assert info.pipe is Pipe.PIPE_V and info.outs[0].locs == {MemorySpace.Vec}
        if info.category == "cube":
            assert info.pipe is Pipe.PIPE_M
        if info.category == "move":
            assert info.pipe is None
        if info.category in ("scalar", "descriptor"):
            assert info.pipe is Pipe.PIPE_S
        assert info.doc


@pytest.mark.parametrize("opcode", ["pto.tadd", "pto.tsub", "pto.tmul", "pto.tdiv", "pto.tmax",
                                    "pto.tmin", "pto.tadds", "pto.tmuls", "pto.texp", "pto.tneg",
                                    "pto.trelu", "pto.tcvt", "pto.trowmax", "pto.trowsum",
                                    "pto.trowexpandsub", "pto.trowexpanddiv",
                                    "pto.trowexpandexpdif"])
def test_vector_ops_run_on_v(opcode):
    assert op_info(opcode).pipe is Pipe.PIPE_V


def test_cube_ops():
    for op in ("pto.tmatmul", "pto.tmatmul.acc", "pto.tmatmul.bias"):
        assert op_info(op).pipe is Pipe.PIPE_M
    assert [r.name for r in op_info("pto.tmatmul.acc").ins] == ["acc", "lhs", "rhs"]
    assert op_info("pto.tmatmul").ins[0].locs == {MemorySpace.Left}


def _mv(opcode, src_loc, dst_loc):
    src = Value("s", T(src_loc))
    dst = Value("d", T(dst_loc))
    return Instruction(opcode, (), (src,), (dst,))


@pytest.mark.parametrize("src,dst,target,pipe", [
    (MemorySpace.Mat, MemorySpace.Left, "a2a3", Pipe.PIPE_MTE1),
    (MemorySpace.Mat, MemorySpace.Right, "a2a3", Pipe.PIPE_MTE1),
    (MemorySpace.Mat, MemorySpace.Bias, "a2a3", Pipe.PIPE_MTE1),
    (MemorySpace.Acc, MemorySpace.Mat, "a2a3", Pipe.PIPE_FIX),
    (MemorySpace.Acc, MemorySpace.Vec, "a5", Pipe.PIPE_FIX),
    (MemorySpace.Vec, MemorySpace.Mat, "a5", Pipe.PIPE_MTE3),
    (MemorySpace.Vec, MemorySpace.Vec, "a2a3", Pipe.PIPE_V),
])
def test_tmov_pipe_follows_the_data_path(src, dst, target, pipe):
    assert pipe_of(_mv("pto.tmov", src, dst), target) is pipe


def test_illegal_move_has_no_pipe():
    with pytest.raises(PtoError, match="no data path Acc -> Vec"):
        pipe_of(_mv("pto.tmov", MemorySpace.Acc, MemorySpace.Vec), "a2a3")


@pytest.mark.skipif(not glob.glob(str(ORACLE_ROOT / "dumps/*/kernel.pto")),
                    reason="oracle data not available")
def test_oracle_pipes():
    path = sorted(glob.glob(str(ORACLE_ROOT / "dumps/*dbc_off/kernel.pto")))[0]
    module = parse(open(path).read())
    seen = {}
    for op in module.kernel().walk():
        if isinstance(op, Instruction) and op.opcode.startswith("pto.t"):
            seen.setdefault(op.opcode, pipe_of(op, "a2a3"))
    assert seen == {"pto.tload": Pipe.PIPE_MTE2, "pto.textract": Pipe.PIPE_MTE1,
                    "pto.tmatmul": Pipe.PIPE_M, "pto.tmatmul.acc": Pipe.PIPE_M,
                    "pto.tstore": Pipe.PIPE_FIX}


def test_store_pipe_depends_on_source():
    view = Value("v", PartitionViewType((16, 64), DataType.FP32))
    acc = Instruction("pto.tstore", (), (Value("a", T(MemorySpace.Acc)),), (view,))
    vec = Instruction("pto.tstore", (), (Value("a", T(MemorySpace.Vec)),), (view,))
    load = Instruction("pto.tload", (), (view,), (Value("a", T(MemorySpace.Vec)),))
    assert pipe_of(acc, "a2a3") is Pipe.PIPE_FIX
    assert pipe_of(vec, "a2a3") is Pipe.PIPE_MTE3
    assert pipe_of(load, "a2a3") is Pipe.PIPE_MTE2


def test_reads_and_writes():
    acc = Value("c", T(MemorySpace.Acc))
    a = Value("a", T(MemorySpace.Left, "bf16", 16, 64))
    b = Value("b", T(MemorySpace.Right, "bf16", 64, 64))
    inst = Instruction("pto.tmatmul.acc", (), (acc, a, b), (acc,))
    assert reads(inst) == (acc, a, b)
    assert writes(inst) == (acc,)
    ext = Instruction("pto.textract", (),
                      (Value("m", T(MemorySpace.Mat)), Value("r", INDEX), Value("c0", INDEX)),
                      (Value("l", T(MemorySpace.Left)),))
    assert [v.name for v in reads(ext)] == ["m"]      # scalar offsets are not buffer reads
    assert [v.name for v in writes(ext)] == ["l"]


def test_unknown_op_suggests_a_near_name():
    with pytest.raises(PtoError, match="did you mean pto.tmatmul"):
        op_info("pto.tmatmull")


def test_queue_placement_of_sync_and_control():
    from ptoc.pto import ForOp, SyncOp, queue_of

    assert queue_of(SyncOp("set_flag", Pipe.PIPE_M, Pipe.PIPE_FIX, 0), "a2a3") is Pipe.PIPE_M
    assert queue_of(SyncOp("wait_flag", Pipe.PIPE_M, Pipe.PIPE_FIX, 0), "a2a3") is Pipe.PIPE_FIX
    assert queue_of(SyncOp("barrier", pipe=Pipe.PIPE_ALL), "a2a3") is Pipe.PIPE_ALL
    i = Value("i", INDEX)
    assert queue_of(ForOp(i, i, i, i, ()), "a2a3") is Pipe.PIPE_S
    assert queue_of(_mv("pto.tmov", MemorySpace.Mat, MemorySpace.Left), "a2a3") is Pipe.PIPE_MTE1
