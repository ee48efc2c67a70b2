"""Verifier cases that need their own small programs: control flow, targets, module level."""

from __future__ import annotations

import pytest

from ptoc.backend import Pipe
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PtoError
from ptoc.pto import (
    Instruction, Kernel, Module, ScalarType, SyncOp, TileBufType, Value, load, parse, verify,
)

ACC = ("!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=64, v_row=16, v_col=64, "
       "blayout=col_major, slayout=row_major, fractal=1024, pad=0>")
VEC = ("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=16, v_col=64, "
       "blayout=row_major, slayout=none_box, fractal=512, pad=0>")


def kernel(body: str, params: str = "%n: index", arch: str = "a2a3") -> str:
    return (f'module attributes {{pto.target_arch = "{arch}"}} {{\n'
            f"  func.func @k({params}) {{\n"
            "  %c0 = arith.constant 0 : index\n"
            "  %c1 = arith.constant 1 : index\n"
            "  %c0_i64 = arith.constant 0 : i64\n"
            f"{body}"
            "  return\n  }\n}\n")


ACC_TO_VEC = (f"  %acc = pto.alloc_tile addr = %c0_i64 : {ACC}\n"
              f"  %v = pto.alloc_tile addr = %c0_i64 : {VEC}\n"
              f"  pto.tmov ins(%acc : {ACC}) outs(%v : {VEC})\n")


def test_a5_only_path_is_accepted_on_a5_and_rejected_on_a2a3():
    load(kernel(ACC_TO_VEC, arch="a5"))
    load(kernel(ACC_TO_VEC, arch="a2a3"), target="a5")
    with pytest.raises(PtoError, match="no data path Acc -> Vec") as info:
        load(kernel(ACC_TO_VEC, arch="a5"), target="a2a3")
    assert info.value.loc.line == 8


def test_capacity_depends_on_target():
    big = ("  %c131072 = arith.constant 131072 : i64\n"
           f"  %acc = pto.alloc_tile addr = %c131072 : {ACC}\n")
    load(kernel(big), target="a5")            # L0C is 256 KiB on a5
    with pytest.raises(PtoError, match="131072-byte acc capacity on a2a3"):
        load(kernel(big), target="a2a3")


def test_int32_acc_rows_pad_to_32_on_a2a3():
    acc_i32 = ACC.replace("dtype=f32", "dtype=i32")
    body = ("  %c = arith.constant 129024 : i64\n"    # 129024 + 16x64 i32 padded to 32 rows = 137216
            f"  %acc = pto.alloc_tile addr = %c : {acc_i32}\n")
    load(kernel(body), target="a5")
    with pytest.raises(PtoError, match=r"spans \[129024, 137216\)"):
        load(kernel(body), target="a2a3")


def test_unknown_target():
    with pytest.raises(PtoError, match="unknown target 'zz'"):
        load(kernel(""), target="zz")


def test_module_target_arch_is_the_default_target():
    module = parse(kernel(ACC_TO_VEC, arch="a5"))
    assert verify(module) is module


CONTROL = [
    ("if_results_without_else",
     "  %t = arith.cmpi eq, %n, %c0 : index\n  %r = scf.if %t -> (index) {\n    scf.yield %c0 : index\n  }\n",
     7, "needs an else region"),
    ("yield_type_mismatch",
     "  %t = arith.cmpi eq, %n, %c0 : index\n  %r = scf.if %t -> (index) {\n    scf.yield %c0_i64 : i64\n"
     "  } else {\n    scf.yield %c0 : index\n  }\n", 8, "scf.yield gives (i64)"),
    ("region_without_yield",
     "  %t = arith.cmpi eq, %n, %c0 : index\n  %r = scf.if %t -> (index) {\n    scf.yield %c0 : index\n"
     "  } else {\n    %z = arith.addi %c0, %c1 : index\n  }\n", 10, "does not end in scf.yield"),
    ("iter_arg_type_mismatch",
     "  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0_i64) -> (index) {\n    scf.yield %a : index\n  }\n",
     6, "iter_arg %a is index but its initial value"),
    ("zero_step",
     "  scf.for %i = %c0 to %n step %c0 {\n  }\n", 6, "is not positive"),
    ("dynamic_event_out_of_range",
     "  %c9 = arith.constant 9 : index\n  pto.set_flag[<PIPE_V>, <PIPE_MTE3>, %c9]\n", 7, "event id 9"),
    ("duplicate_parameter", "", 2, "defined twice"),
    ("select_condition_not_i1",
     "  %s = arith.select %c0, %c1, %c0 : index\n", 6, "condition %c0 is index"),
    ("yield_with_values_in_plain_loop",
     "  scf.for %i = %c0 to %n step %c1 {\n    scf.yield %c0 : index\n  }\n", 7, "region returns ()"),
]


@pytest.mark.parametrize("name,body,line,phrase", CONTROL, ids=[c[0] for c in CONTROL])
def test_control_flow_errors(name, body, line, phrase):
    params = "%n: index, %n: index" if name == "duplicate_parameter" else "%n: index"
    with pytest.raises(PtoError) as info:
        load(kernel(body, params=params))
    assert info.value.loc.line == line, str(info.value)
    if phrase:
        assert phrase in str(info.value)


def test_dynamic_event_with_i64_is_accepted():
    # i64 event ids are integers, so they are allowed (the simulator range-checks at run time).
    load(kernel("  pto.set_flag[<PIPE_V>, <PIPE_MTE3>, %c0_i64]\n"
                "  pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, %c0_i64]\n"))


def test_duplicate_kernel_names():
    text = ("module {\n  func.func @k() {\n  return\n  }\n  func.func @k() {\n  return\n  }\n}\n")
    with pytest.raises(PtoError, match="@k is defined twice") as info:
        parse(text)
    assert info.value.loc.line == 5


def test_programmatic_module_errors_carry_line_zero_and_names():
    idx = ScalarType(DataType.INDEX)
    t = Value("t", TileBufType(MemorySpace.Vec, DataType.FP32, 16, 64, 16, 64))
    body = (Instruction("pto.texp", (), (t,), (t,)),)
    module = Module((Kernel("k", (Value("n", idx),), body),))
    with pytest.raises(PtoError, match="undefined SSA value %t"):
        verify(module)
    bad_sync = Module((Kernel("k", (), (SyncOp("set_flag", Pipe.PIPE_M, Pipe.PIPE_FIX, 8),)),))
    with pytest.raises(PtoError, match="event id 8"):
        verify(bad_sync)


def test_empty_region_missing_yield_blames_the_branch():
    body = ("  %t = arith.cmpi eq, %n, %c0 : index\n"
            "  %r = scf.if %t -> (index) {\n  } else {\n    scf.yield %c0 : index\n  }\n")
    with pytest.raises(PtoError, match="does not end in scf.yield") as info:
        load(kernel(body))
    assert info.value.loc.line == 7
