"""The core-group simulator: an AIC and its two AIVs with cross-core pipes, shared GM, one race
checker, deadlocks reported with every core's timeline, a trace with a process per core."""

from __future__ import annotations

import json

import numpy as np
import pytest

from handshakes import handshake_mutants, reported
from ptoc.errors import DeadlockError, PipeProtocolError, PtoError
from ptoc.pto import parse, print_module, verify
from ptoc.sim import SimProgramError, simulate, simulate_group
from ptoc.sim.group import group_kernels
from ptoc.sim.group.examples import matmul_bias, matmul_round_trip
from ptoc.sim.inputs import random_inputs

TARGETS = ("a2a3", "a5")


def _mm(a, b):
    """fp32 partial sums in increasing k, the order hw-model.md §4.3 gives the cube (fp16
    products are exact in fp32). numpy's own float32 ``@`` sums in an order its BLAS build
    chooses, which moved the fp16 rounding of the round trip's middle by one ulp in places."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    out = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(a.shape[1]):
        out += a[:, k:k + 1] * b[k:k + 1, :]
    return out


def _run(text, target, seed=1):
    module = parse(text)
    tensors = random_inputs(list(group_kernels(module)), seed=seed)
    return tensors, (lambda: simulate_group(module, tensors, target=target))


def _golden(fn, t):
    if fn is matmul_bias:
        return {"c": _mm(t["a"], t["b"]) + t["bias"]}
    p = (0.5 * _mm(t["a"], t["b"])).astype(np.float16)
    return {"o": _mm(p, t["v"])}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("split", (1, 2))
@pytest.mark.parametrize("fn", (matmul_bias, matmul_round_trip))
def test_group_kernels_compute_exactly_with_no_race(fn, split, target):
    text = fn(target, split)
    verify(parse(text), target)
    tensors, run = _run(text, target)
    result = run()
    assert not result.races
    for name, want in _golden(fn, tensors).items():
        np.testing.assert_allclose(result.outputs[name], want, rtol=1e-6, atol=1e-6)
    assert set(result.cores) == {"aic", "aiv0", "aiv1"}
    assert result.wall_cycles == max(c.wall_cycles for c in result.cores.values())


@pytest.mark.parametrize("target", TARGETS)
def test_each_pipe_op_occupies_the_modelled_pipe(target):
    _, run = _run(matmul_bias(target, 1, tiles=2), target)
    result = run()
    aic, aiv = result.cores["aic"], result.cores["aiv0"]
    assert {r.pipe.short for r in aic.instructions if r.name == "pto.tpush_to_aiv"} == {"FIX"}
    pops = [r for r in aiv.instructions if r.name == "pto.tpop_from_aic"]
    if target == "a2a3":      # the ring is in GM: the pop is an MTE2 copy into UB
        assert {r.pipe.short for r in pops} == {"MTE2"} and all(r.duration > 0 for r in pops)
    else:                     # a5: the cube wrote the AIV's UB directly; the pop is free
        assert {r.pipe.short for r in pops} == {"V"} and all(r.duration == 0 for r in pops)


def test_a_pop_starts_after_its_push_ends_plus_the_flag_latency():
    from ptoc.backend.cross_core import cluster_model

    _, run = _run(matmul_bias("a2a3", 1, tiles=3), "a2a3")
    result = run()
    latency = cluster_model("a2a3").flag_latency_cycles
    pushes = [r for r in result.cores["aic"].instructions if r.name == "pto.tpush_to_aiv"]
    for lane in ("aiv0", "aiv1"):
        pops = [r for r in result.cores[lane].instructions if r.name == "pto.tpop_from_aic"]
        assert len(pops) == len(pushes) == 3
        for push, pop in zip(pushes, pops):
            assert pop.start >= push.end + latency


def test_a_push_beyond_the_ring_depth_waits_for_both_lanes_to_free_its_slot():
    _, run = _run(matmul_bias("a2a3", 1, tiles=4, slot_num=2), "a2a3")
    result = run()
    pushes = [r for r in result.cores["aic"].instructions if r.name == "pto.tpush_to_aiv"]
    for k in range(2, 4):
        for lane in ("aiv0", "aiv1"):
            frees = [r for r in result.cores[lane].instructions if r.name == "pto.tfree_from_aic"]
            assert pushes[k].start >= frees[k - 2].end


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", (matmul_bias, matmul_round_trip))
def test_deleting_any_cross_core_handshake_is_reported(fn, target):
    text = fn(target, 1, tiles=3)
    tensors, _ = _run(text, target)
    golden = _golden(fn, tensors)
    mutants = list(handshake_mutants(text))
    for kind in ("initialize_pipe", "tpush_to", "tpop_from", "tfree_from"):
        assert any(kind in label for label, _ in mutants), kind
    for label, mutant in mutants:
        how = reported(lambda: simulate_group(parse(mutant), tensors, target=target), golden)
        assert how is not None, f"{target} {fn.__name__}: deleting {label} went unnoticed"


def test_a_pop_without_a_push_is_a_deadlock_with_every_cores_timeline():
    text = matmul_bias("a2a3", 1, tiles=2)
    lines = [x for x in text.splitlines() if "tpush_to_aiv" not in x]
    tensors, _ = _run(text, "a2a3")
    with pytest.raises(DeadlockError) as info:
        simulate_group("\n".join(lines), tensors, target="a2a3")
    err = info.value
    assert "tpop_from_aic" in str(err) and "[aiv0]" in str(err) and "[aiv1]" in str(err)
    assert "never issued" in str(err)
    timeline = err.timeline
    assert not timeline.complete and set(timeline.cores) == {"aic", "aiv0", "aiv1"}
    assert timeline.cores["aic"].instructions      # the cube side ran before the hang


def test_a_missing_free_stalls_the_producer_once_the_ring_is_full():
    text = matmul_bias("a5", 1, tiles=4, slot_num=2)
    lines = [x for x in text.splitlines() if "tfree_from_aic" not in x]
    tensors, _ = _run(text, "a5")
    with pytest.raises(DeadlockError) as info:
        simulate_group("\n".join(lines), tensors, target="a5")
    assert "tpush_to_aiv" in str(info.value) and "freed by aiv0, aiv1" in str(info.value)


def test_a_missing_free_within_the_ring_depth_is_a_protocol_error():
    text = matmul_bias("a2a3", 1, tiles=1)
    lines = [x for x in text.splitlines() if "tfree_from_aic" not in x]
    tensors, _ = _run(text, "a2a3")
    with pytest.raises(PipeProtocolError, match="popped 1 tile.* but freed 0"):
        simulate_group("\n".join(lines), tensors, target="a2a3")


def test_pipes_set_up_differently_on_the_two_sides_are_an_error():
    text = matmul_bias("a2a3", 1, tiles=1)
    aiv_at = text.index("@mm_bias_aiv")
    text = text[:aiv_at] + text[aiv_at:].replace("slot_num = 2}", "slot_num = 1}", 1)
    tensors, _ = _run(text, "a2a3")
    with pytest.raises(PipeProtocolError, match="set up differently"):
        simulate_group(text, tensors, target="a2a3")


_STORE_LOAD = """module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @st_aic(%a: !pto.ptr<f16>, %c: !pto.ptr<f32>{gmp}) attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{
    {consts}
    %z = arith.constant 0 : i64
    {aic_setup}
    %av = pto.make_tensor_view %a, shape = [%c16, %c16], strides = [%c16, %c1] {{layout = #pto.layout<nd>}} : !pto.tensor_view<?x?xf16>
    %ap = pto.partition_view %av, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<16x16xf16>
    {c_window}
    %t = pto.alloc_tile addr = %z : {mat}
    pto.tload ins(%ap : !pto.partition_tensor_view<16x16xf16>) outs(%t : {mat})
    %l = pto.alloc_tile addr = %z : {left}
    %r = pto.alloc_tile addr = %z : {right}
    pto.tmov ins(%t : {mat}) outs(%l : {left})
    pto.tmov ins(%t : {mat}) outs(%r : {right})
    %acc = pto.alloc_tile addr = %z : {acc}
    pto.tmatmul ins(%l, %r : {left}, {right}) outs(%acc : {acc})
    pto.tstore ins(%acc : {acc}) outs(%cp : !pto.partition_tensor_view<16x16xf32>)
    {aic_signal}
    return
  }}
  func.func @st_aiv(%a: !pto.ptr<f16>, %c: !pto.ptr<f32>{gmp}) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    {consts}
    %z = arith.constant 8192 : i64
    {aiv_setup}
    {c_window}
    {aiv_wait}
    %t = pto.alloc_tile addr = %z : {vec}
    pto.tload ins(%cp : !pto.partition_tensor_view<16x16xf32>) outs(%t : {vec})
    return
  }}
}}
"""


_CONSTS = ("%c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
           "    %c16 = arith.constant 16 : index\n    %zi = arith.constant 0 : i32")
_C_WINDOW = ("%cv = pto.make_tensor_view %c, shape = [%c16, %c16], strides = [%c16, %c1] "
             "{layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>\n    %cp = "
             "pto.partition_view %cv, offsets = [%c0, %c0], sizes = [%c16, %c16] : "
             "!pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>")


def _store_load(fenced: bool) -> str:
    from ptoc.pto.text_writer import tile_type

    mat, left, right = (tile_type(s, "f16", 16, 16) for s in ("mat", "left", "right"))
    vec, acc = (tile_type(s, "f32", 16, 16) for s in ("vec", "acc"))
    gm = ", %gm: !pto.ptr<f32>"
    setup_c = ('%peer = pto.import_reserved_buffer {name = "r", peer_func = "st_aiv"} -> i32\n'
               '    pto.aic_initialize_pipe(%peer, %zi, %gm : i32, i32, !pto.ptr<f32>) '
               '{id = 0, dir_mask = 1, slot_size = 1024, slot_num = 2}')
    setup_v = ('%ring = pto.reserve_buffer {name = "r", size = 2048, location = '
               '#pto.address_space<vec>, base = 0} -> i32\n'
               '    pto.aiv_initialize_pipe(%ring, %zi, %gm : i32, i32, !pto.ptr<f32>) '
               '{id = 0, dir_mask = 1, slot_size = 1024, slot_num = 2}')
    # the fence token: the AIC pushes a scratch Acc tile after its store; the AIVs pop it
    # (and free it) before their load — PyPTO's GM cross-lane handshake
    signal = f"pto.tpush_to_aiv(%acc : {acc}) {{split = 0, id = 0}}"
    wait = (f"%got = pto.tpop_from_aic {{split = 0, id = 0}} -> {vec}\n"
            f"    pto.tfree_from_aic(%got : {vec}) {{split = 0, id = 0}}")
    return _STORE_LOAD.format(consts=_CONSTS, c_window=_C_WINDOW, gmp=gm, mat=mat, left=left, right=right, acc=acc, vec=vec,
                              aic_setup=setup_c, aiv_setup=setup_v,
                              aic_signal=signal if fenced else "",
                              aiv_wait=wait if fenced else "")


def test_a_gm_byte_stored_by_the_aic_and_loaded_by_an_aiv_races_without_a_handshake():
    tensors = {"a": np.ones((16, 16), np.float16), "c": np.zeros((16, 16), np.float32),
               "gm": np.zeros(512, np.float32)}
    unfenced = simulate_group(_store_load(False), tensors, target="a2a3")
    kinds = {(r.kind, r.buffer) for r in unfenced.races}
    assert ("RAW", "GM %c") in kinds
    assert any("[aic]" in r.first and "[aiv" in r.second for r in unfenced.races)
    fenced = simulate_group(_store_load(True), tensors, target="a2a3")
    assert not [r for r in fenced.races if r.buffer == "GM %c"]


def test_simulate_refuses_a_pipe_op_on_a_lone_core():
    text = matmul_bias("a2a3", 1, tiles=1)
    module = parse(text)
    tensors = random_inputs(list(group_kernels(module)), seed=0)
    with pytest.raises(SimProgramError, match="simulate_group"):
        simulate(module, tensors, kernel="mm_bias_aic")


def test_group_module_prints_and_parses_back_equal():
    for text in (matmul_bias("a5", 2), matmul_round_trip("a2a3", 1)):
        module = parse(text)
        assert parse(print_module(module)) == module


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("pto.aiv_initialize_pipe", "pto.aic_initialize_pipe"),
     "runs on a cube core"),
    (lambda t: t.replace("slot_size = 4096", "slot_size = 1024"), "does not fit the 1024-byte"),
    (lambda t: t.replace("slot_num = 2}", "slot_num = 9}"), "at most 8"),
    (lambda t: t.replace("size = 8192, location", "size = 300000, location"), "exceeds"),
    (lambda t: "\n".join(x for x in t.splitlines() if "tfree_from_aic" not in x),
     "never released"),
    (lambda t: "\n".join(x for x in t.splitlines() if "aic_initialize_pipe" not in x),
     "is not set up"),
])
def test_the_verifier_checks_the_pipe_protocol(edit, message):
    text = edit(matmul_bias("a2a3", 1, tiles=2))
    with pytest.raises(PtoError, match=message):
        verify(parse(text), "a2a3")


def test_trace_has_a_process_per_core_and_protocol_flows(tmp_path):
    _, run = _run(matmul_round_trip("a5", 1, tiles=2), "a5")
    result = run()
    path = tmp_path / "g.json"
    result.write_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    processes = {e["args"]["name"].split(" ")[0] for e in events if e.get("name") == "process_name"}
    assert {"aic", "aiv0", "aiv1"} <= processes
    lanes = {(e["pid"], e["args"]["name"]) for e in events if e.get("name") == "thread_name"}
    assert any(name == "CUBE" for _, name in lanes) and any(name == "VECTOR" for _, name in lanes)
    flows = [e for e in events if e.get("cat") == "cross_core"]
    pids = {e["pid"] for e in flows}
    assert len(pids) >= 2 and len(flows) >= 2


def test_pipe_summary_lists_every_cores_pipes():
    _, run = _run(matmul_bias("a2a3", 1, tiles=2), "a2a3")
    csv = run().pipe_summary_csv().splitlines()
    assert csv[0].startswith("core,pipe")
    assert {row.split(",")[0] for row in csv[1:]} == {"aic", "aiv0", "aiv1"}


def test_ptoc_sim_runs_a_group_module(tmp_path, capsys):
    from ptoc.cli import main

    path = tmp_path / "g.pto"
    path.write_text(matmul_bias("a2a3", 2, tiles=2))
    assert main(["sim", str(path)]) == 0
    out = capsys.readouterr().out
    assert "core group @mm_bias_aic, @mm_bias_aiv" in out and "aiv1" in out


def _mat_push(target: str) -> str:
    """matmul_bias with the cube pushing a Mat tile instead of its accumulator."""
    out = []
    for line in matmul_bias(target, 1, tiles=1).splitlines():
        if "pto.tpush_to_aiv(%acc" in line:
            line = line.replace("%acc : !pto.tile_buf<loc=acc", "%m : !pto.tile_buf<loc=mat")
        out.append(line)
        if line.strip().startswith("%acc = pto.alloc_tile"):
            out.append(line.replace("%acc", "%m").replace("loc=acc", "loc=mat"))
    return "\n".join(out)


def test_a_cube_to_vector_push_from_l1_is_refused_where_the_ring_is_in_ub():
    # a5's cube -> vector ring is in the AIV's UB and L1 has no path there (a2a3 rings are in
    # GM, written from L1 by the L1 -> GM store: tests/system/test_mat_to_vec_pipe.py)
    module = parse(_mat_push("a5"))
    with pytest.raises(PtoError, match="%m is a mat tile; on a5 this pipe is fed from acc"):
        verify(module, "a5")
    tensors = random_inputs(list(group_kernels(module)), seed=0)
    with pytest.raises(SimProgramError, match="%m is in Mat, which no cube -> vector pipe of a5"):
        simulate_group(module, tensors, target="a5")
