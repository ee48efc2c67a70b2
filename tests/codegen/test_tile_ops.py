"""One test per tile-op lowering, on small hand-allocated kernels written in DSL text.

Each test checks the instruction sequence and the operands that matter (operand order,
addresses, offsets/sizes, attributes); every output is also parsed and verified by
``ptoc.pto`` (``codegen_helpers.lower``).
"""

from __future__ import annotations

import pytest

from codegen_helpers import find, kernel_src, lower, opcodes, tensor, tile
from ptoc.dtypes import MemorySpace

A64 = f"a: {tensor([64, 64])}, b: {tensor([64, 64])}, out: {tensor([64, 64], out=True)}"


def _vec_kernel(body: str, params: str = A64, n_bufs: int = 3, **kw):
    allocs = {f"m{i}": ("Vec", 16384) for i in range(n_bufs)}
    return lower(kernel_src(params, body, allocs=allocs), **kw)


def _addr(kernel, value) -> int:
    for op in find(kernel, "pto.alloc_tile"):
        if op.results[0] == value or op.results[0].name == value.name:
            return int(op.attr("addr").name[1:].split("_")[0])
    raise AssertionError(value)


# ---- data movement ---------------------------------------------------------------------------

def test_load_is_alloc_then_partition_view_then_tload():
    _, k = _vec_kernel(f"""
        x: {tile([16, 64])} = pl.tile.load(a, [16, 0], [16, 64], target_memory=pl.Mem.Vec)
    """)
    assert opcodes(k)[-3:] == ["pto.alloc_tile", "pto.partition_view", "pto.tload"]
    (pv,) = find(k, "pto.partition_view")
    assert [v.name for v in pv.attr("offsets")] == ["c16_index", "c0_index"]
    assert [v.name for v in pv.attr("sizes")] == ["c16_index", "c64_index"]
    assert pv.ins[0].name == "a_view" and pv.results[0].name == "a_pview"
    assert pv.results[0].type.shape == (16, 64)
    (ld,) = find(k, "pto.tload")
    assert ld.ins == (pv.results[0],) and ld.outs[0].name == "x"
    (alloc,) = find(k, "pto.alloc_tile")
    assert alloc.attr("addr").name == "c0_i64"
    assert [alloc.attr("valid_row").name, alloc.attr("valid_col").name] == ["c16_index",
                                                                             "c64_index"]


def test_tensor_params_become_pointer_args_and_row_major_views():
    text, k = _vec_kernel("""
        pass_: pl.Scalar[pl.INDEX] = 0
    """, params=f"a: {tensor([8, 32, 64], 'BF16')}, n: pl.Scalar[pl.INDEX]")
    assert [str(p.type) for p in k.params] == ["!pto.ptr<bf16>", "index"]
    (view,) = find(k, "pto.make_tensor_view")
    assert [v.name for v in view.attr("shape")] == ["c8_index", "c32_index", "c64_index"]
    assert [v.name for v in view.attr("strides")] == ["c2048_index", "c64_index", "c1_index"]
    assert str(view.results[0].type) == "!pto.tensor_view<?x?x?xbf16>"
    assert "#pto.layout<nd>" in text


def test_store_of_vec_tile_and_dynamic_offsets_are_clamped():
    _, k = _vec_kernel(f"""
        for i, (o,) in pl.range(0, 64, 16, init_values=(out,)):
            x: {tile([16, 64])} = pl.tile.load(a, [i, 0], [16, 64], target_memory=pl.Mem.Vec)
            o1: {tensor([64, 64])} = pl.tile.store(x, [i, 0], o)
            r = pl.yield_(o1)
    """)
    (loop,) = find(k, "scf.for")
    ops = [op.opcode for op in loop.body]
    assert ops == ["pto.alloc_tile", "pto.partition_view", "pto.tload", "arith.maxsi",
                   "pto.partition_view", "pto.tstore"]
    load_pv, store_pv = find(k, "pto.partition_view")
    assert load_pv.attr("offsets")[0] == loop.iv  # loads are not clamped
    (mx,) = find(k, "arith.maxsi")
    assert mx.ins[0] == loop.iv and mx.ins[1].name == "c0_index"
    assert store_pv.attr("offsets")[0] == mx.results[0]
    assert store_pv.results[0].name == "o_pview"  # named after the tensor the store writes
    assert store_pv.ins[0].name == "out_view"     # ... but always a window of the parameter
    (st,) = find(k, "pto.tstore")
    assert st.ins[0].name == "x" and st.outs == store_pv.results


