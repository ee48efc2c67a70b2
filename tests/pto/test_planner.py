"""PlanMemory (ptoc.pto.planner) on hand-written address-less PTO."""

import numpy as np
import pytest

from ptoc.backend import get_target
from ptoc.dtypes import DataType, MemorySpace
from ptoc.pto import insert_sync, parse, print_module, verify
from ptoc.pto.planner import PlanMemoryError, kernel_lifetimes, plan_memory, tile_addresses
from ptoc.sim import simulate

VEC = ("!pto.tile_buf<loc=vec, dtype=f32, rows={r}, cols=64, v_row={r}, v_col=64, "
       "blayout=row_major, slayout=none_box, fractal=512, pad=0>")
T16 = VEC.format(r=16)          # 4096 bytes
PV = "!pto.partition_tensor_view<16x64xf32>"
TV = "!pto.tensor_view<?x?xf32>"


def kernel(body: str, params: str = "%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>") -> str:
    return f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k({params}) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %x = pto.make_tensor_view %arg0, shape = [%c16, %c64], strides = [%c64, %c1] {{layout = #pto.layout<nd>}} : {TV}
  %y = pto.make_tensor_view %arg1, shape = [%c16, %c64], strides = [%c64, %c1] {{layout = #pto.layout<nd>}} : {TV}
  %xp = pto.partition_view %x, offsets = [%c0, %c0], sizes = [%c16, %c64] : {TV} -> {PV}
  %yp = pto.partition_view %y, offsets = [%c0, %c0], sizes = [%c16, %c64] : {TV} -> {PV}
{body}  return
  }}
}}
"""


def alloc(name, ty=T16):
    return f"  %{name} = pto.alloc_tile : {ty}\n"


def load(dst, ty=T16):
    return f"  pto.tload ins(%xp : {PV}) outs(%{dst} : {ty})\n"


def exp(src, dst, ty=T16):
    return f"  pto.texp ins(%{src} : {ty}) outs(%{dst} : {ty})\n"


def add(a, b, dst, ty=T16):
    return f"  pto.tadd ins(%{a}, %{b} : {ty}, {ty}) outs(%{dst} : {ty})\n"


def store(src, ty=T16):
    return f"  pto.tstore ins(%{src} : {ty}) outs(%yp : {PV})\n"


def plan(text: str, spread: bool = False):
    planned = plan_memory(parse(text), "a2a3", spread=spread)
    again = parse(print_module(planned))
    assert again == planned                      # print -> parse round trip
    verify(planned, "a2a3")
    return planned, tile_addresses(planned)["k"]


def run(planned):
    synced = insert_sync(planned, "a2a3").module
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    result = simulate(synced, {"arg0": x, "arg1": np.zeros_like(x)})
    assert result.races == []
    return x, result.outputs["arg1"]


def test_disjoint_lifetimes_share_one_address():
    # An op's result never lands on an operand it reads (unless space is short, below):
    # b is written after a's last read, c after b's, so a/c and b/d share.
    body = (alloc("a") + load("a") + alloc("b") + exp("a", "b")
            + alloc("c") + add("b", "b", "c") + alloc("d") + exp("c", "d") + store("d"))
    planned, at = plan(kernel(body))
    assert at == {"a": 0, "b": 4096, "c": 0, "d": 4096}
    x, y = run(planned)
    np.testing.assert_allclose(y, np.exp(2 * np.exp(x)), rtol=1e-5)


BIG = VEC.format(r=368)       # 368*64*4 = 94208 bytes: two fill the 188416 usable UB bytes
BIG_PV = "!pto.partition_tensor_view<368x64xf32>"


def big_kernel(op: str) -> str:
    body = (alloc("a", BIG) + load("a", BIG) + alloc("b", BIG) + load("b", BIG) + alloc("c", BIG)
            + op.replace("{T}", BIG) + store("c", BIG))
    text = kernel(body).replace(PV, BIG_PV).replace("[%c16, %c64]", "[%c368, %c64]")
    return text.replace("  %c16 = arith.constant 16 : index\n",
                        "  %c16 = arith.constant 16 : index\n  %c368 = arith.constant 368 : index\n")


def test_element_wise_result_takes_its_operands_bytes_when_space_is_short():
    # a, b and c co-live need three big tiles; tadd may write c over a (or b): it fits.
    planned, at = plan(big_kernel("  pto.tadd ins(%a, %b : {T}, {T}) outs(%c : {T})\n"))
    assert at["c"] in (at["a"], at["b"]) and at["a"] != at["b"]


def test_row_expand_may_not_overwrite_its_column_operand():
    # dst[r, c] = a[r, c] * b[r, 0]: writing over b would clobber b[r, 0] mid-row; only a may
    # share, so with a still needed afterwards nothing can share and the space overflows.
    op = "  pto.trowexpandmul ins(%a, %b : {T}, {T}) outs(%c : {T})\n"
    planned, at = plan(big_kernel(op))
    assert at["c"] == at["a"] != at["b"]
    reuse_a = op + "  pto.tadd ins(%c, %a : {T}, {T}) outs(%c : {T})\n"
    with pytest.raises(PlanMemoryError, match="Vec buffer usage"):
        plan_memory(parse(big_kernel(reuse_a)), "a2a3")


def test_co_live_tiles_get_distinct_addresses():
    body = (alloc("a") + load("a") + alloc("b") + load("b") + alloc("c") + load("c")
            + alloc("s") + add("a", "b", "s") + add("s", "c", "s") + store("s"))
    _, at = plan(kernel(body))
    assert len({at["a"], at["b"], at["c"]}) == 3
    assert at["s"] not in (at["c"],)          # c is still live when s is first written
    assert all(addr % 32 == 0 for addr in at.values())


def test_two_accumulators_of_a_double_buffer_are_distinct():
    acc = ("!pto.tile_buf<loc=acc, dtype=f32, rows=80, cols=128, v_row=80, v_col=128, "
           "blayout=col_major, slayout=row_major, fractal=1024, pad=0>")
    left = ("!pto.tile_buf<loc=left, dtype=f32, rows=80, cols=64, v_row=80, v_col=64, "
            "blayout=row_major, slayout=row_major, fractal=512, pad=0>")
    right = ("!pto.tile_buf<loc=right, dtype=f32, rows=64, cols=128, v_row=64, v_col=128, "
             "blayout=row_major, slayout=col_major, fractal=512, pad=0>")
    mm = "  pto.tmatmul ins(%{l}, %r : {L}, {R}) outs(%{c} : {A})\n"
    st = "  pto.tstore ins(%{c} : {A}) outs(%cp : !pto.partition_tensor_view<80x128xf32>)\n"
    body = ("  %c80 = arith.constant 80 : index\n  %c128 = arith.constant 128 : index\n"
            f"  %cp = pto.partition_view %y, offsets = [%c0, %c0], sizes = [%c80, %c128] : {TV} -> "
            "!pto.partition_tensor_view<80x128xf32>\n"
            + alloc("l0", left) + alloc("l1", left) + alloc("r", right)
            + alloc("acc0", acc) + mm.format(l="l0", c="acc0", L=left, R=right, A=acc)
            + alloc("acc1", acc) + mm.format(l="l1", c="acc1", L=left, R=right, A=acc)
            + st.format(c="acc0", A=acc) + st.format(c="acc1", A=acc))
    _, at = plan(kernel(body))
    assert (at["acc0"], at["acc1"]) == (0, 40960)      # {0, align32(80*128*4)}


def test_loop_extends_a_tile_defined_outside_over_the_whole_loop():
    # %acc lives across iterations; %t is written and dies inside each iteration, but it is
    # allocated after %acc's last in-loop use, so only the loop rule keeps them apart.
    body = (alloc("acc") + load("acc")
            + "  scf.for %i = %c0 to %c16 step %c1 {\n"
            + "  " + alloc("t") + "  " + load("t") + "  " + add("acc", "t", "acc")
            + "  " + alloc("u") + "  " + exp("t", "u") + "  " + store("u")
            + "  }\n" + store("acc"))
    planned, at = plan(kernel(body))
    assert at["acc"] not in (at["t"], at["u"])
    lives = {t.name: t for t in kernel_lifetimes(planned.kernel("k"), "a2a3")}
    assert lives["acc"].start < lives["t"].start and lives["acc"].end > lives["u"].end


def test_tile_read_before_written_in_a_loop_is_carried():
    # %p is allocated inside the loop but read before it is written: its value comes from
    # the previous iteration, so %q (whose life is inside the iteration) may not reuse it.
    body = ("  scf.for %i = %c0 to %c16 step %c1 {\n"
            + "  " + alloc("p") + "  " + alloc("q") + "  " + load("q")
            + "  " + add("p", "q", "q") + "  " + store("q")
            + "  " + load("p") + "  }\n")
    _, at = plan(kernel(body))
    assert at["p"] != at["q"]


def test_without_loop_rule_tiles_in_one_iteration_reuse():
    body = ("  scf.for %i = %c0 to %c16 step %c1 {\n"
            + "  " + alloc("p") + "  " + load("p") + "  " + store("p")
            + "  " + alloc("q") + "  " + load("q") + "  " + store("q") + "  }\n")
    _, at = plan(kernel(body))
    assert at["p"] == at["q"] == 0


def test_fixed_addresses_are_kept_and_avoided():
    body = ("  %c0_i64 = arith.constant 0 : i64\n"
            + f"  %a = pto.alloc_tile addr = %c0_i64 : {T16}\n" + load("a")
            + alloc("b") + exp("a", "b") + store("b") + store("a"))
    planned, at = plan(kernel(body))
    assert at == {"a": 0, "b": 4096}
    # the existing i64 constant is reused, one new one is added
    consts = [op for op in planned.kernel("k").body if getattr(op, "opcode", "") == "arith.constant"]
    assert sum(1 for c in consts if str(c.result.type) == "i64") == 2


def test_planning_is_deterministic_and_idempotent():
    body = (alloc("a") + load("a") + alloc("b") + exp("a", "b") + store("b"))
    first, _ = plan(kernel(body))
    second, _ = plan(kernel(body))
    assert print_module(first) == print_module(second)
    assert plan_memory(first, "a2a3") == first


def test_overflow_names_the_co_live_tiles_and_bytes():
    # trowsum-free worst case: three big tiles read together by a non-element-wise pattern.
    op = ("  pto.tadd ins(%a, %b : {T}, {T}) outs(%c : {T})\n"
          "  pto.tadd ins(%a, %b : {T}, {T}) outs(%a : {T})\n")
    with pytest.raises(PlanMemoryError) as info:
        plan_memory(parse(big_kernel(op)), "a2a3")
    msg = str(info.value)
    cap = get_target("a2a3").capacity(MemorySpace.Vec)
    assert f"Vec buffer usage ({3 * 94208} bytes) exceeds platform limit ({cap} bytes)" in msg
    assert "%a (94208 bytes" in msg and "%b (94208 bytes" in msg and "%c (94208 bytes" in msg


def test_runtime_address_is_rejected_with_the_tile_name():
    body = ("  %n = arith.index_cast %c16 : index to i64\n"
            + f"  %a = pto.alloc_tile addr = %n : {T16}\n" + load("a") + store("a"))
    with pytest.raises(PlanMemoryError, match="tile %a .*run-time address %n"):
        plan_memory(parse(kernel(body)), "a2a3")


def test_acc_size_uses_the_physical_l0c_footprint():
    acc = ("!pto.tile_buf<loc=acc, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, "
           "blayout=col_major, slayout=row_major, fractal=1024, pad=0>")
    (life,) = kernel_lifetimes(parse(kernel(alloc("c", acc))).kernel("k"), "a2a3")
    # 8 rows are padded to the L0C row alignment (16): 16 * 16 * 4 bytes
    assert life.nbytes == get_target("a2a3").tile_bytes(MemorySpace.Acc, 8, 16, DataType.FP32)
    assert life.nbytes == 1024


def test_constants_in_inner_scopes_are_not_reused():
    # %c0_i64 inside the loop does not dominate %a's alloc_tile: a fresh constant is made.
    body = (alloc("a") + load("a") + store("a")
            + "  scf.for %i = %c0 to %c16 step %c1 {\n"
            + "    %c0_i64 = arith.constant 0 : i64\n  }\n")
    planned, at = plan(kernel(body))
    assert at == {"a": 0}
    alloc_a = next(op for op in planned.kernel("k").walk()
                   if getattr(op, "opcode", "") == "pto.alloc_tile")
    assert alloc_a.attr("addr").name == "c0_i64_1"


def test_later_tiles_coalesce_into_dead_buffers():
    # Two co-live 8 KiB tiles at {0, 8192}; after they die, two co-live 4 KiB tiles reuse
    # their slots {0, 8192} (as PyPTO coalesces into existing MemRefs), not {0, 4096}.
    big = VEC.format(r=32)
    body = (alloc("a", big) + alloc("b", big) + add("a", "a", "b", big) + add("b", "b", "a", big)
            + alloc("c") + load("c") + alloc("d") + exp("c", "d") + add("c", "d", "d") + store("d"))
    _, at = plan(kernel(body))
    assert (at["a"], at["b"]) == (0, 8192)
    assert (at["c"], at["d"]) == (0, 8192)


def test_tiles_joined_through_a_loop_yield_stay_apart_and_alive():
    # %n is yielded into %t for the next iteration and read after the loop as %r, so %a and
    # %n (one group) are both kept for the group's whole life; %z after the loop must not
    # land on either while %r is still read.
    body = (alloc("a") + load("a")
            + f"  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%t = %a) -> ({T16}) {{\n"
            + "  " + alloc("n") + "  " + exp("t", "n")
            + f"    scf.yield %n : {T16}\n  }}\n"
            + alloc("z") + exp("r", "z") + store("z"))
    planned = plan_memory(parse(kernel(body)), "a2a3")
    at = tile_addresses(planned)["k"]
    assert len({at["a"], at["n"], at["z"]}) == 3


def test_spread_rotates_through_free_bytes_and_packs_when_short():
    # With room, each new tile takes bytes nobody used yet, so the load of p's successor
    # need not wait for the store of p; with four big tiles in the loop it must pack.
    body = ("  scf.for %i = %c0 to %c16 step %c1 {\n"
            + "  " + alloc("p") + "  " + load("p") + "  " + store("p")
            + "  " + alloc("q") + "  " + load("q") + "  " + store("q") + "  }\n")
    planned, at = plan(kernel(body), spread=True)
    assert at["p"] != at["q"]
    x, y = run(planned)
    np.testing.assert_allclose(y, x)
    _, packed = plan(big_kernel("  pto.tadd ins(%a, %b : {T}, {T}) outs(%c : {T})\n"), spread=True)
    assert packed["c"] in (packed["a"], packed["b"])


def _acc_type(rows: int, cols: int) -> str:
    return (f"!pto.tile_buf<loc=acc, dtype=f32, rows={rows}, cols={cols}, v_row={rows}, "
            f"v_col={cols}, blayout=col_major, slayout=row_major, fractal=1024, pad=0>")


def test_accumulators_that_fit_l0c_together_never_share_bytes():
    # As PTOAS' PlanMemory: a space whose buffers fit all at once is planned without reuse,
    # so lifetime-disjoint accumulators still get bytes of their own (no FIX->M wait).
    acc = _acc_type(16, 16)
    _, at = plan(kernel(alloc("acc0", acc) + alloc("acc1", acc)), spread=True)
    assert at == {"acc0": 0, "acc1": 1024}


def test_accumulators_that_do_not_fit_together_are_packed_by_lifetime():
    acc = _acc_type(128, 128)   # 64 KiB each: three do not fit L0C (128 KiB) at once
    _, at = plan(kernel("".join(alloc(f"acc{i}", acc) for i in range(3))), spread=True)
    assert at == {"acc0": 0, "acc1": 0, "acc2": 0}
