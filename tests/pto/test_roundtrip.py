"""Parse/print round trips on PyPTO's own kernel.pto files and hand-written Level-3 programs."""

from __future__ import annotations

import glob
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoc.backend import Pipe
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import SourceLoc
from ptoc.pto import (
    EnumAttr, ForOp, IfOp, Instruction, Kernel, Module, PtrType, ScalarType, SyncOp, TileBufType,
    Value, YieldOp, load, parse, print_module, verify, walk,
)
from oracle_data import ORACLE_ROOT

ORACLE = sorted(glob.glob(str(ORACLE_ROOT / "dumps/*/kernel.pto")))
DATA = os.path.join(os.path.dirname(__file__), "data")
EXAMPLES = sorted(glob.glob(os.path.join(DATA, "*.pto")))


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


@pytest.mark.skipif(not ORACLE, reason="oracle data not available")
@pytest.mark.parametrize("path", ORACLE, ids=lambda p: p.split("/")[-2])
def test_oracle_kernel_prints_back_byte_for_byte(path):
    text = _read(path)
    module = parse(text, path)
    assert print_module(module) == text
    assert parse(print_module(module)) == module
    verify(module, "a2a3")


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_level3_examples_round_trip_and_verify(path):
    text = _read(path)
    module = load(text, filename=path)
    assert print_module(module) == text
    again = parse(print_module(module))
    assert again == module
    assert print_module(again) == text


def test_examples_exercise_flags_loops_ifs_and_dynamic_events():
    ops = [op for p in EXAMPLES for k in parse(_read(p)).kernels for op in k.walk()]
    kinds = {type(op).__name__ for op in ops}
    assert {"ForOp", "IfOp", "SyncOp", "YieldOp", "Instruction"} <= kinds
    syncs = [op for op in ops if isinstance(op, SyncOp)]
    assert {s.kind for s in syncs} == {"set_flag", "wait_flag", "barrier"}
    assert any(isinstance(s.event, Value) for s in syncs)
    loops = [op for op in ops if isinstance(op, ForOp)]
    assert any(op.iter_args for op in loops)
    assert any(op.upper.type == ScalarType(DataType.INDEX) and op.upper.name == "rows" for op in loops)


def test_line_numbers_point_at_the_op_text():
    path = os.path.join(DATA, "l3_kloop_matmul.pto")
    lines = _read(path).splitlines()
    module = parse(_read(path))
    for op in module.kernel().walk():
        text = lines[op.line - 1].strip()
        assert op.opcode in text, (op.line, text)
        if isinstance(op, ForOp):
            assert lines[op.end_line - 1].strip().startswith("}")


def test_source_locations_survive_round_trip():
    path = os.path.join(DATA, "l3_kloop_matmul.pto")
    module = parse(_read(path))
    kloop = [op for op in module.kernel().walk() if isinstance(op, ForOp)][0]
    assert kloop.loc == SourceLoc("kloop.py", 9, 5)
    matmuls = [op for op in module.kernel().walk() if getattr(op, "opcode", "") == "pto.tmatmul"]
    assert matmuls[0].loc == SourceLoc("kloop.py", 14, 5)
    assert parse(print_module(module)).kernel().walk().__next__().loc == module.kernel().body[0].loc


def test_oracle_model_contents():
    path = [p for p in ORACLE if "skinny" in p]
    if not path:
        pytest.skip("oracle data not available")
    module = parse(_read(path[0]))
    assert module.target_arch == "a2a3"
    kernel = module.kernel()
    assert kernel.name == "kernel"
    assert [p.type for p in kernel.params] == [PtrType(DataType.BF16), PtrType(DataType.BF16),
                                               PtrType(DataType.FP32)]
    assert kernel.attr("pto.kernel_kind") == EnumAttr("pto.kernel_kind", "cube")
    loop = [op for op in kernel.body if isinstance(op, ForOp)][0]
    branch = [op for op in loop.body if isinstance(op, IfOp)][0]
    assert branch.has_else and branch.cond.type == ScalarType(DataType.BOOL)
    extract = [op for op in loop.body if getattr(op, "opcode", "") == "pto.textract"][0]
    src, row, col = extract.ins
    assert isinstance(src.type, TileBufType) and src.type.loc is MemorySpace.Mat
    assert col.name == loop.iv.name
    alloc = [op for op in kernel.body if getattr(op, "opcode", "") == "pto.alloc_tile"][0]
    assert alloc.attr("addr").name == "c0_i64"
    assert alloc.result.type.v_row is None and alloc.attr("valid_row").name == "c16_index"