def test_move_is_tmov_and_extract_is_textract_with_row_col():
    src = kernel_src(f"a: {tensor([64, 64], 'BF16')}", f"""
        t: {tile([64, 64], 'Mat', 'm0', 0, 'BF16')} = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        l: {tile([64, 64], 'Left', 'm1', 0, 'BF16')} = pl.tile.move(t, target_memory=pl.Mem.Left)
        r: {tile([32, 64], 'Right', 'm2', 0, 'BF16')} = pl.tile.extract(t, 32, 0, [32, 64], target_memory=pl.Mem.Right)
    """, allocs={"m0": ("Mat", 8192), "m1": ("Left", 8192), "m2": ("Right", 4096)})
    text, k = lower(src)
    (mov,) = find(k, "pto.tmov")
    assert mov.ins[0].name == "t" and mov.outs[0].name == "l"
    assert mov.outs[0].type.loc is MemorySpace.Left
    (ex,) = find(k, "pto.textract")
    assert [v.name for v in ex.ins] == ["t", "c32_index", "c0_index"]
    assert ex.outs[0].type.loc is MemorySpace.Right
    assert "blayout=row_major, slayout=col_major, fractal=512" in text  # Right (ZN)
    assert "loc=mat, dtype=bf16, rows=64, cols=64, v_row=?, v_col=?, blayout=col_major, " \
           "slayout=row_major, fractal=512" in text
    assert 'pto.kernel_kind = #pto.kernel_kind<cube>' in text


# ---- cube ------------------------------------------------------------------------------------

def _cube(body: str, extra_allocs=None):
    allocs = {"ml": ("Left", 8192), "mr": ("Right", 8192), "mc": ("Acc", 16384),
              "mm": ("Mat", 32768)}
    allocs.update(extra_allocs or {})
    params = f"a: {tensor([64, 64], 'BF16')}, b: {tensor([64, 64], 'BF16')}, " \
             f"out: {tensor([64, 64], out=True)}"
    prologue = f"""
        am: {tile([64, 64], 'Mat', 'mm', 0, 'BF16')} = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        bm: {tile([64, 64], 'Mat', 'mm', 8192, 'BF16')} = pl.tile.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        al: {tile([64, 64], 'Left', 'ml', 0, 'BF16')} = pl.tile.extract(am, 0, 0, [64, 64], target_memory=pl.Mem.Left)
        br: {tile([64, 64], 'Right', 'mr', 0, 'BF16')} = pl.tile.extract(bm, 0, 0, [64, 64], target_memory=pl.Mem.Right)
    """
    return lower(kernel_src(params, prologue + body, allocs=allocs))


def test_matmul_then_fixpipe_store():
    _, k = _cube(f"""
        c: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul(al, br)
        o: {tensor([64, 64])} = pl.tile.store(c, [0, 0], out)
    """)
    (mm,) = find(k, "pto.tmatmul")
    assert [v.name for v in mm.ins] == ["al", "br"] and mm.outs[0].name == "c"
    assert mm.outs[0].type.fractal == 1024 and mm.outs[0].type.blayout == "col_major"
    (st,) = find(k, "pto.tstore")
    assert st.ins[0].name == "c"
    assert st.outs[0].type.dtype.pto_name == "f32"


