"""OutlineIncoreScopes: ``with pl.at(level=CORE_GROUP)`` regions become InCore kernels."""

import pytest

import ptoc.language as pl
from ptoc.errors import ParseError, PassError
from ptoc.ir import assert_structural_equal, print_program
from ptoc.passes import PassContext
from ptoc.passes.frontend import outline_incore_scopes

HEAD = """import ptoc.language as pl

@pl.program
class P:
"""
T = "pl.Tensor[[16, 16], pl.FP32]"


def outline(src: str):
    with PassContext():
        return outline_incore_scopes()(pl.parse_program(HEAD + src))


def check(before: str, expected: str):
    after = outline(before)
    assert_structural_equal(after, pl.parse_program(HEAD + expected))
    return after


def test_a_bare_store_makes_an_out_parameter_and_later_reads_see_the_result():
    check(f"""    @pl.function
    def main(self, x: {T}) -> {T}:
        buf = pl.create_tensor([16, 16], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 16])
            pl.store(pl.add(t, t), [0, 0], buf)
        with pl.at(level=pl.Level.CORE_GROUP):
            u = pl.load(buf, [0, 0], [16, 16])
            pl.store(u, [0, 0], x)
        return buf
""", f"""    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: {T}, buf: pl.Out[{T}]) -> {T}:
        t = pl.load(x, [0, 0], [16, 16])
        pl.store(pl.add(t, t), [0, 0], buf)
        return buf

    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_1(self, buf: {T}, x: pl.Out[{T}]) -> {T}:
        u = pl.load(buf, [0, 0], [16, 16])
        pl.store(u, [0, 0], x)
        return x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}) -> {T}:
        buf = pl.create_tensor([16, 16], dtype=pl.FP32)
        buf2 = self.main_incore_0(x, buf)
        x2 = self.main_incore_1(buf2, x)
        return buf2
""")


def test_read_and_written_tensor_is_inout_and_values_used_later_are_outputs():
    check(f"""    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, acc: pl.Out[{T}]) -> {T}:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(acc, [0, 0], [16, 16])
            acc = pl.store(pl.add(a, pl.load(x, [0, 0], [16, 16])), [0, 0], acc)
            local = pl.add(x, x)
        return local
""", f"""    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, acc: pl.InOut[{T}], x: {T}) -> tuple[{T}, {T}]:
        a = pl.load(acc, [0, 0], [16, 16])
        acc2 = pl.store(pl.add(a, pl.load(x, [0, 0], [16, 16])), [0, 0], acc)
        local = pl.add(x, x)
        return acc, local

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, acc: pl.Out[{T}]) -> {T}:
        acc2, local = self.main_incore_0(acc, x)
        return local
""")


def test_regions_in_loops_and_branches():
    check(f"""    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, c: pl.Scalar[pl.INDEX], y: pl.Out[{T}]) -> {T}:
        for i in pl.range(2):
            if c == 0:
                with pl.at(level=pl.Level.CORE_GROUP):
                    y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y
""", f"""    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y2 = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, c: pl.Scalar[pl.INDEX], y: pl.Out[{T}]) -> {T}:
        for i in pl.range(2):
            if c == 0:
                y = self.main_incore_0(x, y)
        return y
""")


TASKS = f"""    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, s: pl.Out[{T}], y: pl.Out[{T}]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="main") as first:
            s[:] = pl.add(x, x)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="main", deps=[first]) as second:
            y[:] = pl.add(s, s)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="main", deps=[first, second]):
            y[:] = pl.add(y, s)
        return y
"""


def test_a_name_hint_that_is_taken_gets_the_smallest_free_suffix():
    program = outline(TASKS)
    assert [f.name for f in program.functions] == ["main_0", "main_1", "main_2", "main"]


def test_the_printed_frontend_keeps_the_scopes_and_round_trips():
    program = pl.parse_program(HEAD + TASKS)
    text = program.as_python()
    assert 'with pl.at(level=pl.Level.CORE_GROUP, name_hint="main", deps=[first]) as second:' \
        in text
    assert_structural_equal(pl.parse_program(text), program)