def test_equality_ignores_line_numbers_only():
    text = _read(EXAMPLES[0])
    shifted = parse("\n\n" + text)
    assert shifted == parse(text)
    assert shifted.kernel().body[0].line == parse(text).kernel().body[0].line + 2


def test_bare_function_without_module_wrapper():
    text = ("func.func @f(%x: !pto.ptr<f32>) {\n"
            "  %c0 = arith.constant 0 : index\n"
            "  pto.barrier <PIPE_V>\n"
            "}\n")
    module = parse(text)
    assert module.attrs == () and module.kernel().name == "f"
    assert print_module(module).startswith("module {\n  func.func @f(%x: !pto.ptr<f32>) {\n")
    assert parse(print_module(module)) == module


def test_comments_are_ignored():
    text = ("module {\n  func.func @f() {\n  // a comment\n  pto.barrier <PIPE_ALL> // trailing\n"
            "  return\n  }\n}\n")
    module = parse(text)
    (op,) = module.kernel().body
    assert op == SyncOp("barrier", pipe=Pipe.PIPE_ALL) and op.line == 4


# -- property: programs built in code print and parse back equal ------------------------------

_VEC_BINARY = ["pto.tadd", "pto.tsub", "pto.tmul", "pto.tdiv", "pto.tmax", "pto.tmin"]
_VEC_UNARY = ["pto.texp", "pto.tneg", "pto.trelu", "pto.tabs"]
_PIPES = [Pipe.PIPE_MTE2, Pipe.PIPE_MTE1, Pipe.PIPE_M, Pipe.PIPE_FIX, Pipe.PIPE_V, Pipe.PIPE_MTE3]


@st.composite
def vector_programs(draw):
    rows = draw(st.sampled_from([8, 16, 32]))
    cols = draw(st.sampled_from([8, 16, 64]))
    dtype = draw(st.sampled_from([DataType.FP32, DataType.FP16]))
    if cols * dtype.nbytes % 32:
        cols = 32
    ty = TileBufType(MemorySpace.Vec, dtype, rows, cols, rows, cols)
    idx = ScalarType(DataType.INDEX)
    i64 = ScalarType(DataType.INT64)
    nbytes = rows * cols * dtype.nbytes
    body: list = []
    tiles = []
    for i in range(draw(st.integers(1, 3))):
        addr = Value(f"a{i}", i64)
        body.append(Instruction("arith.constant", (addr,), attrs=(("value", i * nbytes),)))
        t = Value(f"t{i}", ty)
        body.append(Instruction("pto.alloc_tile", (t,), attrs=(("addr", addr), ("valid_row", None),
                                                              ("valid_col", None))))
        tiles.append(t)
    n_ops = draw(st.integers(1, 8))
    inner: list = []
    for j in range(n_ops):
        kind = draw(st.sampled_from(["bin", "un", "flag", "barrier"]))
        loc = draw(st.one_of(st.none(), st.builds(SourceLoc, st.just("gen.py"),
                                                   st.integers(1, 99), st.integers(1, 9))))
        if kind == "bin":
            a, b, d = (draw(st.sampled_from(tiles)) for _ in range(3))
            inner.append(Instruction(draw(st.sampled_from(_VEC_BINARY)), (), (a, b), (d,), loc=loc))
        elif kind == "un":
            a, d = (draw(st.sampled_from(tiles)) for _ in range(2))
            inner.append(Instruction(draw(st.sampled_from(_VEC_UNARY)), (), (a,), (d,), loc=loc))
        elif kind == "flag":
            src, dst = draw(st.lists(st.sampled_from(_PIPES), min_size=2, max_size=2, unique=True))
            ev = draw(st.integers(0, 7))
            inner.append(SyncOp("set_flag", src, dst, ev, loc=loc))
            inner.append(SyncOp("wait_flag", src, dst, ev))
        else:
            inner.append(SyncOp("barrier", pipe=draw(st.sampled_from(_PIPES + [Pipe.PIPE_ALL]))))
    lo, hi, step = Value("lo", idx), Value("hi", idx), Value("st", idx)
    for v, val in ((lo, 0), (hi, draw(st.integers(1, 64))), (step, draw(st.integers(1, 8)))):
        body.append(Instruction("arith.constant", (v,), attrs=(("value", val),)))
    if draw(st.booleans()):
        body.append(ForOp(Value("i", idx), lo, hi, step, tuple(inner)))
    else:
        cond = Value("cond", ScalarType(DataType.BOOL))
        body.append(Instruction("arith.cmpi", (cond,), (lo, hi), attrs=(("predicate", "slt"),)))
        split = len(inner) // 2
        body.append(IfOp(cond, tuple(inner[:split]), tuple(inner[split:]), has_else=bool(inner[split:])))
    kernel = Kernel("gen", (Value("x", PtrType(dtype)), Value("n", idx)), tuple(body),
                    (("pto.kernel_kind", EnumAttr("pto.kernel_kind", "vector")),))
    return Module((kernel,), (("pto.target_arch", "a2a3"),))