def test_matmul_acc_is_in_place_on_the_accumulator():
    _, k = _cube(f"""
        c: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul(al, br)
        c2: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul_acc(c, al, br)
        o: {tensor([64, 64])} = pl.tile.store(c2, [0, 0], out)
    """)
    (acc,) = find(k, "pto.tmatmul.acc")
    assert [v.name for v in acc.ins] == ["c", "al", "br"] and acc.outs[0].name == "c"
    assert [op.results[0].name for op in find(k, "pto.alloc_tile")].count("c2") == 0
    assert find(k, "pto.tstore")[0].ins[0].name == "c"


def test_matmul_acc_with_runtime_init_cond_becomes_scf_if():
    _, k = _cube(f"""
        c0: {tile([64, 64], 'Acc', 'mc')} = pl.tile.create([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for ko, (c,) in pl.range(0, 256, 64, init_values=(c0,)):
            c1: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul_acc(c, al, br, init_cond=(ko == 0))
            r = pl.yield_(c1)
        o: {tensor([64, 64])} = pl.tile.store(r, [0, 0], out)
    """)
    (loop,) = find(k, "scf.for")
    cmp, branch = loop.body
    assert cmp.opcode == "arith.cmpi" and cmp.attr("predicate") == "eq"
    assert branch.opcode == "scf.if" and branch.cond == cmp.results[0]
    (fresh,), (accumulate,) = branch.then_body, branch.else_body
    assert fresh.opcode == "pto.tmatmul" and fresh.outs[0].name == "c0"
    assert accumulate.opcode == "pto.tmatmul.acc"
    assert [v.name for v in accumulate.ins] == ["c0", "al", "br"]
    assert find(k, "pto.tstore")[0].ins[0].name == "c0"  # the loop result is the carried buffer


@pytest.mark.parametrize("cond, opcode", [("True", "pto.tmatmul"), ("False", "pto.tmatmul.acc")])
def test_matmul_acc_with_constant_init_cond_keeps_one_arm(cond, opcode):
    _, k = _cube(f"""
        c: {tile([64, 64], 'Acc', 'mc')} = pl.tile.create([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        c1: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul_acc(c, al, br, init_cond={cond})
    """)
    assert not find(k, "scf.if")
    assert opcodes(k)[-1] == opcode


def test_matmul_bias():
    _, k = _cube(f"""
        bias_m: {tile([1, 64], 'Mat', 'mm', 16384)} = pl.tile.load(out, [0, 0], [1, 64], target_memory=pl.Mem.Mat)
        bias: {tile([1, 64], 'Bias', 'mb')} = pl.tile.move(bias_m, target_memory=pl.Mem.Bias)
        c: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul_bias(al, br, bias)
    """, {"mb": ("Bias", 256)})
    (mb,) = find(k, "pto.tmatmul.bias")
    assert [v.name for v in mb.ins] == ["al", "br", "bias"] and mb.outs[0].name == "c"


def test_assemble_acc_into_mat_is_tinsert_in_place():
    _, k = _cube(f"""
        c: {tile([64, 64], 'Acc', 'mc')} = pl.tile.matmul(al, br)
        s: {tile([64, 128], 'Mat', 'mm', 16384, 'BF16')} = pl.tile.create([64, 128], dtype=pl.BF16, target_memory=pl.Mem.Mat)
        s1: {tile([64, 128], 'Mat', 'mm', 16384, 'BF16')} = pl.tile.assemble(s, c, [0, 64])
        l2: {tile([64, 64], 'Left', 'ml', 0, 'BF16')} = pl.tile.extract(s1, 0, 64, [64, 64], target_memory=pl.Mem.Left)
    """)
    (ins,) = find(k, "pto.tinsert")
    assert [v.name for v in ins.ins] == ["c", "c0_index", "c64_index"]
    assert ins.outs[0].name == "s"
    assert find(k, "pto.textract")[-1].ins[0].name == "s"  # the result is the target, in place


