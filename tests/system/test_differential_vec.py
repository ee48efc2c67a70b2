"""Differential test: random chunked Vec kernels agree with numpy under every planner.

A kernel walks the rows of its inputs in chunks with ``pl.range`` or ``pl.pipeline``
(stage 2 or 4), computes a random DAG of elementwise ops per chunk, optionally branches on a
runtime flag, carries a running accumulator across chunks, and writes per-chunk results
(bare or assigned stores) and the accumulator. The same program is evaluated with numpy.
Every pass that replicates, reorders, packs or places buffers is on this path (pipeline
lowering, IO reordering, the capacity gate, memory reuse, the three planners, InsertSync),
so a wrong element here is a silent miscompile somewhere in it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir

COLS = 64
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
          "minimum": np.minimum}


@st.composite
def kernels(draw):
    rows = draw(st.sampled_from((8, 16, 32)))
    chunks = draw(st.integers(1, 6))
    loop = draw(st.sampled_from(("range", "pipeline2", "pipeline4")))
    names = ["a", "b"]
    body: list[tuple] = []
    for i in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(("bin", "bin", "scalar", "if")))
        if kind == "bin":
            body.append(("bin", f"v{i}", draw(st.sampled_from(sorted(BINARY))),
                         draw(st.sampled_from(names)), draw(st.sampled_from(names))))
        elif kind == "scalar":
            body.append(("muls", f"v{i}", draw(st.sampled_from(names)),
                         draw(st.sampled_from((0.5, -1.0, 2.0)))))
        else:
            body.append(("if", f"v{i}", draw(st.sampled_from(names)),
                         draw(st.sampled_from(names)), draw(st.sampled_from(sorted(BINARY)))))
        names.append(f"v{i}")
    stored = draw(st.sampled_from(names))
    carried = draw(st.sampled_from(names))
    bare = draw(st.booleans())
    return rows, chunks, loop, body, stored, carried, bare


def _source(rows, chunks, loop, body, stored, carried, bare) -> str:
    total = rows * chunks
    header = {"range": f"pl.range({chunks})",
              "pipeline2": f"pl.pipeline(0, {chunks}, 1, stage=2)",
              "pipeline4": f"pl.pipeline(0, {chunks}, 1, stage=4)"}[loop]
    lines = [f"acc = pl.load(x, [0, 0], [{rows}, {COLS}])", f"for i in {header}:",
             f"    a = pl.load(x, [i * {rows}, 0], [{rows}, {COLS}])",
             f"    b = pl.load(y, [i * {rows}, 0], [{rows}, {COLS}])"]
    for stmt in body:
        if stmt[0] == "bin":
            lines.append(f"    {stmt[1]} = pl.{stmt[2]}({stmt[3]}, {stmt[4]})")
        elif stmt[0] == "muls":
            lines.append(f"    {stmt[1]} = pl.mul({stmt[2]}, {stmt[3]})")
        else:
            _, name, lhs, rhs, op = stmt
            lines += ["    if flag > 0:", f"        {name} = pl.{op}({lhs}, {rhs})",
                      "    else:", f"        {name} = {lhs}"]
    store = f"pl.store({stored}, [i * {rows}, 0], out)"
    lines.append(f"    {store}" if bare else f"    out = {store}")
    lines.append(f"    acc = pl.maximum(acc, {carried})")
    lines += ["acc_out = pl.store(acc, [0, 0], acc_out)", "return out"]
    text = "\n".join("        " + line for line in lines)
    tensor = f"pl.Tensor[[{total}, {COLS}], pl.FP32]"
    return ("import ptoc.language as pl\n\n@pl.program\nclass Diff:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def kernel(self, x: {tensor}, y: {tensor}, flag: pl.Scalar[pl.INT32], "
            f"out: pl.Out[{tensor}], acc_out: pl.Out[pl.Tensor[[{rows}, {COLS}], pl.FP32]])"
            f" -> {tensor}:\n{text}\n")


def _golden(rows, chunks, body, stored, carried, x, y, flag):
    out = np.zeros_like(x)
    acc = x[:rows].copy()
    for i in range(chunks):
        env = {"a": x[i * rows:(i + 1) * rows], "b": y[i * rows:(i + 1) * rows]}
        for stmt in body:
            if stmt[0] == "bin":
                env[stmt[1]] = BINARY[stmt[2]](env[stmt[3]], env[stmt[4]])
            elif stmt[0] == "muls":
                env[stmt[1]] = env[stmt[2]] * np.float32(stmt[3])
            else:
                _, name, lhs, rhs, op = stmt
                env[name] = BINARY[op](env[lhs], env[rhs]) if flag > 0 else env[lhs]
        out[i * rows:(i + 1) * rows] = env[stored]
        acc = np.maximum(acc, env[carried])
    return out, acc


@settings(derandomize=True, max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels(), st.sampled_from(["PYPTO", "PTOAS", "DSA_RP"]))
# a dead load at the top of the body once shared the carried accumulator's buffer
@example((8, 2, "range", [("bin", "v0", "add", "b", "b")], "b", "b", False), "PYPTO")
def test_random_chunked_vec_kernels_match_numpy(case, planner):
    rows, chunks, loop, body, stored, carried, bare = case
    source = _source(*case)
    program = pl.parse_program(source, filename="differential_vec.py")
    compiled = ir.compile(program, None, memory_planner=planner)
    rng = np.random.default_rng(rows * 31 + chunks)
    x = rng.uniform(-2, 2, (rows * chunks, COLS)).astype(np.float32)
    y = rng.uniform(-2, 2, (rows * chunks, COLS)).astype(np.float32)
    for flag in (1, 0):
        out = np.zeros_like(x)
        acc_out = np.zeros((rows, COLS), np.float32)
        result = compiled.run(x, y, flag, out, acc_out)
        assert result.races == [], source
        want_out, want_acc = _golden(rows, chunks, body, stored, carried, x, y, flag)
        np.testing.assert_allclose(out, want_out, rtol=1e-6, err_msg=source)
        np.testing.assert_allclose(acc_out, want_acc, rtol=1e-6, err_msg=source)


def test_two_carry_loop_round_trips():
    """A loop carrying a tensor and a tile survives print -> parse -> equality after every
    pass (the round-trip fixture checks it): InitMemRef's MemRef of the tensor result is
    declared by a bare annotation before the two-value yield."""
    source = _source(8, 1, "range", [("bin", "v0", "add", "a", "a")], "a", "a", False)
    ir.compile(pl.parse_program(source, filename="two_carries.py"), None)
