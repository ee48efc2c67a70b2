"""AutoDeriveTaskDependencies: Before -> Expected for each rule (off by default; edges for
RAW/WAR/WAW; covered slots demoted; what makes a region give up; manual scopes skipped)."""

import re

import pytest

import ptoc.language as pl
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.tasks import auto_derive_task_dependencies, derive_call_directions
from task_kernels import KERNELS as TASK_KERNELS

KERNELS = TASK_KERNELS + """    @pl.function(type=pl.FunctionType.InCore)
    def half(self, x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        t = pl.load(x, [0], [16])
        y = pl.store(t, [0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration{opt})
    def main(self, x: pl.Tensor[[32], pl.FP32], n: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[32], pl.FP32]], w: pl.Out[pl.Tensor[[32], pl.FP32]]
             ) -> pl.Tensor[[32], pl.FP32]:
"""

IN, OE, INOUT, SCALAR, NO_DEP = ("pl.adir.input", "pl.adir.output_existing", "pl.adir.inout",
                                 "pl.adir.scalar", "pl.adir.no_dep")
LAUNCH = re.compile(r"self\.(fill|bump|half)\(|pl\.submit\(")


def attrs(directions, edges=(), extra=""):
    """``attrs={...}`` of a call: its directions and the compiler's edges."""
    text = '"arg_directions": [' + ", ".join(directions) + "]"
    if edges:
        text += ', "compiler_manual_dep_edges": [' + ", ".join(edges) + "]"
    return "attrs={" + text + extra + "}"


def annotated(body: str, calls) -> str:
    """``body`` with ``attrs`` added to its launches, in order: each of ``calls`` is
    (directions, edges)."""
    specs = iter(calls)
    lines = [line[:-1] + f", {attrs(*next(specs))})" if LAUNCH.search(line) else line
             for line in body.strip("\n").splitlines()]
    assert next(specs, None) is None
    return "\n".join(lines)


def program(body: str, auto_scope: bool = True):
    lines = "".join(f"        {line}\n" for line in body.strip("\n").splitlines())
    opt = "" if auto_scope else ", auto_scope=False"
    return pl.parse_program(KERNELS.format(opt=opt) + lines + "        return y\n")


def derive(body: str, auto_scope: bool = True, analyze: bool = True):
    with PassContext():
        directed = derive_call_directions()(program(body, auto_scope))
        return auto_derive_task_dependencies(analyze_auto_scopes=analyze)(directed)


def check(before: str, *calls, auto_scope: bool = True):
    expected = program(annotated(before, calls), auto_scope)
    assert_structural_equal(derive(before, auto_scope), expected)


def unchanged(body: str, auto_scope: bool = True):
    with PassContext():
        assert_structural_equal(derive(body, auto_scope),
                                derive_call_directions()(program(body, auto_scope)))


RAW = """
b = pl.create_tensor([32], dtype=pl.FP32)
b1 = self.fill(x, b)
y = self.fill(b1, y)
"""
PLAIN = ((IN, OE),)                        # a launch without a hazard keeps its lookups


def test_off_by_default_the_pass_changes_nothing():
    with PassContext():
        directed = derive_call_directions()(program(RAW))
        assert auto_derive_task_dependencies()(directed) is directed
    with PassContext(analyze_auto_scopes_for_deps=True):
        assert auto_derive_task_dependencies()(directed) is not directed   # the switch


def test_a_read_after_write_gets_the_writer_as_an_edge_and_the_read_needs_no_lookup():
    check(RAW, PLAIN, ((NO_DEP, OE), ["b1"]))


def test_write_after_read_and_after_write_are_edges_too_and_a_covered_inout_only_writes():
    check(RAW + "b2 = self.bump(1.0, b1)", PLAIN, ((NO_DEP, OE), ["b1"]),
          ((SCALAR, OE), ["b1", "y"]))


def test_two_reads_never_order_and_a_slot_without_a_hazard_keeps_its_lookup():
    check("y = self.fill(x, y)\nw = self.fill(x, w)", PLAIN, PLAIN)


def test_constant_slices_of_one_buffer_order_only_where_they_overlap():
    check("""
b = pl.create_tensor([32], dtype=pl.FP32)
lo = pl.slice(b, [16], [0])
hi = pl.slice(b, [16], [16])
mid = pl.slice(b, [16], [8])
xs = pl.slice(x, [16], [0])
lo1 = self.half(xs, lo)
h = pl.create_tensor([16], dtype=pl.FP32)
h1 = self.half(hi, h)
m = pl.create_tensor([16], dtype=pl.FP32)
m1 = self.half(mid, m)
""", PLAIN, PLAIN, ((NO_DEP, OE), ["lo1"]))