# ---- vector ----------------------------------------------------------------------------------

@pytest.mark.parametrize("call, opcode, operands", [
    ("pl.tile.add(x, y)", "pto.tadd", ["x", "y"]),
    ("pl.tile.sub(x, y)", "pto.tsub", ["x", "y"]),
    ("pl.tile.mul(x, y)", "pto.tmul", ["x", "y"]),
    ("pl.tile.div(x, y)", "pto.tdiv", ["x", "y"]),
    ("pl.tile.maximum(x, y)", "pto.tmax", ["x", "y"]),
    ("pl.tile.minimum(x, y)", "pto.tmin", ["x", "y"]),
    ("pl.tile.adds(x, 2.0)", "pto.tadds", ["x", "c2p0_f32"]),
    ("pl.tile.muls(x, 0.5)", "pto.tmuls", ["x", "c0p5_f32"]),
    ("pl.tile.exp(x)", "pto.texp", ["x"]),
    ("pl.tile.neg(x)", "pto.tneg", ["x"]),
    ("pl.tile.relu(x)", "pto.trelu", ["x"]),
])
def test_elementwise_vector_ops(call, opcode, operands):
    _, k = _vec_kernel(f"""
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        y: {tile([16, 64], base='m1', offset=4096)} = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        z: {tile([16, 64], base='m2', offset=8192)} = {call}
    """)
    (op,) = find(k, opcode)
    assert [v.name for v in op.ins] == operands
    assert op.outs[0].name == "z"
    assert _addr(k, op.outs[0]) == 8192


@pytest.mark.parametrize("call, opcode, operands", [
    ("pl.tile.row_max(x, t)", "pto.trowmax", ["x", "t"]),
    ("pl.tile.row_sum(x, t)", "pto.trowsum", ["x", "t"]),
])
def test_row_reductions_take_a_scratch_tile(call, opcode, operands):
    _, k = _vec_kernel(f"""
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        t: {tile([16, 64], base='m1', offset=4096)} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        z: {tile([16, 1], base='m2', offset=8192)} = {call}
    """)
    (op,) = find(k, opcode)
    assert [v.name for v in op.ins] == operands
    # a [16, 1] result is a DN column vector: col_major, one contiguous 64-byte column
    out = op.outs[0].type
    assert (out.rows, out.cols, out.blayout) == (16, 1, "col_major")
    (alloc,) = [a for a in find(k, "pto.alloc_tile") if a.results[0].name == "z"]
    assert alloc.attr("valid_col").name == "c1_index"


@pytest.mark.parametrize("name, opcode", [("row_expand_sub", "pto.trowexpandsub"),
                                          ("row_expand_div", "pto.trowexpanddiv"),
                                          ("row_expand_expdif", "pto.trowexpandexpdif")])
def test_row_expand_ops(name, opcode):
    _, k = _vec_kernel(f"""
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        m: {tile([16, 1], base='m1', offset=4096)} = pl.tile.create([16, 1], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        z: {tile([16, 64], base='m2', offset=8192)} = pl.tile.{name}(x, m)
    """)
    (op,) = find(k, opcode)
    assert [v.name for v in op.ins] == ["x", "m"]


def test_cast_is_tcvt_with_the_rounding_mode():
    text, k = _vec_kernel(f"""
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        h: {tile([16, 64], 'Vec', 'm1', 4096, 'BF16')} = pl.tile.cast(x, pl.BF16, mode="rint")
    """)
    (cvt,) = find(k, "pto.tcvt")
    assert cvt.ins[0].name == "x" and cvt.outs[0].type.dtype.pto_name == "bf16"
    assert str(cvt.attr("rmode")) == "#pto.round_mode<rint>"
    assert "{rmode = #pto.round_mode<rint>}" in text


