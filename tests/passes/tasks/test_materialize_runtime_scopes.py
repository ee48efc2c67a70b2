"""MaterializeRuntimeScopes: Before -> Expected (AUTO scopes around the body, for bodies and
if arms; none inside a MANUAL scope; auto_scope=False functions and kernels untouched)."""

import pytest

import ptoc.language as pl
from ptoc.errors import PtocError
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.properties import IRProperty, check_property
from ptoc.passes.tasks import derive_call_directions, materialize_runtime_scopes

KERNEL = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, y: pl.InOut[pl.Tensor[[32], pl.FP32]]) -> pl.Tensor[[32], pl.FP32]:
        t = pl.load(y, [0], [32])
        y = pl.store(pl.adds(t, 1.0), [0], y)
        return y

"""
SIG = ("    @pl.function(type=pl.FunctionType.Orchestration{opt})\n"
       "    def main(self, y: pl.InOut[pl.Tensor[[32], pl.FP32]], n: pl.Scalar[pl.INDEX]"
       ") -> pl.Tensor[[32], pl.FP32]:\n")
DIRS = ', attrs={"arg_directions": [pl.adir.inout]}'


def parse(body: str, auto_scope: bool = True):
    return pl.parse_program(KERNEL + SIG.format(opt="" if auto_scope else ", auto_scope=False")
                            + body)


def materialize(body: str):
    with PassContext():
        return materialize_runtime_scopes()(derive_call_directions()(parse(body)))


def check(before: str, expected: str):
    out = materialize(before)
    assert_structural_equal(out, parse(expected.replace("DIRS", DIRS), auto_scope=False))
    with PassContext():
        assert_structural_equal(materialize_runtime_scopes()(out), out)   # idempotent
    assert check_property(IRProperty.RuntimeScopesMaterialized, out) is True
    return out


def test_the_body_every_loop_body_and_both_if_arms_get_an_auto_scope():
    check("""        for i in pl.range(4):
            if i < n:
                y = self.bump(y)
            else:
                y = self.bump(y)
        return y
""", """        with pl.scope():
            for i, (y1,) in pl.range(4, init_values=(y,)):
                with pl.scope():
                    if i < n:
                        with pl.scope():
                            y2 = self.bump(y1DIRS)
                            y3 = pl.yield_(y2)
                    else:
                        with pl.scope():
                            y4 = self.bump(y1DIRS)
                            y3 = pl.yield_(y4)
                    y5 = pl.yield_(y3)
            return y5
""")


def test_nothing_is_added_inside_a_manual_scope():
    check("""        with pl.manual_scope():
            for i in pl.range(4):
                y = self.bump(y)
        for i in pl.range(2):
            y = self.bump(y)
        return y
""", """        with pl.scope():
            with pl.scope(mode=pl.ScopeMode.MANUAL):
                for i, (y1,) in pl.range(4, init_values=(y,)):
                    y2 = self.bump(y1DIRS)
                    y3 = pl.yield_(y2)
            for j, (y4,) in pl.range(2, init_values=(y3,)):
                with pl.scope():
                    y5 = self.bump(y4DIRS)
                    y6 = pl.yield_(y5)
            return y6
""")


def test_a_function_that_places_its_own_scopes_is_left_alone():
    before = parse("""        with pl.scope():
            for i in pl.range(4):
                y = self.bump(y)
            return y
""", auto_scope=False)
    with PassContext():
        directed = derive_call_directions()(before)
        assert materialize_runtime_scopes()(directed) is directed


def test_a_hand_placed_auto_scope_in_a_compiler_scoped_function_is_refused():
    with pytest.raises(PtocError, match=r"placed by the compiler"):
        parse("""        with pl.scope():
            y = self.bump(y)
        return y
""")
