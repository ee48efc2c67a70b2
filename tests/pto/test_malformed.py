"""Malformed PTO texts: each must raise PtoError whose loc.line is the offending line."""

from __future__ import annotations

import pytest

from ptoc.errors import PtocError, PtoError
from ptoc.pto import load, parse, print_module


def tile(loc, dtype, rows, cols, v_row=None, v_col=None, bl="row_major", sl="none_box", fr=512):
    vr = rows if v_row is None else v_row
    vc = cols if v_col is None else v_col
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, "
            f"v_col={vc}, blayout={bl}, slayout={sl}, fractal={fr}, pad=0>")


MAT_A = tile("mat", "bf16", 16, 64, bl="col_major", sl="row_major")
MAT_B = tile("mat", "bf16", 64, 64, bl="col_major", sl="row_major")
LEFT = tile("left", "bf16", 16, 64, sl="row_major")
RIGHT = tile("right", "bf16", 64, 64, sl="col_major")
ACC = tile("acc", "f32", 16, 64, bl="col_major", sl="row_major", fr=1024)
VEC = tile("vec", "f32", 16, 64)
TV16 = "!pto.tensor_view<?x?xbf16>"
TV32 = "!pto.tensor_view<?x?xf32>"
PA = "!pto.partition_tensor_view<16x64xbf16>"
PB = "!pto.partition_tensor_view<64x64xbf16>"
PC = "!pto.partition_tensor_view<16x64xf32>"

BASE = [
    'module attributes {pto.target_arch = "a2a3"} {',                                        # 1
    "  func.func @k(%a: !pto.ptr<bf16>, %b: !pto.ptr<bf16>, %c: !pto.ptr<f32>, %n: index, %s: f32) {",
    "  %c0 = arith.constant 0 : index",                                                       # 3
    "  %c1 = arith.constant 1 : index",                                                       # 4
    "  %c16 = arith.constant 16 : index",                                                     # 5
    "  %c64 = arith.constant 64 : index",                                                     # 6
    "  %c0_i64 = arith.constant 0 : i64",                                                     # 7
    "  %c8192_i64 = arith.constant 8192 : i64",                                               # 8
    f"  %av = pto.make_tensor_view %a, shape = [%c16, %c64], strides = [%c64, %c1] {{layout = #pto.layout<nd>}} : {TV16}",
    f"  %bv = pto.make_tensor_view %b, shape = [%c64, %c64], strides = [%c64, %c1] : {TV16}",  # 10
    f"  %cv = pto.make_tensor_view %c, shape = [%c16, %c64], strides = [%c64, %c1] : {TV32}",  # 11
    f"  %pa = pto.partition_view %av, offsets = [%c0, %c0], sizes = [%c16, %c64] : {TV16} -> {PA}",
    f"  %pb = pto.partition_view %bv, offsets = [%c0, %c0], sizes = [%c64, %c64] : {TV16} -> {PB}",
    f"  %pc = pto.partition_view %cv, offsets = [%c0, %c0], sizes = [%c16, %c64] : {TV32} -> {PC}",
    f"  %am = pto.alloc_tile addr = %c0_i64 : {MAT_A}",                                       # 15
    f"  %bm = pto.alloc_tile addr = %c8192_i64 : {MAT_B}",                                    # 16
    f"  %al = pto.alloc_tile addr = %c0_i64 : {LEFT}",                                        # 17
    f"  %br = pto.alloc_tile addr = %c0_i64 : {RIGHT}",                                       # 18
    f"  %acc = pto.alloc_tile addr = %c0_i64 : {ACC}",                                        # 19
    f"  %v = pto.alloc_tile addr = %c0_i64 : {VEC}",                                          # 20
    f"  %w = pto.alloc_tile addr = %c8192_i64 : {VEC}",                                       # 21
    f"  pto.tload ins(%pa : {PA}) outs(%am : {MAT_A})",                                       # 22
    f"  pto.tload ins(%pb : {PB}) outs(%bm : {MAT_B})",                                       # 23
    "  pto.set_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]",                                  # 24
    "  pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]",                                 # 25
    f"  pto.textract ins(%am, %c0, %c0 : {MAT_A}, index, index) outs(%al : {LEFT})",          # 26
    f"  pto.textract ins(%bm, %c0, %c0 : {MAT_B}, index, index) outs(%br : {RIGHT})",         # 27
    "  pto.set_flag[<PIPE_MTE1>, <PIPE_M>, <EVENT_ID0>]",                                     # 28
    "  pto.wait_flag[<PIPE_MTE1>, <PIPE_M>, <EVENT_ID0>]",                                    # 29
    "  scf.for %i = %c0 to %n step %c16 {",                                                   # 30
    "    %first = arith.cmpi eq, %i, %c0 : index",                                            # 31
    "    scf.if %first {",                                                                    # 32
    f"      pto.tmatmul ins(%al, %br : {LEFT}, {RIGHT}) outs(%acc : {ACC})",                  # 33
    "    } else {",                                                                           # 34
    f"      pto.tmatmul.acc ins(%acc, %al, %br : {ACC}, {LEFT}, {RIGHT}) outs(%acc : {ACC})", # 35
    "    }",                                                                                  # 36
    "  }",                                                                                    # 37
    "  pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]",                                      # 38
    "  pto.wait_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]",                                     # 39
    f"  pto.tstore ins(%acc : {ACC}) outs(%pc : {PC})",                                       # 40
    f"  pto.tadds ins(%v, %s : {VEC}, f32) outs(%w : {VEC})",                                 # 41
    f"  pto.tadd ins(%v, %w : {VEC}, {VEC}) outs(%w : {VEC})",                                # 42
    "  pto.barrier <PIPE_ALL>",                                                               # 43
    "  return",                                                                               # 44
    "  }",                                                                                    # 45
    "}",                                                                                      # 46
]