def test_an_edge_the_user_stated_is_not_repeated_but_still_covers_the_slot():
    check("""
b = pl.create_tensor([32], dtype=pl.FP32)
b1, t1 = pl.submit(self.fill, x, b)
y, t2 = pl.submit(self.fill, b1, y, deps=[t1])
""", PLAIN, ((NO_DEP, OE),))


def test_a_submit_is_named_by_its_task_id():
    check("""
b = pl.create_tensor([32], dtype=pl.FP32)
b1, t1 = pl.submit(self.fill, x, b)
y = self.fill(b1, y)
""", PLAIN, ((NO_DEP, OE), ["t1"]))


def test_a_manual_scope_is_the_users_contract():
    unchanged("with pl.manual_scope():\n" + "".join(f"    {line}\n" for line in
                                                    RAW.strip("\n").splitlines()))


@pytest.mark.parametrize("body", [
    # a task inside a finished loop has no name after it (even in a loop of one trip)
    RAW + "c = pl.create_tensor([32], dtype=pl.FP32)\nfor i in pl.range(1):\n"
    "    c = self.fill(x, c)\nw = self.fill(c, w)",
    # iteration i+1 overwrites what iteration i wrote and read: those tasks have no name
    RAW + "c = pl.create_tensor([32], dtype=pl.FP32)\nfor i in pl.range(2):\n"
    "    c1 = self.fill(x, c)\n    w = self.fill(c1, w)",
    # a carry yielding another buffer than its init: the body's view of it would miss one
    RAW + "for i in pl.range(2):\n    e = pl.create_tensor([32], dtype=pl.FP32)\n"
    "    e1 = self.fill(b1, e)\n    d = pl.create_tensor([32], dtype=pl.FP32)\n"
    "    b1 = self.fill(x, d)",
    # a task inside an if arm has no name after the if
    RAW + "if n > 0:\n    z = self.fill(b1, y)\nelse:\n    z = self.fill(x, y)\nw = self.fill(z, w)",
    # an inner scope that gave up (its loop) exports its tasks unnamed: the outer gives up
    RAW + "with pl.scope():\n    c = pl.create_tensor([32], dtype=pl.FP32)\n"
    "    c1 = self.fill(x, c)\n    d = pl.create_tensor([32], dtype=pl.FP32)\n"
    "    for i in pl.range(2):\n        d = self.fill(x, d)\nw = self.fill(c1, w)",
])
def test_a_hazard_with_a_task_that_has_no_name_here_drops_the_whole_region(body):
    unchanged(body, auto_scope="pl.scope()" not in body)      # RAW's edge dropped as well


def test_in_an_if_arm_an_earlier_task_has_a_name():
    check(RAW + "if n > 0:\n    z = self.fill(b1, w)\nelse:\n    z = self.fill(x, w)",
          PLAIN, ((NO_DEP, OE), ["b1"]), ((NO_DEP, OE), ["b1"]), PLAIN)


def test_a_buffer_made_in_a_loop_body_is_new_every_iteration():
    check("""
for i in pl.range(4):
    t = pl.create_tensor([32], dtype=pl.FP32)
    u = pl.create_tensor([32], dtype=pl.FP32)
    t1 = self.fill(x, t)
    u1 = self.fill(t1, u)
""", ((IN, INOUT),), ((NO_DEP, INOUT), ["t1"]))


def test_a_scope_exports_its_named_tasks_to_the_enclosing_region():
    check("""
b = pl.create_tensor([32], dtype=pl.FP32)
with pl.scope():
    b1 = self.fill(x, b)
y = self.fill(b1, y)
""", PLAIN, ((NO_DEP, OE), ["b1"]), auto_scope=False)


def test_a_no_dep_slot_gets_no_edge_but_a_later_writer_waits_for_its_read():
    before = RAW.replace("self.fill(b1, y)", "self.fill(pl.no_dep(b1), y)") \
        + "b2 = self.bump(1.0, b1)"
    expected = annotated(RAW + "b2 = self.bump(1.0, b1)", [
        PLAIN, ((NO_DEP, OE), (), ', "arg_direction_overrides": [0]'),
        ((SCALAR, OE), ["b1", "y"])])
    assert_structural_equal(derive(before), program(expected))


def test_running_the_pass_twice_changes_nothing():
    once = derive(RAW + "b2 = self.bump(1.0, b1)")
    with PassContext():
        twice = auto_derive_task_dependencies(analyze_auto_scopes=True)(once)
    assert_structural_equal(twice, once)


def test_a_window_that_is_no_constant_box_gets_its_edge_but_keeps_its_lookup():
    check("""
b = pl.create_tensor([32], dtype=pl.FP32)
b1 = self.fill(x, b)
v = pl.slice(b1, [16], [0], valid_shape=[8])
m = pl.create_tensor([16], dtype=pl.FP32)
m1 = self.half(v, m)
""", PLAIN, ((IN, OE), ["b1"]))
