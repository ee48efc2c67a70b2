"""Property: random straight-line tile programs survive print -> parse -> structural equality."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptoc.language as pl
from ptoc.ir.verifier import verify
from ptoc.language.roundtrip import roundtrip

DIMS = st.sampled_from([16, 32, 48, 64, 128])
FLOATS = st.sampled_from(["FP32", "FP16", "BF16"])


@st.composite
def vector_programs(draw):
    rows, cols, dtype = draw(DIMS), draw(DIMS), draw(FLOATS)
    lines = [f"t0 = pl.load(x, [0, 0], [{rows}, {cols}])",
             f"scratch = pl.create_tile([{rows}, {cols}], dtype=pl.{dtype}, target_memory=pl.Mem.Vec)"]
    live = ["t0"]
    for i in range(1, draw(st.integers(1, 12)) + 1):
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "rowred", "cast_back", "slice"]))
        a, b = draw(st.sampled_from(live)), draw(st.sampled_from(live))
        if kind == "unary":
            expr = f"pl.{draw(st.sampled_from(['exp', 'neg', 'relu']))}({a})"
        elif kind == "binary":
            expr = f"pl.{draw(st.sampled_from(['add', 'sub', 'mul', 'div', 'maximum', 'minimum']))}({a}, {b})"
        elif kind == "scalar":
            value = draw(st.floats(-4, 4, allow_nan=False, width=32))
            expr = f"pl.{draw(st.sampled_from(['adds', 'muls']))}({a}, {value!r})"
        elif kind == "rowred":
            red = draw(st.sampled_from(["row_max", "row_sum"]))
            lines.append(f"r{i} = pl.{red}({a}, scratch)")
            expr = f"pl.{draw(st.sampled_from(['row_expand_sub', 'row_expand_div', 'row_expand_expdif']))}({a}, r{i})"
        elif kind == "cast_back":
            mode = draw(st.sampled_from(["none", "rint", "round", "floor", "ceil", "trunc", "odd"]))
            lines.append(f"c{i} = pl.cast({a}, pl.FP32, mode=\"{mode}\")")
            expr = f"pl.cast(c{i}, pl.{dtype}, mode=\"{mode}\")"
        else:
            half = rows // 16 * 8 or rows
            lines.append(f"s{i} = pl.tile.slice({a}, [{half}, {cols}], [0, 0])")
            expr = f"pl.tile.assemble({a}, s{i}, [{rows - half}, 0])"
        lines.append(f"t{i} = {expr}")
        live.append(f"t{i}")
    lines += [f"y = pl.store({live[-1]}, [0, 0], y)", "return y"]
    ty = f"pl.Tensor[[{rows}, {cols}], pl.{dtype}]"
    return ("import ptoc.language as pl\n\n@pl.program\nclass Gen:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def k(self, x: {ty}, y: pl.Out[{ty}]) -> {ty}:\n"
            + "".join(f"        {line}\n" for line in lines))


@st.composite
def cube_programs(draw):
    m, k, n = draw(DIMS), draw(DIMS), draw(DIMS)
    dtype = draw(st.sampled_from(["FP32", "FP16", "BF16", "INT8"]))
    acc = "INT32" if dtype == "INT8" else "FP32"
    steps = draw(st.integers(1, 3))
    lines = [f"am = pl.load(a, [0, 0], [{m}, {k}], target_memory=pl.Mem.Mat)",
             f"bm = pl.load(b, [0, 0], [{k}, {n}], target_memory=pl.Mem.Mat)",
             "al = pl.move(am, target_memory=pl.Mem.Left)",
             "bl = pl.move(bm, target_memory=pl.Mem.Right)",
             "c = pl.matmul(al, bl)"]
    lines += ["c = pl.matmul_acc(c, al, bl)"] * (steps - 1)
    lines += ["o = pl.store(c, [0, 0], o)", "return o"]
    return ("import ptoc.language as pl\n\n@pl.program\nclass Cube:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def k(self, a: pl.Tensor[[{m}, {k}], pl.{dtype}], b: pl.Tensor[[{k}, {n}], pl.{dtype}], "
            f"o: pl.Out[pl.Tensor[[{m}, {n}], pl.{acc}]]) -> pl.Tensor[[{m}, {n}], pl.{acc}]:\n"
            + "".join(f"        {line}\n" for line in lines))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vector_programs())
def test_vector_programs_roundtrip(src):
    program = pl.parse_program(src)
    verify(program)
    assert roundtrip(program).as_python() == program.as_python()


@settings(max_examples=40, deadline=None)
@given(cube_programs())
def test_cube_programs_roundtrip(src):
    program = pl.parse_program(src)
    verify(program)
    roundtrip(program)
