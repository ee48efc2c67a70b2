"""ConvertTensorToTileOps: tensor-level kernels become Mat/Vec loads, tile ops and stores."""

import pytest

import ptoc.language as pl
from ptoc.errors import PassError
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext, auto_tile_matmul_l0, convert_tensor_to_tile_ops

HEADER = "import ptoc.language as pl\n\n@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"


def kernel(params: str, ret: str, body: str) -> str:
    return HEADER + f"    def k(self, {params}) -> {ret}:\n" + body


def convert(src: str):
    with PassContext():
        return convert_tensor_to_tile_ops()(pl.parse_program(src))


MM_PARAMS = ("a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[128, 64], pl.BF16], "
             "out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]")
MM_RET = "pl.Tensor[[64, 64], pl.FP32]"


def test_tensor_matmul_becomes_mat_loads_a_tile_matmul_and_a_store():
    before = kernel(MM_PARAMS, MM_RET, """\
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        out[:] = c
        return out
""")
    expected = kernel(MM_PARAMS, MM_RET, """\
        am: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [128, 64], [128, 64], target_memory=pl.Mem.Mat)
        c: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(am, bm)
        out2: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out2
""")
    assert_structural_equal(convert(before), pl.parse_program(expected))


def test_narrow_out_dtype_is_a_rint_cast_of_the_accumulator():
    params = MM_PARAMS.replace("pl.Out[pl.Tensor[[64, 64], pl.FP32]]", "pl.Out[pl.Tensor[[64, 64], pl.BF16]]")
    ret = "pl.Tensor[[64, 64], pl.BF16]"
    out = convert(kernel(params, ret, """\
        c = pl.matmul(a, b, out_dtype=pl.BF16)
        out[:] = c
        return out
"""))
    expected = kernel(params, ret, """\
        am: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [128, 64], [128, 64], target_memory=pl.Mem.Mat)
        c: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(am, bm)
        cb: pl.Tile[[64, 64], pl.BF16] = pl.tile.cast(c, pl.BF16, mode="rint")
        out2: pl.Tensor[[64, 64], pl.BF16] = pl.tile.store(cb, [0, 0], out)
        return out2
""")
    assert_structural_equal(out, pl.parse_program(expected))


def test_matmul_acc_accumulates_into_the_earlier_matmul_tile():
    params = MM_PARAMS.replace("out:", "a2: pl.Tensor[[64, 128], pl.BF16], b2: pl.Tensor[[128, 64], pl.BF16], out:")
    out = convert(kernel(params, MM_RET, """\
        c = pl.matmul(a, b)
        c2 = pl.matmul_acc(c, a2, b2)
        out[:] = c2
        return out
"""))
    text = out.as_python()
    assert "pl.tile.matmul_acc(c, a2_mat, b2_mat)" in text
    assert "pl.tile.store(c2, [0, 0], out)" in text


def test_elementwise_ops_load_vec_tiles_and_slices_are_views_of_the_base_tensor():
    params = ("x: pl.Tensor[[64, 128], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32], "
              "out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]")
    ret = "pl.Tensor[[32, 64], pl.FP32]"
    out = convert(kernel(params, ret, """\
        e = pl.slice(x, [32, 64], [32, 64])
        d = pl.add(pl.exp(e), y)
        f = pl.muls(d, 2.0)
        out[:] = f
        return out
"""))
    expected = kernel(params, ret, """\
        ev: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [32, 64], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(ev)
        yv: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(y, [0, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        d: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(t, yv)
        f: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.muls(d, 2.0)
        out2: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(f, [0, 0], out)
        return out2
""")
    assert_structural_equal(out, pl.parse_program(expected))


def test_a_tensor_read_twice_is_loaded_once_per_space():
    params = "x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]"
    out = convert(kernel(params, "pl.Tensor[[32, 64], pl.FP32]", """\
        d = pl.mul(x, x)
        out[:] = d
        return out
"""))
    assert out.as_python().count("pl.tile.load(") == 1


