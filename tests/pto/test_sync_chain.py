"""Chaining loop-carried flags across sibling dbC loops keeps the double buffer across the seam."""

from dataclasses import replace

import numpy as np

from ptoc import ir
from ptoc.pto import parse
from ptoc.pto.model import ForOp, SyncOp
from ptoc.pto.sync_chain import chain_sibling_loops
from ptoc.sim import simulate
from ptoc.tools.demo import program_for


def _compile(tmp_path, flag=True):
    return ir.compile(program_for(448, 64, 448, "FP32"), tmp_path, dump_passes=False,
                      enable_pypto_l0c_double_buffer=flag)


def _between_first_loops(kernel):
    body = kernel.body
    loops = [i for i, op in enumerate(body) if isinstance(op, ForOp)]
    return body[loops[0] + 1:loops[1]], body[loops[0]], body[loops[1]]


def test_seam_between_dbc_loops_has_no_fix_to_m_flags_and_stays_correct(tmp_path):
    compiled = _compile(tmp_path)
    kernel = compiled.pto_module("kernel").kernel("kernel")
    between, _, second = _between_first_loops(kernel)
    seam = [(op.kind, op.src.short, op.dst.short) for op in between if isinstance(op, SyncOp)]
    assert not any(src == "FIX" and dst == "M" for _, src, dst in seam), seam
    first_waits = [op.event for op in second.body
                   if isinstance(op, SyncOp) and op.kind == "wait_flag" and op.src.short == "FIX"]
    assert sorted(first_waits) == [0, 1], "the second loop takes over the first loop's slot ids"
    rng = np.random.default_rng(0)
    a = rng.standard_normal((448, 64)).astype(np.float32)
    b = rng.standard_normal((64, 448)).astype(np.float32)
    out = np.zeros((448, 448), np.float32)
    result = compiled.run(a, b, out)
    assert result.races == []
    np.testing.assert_allclose(out, a @ b, rtol=1e-3, atol=1e-3)


def test_chaining_is_idempotent_and_leaves_single_loops_alone(tmp_path):
    compiled = _compile(tmp_path)
    module = compiled.pto_module("kernel")
    kernel = module.kernel("kernel")
    assert chain_sibling_loops(kernel, "a2a3") == kernel
    single = ir.compile(program_for(160, 64, 160, "FP32"), tmp_path / "single", dump_passes=False,
                        enable_pypto_l0c_double_buffer=True).pto_module("kernel").kernel("kernel")
    assert chain_sibling_loops(single, "a2a3") == single


def test_a_flat_two_loop_seam_is_chained_onto_one_id():
    text = """module attributes {pto.target_arch = "a2a3"} {
  func.func @k() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]
  scf.for %i = %c0 to %c2 step %c1 {
    pto.wait_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]
    pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]
  }
  pto.wait_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]
  pto.barrier <PIPE_M>
  pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID1>]
  scf.for %j = %c0 to %c2 step %c1 {
    pto.wait_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID1>]
    pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID1>]
  }
  pto.wait_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID1>]
  return
  }
}
"""
    kernel = parse(text).kernel("k")
    chained = chain_sibling_loops(kernel, "a2a3")
    flat = [op for op in chained.walk() if isinstance(op, SyncOp) and op.kind != "barrier"]
    assert len(flat) == 8 - 2, "the post-loop wait and the pre-loop set of the seam are dropped"
    assert {op.event for op in flat} == {0}


def test_chaining_renames_only_the_second_loops_own_flags():
    """Loop 2's ids 0/1 become loop 1's 2/3. Between loop 2's two closing waits another pair
    sets id 0 and waits for it after them: it keeps id 0 (renamed, its set would become
    id 2 while its wait stayed 0, and M would wait forever)."""
    def flags(*uses: str) -> list[str]:
        kinds = {"s": "set_flag", "w": "wait_flag"}
        return [f"pto.{kinds[u[0]]}[<PIPE_FIX>, <PIPE_M>, <EVENT_ID{u[1]}>]" for u in uses]

    def loop(iv: str, a: int, b: int) -> list[str]:
        return ([f"scf.for %{iv} = %c0 to %c2 step %c1 {{"]
                + flags(f"w{a}", f"s{a}", f"w{b}", f"s{b}") + ["}"])

    body = (flags("s2", "s3") + loop("i", 2, 3) + flags("w2", "w3", "s0", "s1") + loop("j", 0, 1)
            + flags("w0", "s0", "w1", "w0"))
    text = "\n".join(['module attributes {pto.target_arch = "a2a3"} {', "func.func @k() {",
                      "%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
                      "%c2 = arith.constant 2 : index", *body, "return", "}", "}"]) + "\n"
    chained = chain_sibling_loops(parse(text).kernel("k"), "a2a3")
    after = [(op.kind, op.event) for op in chained.body[chained.body.index(
        [op for op in chained.body if isinstance(op, ForOp)][1]) + 1:]
        if isinstance(op, SyncOp)]
    assert after == [("wait_flag", 2), ("set_flag", 0), ("wait_flag", 3), ("wait_flag", 0)]
    simulate(replace(parse(text), kernels=(chained,)), {})   # balanced: no deadlock