def test_create_is_only_an_alloc_and_full_is_texpands():
    _, k = _vec_kernel(f"""
        t: {tile([16, 64], base='m0')} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        f: {tile([16, 64], base='m1', offset=4096)} = pl.tile.full([16, 64], pl.FP32, 1.5)
    """)
    assert opcodes(k)[-3:] == ["pto.alloc_tile", "pto.alloc_tile", "pto.texpands"]
    (fill,) = find(k, "pto.texpands")
    assert fill.ins[0].name == "c1p5_f32" and fill.outs[0].name == "f"
    const = [op for op in k.body if op.opcode == "arith.constant"
             and op.results[0].name == "c1p5_f32"]
    assert const and const[0].attr("value") == 1.5


def test_slice_of_whole_rows_is_an_alias_at_the_window_address():
    _, k = _vec_kernel(f"""
        x: {tile([16, 64], base='m0', offset=4096)} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        s: {tile([4, 64], base='m0', offset=4096)} = pl.tile.slice(x, [4, 64], [8, 0])
        z: {tile([4, 64], base='m1', offset=0)} = pl.tile.exp(s)
    """)
    allocs = find(k, "pto.alloc_tile")
    assert [a.results[0].name for a in allocs] == ["x", "s", "z"]
    assert _addr(k, allocs[1].results[0]) == 4096 + 8 * 64 * 4
    assert [op.opcode for op in k.walk() if op.opcode.startswith("pto.t")] == ["pto.tload",
                                                                              "pto.texp"]


def test_partial_tile_keeps_its_valid_window_from_load_to_store():
    _, k = _vec_kernel(f"""
        x: {tile([16, 64])} = pl.tile.load(a, [48, 0], [16, 64], [10, 64], target_memory=pl.Mem.Vec)
        y: {tile([16, 64], base='m1', offset=4096)} = pl.tile.exp(x)
        o: {tensor([64, 64])} = pl.tile.store(x, [48, 0], out)
    """)
    x_alloc = find(k, "pto.alloc_tile")[0]
    assert x_alloc.attr("valid_row").name == "c10_index"
    assert x_alloc.results[0].type.rows == 16  # the buffer keeps its physical shape
    load_pv, store_pv = find(k, "pto.partition_view")
    assert load_pv.results[0].type.shape == (10, 64)
    assert store_pv.results[0].type.shape == (10, 64)


def test_an_atomic_store_carries_the_atomic_type():
    _, k = _vec_kernel(f"""
        x: {tile([16, 64])} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        o: {tensor([64, 64])} = pl.tile.store(x, [0, 0], out, atomic=pl.AtomicType.Add)
    """)
    (store,) = find(k, "pto.tstore")
    assert str(store.attr("atomicType")) == "#pto<atomic_type atomic_add>"


def test_assemble_vec_rows_is_a_window_alias_plus_tmov():
    _, k = _vec_kernel(f"""
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        y: {tile([32, 64], base='m1', offset=8192, size=8192)} = pl.tile.create([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        z: {tile([32, 64], base='m1', offset=8192, size=8192)} = pl.tile.assemble(y, x, [16, 0])
    """)
    (mov,) = find(k, "pto.tmov")
    window = mov.outs[0]
    assert mov.ins[0].name == "x" and (window.type.rows, window.type.cols) == (16, 64)
    assert _addr(k, window) == 8192 + 16 * 64 * 4


def test_assemble_into_a_separate_vec_buffer_copies_the_target_first():
    _, k = _vec_kernel(f"""
        x: {tile([16, 64], base='m0')} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        y: {tile([32, 64], base='m1', offset=8192, size=8192)} = pl.tile.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Vec)
        z: {tile([32, 64], base='m2', offset=16384, size=8192)} = pl.tile.assemble(y, x, [0, 0])
    """)
    copy, put = find(k, "pto.tmov")
    assert copy.ins[0].name == "y" and copy.outs[0].name == "z"
    assert put.ins[0].name == "x" and _addr(k, put.outs[0]) == 16384