def test_vector_op_on_a_matmul_result_moves_the_accumulator_to_vec():
    params = MM_PARAMS.replace("out:", "x: pl.Tensor[[64, 64], pl.FP32], out:")
    out = convert(kernel(params, MM_RET, """\
        c = pl.matmul(a, b)
        d = pl.add(c, x)
        out[:] = d
        return out
"""))
    text = out.as_python()
    assert "pl.tile.move(c, target_memory=pl.Mem.Vec)" in text
    assert "pl.tile.add(c_vec, x_vec)" in text


def test_tensor_cast_becomes_a_tile_cast():
    params = "x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.BF16]]"
    out = convert(kernel(params, "pl.Tensor[[32, 64], pl.BF16]", """\
        d = pl.cast(x, pl.BF16, mode="rint")
        out[:] = d
        return out
"""))
    assert 'pl.tile.cast(x_vec, pl.BF16, mode="rint")' in out.as_python()


def test_tensor_ops_inside_a_loop_load_per_iteration():
    params = "x: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]"
    ret = "pl.Tensor[[128, 64], pl.FP32]"
    out = convert(kernel(params, ret, """\
        for i, (o,) in pl.range(0, 128, 32, init_values=(out,)):
            s = pl.slice(x, [32, 64], [i, 0])
            e = pl.exp(s)
            o2 = pl.assemble(o, e, [i, 0])
            o3 = pl.yield_(o2)
        return o3
"""))
    expected = kernel(params, ret, """\
        for i, (o,) in pl.range(0, 128, 32, init_values=(out,)):
            sv: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
            e: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(sv)
            o2: pl.Tensor[[128, 64], pl.FP32] = pl.tile.store(e, [i, 0], o)
            o3: pl.Tensor[[128, 64], pl.FP32] = pl.yield_(o2)
        return o3
""")
    assert_structural_equal(out, pl.parse_program(expected))


def test_orchestration_and_tile_level_kernels_are_untouched():
    src = ("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.InCore)\n"
           f"    def k(self, {MM_PARAMS}) -> {MM_RET}:\n"
           "        am = pl.load(a, [0, 0], [64, 128], target_memory=pl.Mem.Mat)\n"
           "        bm = pl.load(b, [0, 0], [128, 64], target_memory=pl.Mem.Mat)\n"
           "        c = pl.matmul(am, bm)\n        out = pl.store(c, [0, 0], out)\n        return out\n"
           "    @pl.function(type=pl.FunctionType.Orchestration)\n"
           f"    def main(self, {MM_PARAMS}) -> {MM_RET}:\n"
           "        out = self.k(a, b, out)\n        return out\n")
    prog = pl.parse_program(src)
    with PassContext():
        assert convert_tensor_to_tile_ops()(prog) is prog


def test_converted_then_auto_tiled_grid():
    """A tensor-level 512x64x512 kernel: conversion, then the L0 grid at the store."""
    params = ("a: pl.Tensor[[512, 64], pl.BF16], b: pl.Tensor[[64, 512], pl.BF16], "
              "out: pl.Out[pl.Tensor[[512, 512], pl.FP32]]")
    src = kernel(params, "pl.Tensor[[512, 512], pl.FP32]", """\
        c = pl.matmul(a, b)
        out[:] = c
        return out
""")
    with PassContext():
        out = auto_tile_matmul_l0()(convert_tensor_to_tile_ops()(pl.parse_program(src)))
    text = out.as_python()
    assert "pl.tile.load(a, [0, 0], [512, 64], [512, 64], target_memory=pl.Mem.Mat)" in text
    assert text.count("pl.pipeline(") == 2 and "pl.tile.store(c_c, " in text


def test_b_trans_reads_the_stored_operand_through_a_transposed_view():
    params = ("a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[64, 128], pl.BF16], "
              "out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]")
    before = kernel(params, MM_RET, """\
        c = pl.matmul(a, b, b_trans=True)
        out[:] = c
        return out
""")
    expected = kernel(params, MM_RET, """\
        am: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
        bt: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat, pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major)] = pl.tile.transpose_view(bm)
        c: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(am, bt)
        out2: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out2
""")
    assert_structural_equal(convert(before), pl.parse_program(expected))


