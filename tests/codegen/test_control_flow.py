"""Loops, branches, scalars and the static folding codegen applies before emitting."""

from __future__ import annotations

from codegen_helpers import find, kernel_src, lower, opcodes, tensor, tile
from ptoc.pto.model import ForOp, IfOp

PARAMS = f"a: {tensor([64, 64])}, out: {tensor([64, 64], out=True)}, n: pl.Scalar[pl.INDEX]"
ALLOCS = {"m0": ("Vec", 4096), "m1": ("Vec", 4096), "m2": ("Vec", 4096)}

LOOP_WITH_BRANCH = f"""
x0: {tile([16, 64], base='m0')} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
for i, (s, x) in pl.range(0, n, 16, init_values=(0, x0)):
    y: {tile([16, 64], base='m1', offset=4096)} = pl.tile.load(a, [i, 0], [16, 64], target_memory=pl.Mem.Vec)
    x1: {tile([16, 64], base='m2', offset=8192)} = pl.tile.add(x, y)
    s1: pl.Scalar[pl.INDEX] = s + i * 2
    if i < 32:
        t: pl.Scalar[pl.INDEX] = s1 + 1
        z: {tile([16, 64], base='m0')} = pl.tile.exp(x1)
        tt, zz = pl.yield_(t, z)
    else:
        z2: {tile([16, 64], base='m0')} = pl.tile.neg(x1)
        tt, zz = pl.yield_(s1, z2)
    r1, r2 = pl.yield_(tt, zz)
o: {tensor([64, 64])} = pl.tile.store(r2, [0, 0], out)
"""


def _lower(body, **kw):
    return lower(kernel_src(PARAMS, body, allocs=ALLOCS), **kw)


def test_scalar_params_are_kernel_args_and_loop_bounds():
    _, k = _lower(LOOP_WITH_BRANCH)
    assert [p.name for p in k.params] == ["arg0", "arg1", "arg2"]
    assert str(k.params[2].type) == "index"
    (loop,) = find(k, "scf.for")
    assert loop.upper == k.params[2]
    assert loop.lower.name == "c0_index" and loop.step.name == "c16_index"


def test_scalar_iter_args_become_scf_iter_args_results_and_yield():
    _, k = _lower(LOOP_WITH_BRANCH)
    (loop,) = find(k, "scf.for")
    (arg, init), = loop.iter_args
    assert arg.name == "s" and init.name == "c0_index"
    assert [r.name for r in loop.results] == ["r1"]
    assert loop.body[-1].opcode == "scf.yield" and loop.body[-1].values[0].name == "tt"
    mul, add = find(k, "arith.muli")[0], find(k, "arith.addi")[0]
    assert mul.ins[0] == loop.iv and mul.ins[1].name == "c2_index"
    assert add.results[0].name == "s1" and add.ins == (arg, mul.results[0])


def test_tile_iter_args_are_buffers_not_ssa_values():
    _, k = _lower(LOOP_WITH_BRANCH)
    (loop,) = find(k, "scf.for")
    assert len(loop.iter_args) == 1  # only the scalar is carried as an SSA value
    (add,) = find(k, "pto.tadd")
    assert add.ins[0].name == "x0"  # the carried tile is the initial value's buffer
    (st,) = find(k, "pto.tstore")
    assert st.ins[0].name == "x0"  # ... and so is the loop's result


def test_scf_if_with_scalar_results_and_hoisted_tile_result():
    text, k = _lower(LOOP_WITH_BRANCH)
    (branch,) = find(k, "scf.if")
    assert isinstance(branch, IfOp) and branch.has_else
    assert [r.name for r in branch.results] == ["tt"]
    assert branch.then_body[-1].values[0].name == "t"
    assert branch.else_body[-1].values[0].name == "s1"
    cmp = find(k, "arith.cmpi")[0]
    assert cmp.attr("predicate") == "slt" and branch.cond == cmp.results[0]
    # the tile result of the branch is allocated before everything else, at the function's loc
    first_alloc = find(k, "pto.alloc_tile")[0]
    assert first_alloc.results[0].name == "zz"
    assert first_alloc.loc.line == 6  # the `def kernel` line of the DSL source
    assert k.body.index(first_alloc) < k.body.index(find(k, "scf.for")[0])