@pytest.mark.parametrize("body,error,phrase", [
    ("t = pl.load(x, [0, 0], [16, 16])\n        with pl.at(level=pl.Level.CORE_GROUP):\n"
     "            t = pl.exp(t)\n        return y", PassError, "only DDR tensors and scalars cross"),
    ("with pl.at(level=pl.Level.CORE_GROUP):\n            t = pl.load(x, [0, 0], [16, 16])\n"
     "        y = pl.store(t, [0, 0], y)\n        return y", PassError,
     "only DDR tensors cross a kernel boundary"),
    ("with pl.at(level=pl.Level.CORE_GROUP):\n            with pl.at(level=pl.Level.CORE_GROUP):"
     "\n                y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)\n        return y",
     PassError, "nested inside another InCore scope"),
    ("with open('f'):\n            pass", ParseError, "is not a kernel scope"),
    ("with pl.at(level=pl.Level.CORE_GROUP) as (a, b):\n            pass", ParseError,
     "optionally 'as task_id'"),
    ("with pl.at(level=pl.Level.CORE_GROUP, deps=[x]):\n            y[:] = pl.add(x, x)",
     ParseError, "'x' is not a task id"),
    ("with pl.at(level=pl.Level.CORE_GROUP, deps=x):\n            y[:] = pl.add(x, x)",
     ParseError, "takes a list of task ids"),
    ("with pl.at(level=pl.Level.CORE_GROUP, optimizations=[1]):\n            y[:] = pl.add(x, x)",
     ParseError, "optimizations"),
    ("with pl.cluster() as t:\n            y[:] = pl.add(x, x)", ParseError, "binds no task id"),
    ("for i in pl.spmd(2, deps=[x]):\n            y[:] = pl.add(x, x)", ParseError,
     "does not accept 'deps=' here"),
])
def test_scope_errors_name_the_line(body, error, phrase):
    src = (f"    @pl.function(type=pl.FunctionType.Orchestration)\n"
           f"    def main(self, x: {T}, y: pl.Out[{T}]) -> {T}:\n        " + body + "\n")
    with pytest.raises(error, match=phrase) as info:
        outline(src)
    assert info.value.loc is not None and info.value.loc.line >= 6


def test_a_runtime_scope_in_a_kernel_is_an_error():
    with pytest.raises(ParseError, match="belongs to the orchestration function"):
        outline(f"""    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        with pl.manual_scope():
            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y
""")


def test_scope_optimizations_print_round_trip_and_become_kernel_attrs():
    src = f"""    @pl.function
    def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)], name_hint="k"):
            t = pl.load(x, [0, 0], [16, 16])
            out = pl.store(t, [0, 0], out)
        return out
"""
    parsed = pl.parse_program(HEAD + src)
    printed = print_program(parsed)
    assert ("optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]"
            in printed)
    assert_structural_equal(pl.parse_program(printed), parsed)
    kernel = outline(src).get_function("k")
    assert kernel.attrs == {"split": pl.SplitMode.UP_DOWN, "slot_num": 4}


@pytest.mark.parametrize("opts, message", [
    ("[pl.split(pl.SplitMode.UP_DOWN), pl.split(pl.SplitMode.NONE)]", "names split twice"),
    ("[pl.cross_core_slot(slot_num=0)]", "needs slot_num"),
    ("[pl.split(1)]", r"is not pl.split\(mode\)"),
])
def test_bad_scope_optimizations_are_parse_errors(opts, message):
    src = f"""    @pl.function
    def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations={opts}):
            out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
        return out
"""
    with pytest.raises(ParseError, match=message):
        pl.parse_program(HEAD + src)


@pytest.mark.parametrize("region", [
    "for i in pl.spmd(2{}):\n            y[:] = pl.add(x, x)",
    "with pl.spmd(2{}):\n            with pl.at(level=pl.Level.CORE_GROUP):\n"
    "                y[:] = pl.add(x, x)",
    "with pl.at(level=pl.Level.CORE_GROUP{}):\n            y[:] = pl.add(x, x)",
])
def test_allow_early_resolve_is_a_timing_hint_on_every_region_form(region):
    """PyPTO's early-dispatch opt-in changes only when the runtime picks a task up; ptoc's
    scheduler has no early resolution, so the program is the one without it."""
    src = (f"    @pl.function(type=pl.FunctionType.Orchestration)\n"
           f"    def main(self, x: {T}, y: pl.Out[{T}]) -> {T}:\n        {region}\n"
           f"        return y\n")
    assert_structural_equal(pl.parse_program(HEAD + src.format(", allow_early_resolve=True")),
                            pl.parse_program(HEAD + src.format("")))