@pytest.mark.parametrize("body,message", [
    ("        c = pl.matmul_acc(out, a, b)\n        out[:] = c\n        return out\n",
     "not the result of a matmul"),
])
def test_unsupported_forms_raise_with_a_fix(body, message):
    params = MM_PARAMS if "b_trans" not in body else MM_PARAMS.replace(
        "b: pl.Tensor[[128, 64], pl.BF16]", "b: pl.Tensor[[64, 128], pl.BF16]")
    with pytest.raises(PassError) as err:
        convert(kernel(params, MM_RET, body))
    assert message in str(err.value) and "fix:" in str(err.value)


def test_a_returned_on_chip_value_is_stored_into_an_added_out_parameter():
    """The kernel gains ``ret0_out`` and stores the tile there; its caller allocates it."""
    params = "x: pl.Tensor[[32, 64], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32]"
    ret = "pl.Tensor[[32, 64], pl.FP32]"
    host = """\
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
{call}
        return s
"""
    before = kernel(params, ret, """\
        s = pl.sub(x, y)
        return s
""") + host.format(call="        s = self.k(x, y)")
    expected = kernel(params + ", ret0_out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]", ret, """\
        xv: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        yv: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(y, [0, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        s: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.sub(xv, yv)
        ret0_store: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(s, [0, 0], ret0_out)
        return ret0_store
""") + host.format(call="""\
        ret0_out: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
        s = self.k(x, y, ret0_out)""")
    assert_structural_equal(convert(before), pl.parse_program(expected))


def test_an_out_parameter_rebound_to_a_kernel_result_is_an_error():
    """``out = <value computed in a kernel>`` would leave the caller's tensor unwritten."""
    src = kernel("x: pl.Tensor[[32, 64], pl.FP32]", "pl.Tensor[[32, 64], pl.FP32]", """\
        e = pl.exp(x)
        return e
""") + """\
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        out = self.k(x)
        return out
"""
    with pytest.raises(PassError) as err:
        convert(src)
    assert "output parameter 'out' of 'main'" in str(err.value) and "out[:] =" in str(err.value)


E2E = """\
import ptoc.language as pl

@pl.program
class TensorLevel:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[64, 256], pl.FP32], out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        c = pl.matmul(a, b)
        out[:] = c
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def vec(self, x: pl.Tensor[[64, 128], pl.FP32], out2: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        e = pl.slice(x, [32, 64], [32, 64])
        d = pl.add(pl.exp(e), e)
        out2[:] = d
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[64, 256], pl.FP32], x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[256, 256], pl.FP32]], out2: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        out = self.mm(a, b, out)
        out2 = self.vec(x, out2)
        return out
"""


@pytest.mark.parametrize("flag", [False, True], ids=["dbc_off", "dbc_on"])
def test_tensor_level_kernels_compile_and_run_on_the_simulator(tmp_path, flag):
    """Tensor-level kernels through the whole default pipeline (an L0 grid for the 256 KiB
    f32 output), simulated with zero races against numpy."""
    import numpy as np

    from ptoc import ir
    from ptoc.runtime import RunConfig

    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 64)).astype(np.float32)
    b = rng.standard_normal((64, 256)).astype(np.float32)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    out = np.zeros((256, 256), np.float32)
    out2 = np.zeros((32, 64), np.float32)
    compiled = ir.compile(pl.parse_program(E2E), tmp_path, dump_passes=False,
                          enable_pypto_l0c_double_buffer=flag)
    result = compiled.run(a, b, x, out, out2, config=RunConfig(rtol=1e-3, atol=1e-3))
    assert not result.races
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out2, np.exp(x[32:, 64:]) + x[32:, 64:], rtol=1e-5, atol=1e-5)