def test_without_addresses_tiles_of_one_memref_are_one_buffer():
    text, k = _lower(LOOP_WITH_BRANCH, with_addresses=False)
    assert "addr =" not in text
    allocs = [a.results[0].name for a in find(k, "pto.alloc_tile")]
    assert allocs == ["zz", "y", "x1"]  # x0, z, z2 and the branch result share m0
    (exp,), (neg,) = find(k, "pto.texp"), find(k, "pto.tneg")
    assert exp.outs[0].name == neg.outs[0].name == "zz"
    assert find(k, "pto.tadd")[0].ins[0].name == "zz"
    assert find(k, "pto.tstore")[0].ins[0].name == "zz"


def test_yield_of_a_tile_in_another_buffer_is_copied_back():
    _, k = _lower(f"""
        x0: {tile([16, 64], base='m0')} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        for i, (x,) in pl.range(0, 64, 16, init_values=(x0,)):
            x1: {tile([16, 64], base='m1', offset=4096)} = pl.tile.exp(x)
            r = pl.yield_(x1)
    """)
    (loop,) = find(k, "scf.for")
    assert [op.opcode for op in loop.body] == ["pto.alloc_tile", "pto.texp", "pto.tmov"]
    mov = loop.body[-1]
    assert mov.ins[0].name == "x1" and mov.outs[0].name == "x0"


def test_one_trip_loop_is_inlined_with_the_start_value():
    _, k = _lower(f"""
        for i, (o,) in pl.range(16, 32, 16, init_values=(out,)):
            x: {tile([16, 64])} = pl.tile.load(a, [i + 16, 0], [16, 64], target_memory=pl.Mem.Vec)
            o1: {tensor([64, 64])} = pl.tile.store(x, [i, 0], o)
            r = pl.yield_(o1)
        x2: {tile([16, 64], base='m1', offset=4096)} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        o2: {tensor([64, 64])} = pl.tile.store(x2, [0, 0], r)
    """)
    assert not find(k, "scf.for") and not find(k, "arith.addi") and not find(k, "arith.maxsi")
    load_pv, store_pv, _, store2_pv = find(k, "pto.partition_view")
    assert load_pv.attr("offsets")[0].name == "c32_index"
    assert store_pv.attr("offsets")[0].name == "c16_index"
    assert store_pv.results[0].name == "out_pview"  # the iter arg is its initial value
    assert store2_pv.results[0].name == "o1_pview"  # the loop result is the yielded value


def test_zero_trip_loop_disappears_and_its_results_are_the_inits():
    _, k = _lower(f"""
        x0: {tile([16, 64], base='m0')} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        for i, (x,) in pl.range(0, 0, 16, init_values=(x0,)):
            x1: {tile([16, 64], base='m0')} = pl.tile.exp(x)
            r = pl.yield_(x1)
        o: {tensor([64, 64])} = pl.tile.store(r, [0, 0], out)
    """)
    assert opcodes(k) == ["pto.make_tensor_view", "pto.make_tensor_view", "pto.alloc_tile",
                          "pto.partition_view", "pto.tstore"]
    assert find(k, "pto.tstore")[0].ins[0].name == "x0"


def test_if_decided_by_the_loop_range_keeps_one_branch():
    _, k = _lower(f"""
        for i in pl.range(0, 64, 16):
            if i + 8 == 0:
                x: {tile([16, 64])} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
            else:
                y: {tile([16, 64])} = pl.tile.load(a, [i, 0], [16, 64], target_memory=pl.Mem.Vec)
            if i >= 0:
                z: {tile([16, 64], base='m1', offset=4096)} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            if i == 0:
                w: {tile([16, 64], base='m2', offset=8192)} = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
    """)
    (loop,) = find(k, "scf.for")
    names = [op.results[0].name for op in find(k, "pto.alloc_tile")]
    assert names == ["y", "z", "w"]
    (branch,) = find(k, "scf.if")  # only `i == 0` is a run-time question
    assert not branch.has_else and branch.then_body[0].results[0].name == "w"


