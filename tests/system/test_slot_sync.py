"""InsertSync is slot-aware: in a loop whose body LowerPipelineToSlots turned into an
``iv % F`` if-cascade, each arm is synchronised with its own previous visit (F trips back)
instead of every trip with the previous one, so the slots overlap like the replicated
pipeline. Checked on the simulator for F = 2..4, static trip counts (multiples of F or
not) and a run-time trip count (zero included): exact results, no races, balanced flags."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.passes import MemoryPlanner
from ptoc.pto import parse
from ptoc.pto.sync_access import AccessResolver
from ptoc.pto.sync_slots import find_slot_cascades
from ptoc.backend import get_target

B, C = 16, 64


def program(stages: int | None, trips: int):
    """``trips`` blocks of load/exp/store, in a ``pl.pipeline(stage=stages)`` loop, or a
    plain loop when ``stages`` is None."""
    rows, depth = trips * B, stages or 1

    @pl.program
    class Exp:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[rows, C], pl.FP32],
              y: pl.Out[pl.Tensor[[rows, C], pl.FP32]]) -> pl.Tensor[[rows, C], pl.FP32]:
            for i in pl.pipeline(0, trips, 1, stage=depth):
                t = pl.load(x, [i * B, 0], [B, C])
                y = pl.store(pl.exp(t), [i * B, 0], y)
            return y

    return Exp


def run(prog, tmp_path, planner=MemoryPlanner.PTOAS):
    compiled = ir.compile(prog, tmp_path, memory_planner=planner, dump_passes=False)
    shape = tuple(compiled.entry.params[0].var.type.shape)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    y = np.zeros_like(x)
    result = compiled.run(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-5, atol=1e-6)
    assert not result.races
    return compiled, result.cycles


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("trips", [1, 3, 8])
def test_slotted_loops_are_exact_and_race_free(tmp_path, stages, trips):
    compiled, _ = run(program(stages, trips), tmp_path)
    module = parse(compiled.pto_text["k"])
    info = find_slot_cascades(module.kernel().body, AccessResolver(module.kernel(),
                                                                   get_target("a2a3")).const)
    assert not trips > 1 or set(info.loops.values()) == {stages}


def test_slots_overlap_like_the_replicated_pipeline(tmp_path):
    """8 trips of load/exp/store on 16x64 f32: 1099 cycles slotted before (every trip
    waited for the previous one at the if), 665 now; the serial loop takes 1099."""
    _, slotted = run(program(2, 8), tmp_path / "slots")
    _, serial = run(program(None, 8), tmp_path / "serial")
    _, replicated = run(program(2, 8), tmp_path / "rep", MemoryPlanner.PYPTO)
    assert slotted < 0.7 * serial
    assert slotted <= replicated


DYNAMIC = """\
module attributes {pto.target_arch = "a2a3"} {
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %n: index) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cF = arith.constant F : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %xv = pto.make_tensor_view %arg0, shape = [%c128, %c64], strides = [%c64, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
  %yv = pto.make_tensor_view %arg1, shape = [%c128, %c64], strides = [%c64, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %r = arith.remsi %i, %cF : index
    %row = arith.muli %i, %c16 : index
BODY  }
  return
  }
}
"""
ARM = """\
      %ADDR_in = arith.constant IN : i64
      %ADDR_out = arith.constant OUT : i64
      %tADDR = pto.alloc_tile addr = %ADDR_in valid_row = %c16 valid_col = %c64 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>
      %eADDR = pto.alloc_tile addr = %ADDR_out valid_row = %c16 valid_col = %c64 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>
      %pxADDR = pto.partition_view %xv, offsets = [%row, %c0], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x64xf32>
      pto.tload ins(%pxADDR : !pto.partition_tensor_view<16x64xf32>) outs(%tADDR : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
      pto.texp ins(%tADDR : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%eADDR : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
      %pyADDR = pto.partition_view %yv, offsets = [%row, %c0], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x64xf32>
      pto.tstore ins(%eADDR : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%pyADDR : !pto.partition_tensor_view<16x64xf32>)
"""


def cascade(stages: int) -> str:
    """Level-2 ``if r == 0 {arm 0} else if r == 1 {arm 1} ... else {arm F-1}``."""
    def arm(k: int) -> str:
        return ARM.replace("ADDR", f"a{k}").replace("IN", str(8192 * k)).replace(
            "OUT", str(8192 * k + 4096))
    text = ""
    for k in range(stages - 1):
        text += (f"    %k{k} = arith.constant {k} : index\n    %is{k} = arith.cmpi eq, %r, %k{k} : index\n"
                 f"    scf.if %is{k} {{\n{arm(k)}    }} else {{\n")
    text += arm(stages - 1) + "    }\n" * (stages - 1)
    return DYNAMIC.replace("F", str(stages)).replace("BODY", text)


@pytest.mark.parametrize("stages", [2, 3])
def test_run_time_trip_counts_including_zero(stages):
    from ptoc.sim import simulate

    text = cascade(stages)
    for n in (0, 1, stages, 2 * stages + 1, 8):
        x = np.random.default_rng(n).standard_normal((128, 64)).astype(np.float32)
        result = simulate(text, {"arg0": x, "arg1": np.zeros_like(x), "n": n})
        assert not result.races
        expected = np.zeros_like(x)
        expected[:16 * n] = np.exp(x[:16 * n])
        np.testing.assert_allclose(result.outputs["arg1"].reshape(128, 64), expected,
                                   rtol=1e-5, atol=1e-6)
