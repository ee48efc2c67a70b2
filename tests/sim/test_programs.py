"""Hand-written PTO covering int8 cube, bias, tinsert, scalar-parameter loops, iter_args."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ptoc.errors import PtocError
from ptoc.sim import simulate

T_L1_A = "!pto.tile_buf<loc=mat, dtype=i8, rows=32, cols=64, v_row=32, v_col=64, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
T_L1_B = "!pto.tile_buf<loc=mat, dtype=i8, rows=64, cols=32, v_row=64, v_col=32, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
T_L0A = "!pto.tile_buf<loc=left, dtype=i8, rows=32, cols=64, v_row=32, v_col=64, blayout=row_major, slayout=row_major, fractal=512, pad=0>"
T_L0B = "!pto.tile_buf<loc=right, dtype=i8, rows=64, cols=32, v_row=64, v_col=32, blayout=row_major, slayout=col_major, fractal=512, pad=0>"
T_ACC = "!pto.tile_buf<loc=acc, dtype=i32, rows=32, cols=32, v_row=32, v_col=32, blayout=col_major, slayout=row_major, fractal=1024, pad=0>"

INT8_LOOP = f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k(%arg0: !pto.ptr<i8>, %arg1: !pto.ptr<i8>, %arg2: !pto.ptr<i32>, %n: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %z = arith.constant 0 : i64
    %o = arith.constant 2048 : i64
    %av = pto.make_tensor_view %arg0, shape = [%c32, %c64], strides = [%c64, %c1] {{layout = #pto.layout<nd>}} : !pto.tensor_view<?x?xi8>
    %bv = pto.make_tensor_view %arg1, shape = [%c64, %c32], strides = [%c32, %c1] {{layout = #pto.layout<nd>}} : !pto.tensor_view<?x?xi8>
    %cv = pto.make_tensor_view %arg2, shape = [%c32, %c32], strides = [%c32, %c1] {{layout = #pto.layout<nd>}} : !pto.tensor_view<?x?xi32>
    %a1 = pto.alloc_tile addr = %z : {T_L1_A}
    %b1 = pto.alloc_tile addr = %o : {T_L1_B}
    %a0 = pto.alloc_tile addr = %z : {T_L0A}
    %b0 = pto.alloc_tile addr = %z : {T_L0B}
    %acc = pto.alloc_tile addr = %z : {T_ACC}
    %pa = pto.partition_view %av, offsets = [%c0, %c0], sizes = [%c32, %c64] : !pto.tensor_view<?x?xi8> -> !pto.partition_tensor_view<32x64xi8>
    %pb = pto.partition_view %bv, offsets = [%c0, %c0], sizes = [%c64, %c32] : !pto.tensor_view<?x?xi8> -> !pto.partition_tensor_view<64x32xi8>
    pto.tload ins(%pa : !pto.partition_tensor_view<32x64xi8>) outs(%a1 : {T_L1_A})
    pto.tload ins(%pb : !pto.partition_tensor_view<64x32xi8>) outs(%b1 : {T_L1_B})
    pto.textract ins(%a1, %c0, %c0 : {T_L1_A}, index, index) outs(%a0 : {T_L0A})
    pto.textract ins(%b1, %c0, %c0 : {T_L1_B}, index, index) outs(%b0 : {T_L0B})
    %cnt = scf.for %i = %c0 to %n step %c1 iter_args(%k = %c0) -> (index) {{
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {{
        pto.tmatmul ins(%a0, %b0 : {T_L0A}, {T_L0B}) outs(%acc : {T_ACC})
      }} else {{
        pto.tmatmul.acc ins(%acc, %a0, %b0 : {T_ACC}, {T_L0A}, {T_L0B}) outs(%acc : {T_ACC})
      }}
      %k2 = arith.addi %k, %c1 : index
      scf.yield %k2 : index
    }}
    %pc = pto.partition_view %cv, offsets = [%c0, %c0], sizes = [%c32, %c32] : !pto.tensor_view<?x?xi32> -> !pto.partition_tensor_view<32x32xi32>
    pto.tstore ins(%acc : {T_ACC}) outs(%pc : !pto.partition_tensor_view<32x32xi32>)
    return
  }}
}}
"""


