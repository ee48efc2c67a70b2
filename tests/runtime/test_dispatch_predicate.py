"""``predicate=(t[i] OP literal)`` on ``pl.submit`` / ``pl.spmd_submit`` / ``pl.spmd``: parsed
from the source as a spec (never a read in the orchestration), printed and re-parsed to the
same IR, refused in every other shape; at run time a task whose predicate is false at its
dispatch point runs nothing, its outputs keep what they held, and its consumers still run —
in order and on the simulated chip, where a predicate whose operand's producer is no
dependency is reported as a race."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import PtocError
from ptoc.ir.equality import assert_structural_equal
from ptoc.dtypes import ScopeKind
from ptoc.ir.nodes import BinOp, Call, ConstInt, ScopeStmt
from ptoc.ir.printer import flatten
from ptoc.ir.visitor import IRVisitor
from ptoc.language.roundtrip import roundtrip
from ptoc.runtime import RunConfig

E, R = 4, 16    # experts (gate rows), rows of each expert's band

KERNELS = f"""
import ptoc.language as pl

@pl.program
class G:
    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, v: pl.Tensor[[{E}, 8], pl.INT32], g: pl.Out[pl.Tensor[[{E}, 8], pl.INT32]]
             ) -> pl.Tensor[[{E}, 8], pl.INT32]:
        t = pl.load(v, [0, 0], [{E}, 8])
        g = pl.store(pl.adds(t, 1), [0, 0], g)
        return g

    @pl.function(type=pl.FunctionType.InCore)
    def expert(self, x: pl.Tensor[[{R}, 32], pl.FP32], o: pl.Out[pl.Tensor[[{R}, 32], pl.FP32]]
               ) -> pl.Tensor[[{R}, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [{R}, 32])
        o = pl.store(pl.add(t, t), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, a: pl.Tensor[[{E * R}, 32], pl.FP32],
              b: pl.Out[pl.Tensor[[{E * R}, 32], pl.FP32]]) -> pl.Tensor[[{E * R}, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [{E * R}, 32])
        b = pl.store(pl.adds(t, 1.0), [0, 0], b)
        return b

    @pl.function(type=pl.FunctionType.InCore)
    def bands(self, a: pl.Tensor[[{E * R}, 32], pl.FP32],
              b: pl.Out[pl.Tensor[[{E * R}, 32], pl.FP32]]) -> pl.Tensor[[{E * R}, 32], pl.FP32]:
        i = pl.tile.get_block_idx()
        t = pl.load(a, [i * {R}, 0], [{R}, 32])
        b = pl.store(pl.adds(t, 1.0), [i * {R}, 0], b)
        return b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, v: pl.Tensor[[{E}, 8], pl.INT32], x: pl.Tensor[[{E * R}, 32], pl.FP32],
             out: pl.InOut[pl.Tensor[[{E * R}, 32], pl.FP32]],
             after: pl.Out[pl.Tensor[[{E * R}, 32], pl.FP32]]) -> pl.Tensor[[{E * R}, 32], pl.FP32]:
        g = pl.create_tensor([{E}, 8], dtype=pl.INT32)
"""

BAND = f"e * {R}:(e + 1) * {R}, :"

#: the gate (g = v + 1), one predicated expert per band of out, then a consumer of all of out
EXPERTS = f"""
g, gt = pl.submit(self.gate, v, g)
for e in pl.range({E}):
    o, t = pl.submit(self.expert, x[{BAND}], out[{BAND}], deps=[gt], predicate=({{pred}}))
after = self.shift(out, after)
"""


def program(body: str, filename: str = "gates.py"):
    lines = "".join(f"        {line}\n" for line in body.strip("\n").splitlines())
    return pl.parse_program(KERNELS + lines + "        return after\n", filename=filename)


def golden(v, x, out, runs):
    """``out`` with the bands whose expert ran doubled from x; ``after`` = that + 1."""
    want = out.copy()
    for e in range(E):
        if runs(v[e, 0] + 1):
            want[e * R:(e + 1) * R] = 2 * x[e * R:(e + 1) * R]
    return want, want + 1


def run(prog, v, chip: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((E * R, 32)).astype(np.float32)
    out = rng.standard_normal((E * R, 32)).astype(np.float32)   # the prior contents
    prior = out.copy()
    after = np.zeros_like(out)
    result = ir.compile(prog, None).run(v, x, out, after,
                                        config=RunConfig(sim_mode="fast", chip=chip))
    return x, prior, out, after, result


class _Predicates(IRVisitor):
    def __init__(self):
        super().__init__()
        self.found = []

    def visit_submit(self, node):
        self.found.append(node.predicate)
        super().visit_submit(node)

    def visit_scope_stmt(self, node):
        if node.kind is ScopeKind.Spmd:
            self.found.append(node.predicate)
        super().visit_scope_stmt(node)


def predicates(prog) -> list:
    finder = _Predicates()
    finder.visit(prog.get_function("main"))
    return [p for p in finder.found if p is not None]


# ---- the spec in the IR ---------------------------------------------------------------------
@pytest.mark.parametrize("written,op,const_first", [
    ("g[e, 0] == 3", "==", False), ("g[e, 0] != 3", "!=", False), ("g[e, 0] > 3", ">", False),
    ("g[e, 0] < 3", "<", False), ("g[e, 0] >= 3", ">=", False), ("g[e, 0] <= 3", "<=", False),
    ("3 < g[e, 0]", "<", True), ("pl.tensor.read(g, [e, 0]) >= 3", ">=", False),
])
def test_the_predicate_is_a_comparison_of_a_tensor_read_as_written(written, op, const_first):
    prog = program(EXPERTS.format(pred=written))
    (pred,) = predicates(prog)
    read, const = (pred.rhs, pred.lhs) if const_first else (pred.lhs, pred.rhs)
    assert isinstance(pred, BinOp) and pred.op == op
    assert isinstance(read, Call) and read.op.name == "tensor.read" and read.args[0].name == "g"
    assert isinstance(const, ConstInt) and const.value == 3
    text = prog.get_function("main").as_python()
    assert "deps=[gt], predicate=(" in text
    assert_structural_equal(roundtrip(prog, label="predicate"), prog)


@pytest.mark.parametrize("literal,value", [("-5", -5), ("+5", 5)])
def test_a_signed_literal_is_the_target(literal, value):
    (pred,) = predicates(program(EXPERTS.format(pred=f"g[e, 0] >= {literal}")))
    assert pred.rhs.value == value


def test_every_spmd_form_carries_the_predicate_and_round_trips():
    prog = program(f"""
g, gt = pl.submit(self.gate, v, g)
with pl.spmd(2, deps=[gt], predicate=(g[0, 0] > 0)) as first:
    out = self.shift(x, out)
with pl.spmd(2, predicate=(v[1, 0] > 0)):
    out = self.shift(x, out)
o, t = pl.spmd_submit(self.shift, x, out, core_num=2, deps=[gt], predicate=(g[2, 0] > 0))
after = self.shift(out, after)
""")
    scopes = [s for s in flatten(prog.get_function("main").body) if isinstance(s, ScopeStmt)]
    assert [s.predicate.op for s in scopes] == [">", ">"]
    assert len(predicates(prog)) == 3
    assert_structural_equal(roundtrip(prog, label="spmd predicates"), prog)
    lowered = ir.compile(prog, None).program       # the outliner moves them onto the launches
    finder = _Predicates()
    finder.visit(lowered.get_function("main"))
    assert [p is not None for p in finder.found] == \
        [False, True, True, True]
    assert_structural_equal(roundtrip(lowered, label="lowered predicates"), lowered)


# ---- what cannot be a predicate --------------------------------------------------------------
@pytest.mark.parametrize("pred,message", [
    ("g", "predicate must be a single comparison"),
    ("0 < g[e, 0] < 8", "Only simple comparisons supported"),
    ("g[e, 0] % 8 == 0", "must compare one tensor element"),
    ("g[e, 0] > 1.5", "must compare one tensor element"),
    ("g[e, 0] > g[0, 0]", "must compare one tensor element"),
    ("g[e, 0] in g", "Unsupported comparison"),
    ("g[e] > 0", r"needs 2 index\(es\) to locate a single element of the rank-2 tensor 'g'"),
    ("g[-1, 0] > 0", "predicate index must be non-negative, got -1"),
    ("g[0:1, 0] > 0", "is a window"),
    ("gt[0] > 0", "must be a tensor variable"),
    ("self.gate[0, 0] > 0", "must be a tensor variable, got a function of the program"),
    ("g[e, 0] > 9223372036854775808", "does not fit the 64-bit constant"),
    ("-9223372036854775809 < g[e, 0]", "does not fit the 64-bit constant"),
])
def test_anything_but_one_element_against_an_integer_literal_is_refused(pred, message):
    with pytest.raises(PtocError, match=message) as info:
        program(EXPERTS.format(pred=pred))
    assert " object at 0x" not in str(info.value)
    assert "gates.py:" in str(info.value) and "predicate=(t[i0, ...] > 0)" in str(info.value) \
        or "index" in message or "window" in message or "64-bit" in message


def test_an_unsigned_operand_is_refused():
    body = f"""
u = pl.create_tensor([{E}, 8], dtype=pl.UINT8)
o, t = pl.submit(self.shift, x, out, predicate=(u[0, 0] > 0))
"""
    with pytest.raises(PtocError, match="must be a signed 8/16/32/64-bit integer tensor, got "
                                        "UINT8"):
        program(body)


@pytest.mark.parametrize("body,hint", [
    (EXPERTS.format(pred="g[e, 0] > 0").replace("deps=[gt], ", ""), "deps=[gt]"),
    ("g, gt = pl.submit(self.gate, v, g)\n"
     "with pl.spmd(2, predicate=(g[0, 0] > 0)):\n    out = self.shift(x, out)",
     "does not accept deps=; capture the task id instead"),
    ("with pl.spmd(1) as gt:\n    g = self.gate(v, g)\n"
     "with pl.spmd(2, predicate=(g[0, 0] > 0)) as s:\n    out = self.shift(x, out)",
     "deps=[gt]"),
    # the name rebound: deps=[gt] names the second gate, g came from the first
    ("g, gt = pl.submit(self.gate, v, g)\nh = pl.create_tensor([4, 8], dtype=pl.INT32)\n"
     "h, gt = pl.submit(self.gate, v, h)\n"
     "o, t = pl.submit(self.shift, x, out, deps=[gt], predicate=(g[0, 0] > 0))", "deps=[gt]"),
])
def test_a_predicate_whose_producer_is_provably_not_a_dependency_is_refused(body, hint):
    with pytest.raises(PtocError, match="predicate reads 'g', which is produced by the task "
                                        "bound to 'gt', but 'gt' is not in deps=") as info:
        program(body)
    assert hint in str(info.value)


@pytest.mark.parametrize("body,message", [
    ("with pl.at(level=pl.Level.CORE_GROUP, predicate=(v[0, 0] > 0)):\n"
     "    t = pl.load(x, [0, 0], [16, 32])\n    pl.store(t, [0, 0], out)",
     r"Unknown keyword argument 'predicate' in pl.at\(\)"),
    ("with pl.cluster():\n    with pl.spmd(2, predicate=(v[0, 0] > 0)):\n"
     "        out = self.shift(x, out)", r"cannot be nested inside `pl.cluster\(\)`"),
])
def test_where_pypto_has_no_predicate_it_is_refused(body, message):
    with pytest.raises(PtocError, match=message):
        program(body)


# ---- skipping at dispatch ---------------------------------------------------------------------
gates = st.lists(st.integers(-3, 2), min_size=E, max_size=E)


@settings(max_examples=12, deadline=None)
@given(gates=gates, chip=st.booleans(), pred=st.sampled_from(
    [("g[e, 0] > 0", lambda c: c > 0), ("0 == g[e, 0]", lambda c: c == 0),
     ("g[e, 0] <= -1", lambda c: c <= -1), ("1 != g[e, 0]", lambda c: c != 1)]))
def test_only_the_tasks_whose_gate_holds_run_and_a_skipped_band_keeps_its_contents(
        gates, chip, pred):
    """The gate kernel writes g = v + 1 over a zero tensor, so a predicate read before the
    gate ran would see 0 everywhere; the consumer reads every band, skipped ones included."""
    text, runs = pred
    v = np.repeat(np.array(gates, np.int32)[:, None], 8, axis=1)
    x, prior, out, after, result = run(program(EXPERTS.format(pred=text)), v, chip)
    want_out, want_after = golden(v, x, prior, runs)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_allclose(after, want_after, rtol=1e-6)
    ran = [runs(c + 1) for c in gates]
    line = KERNELS.count("\n") + 3
    assert result.skipped == [f"expert#{1 + e} at gates.py:{line}" for e in range(E) if not ran[e]]
    if chip:
        experts = result.chip.tasks[1:1 + E]
        assert [not t.skipped for t in experts] == ran
        assert all(t.cores == () for t in experts if t.skipped)
        consumer = result.chip.tasks[-1]
        assert consumer.deps == tuple(range(1, 1 + E))     # every expert settles, run or not
        assert consumer.start >= max(t.end for t in experts)
        assert result.chip.races == []
    else:
        assert [r.kernel for r in result.runs] == ["gate"] + ["expert"] * sum(ran) + ["shift"]


def test_a_predicated_spmd_region_skips_all_its_blocks():
    prog = program(f"""
g, gt = pl.submit(self.gate, v, g)
with pl.spmd({E}, deps=[gt], predicate=(g[1, 0] > 0)) as s:
    out = self.bands(x, out)
after = self.shift(out, after)
""")
    for gate, ran in ((-1, False), (0, True)):
        v = np.full((E, 8), gate, np.int32)
        for chip in (False, True):
            x, prior, out, after, result = run(prog, v, chip)
            np.testing.assert_array_equal(out, x + 1 if ran else prior)
            np.testing.assert_allclose(after, out + 1)
            if chip:
                blocks = result.chip.tasks[1:1 + E]
                assert [t.skipped for t in blocks] == [not ran] * E
                assert result.chip.races == []


def test_a_predicate_whose_producer_is_no_dependency_is_a_race_with_both_lines():
    """A plain kernel call names no task, so the parser cannot prove anything; on the chip the
    dispatch-point read of g is unordered with the gate that writes it."""
    prog = program(f"""
g = self.gate(v, g)
for e in pl.range({E}):
    o, t = pl.submit(self.expert, x[{BAND}], out[{BAND}], predicate=(g[e, 0] > 0))
after = self.shift(out, after)
""")
    v = np.ones((E, 8), np.int32)
    with pytest.warns(Warning):
        *_, result = run(prog, v, chip=True)
    races = result.chip.races
    assert {(r.kind, r.buffer) for r in races} == {("RAW", "GM %g")}
    assert [r.second.task for r in races] == [f"expert#{i}" for i in range(1, 1 + E)]
    line = KERNELS.count("\n")
    first = races[0]
    assert (first.first.where, first.second.where) == (f"gates.py:{line + 1}",
                                                       f"gates.py:{line + 3}")
    assert "predicate=(pl.tensor.read(g, [e, 0]) > 0) at dispatch" in str(first)


@pytest.mark.parametrize("pred", ["g[e, 0] > 9223372036854775807", "-9223372036854775808 < g[e, 0]"])
def test_the_extreme_64_bit_literals_are_accepted(pred):
    assert len(predicates(program(EXPERTS.format(pred=pred)))) == 1