VEC32 = tile("vec", "f32", 16, 32)
RIGHT32 = tile("right", "bf16", 32, 64, sl="col_major")

# (id, {line: replacement}, expected error line, key phrase)
CASES = [
    ("unknown_pto_op", {42: f"  pto.tfoo ins(%v, %w : {VEC}, {VEC}) outs(%w : {VEC})"}, 42, "unknown op 'pto.tfoo'"),
    ("unknown_arith_op", {4: "  %c1 = arith.frob %c0, %c0 : index"}, 4, "unknown op 'arith.frob'"),
    ("matmul_lhs_in_mat", {33: f"      pto.tmatmul ins(%am, %br : {MAT_A}, {RIGHT}) outs(%acc : {ACC})"}, 33, "lhs %am is in mat, expected left"),
    ("matmul_rhs_in_left", {33: f"      pto.tmatmul ins(%al, %al : {LEFT}, {LEFT}) outs(%acc : {ACC})"}, 33, "rhs %al is in left, expected right"),
    ("matmul_dst_in_vec", {33: f"      pto.tmatmul ins(%al, %br : {LEFT}, {RIGHT}) outs(%v : {VEC})"}, 33, "dst %v is in vec, expected acc"),
    ("use_type_differs_from_def", {18: f"  %br = pto.alloc_tile addr = %c0_i64 : {RIGHT32}"}, 27, "but was defined as"),
    ("matmul_k_mismatch", {21: f"  %w = pto.alloc_tile addr = %c8192_i64 : {RIGHT32}",
                           33: f"      pto.tmatmul ins(%al, %w : {LEFT}, {RIGHT32}) outs(%acc : {ACC})"}, 33, "shape mismatch"),
    ("matmul_dtype_pair", {21: f"  %w = pto.alloc_tile addr = %c8192_i64 : {tile('left', 'f16', 16, 64)}",
                           33: f"      pto.tmatmul ins(%w, %br : {tile('left', 'f16', 16, 64)}, {RIGHT}) outs(%acc : {ACC})"}, 33, "no cube MAD for f16 x bf16"),
    ("matmul_acc_dtype", {21: f"  %w = pto.alloc_tile addr = %c8192_i64 : {tile('acc', 'i32', 16, 64)}",
                          33: f"      pto.tmatmul ins(%al, %br : {LEFT}, {RIGHT}) outs(%w : {tile('acc', 'i32', 16, 64)})"}, 33, "accumulates in f32"),
    ("matmul_acc_in_differs", {21: f"  %w = pto.alloc_tile addr = %c8192_i64 : {tile('acc', 'f32', 16, 32)}",
                               35: f"      pto.tmatmul.acc ins(%w, %al, %br : {tile('acc', 'f32', 16, 32)}, {LEFT}, {RIGHT}) outs(%acc : {ACC})"}, 35, "differ"),
    ("acc_over_capacity", {8: "  %c8192_i64 = arith.constant 129024 : i64",
                           19: f"  %acc = pto.alloc_tile addr = %c8192_i64 : {ACC}"}, 19, "exceeds the 131072-byte acc capacity"),
    ("vec_tile_too_big", {20: f"  %v = pto.alloc_tile : {tile('vec', 'f32', 512, 128)}"}, 20, "needs 262144 bytes but vec holds 188416"),
    ("misaligned_address", {7: "  %c0_i64 = arith.constant 100 : i64"}, 15, "not 32-byte aligned"),
    ("negative_address", {7: "  %c0_i64 = arith.constant -64 : i64"}, 15, "negative"),
    ("event_id_8", {24: "  pto.set_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID8>]"}, 24, "event id 8 is out of range 0..7"),
    ("event_id_12_wait", {25: "  pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID12>]"}, 25, "out of range"),
    ("bad_event_token", {24: "  pto.set_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_X>]"}, 24, "bad event id"),
    ("unknown_pipe", {24: "  pto.set_flag[<PIPE_FOO>, <PIPE_MTE1>, <EVENT_ID0>]"}, 24, "unknown pipe 'PIPE_FOO'"),
    ("flag_same_pipe", {24: "  pto.set_flag[<PIPE_V>, <PIPE_V>, <EVENT_ID0>]"}, 24, "to itself"),
    ("flag_pipe_all", {25: "  pto.wait_flag[<PIPE_ALL>, <PIPE_MTE1>, <EVENT_ID0>]"}, 25, "PIPE_ALL"),
    ("barrier_no_brackets", {43: "  pto.barrier PIPE_ALL"}, 43, "expected '<'"),
    ("undefined_in_ins", {42: f"  pto.tadd ins(%v, %zz : {VEC}, {VEC}) outs(%w : {VEC})"}, 42, "undefined SSA value %zz"),
    ("undefined_in_cmpi", {31: "    %first = arith.cmpi eq, %q, %c0 : index"}, 31, "undefined SSA value %q"),
    ("redefinition", {4: "  %c0 = arith.constant 1 : index"}, 4, "defined twice"),
    ("iv_outside_loop", {38: "  %bad = arith.addi %i, %c1 : index"}, 38, "undefined SSA value %i"),
    ("branch_value_outside", {38: "  %bad = arith.addi %first, %first : i1"}, 38, "undefined SSA value %first"),
    ("tload_dtype", {22: f"  pto.tload ins(%pc : {PC}) outs(%am : {MAT_A})"}, 22, "dtype"),
    ("tload_window_too_big", {22: f"  pto.tload ins(%pb : {PB}) outs(%am : {MAT_A})"}, 22, "does not fit"),
    ("tload_into_left", {22: f"  pto.tload ins(%pa : {PA}) outs(%al : {LEFT})"}, 22, "dst %al is in left, expected mat or vec"),
    ("tstore_from_left", {40: f"  pto.tstore ins(%al : {LEFT}) outs(%pa : {PA})"}, 40, "src %al is in left"),
    ("tstore_mat_no_path", {40: f"  pto.tstore ins(%am : {MAT_A}) outs(%pa : {PA})"}, 40, "no data path Mat -> DDR"),
    ("tstore_vec_cast", {40: f"  pto.tstore ins(%v : {VEC}) outs(%pa : {PA})"}, 40, "cannot store"),
    ("textract_rows_out_of_range", {26: f"  pto.textract ins(%am, %c16, %c0 : {MAT_A}, index, index) outs(%al : {LEFT})"}, 26, "rows [16, 32)"),
    ("textract_offset_unaligned", {4: "  %c1 = arith.constant 8 : index",
                                   26: f"  pto.textract ins(%am, %c0, %c1 : {MAT_A}, index, index) outs(%al : {LEFT})"}, 26, "col offset 8 is not a multiple of 16"),
    ("textract_into_acc", {26: f"  pto.textract ins(%am, %c0, %c0 : {MAT_A}, index, index) outs(%acc : {ACC})"}, 26, "dst %acc is in acc"),
    ("textract_mat_to_mat", {26: f"  pto.textract ins(%am, %c0, %c0 : {MAT_A}, index, index) outs(%bm : {MAT_B})"}, 26, "no data path Mat -> Mat"),
    ("textract_tile_offset", {26: f"  pto.textract ins(%am, %v, %c0 : {MAT_A}, {VEC}, index) outs(%al : {LEFT})"}, 26, "row %v must be a scalar"),
    ("ins_count", {42: f"  pto.tadd ins(%v : {VEC}) outs(%w : {VEC})"}, 42, "takes 2 ins operand(s)"),
    ("outs_count", {42: f"  pto.tadd ins(%v, %w : {VEC}, {VEC}) outs()"}, 42, "takes 1 outs operand(s)"),
    ("types_count", {42: f"  pto.tadd ins(%v, %w : {VEC}) outs(%w : {VEC})"}, 42, "lists 2 operand(s) but 1 type(s)"),
    ("elementwise_shape", {41: f"  %u = pto.alloc_tile addr = %c0_i64 : {VEC32}",
                           42: f"  pto.tadd ins(%v, %u : {VEC}, {VEC32}) outs(%w : {VEC})"}, 42, "shape mismatch"),
    ("elementwise_dtype", {41: f"  %u = pto.alloc_tile addr = %c0_i64 : {tile('vec', 'i32', 16, 64)}",
                           42: f"  pto.tadd ins(%v, %u : {VEC}, {tile('vec', 'i32', 16, 64)}) outs(%w : {VEC})"}, 42, "dtype mismatch"),
    ("tadds_int_scalar", {41: f"  pto.tadds ins(%v, %n : {VEC}, index) outs(%w : {VEC})"}, 41, "dtype mismatch: scalar %n"),
    ("tadds_tile_scalar", {41: f"  pto.tadds ins(%v, %w : {VEC}, {VEC}) outs(%w : {VEC})"}, 41, "scalar %w must be a scalar"),
    ("tcvt_bad_rmode", {42: f"  pto.tcvt ins(%v : {VEC}) outs(%w : {VEC}) {{rmode = #pto.round_mode<sideways>}}"}, 42, "bad rounding mode"),
    ("tcvt_unknown_attr", {42: f"  pto.tcvt ins(%v : {VEC}) outs(%w : {VEC}) {{mode = 1}}"}, 42, "has no attribute 'mode'"),
    ("rowsum_scratch_small", {41: f"  %u = pto.alloc_tile addr = %c0_i64 : {tile('vec', 'f32', 16, 8)}",
                              42: f"  pto.trowsum ins(%v, %u : {VEC}, {tile('vec', 'f32', 16, 8)}) outs(%u : {tile('vec', 'f32', 16, 8)})"}, 42, "scratch"),
    ("rowexpand_rows", {41: f"  %u = pto.alloc_tile addr = %c0_i64 : {tile('vec', 'f32', 8, 8)}",
                        42: f"  pto.trowexpandsub ins(%v, %u : {VEC}, {tile('vec', 'f32', 8, 8)}) outs(%w : {VEC})"}, 42, "row operand %u has 8 rows"),
    ("vec_row_unaligned", {20: f"  %v = pto.alloc_tile addr = %c0_i64 : {tile('vec', 'f32', 16, 3)}"}, 20, "not a multiple of 32"),
    ("cube_tile_not_16", {17: f"  %al = pto.alloc_tile addr = %c0_i64 : {tile('left', 'bf16', 16, 60)}"}, 17, "multiple of 16"),
    ("v_row_exceeds_rows", {20: f"  %v = pto.alloc_tile addr = %c0_i64 : {tile('vec', 'f32', 16, 64, v_row=32)}"}, 20, "v_row=32 is outside 1..16"),
    ("dynamic_v_row_no_operand", {20: f"  %v = pto.alloc_tile addr = %c0_i64 : {tile('vec', 'f32', 16, 64, v_row='?')}"}, 20, "no valid_row operand"),
    ("static_v_row_with_operand", {20: f"  %v = pto.alloc_tile addr = %c0_i64 valid_row = %c16 : {VEC}"}, 20, "static v_row=16"),
    ("valid_row_const_too_big", {20: f"  %v = pto.alloc_tile addr = %c0_i64 valid_row = %c64 : {tile('vec', 'f32', 16, 64, v_row='?')}"}, 20, "valid_row = 64 is outside 1..16"),
    ("unknown_tile_loc", {20: "  %v = pto.alloc_tile : !pto.tile_buf<loc=l2, dtype=f32, rows=16, cols=64>"}, 20, "unknown tile location"),
    ("unknown_dtype", {20: "  %v = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f8, rows=16, cols=64>"}, 20, "unknown element type 'f8'"),
    ("missing_tile_field", {20: "  %v = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16>"}, 20, "missing 'cols'"),
    ("unknown_tile_field", {20: "  %v = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, foo=1>"}, 20, "unknown tile_buf field 'foo'"),
    ("malformed_view_shape", {11: "  %cv = pto.make_tensor_view %c, shape = [%c16, %c64], strides = [%c64, %c1] : !pto.tensor_view<3xx4xf32>"}, 11, "malformed shape"),
    ("view_bad_dtype", {11: "  %cv = pto.make_tensor_view %c, shape = [%c16, %c64], strides = [%c64, %c1] : !pto.tensor_view<axbxf32>"}, 11, "unknown element type 'axbxf32'"),
    ("unknown_type", {11: "  %cv = pto.make_tensor_view %c, shape = [%c16, %c64], strides = [%c64, %c1] : !pto.foo<1>"}, 11, "unknown type"),
    ("for_float_bound", {30: "  scf.for %i = %c0 to %s step %c16 {"}, 30, "upper bound %s"),
    ("if_on_index", {32: "    scf.if %i {"}, 32, "condition %i"),
    ("for_missing_step", {30: "  scf.for %i = %c0 to %n {"}, 30, "expected 'step'"),
    ("return_in_loop", {31: "    return"}, 31, "only allowed at the end of a function"),
    ("op_after_return", {44: "  return\n  pto.barrier <PIPE_ALL>"}, 45, "must be the last op"),
    ("cmpi_bad_predicate", {31: "    %first = arith.cmpi foo, %i, %c0 : index"}, 31, "predicate 'foo'"),
    ("binary_type_mix", {8: "  %c8192_i64 = arith.addi %c0_i64, %c0 : i64"}, 8, "operand %c0 is index but the result is i64"),
    ("float_op_on_index", {6: "  %c64 = arith.addf %c16, %c16 : index"}, 6, "needs float operands"),
    ("constant_type", {4: "  %c1 = arith.constant 1.5 : index"}, 4, "does not fit type index"),
    ("view_dtype_vs_ptr", {11: "  %cv = pto.make_tensor_view %c, shape = [%c16, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xbf16>"}, 11, "pointer %c is f32 but the view is bf16"),
    ("view_rank", {11: f"  %cv = pto.make_tensor_view %c, shape = [%c16], strides = [%c64, %c1] : {TV32}"}, 11, "rank 2 view with 1 sizes"),
    ("view_from_scalar", {11: f"  %cv = pto.make_tensor_view %n, shape = [%c16, %c64], strides = [%c64, %c1] : {TV32}"}, 11, "source %n"),
    ("bad_layout", {9: f"  %av = pto.make_tensor_view %a, shape = [%c16, %c64], strides = [%c64, %c1] {{layout = #pto.layout<zz>}} : {TV16}"}, 9, "bad layout"),
    ("partition_sizes", {12: f"  %pa = pto.partition_view %av, offsets = [%c0, %c0], sizes = [%c16, %c16] : {TV16} -> {PA}"}, 12, "sizes[1] is 16"),
    ("partition_dtype", {12: f"  %pa = pto.partition_view %av, offsets = [%c0, %c0], sizes = [%c16, %c64] : {TV16} -> {PC}"}, 12, "element types must match"),
    ("dps_with_result", {42: f"  %r = pto.tadd ins(%v, %w : {VEC}, {VEC}) outs(%w : {VEC})"}, 42, "does not produce a value"),
    ("missing_outs", {42: f"  pto.tadd ins(%v, %w : {VEC}, {VEC})"}, 42, "expected 'outs'"),
    ("unexpected_char", {43: "  pto.barrier <PIPE_ALL> ;"}, 43, "unexpected character"),
    ("unterminated_string", {43: '  pto.barrier <PIPE_ALL> loc("x.py:1:1)'}, 43, "unterminated string"),
    ("bad_param_type", {2: f"  func.func @k(%a: !pto.ptr<bf16>, %b: !pto.ptr<bf16>, %c: !pto.ptr<f32>, %n: index, %s: f32, %t: {VEC}) {{"}, 2, "kernel parameters"),
    ("bias_in_vec", {33: f"      pto.tmatmul.bias ins(%al, %br, %v : {LEFT}, {RIGHT}, {VEC}) outs(%acc : {ACC})"}, 33, "bias %v is in vec, expected bias"),
    ("tmov_mat_to_acc", {26: f"  pto.tmov ins(%am : {MAT_A}) outs(%acc : {ACC})"}, 26, "no data path Mat -> Acc"),
    ("tmov_acc_to_vec_a2a3", {40: f"  pto.tmov ins(%acc : {ACC}) outs(%v : {VEC})"}, 40, "no data path Acc -> Vec"),
    ("tinsert_into_vec", {40: f"  pto.tinsert ins(%acc, %c0, %c0 : {ACC}, index, index) outs(%v : {VEC})"}, 40, "dst %v is in vec, expected mat"),
    ("yield_at_top_level", {43: "  scf.yield"}, 43, "scf.yield"),
    ("attr_given_twice", {9: f"  %av = pto.make_tensor_view %a, shape = [%c16, %c64], strides = [%c64, %c1] {{layout = #pto.layout<nd>, layout = #pto.layout<nd>}} : {TV16}"}, 9, "given twice"),
    ("addr_is_float", {15: f"  %am = pto.alloc_tile addr = %s : {MAT_A}"}, 15, "addr %s is f32"),
    ("bad_loc_line", {43: '  pto.barrier <PIPE_ALL> loc("a.py":x:1)'}, 43, "expected an integer"),
    ("sync_with_result", {43: "  %x = pto.barrier <PIPE_ALL>"}, 43, "does not produce a value"),
    ("iter_args_without_results", {30: "  scf.for %i = %c0 to %n step %c16 iter_args(%q = %c0) -> (index) {"}, 30, "defines 1 value(s), got 0"),
    ("tload_from_tile", {22: f"  pto.tload ins(%v : {VEC}) outs(%am : {MAT_A})"}, 22, "src %v must be a GM partition view"),
    ("missing_ins_keyword", {42: f"  pto.tadd (%v, %w : {VEC}, {VEC}) outs(%w : {VEC})"}, 42, "expected 'ins'"),
    ("constant_without_result", {4: "  arith.constant 1 : index"}, 4, "defines 1 value(s), got 0"),
]


def build(changes: dict[int, str]) -> str:
    lines = list(BASE)
    for line_no, text in changes.items():
        lines[line_no - 1] = text
    return "\n".join(lines) + "\n"


def test_base_program_is_valid_and_round_trips():
    text = build({})
    module = load(text)
    assert print_module(module) == text
    assert parse(print_module(module)) == module


def test_enough_cases():
    assert len(CASES) >= 50
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("name,changes,line,phrase", CASES, ids=[c[0] for c in CASES])
def test_malformed_text_names_the_line(name, changes, line, phrase):
    text = build(changes)
    with pytest.raises(PtoError) as info:
        load(text, filename="case.pto")
    err = info.value
    assert isinstance(err, PtocError)
    assert err.loc is not None and err.loc.file == "case.pto"
    assert err.loc.line == line, str(err)
    assert phrase.lower() in str(err).lower(), str(err)
    assert str(err).startswith(f"case.pto:{line}:")