def test_a_group_wrapper_forwards_the_added_out_parameter_to_its_kernel():
    kernel_src = """\
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 64], pl.FP32]{extra}) -> pl.Tensor[[32, 64], pl.FP32]:
{body}
"""
    wrapper_src = """\
    @pl.function(type=pl.FunctionType.Group)
    def g(self, x: pl.Tensor[[32, 64], pl.FP32]{extra}) -> pl.Tensor[[32, 64], pl.FP32]:
        e: pl.Tensor[[32, 64], pl.FP32] = self.k(x{args})
        return e
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
{create}        e: pl.Tensor[[32, 64], pl.FP32] = self.g(x{args})
        return e
"""
    out = ", ret0_out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]"
    before = HEADER.rsplit("    @pl.function", 1)[0] + kernel_src.format(extra="", body="""\
        e: pl.Tensor[[32, 64], pl.FP32] = pl.exp(x)
        return e""") + wrapper_src.format(extra="", args="", create="")
    expected = HEADER.rsplit("    @pl.function", 1)[0] + kernel_src.format(extra=out, body="""\
        xv: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        e: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(xv)
        ret0_store: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(e, [0, 0], ret0_out)
        return ret0_store""") + wrapper_src.format(extra=out, args=", ret0_out", create="""\
        ret0_out: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
""")
    assert_structural_equal(convert(before), pl.parse_program(expected))


ACC_PARAMS = ("a: pl.Tensor[[16, 256], pl.FP32], w: pl.Tensor[[256, 64], pl.FP32], "
              "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
ACC_RET = "pl.Tensor[[16, 64], pl.FP32]"


def test_a_created_tensor_accumulated_in_a_loop_becomes_a_carried_acc_tile():
    """PyPTO's K loop over ``acc = pl.create_tensor(...)``: the create becomes an Acc
    ``tile.create`` (no contents) carried by the loop and the if, as PyPTO lowers it."""
    before = kernel(ACC_PARAMS, ACC_RET, """\
        acc = pl.create_tensor([16, 64], dtype=pl.FP32)
        for kb in pl.pipeline(0, 4, stage=2):
            k0 = kb * 64
            if k0 == 0:
                acc = pl.matmul(a[:, k0:k0 + 64], w[k0:k0 + 64, :], out_dtype=pl.FP32)
            else:
                acc = pl.matmul_acc(acc, a[:, k0:k0 + 64], w[k0:k0 + 64, :])
        out = pl.assemble(out, acc, [0, 0])
        return out
""")
    expected = kernel(ACC_PARAMS, ACC_RET, """\
        acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for kb, (acc_1,) in pl.pipeline(4, stage=2, init_values=(acc,)):
            k0: pl.Scalar[pl.INDEX] = kb * 64
            if k0 == 0:
                am: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, k0], [16, 64], [16, 64], target_memory=pl.Mem.Mat)
                wm: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(w, [k0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
                acc_2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(am, wm)
                acc_3: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(acc_2)
            else:
                am2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, k0], [16, 64], [16, 64], target_memory=pl.Mem.Mat)
                wm2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(w, [k0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
                acc_4: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc_1, am2, wm2)
                acc_3: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(acc_4)
            acc_5: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(acc_3)
        out2: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(acc_5, [0, 0], out)
        return out2
""")
    assert_structural_equal(convert(before), pl.parse_program(expected))


def test_a_created_tensor_used_as_ddr_stays_a_tensor():
    """Only an accumulating use turns a create into a tile: assembling into it keeps it DDR."""
    out = convert(kernel(ACC_PARAMS, ACC_RET, """\
        t = pl.create_tensor([16, 64], dtype=pl.FP32)
        t = pl.assemble(t, pl.exp(a[:, 0:64]), [0, 0])
        out = pl.assemble(out, pl.add(t, t), [0, 0])
        return out
""")).as_python()
    assert "pl.tensor.create([16, 64]" in out and "tile.create" not in out


def test_a_created_tensor_accumulated_into_directly_becomes_an_empty_acc_tile():
    """Outside a loop too: the accumulation reads a tile with no contents, which the
    simulator refuses at run time (tests/system/test_created_accumulator.py)."""
    out = convert(kernel(ACC_PARAMS, ACC_RET, """\
        acc = pl.create_tensor([16, 64], dtype=pl.FP32)
        acc = pl.matmul_acc(acc, a[:, 0:64], w[0:64, :])
        out = pl.assemble(out, acc, [0, 0])
        return out
""")).as_python()
    assert "pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)" in out
    assert "pl.tile.matmul_acc(acc, " in out and "tensor.create" not in out
