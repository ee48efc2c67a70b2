"""Property: random Vec kernels with branches and loops compute what numpy computes.

Each program loads two tiles, then makes new tiles from live ones (add, sub, mul,
maximum), rebinds names inside ``if flag > 0`` arms (phis, including plain aliases of
values made before the ``if``) and inside ``pl.range`` loops (carries), reads values again
after the joins, and stores one result. The same statement list is evaluated with numpy.
Any buffer shared between two values that are live at once — a phi, a carry, a packing
decision — shows up as a wrong element, under either planner and either branch direction.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir

ROWS, COLS = 16, 64
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum}


@st.composite
def programs(draw):
    names = ["a", "b"]
    stmts: list[tuple] = []

    def expr():
        op = draw(st.sampled_from(sorted(OPS)))
        return (op, draw(st.sampled_from(names)), draw(st.sampled_from(names)))

    for _ in range(draw(st.integers(2, 7))):
        kind = draw(st.sampled_from(("new", "new", "if", "loop")))
        if kind == "new":
            name = f"v{len(stmts)}"
            stmts.append(("let", name, expr()))
            names.append(name)
        elif kind == "if":
            target = draw(st.sampled_from(names))
            arms = [draw(st.one_of(st.sampled_from(names).map(lambda n: ("alias", n)),
                                   st.builds(lambda e: e, st.just(None)).map(lambda _: expr())))
                    for _ in range(2)]
            stmts.append(("if", target, arms[0], arms[1]))
        else:
            target = draw(st.sampled_from(names))
            other = draw(st.sampled_from(names))
            op = draw(st.sampled_from(("add", "maximum", "sub")))
            stmts.append(("loop", target, op, other, draw(st.integers(1, 3))))
    result = draw(st.sampled_from(names))
    return stmts, result


def _expr_src(e) -> str:
    if e[0] == "alias":
        return e[1]
    return f"pl.{e[0]}({e[1]}, {e[2]})"


def _source(stmts, result) -> str:
    tile = f"pl.Tile[[{ROWS}, {COLS}], pl.FP32, pl.Mem.Vec]"
    lines = [f"a: {tile} = pl.load(x, [0, 0], [{ROWS}, {COLS}])",
             f"b: {tile} = pl.load(y, [0, 0], [{ROWS}, {COLS}])"]
    for s in stmts:
        if s[0] == "let":
            lines.append(f"{s[1]} = {_expr_src(s[2])}")
        elif s[0] == "if":
            lines += ["if flag > 0:", f"    {s[1]} = {_expr_src(s[2])}",
                      "else:", f"    {s[1]} = {_expr_src(s[3])}"]
        else:
            _, target, op, other, trips = s
            lines += [f"for i in pl.range({trips}):",
                      f"    {target} = pl.{op}({target}, {other})"]
    lines += [f"out = pl.store({result}, [0, 0], out)", "return out"]
    body = "\n".join("        " + line for line in lines)
    return (
        "import ptoc.language as pl\n\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        f"    def kernel(self, x: pl.Tensor[[{ROWS}, {COLS}], pl.FP32], "
        f"y: pl.Tensor[[{ROWS}, {COLS}], pl.FP32], flag: pl.Scalar[pl.INT32], "
        f"out: pl.Out[pl.Tensor[[{ROWS}, {COLS}], pl.FP32]]) -> "
        f"pl.Tensor[[{ROWS}, {COLS}], pl.FP32]:\n{body}\n")


def _golden(stmts, result, x, y, flag):
    env = {"a": x.copy(), "b": y.copy()}

    def value(e):
        return env[e[1]] if e[0] == "alias" else OPS[e[0]](env[e[1]], env[e[2]])

    for s in stmts:
        if s[0] == "let":
            env[s[1]] = value(s[2])
        elif s[0] == "if":
            env[s[1]] = value(s[2] if flag > 0 else s[3])
        else:
            _, target, op, other, trips = s
            for _ in range(trips):
                env[target] = OPS[op](env[target], env[other])
    return env[result]


@settings(derandomize=True, max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.sampled_from([None, "PTOAS"]))
def test_random_branch_and_loop_kernels_match_numpy(case, planner):
    stmts, result = case
    program = pl.parse_program(_source(stmts, result), filename="random_joins.py")
    compiled = ir.compile(program, None, memory_planner=planner)
    rng = np.random.default_rng(len(stmts))
    x = rng.uniform(-2, 2, (ROWS, COLS)).astype(np.float32)
    y = rng.uniform(-2, 2, (ROWS, COLS)).astype(np.float32)
    for flag in (1, 0):
        out = np.zeros((ROWS, COLS), np.float32)
        run = compiled.run(x, y, flag, out)
        assert run.races == []
        np.testing.assert_allclose(out, _golden(stmts, result, x, y, flag), rtol=1e-6,
                                   err_msg=_source(stmts, result))