@pytest.mark.parametrize("n", [1, 3])
def test_int8_matmul_accumulates_exactly_over_a_scalar_parameter_loop(n):
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 32)).astype(np.int8)
    res = simulate(INT8_LOOP, {"arg0": a, "arg1": b, "arg2": np.zeros((32, 32), np.int32), "n": n})
    want = n * (a.astype(np.int64) @ b.astype(np.int64))
    np.testing.assert_array_equal(res.outputs["arg2"], want)
    assert len(res.on_pipe("M")) == n
    assert res.sync_level == 2 and res.races == []      # insert_sync synchronised it


def test_int8_mad_cost_uses_the_int8_k_fractal():
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 4, (32, 64)).astype(np.int8)
    b = rng.integers(-4, 4, (64, 32)).astype(np.int8)
    res = simulate(INT8_LOOP, {"arg0": a, "arg1": b, "arg2": np.zeros((32, 32), np.int32), "n": 1})
    # kt = 32 B / 1 B = 32: 21 + 2 * ceil(64/32) * 2 = 29
    assert res.on_pipe("M")[0].duration == 21 + 2 * 2 * 2


def test_scalar_parameter_must_be_an_integer_for_loop_bounds():
    z = np.zeros((32, 64), np.int8)
    with pytest.raises(PtocError, match="upper bound %n"):
        simulate(INT8_LOOP, {"arg0": z, "arg1": z.T.copy(), "arg2": np.zeros((32, 32), np.int32),
                             "n": 1.5})


T_F32ACC = "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=32, v_row=16, v_col=32, blayout=col_major, slayout=row_major, fractal=1024, pad=0>"
T_MAT_OUT = "!pto.tile_buf<loc=mat, dtype=bf16, rows=32, cols=64, v_row=32, v_col=64, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
T_A = "!pto.tile_buf<loc=left, dtype=bf16, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=row_major, fractal=512, pad=0>"
T_B = "!pto.tile_buf<loc=right, dtype=bf16, rows=16, cols=32, v_row=16, v_col=32, blayout=row_major, slayout=col_major, fractal=512, pad=0>"
T_MA = "!pto.tile_buf<loc=mat, dtype=bf16, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
T_MB = "!pto.tile_buf<loc=mat, dtype=bf16, rows=16, cols=32, v_row=16, v_col=32, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
T_MBIAS = "!pto.tile_buf<loc=mat, dtype=f32, rows=1, cols=32, v_row=1, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
T_BIAS = "!pto.tile_buf<loc=bias, dtype=f32, rows=1, cols=32, v_row=1, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>"