def test_nested_loops_and_index_arithmetic():
    _, k = _lower(f"""
        for i in pl.range(0, 64, 32):
            for j in pl.range(0, 2, 1):
                x: {tile([16, 64])} = pl.tile.load(a, [i + j * 16, 0], [16, 64], target_memory=pl.Mem.Vec)
    """)
    outer, = [op for op in k.body if isinstance(op, ForOp)]
    inner, = [op for op in outer.body if isinstance(op, ForOp)]
    mul, add = find(k, "arith.muli")[0], find(k, "arith.addi")[0]
    assert mul.ins == (inner.iv, mul.ins[1]) and mul.ins[1].name == "c16_index"
    assert add.ins == (outer.iv, mul.results[0])
    assert find(k, "pto.partition_view")[0].attr("offsets")[0] == add.results[0]


def test_loc_file_and_emit_loc_options():
    text, _ = _lower(LOOP_WITH_BRANCH, loc_file="program.py")
    assert 'loc("program.py":' in text and 'loc("kern.py":' not in text
    text, _ = _lower(LOOP_WITH_BRANCH, emit_loc=False)
    assert "loc(" not in text


def test_negative_and_typed_constants_are_pooled_once():
    text, k = _lower(f"""
        for i in pl.range(0, n, 16):
            x: {tile([16, 64])} = pl.tile.load(a, [i - 1, 0], [16, 64], target_memory=pl.Mem.Vec)
            y: {tile([16, 64])} = pl.tile.load(a, [i - 1, 0], [16, 64], target_memory=pl.Mem.Vec)
    """)
    consts = [op for op in k.body if op.opcode == "arith.constant"]
    names = [c.results[0].name for c in consts]
    assert len(names) == len(set(names))
    assert "%c1_index = arith.constant 1 : index" in text
    subs = find(k, "arith.subi")
    assert len(subs) == 2  # index arithmetic is emitted at each use, as PyPTO does
    assert all(s.ins[1].name == "c1_index" for s in subs)
    # i64 address constants come first, then index constants
    assert [str(c.results[0].type) for c in consts][:1] == ["i64"]


def test_dynamic_tensor_shapes_use_the_scalar_params():
    params = ("n: pl.Scalar[pl.INDEX], a: pl.Tensor[[4, n, 64], pl.FP32], "
              "out: pl.Out[pl.Tensor[[n, 64], pl.FP32]]")
    _, k = lower(kernel_src(params, f"""
        for i, (o,) in pl.range(0, n, 16, init_values=(out,)):
            x: {tile([1, 16, 64])} = pl.tile.load(a, [1, i, 0], [1, 16, 64], target_memory=pl.Mem.Vec)
            o1: pl.Tensor[[n, 64], pl.FP32] = pl.tile.store(x, [i, 0], o)
            r = pl.yield_(o1)
    """, allocs=ALLOCS))
    n = k.params[0]
    a_view, out_view = find(k, "pto.make_tensor_view")
    assert [v.name for v in a_view.attr("shape")] == ["c4_index", n.name, "c64_index"]
    (mul,) = find(k, "arith.muli")  # the row stride of a is n * 64, computed at run time
    assert n in mul.ins and {v.name for v in mul.ins} - {n.name} == {"c64_index"}
    assert a_view.attr("strides")[0] == mul.results[0]
    assert [v.name for v in out_view.attr("shape")] == [n.name, "c64_index"]
    load_pv = find(k, "pto.partition_view")[0]
    assert load_pv.results[0].type.shape == (1, 16, 64)
    assert find(k, "scf.for")[0].upper == n