@settings(max_examples=60, deadline=None)
@given(vector_programs())
def test_built_programs_round_trip_and_verify(module):
    verify(module, "a2a3")
    text = print_module(module)
    again = parse(text)
    assert again == module
    assert print_module(again) == text
    for op in walk(again.kernel().body):
        assert op.line >= 1


def test_scalar_ops_round_trip():
    text = """module {
  func.func @s(%n: index, %x: i64, %f: f32) {
  %c3 = arith.constant 3 : index
  %t = arith.constant true : i1
  %h = arith.constant 0.5 : f32
  %a = arith.addi %n, %c3 : index
  %b = arith.subi %a, %c3 : index
  %c = arith.muli %b, %c3 : index
  %d = arith.divsi %c, %c3 : index
  %e = arith.floordivsi %d, %c3 : index
  %g = arith.remsi %e, %c3 : index
  %lt = arith.cmpi slt, %g, %n : index
  %sel = arith.select %lt, %g, %n : index
  %cast = arith.index_cast %x : i64 to index
  %ff = arith.mulf %f, %h : f32
  %r = scf.if %t -> (index) {
    scf.yield %sel : index
  } else {
    scf.yield %cast : index
  }
  return
  }
}
"""
    module = load(text)
    assert print_module(module) == text
    assert parse(print_module(module)) == module


def test_fill_and_unusual_vector_ops_round_trip():
    vec = ("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=8, v_row=16, v_col=1, "
           "blayout=row_major, slayout=none_box, fractal=512, pad=0>")
    text = ("module {\n  func.func @f(%s: f32) {\n"
            "  %c0_i64 = arith.constant 0 : i64\n"
            f"  %t = pto.alloc_tile addr = %c0_i64 : {vec}\n"
            f"  pto.texpands ins(%s : f32) outs(%t : {vec})\n"
            f"  pto.trowexpand ins(%t : {vec}) outs(%t : {vec})\n"
            f"  pto.tmaxs ins(%t, %s : {vec}, f32) outs(%t : {vec})\n"
            f"  pto.tcvt ins(%t : {vec}) outs(%t : {vec})\n"
            "  return\n  }\n}\n")
    module = load(text)
    assert print_module(module) == text
    assert parse(print_module(module)) == module


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
               max_size=12),
       st.floats(allow_nan=False, allow_infinity=False),
       st.integers(-2**62, 2**62), st.integers(1, 10**6), st.integers(0, 500))
def test_literals_round_trip(name, fvalue, ivalue, line, col):
    f32, i64 = ScalarType(DataType.FP32), ScalarType(DataType.INT64)
    loc = SourceLoc(name, line, col)
    body = (Instruction("arith.constant", (Value("f", f32),), attrs=(("value", fvalue),), loc=loc),
            Instruction("arith.constant", (Value("i", i64),), attrs=(("value", ivalue),)))
    module = Module((Kernel("k", (), body),), (("note", name), ("n", ivalue)))
    assert parse(print_module(module)) == module