BIAS_INSERT = f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k(%arg0: !pto.ptr<bf16>, %arg1: !pto.ptr<bf16>, %arg2: !pto.ptr<f32>, %arg3: !pto.ptr<bf16>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %z = arith.constant 0 : i64
    %o1 = arith.constant 512 : i64
    %o2 = arith.constant 1536 : i64
    %o3 = arith.constant 2048 : i64
    %av = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] {{layout = #pto.layout<nd>}} : !pto.tensor_view<?x?xbf16>
    %bv = pto.make_tensor_view %arg1, shape = [%c16, %c32], strides = [%c32, %c1] {{layout = #pto.layout<nd>}} : !pto.tensor_view<?x?xbf16>
    %biv = pto.make_tensor_view %arg2, shape = [%c1, %c32], strides = [%c32, %c1] {{layout = #pto.layout<nd>}} : !pto.tensor_view<?x?xf32>
    %ov = pto.make_tensor_view %arg3, shape = [%c32, %c64], strides = [%c64, %c1] {{layout = #pto.layout<nd>}} : !pto.tensor_view<?x?xbf16>
    %ma = pto.alloc_tile addr = %z : {T_MA}
    %mb = pto.alloc_tile addr = %o1 : {T_MB}
    %mbias = pto.alloc_tile addr = %o2 : {T_MBIAS}
    %mout = pto.alloc_tile addr = %o3 : {T_MAT_OUT}
    %a = pto.alloc_tile addr = %z : {T_A}
    %b = pto.alloc_tile addr = %z : {T_B}
    %bias = pto.alloc_tile addr = %z : {T_BIAS}
    %acc = pto.alloc_tile addr = %z : {T_F32ACC}
    %pa = pto.partition_view %av, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xbf16> -> !pto.partition_tensor_view<16x16xbf16>
    %pb = pto.partition_view %bv, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xbf16> -> !pto.partition_tensor_view<16x32xbf16>
    %pbi = pto.partition_view %biv, offsets = [%c0, %c0], sizes = [%c1, %c32] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x32xf32>
    pto.tload ins(%pa : !pto.partition_tensor_view<16x16xbf16>) outs(%ma : {T_MA})
    pto.tload ins(%pb : !pto.partition_tensor_view<16x32xbf16>) outs(%mb : {T_MB})
    pto.tload ins(%pbi : !pto.partition_tensor_view<1x32xf32>) outs(%mbias : {T_MBIAS})
    pto.textract ins(%ma, %c0, %c0 : {T_MA}, index, index) outs(%a : {T_A})
    pto.textract ins(%mb, %c0, %c0 : {T_MB}, index, index) outs(%b : {T_B})
    pto.tmov ins(%mbias : {T_MBIAS}) outs(%bias : {T_BIAS})
    pto.tmatmul.bias ins(%a, %b, %bias : {T_A}, {T_B}, {T_BIAS}) outs(%acc : {T_F32ACC})
    pto.tinsert ins(%acc, %c16, %c32 : {T_F32ACC}, index, index) outs(%mout : {T_MAT_OUT})
    %po = pto.partition_view %ov, offsets = [%c0, %c0], sizes = [%c32, %c64] : !pto.tensor_view<?x?xbf16> -> !pto.partition_tensor_view<32x64xbf16>
    return
  }}
}}
"""


def test_bias_matmul_and_tinsert_round_half_to_even_into_mat():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((16, 32)).astype(ml_dtypes.bfloat16)
    bias = rng.standard_normal((1, 32)).astype(np.float32)
    res = simulate(BIAS_INSERT, {"arg0": a, "arg1": b, "arg2": bias,
                                 "arg3": np.zeros((32, 64), ml_dtypes.bfloat16)})
    names = [r.name for r in res.instructions if r.kind == "work"]
    assert names[-2:] == ["pto.tmatmul.bias", "pto.tinsert"]
    assert res.on_pipe("FIX")[0].name == "pto.tinsert"
    assert res.on_pipe("MTE1")[-1].name == "pto.tmov"      # Mat -> Bias on MTE1


def test_tinsert_writes_the_window_of_the_mat_tile():
    from ptoc.pto import parse
    from ptoc.sim.core.issue import ScalarUnit, bind_params
    from ptoc.sim.core.memory import BufferMemory
    from ptoc.backend import get_profile, get_target
    from ptoc.sim.execute import execute
    from ptoc.sim.schedule import schedule
    from ptoc.dtypes import MemorySpace

    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((16, 32)).astype(ml_dtypes.bfloat16)
    bias = rng.standard_normal((1, 32)).astype(np.float32)
    module = parse(BIAS_INSERT)
    kern = module.kernel()
    env = bind_params(kern, {"arg0": a, "arg1": b, "arg2": bias,
                             "arg3": np.zeros((32, 64), ml_dtypes.bfloat16)}, "<t>").env
    tgt = get_target("a2a3")
    mem = BufferMemory(dict(tgt.capacities), 32)
    instrs = ScalarUnit(kern, env, tgt, get_profile("a2a3-device"), mem,
                        mad_mode="reference").run()
    execute(instrs, schedule(instrs, serial=True), timed=False)
    mat = mem.buffers[MemorySpace.Mat][2048:2048 + 32 * 64 * 2].view(ml_dtypes.bfloat16)
    mat = mat.reshape(32, 64).astype(np.float32)
    want = (a.astype(np.float32) @ b.astype(np.float32) + bias).astype(ml_dtypes.bfloat16)
    np.testing.assert_allclose(mat[16:, 32:], want.astype(np.float32), rtol=1e-2, atol=1e-2)
    assert not mat[:16].any() and not mat[:, :32].any()
