"""DeriveCallDirections: Before -> Expected for every rule of the direction table."""

import re

import pytest

import ptoc.language as pl
from ptoc.ir.equality import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.properties import IRProperty, check_property
from ptoc.passes.tasks import derive_call_directions
from task_kernels import KERNELS as TASK_KERNELS

KERNELS = TASK_KERNELS + """    @pl.function(type=pl.FunctionType.Orchestration)
"""

IN, OUT_EXISTING, INOUT, SCALAR, NO_DEP = ("pl.adir.input", "pl.adir.output_existing",
                                          "pl.adir.inout", "pl.adir.scalar", "pl.adir.no_dep")


def dirs(*names):
    return '{"arg_directions": [' + ", ".join(names) + "]}"


def derive(body: str):
    with PassContext():
        return derive_call_directions()(pl.parse_program(KERNELS + body))


def annotated(body: str, directions: list[tuple[str, ...]]) -> str:
    """``body`` with ``attrs={"arg_directions": [...]}`` added to its kernel calls, in order."""
    calls = iter(directions)

    def add(match):
        return f"{match.group(1)}, attrs={dirs(*next(calls))})"
    out = re.sub(r"(self\.(?:fill|bump)\([^()]*?)\)(?=\n)", add, body)
    assert next(calls, None) is None
    return out


def check(before: str, *directions: tuple[str, ...]):
    out = derive(before)
    assert_structural_equal(out, pl.parse_program(KERNELS + annotated(before, list(directions))))
    return out


SIG = "    def main(self, x: pl.Tensor[[32], pl.FP32]{extra}) -> pl.Tensor[[{n}], pl.FP32]:\n"


def main(body: str, extra: str = "", n: int = 32) -> str:
    return SIG.format(extra=extra, n=n) + body


def test_first_writer_of_a_local_buffer_does_not_wait_and_the_second_does():
    check(main("""        b = pl.create_tensor([32], dtype=pl.FP32)
        b = self.fill(x, b)
        b = self.fill(x, b)
        return b
"""), (IN, OUT_EXISTING), (IN, INOUT))


def test_scalar_and_inout_parameters():
    check(main("""        y = self.bump(1.5, y)
        return y
""", ", y: pl.Out[pl.Tensor[[32], pl.FP32]]"), (SCALAR, INOUT))


@pytest.mark.parametrize("loop,want", [("pl.range", INOUT), ("pl.parallel", OUT_EXISTING)])
def test_out_under_a_sequential_loop_waits_for_the_previous_iteration(loop, want):
    check(main(f"""        for i in {loop}(4):
            b = pl.create_tensor([32], dtype=pl.FP32)
            b = self.fill(x, b)
        return x
"""), (IN, want))


def test_enclosing_inout_parameter_is_read_by_its_first_writer():
    check(main("""        y = self.fill(x, y)
        return y
""", ", y: pl.InOut[pl.Tensor[[32], pl.FP32]]"), (IN, INOUT))


def test_out_parameter_first_writer_and_a_write_after_a_branch():
    # the if is one writer unit: the call after it sees y written (R-prior); inside the
    # arm the call is the first writer of y in its block
    check(main("""        if c == 0:
            y2 = self.fill(x, y)
            y3 = pl.yield_(y2)
        else:
            y3 = pl.yield_(y)
        y4 = self.fill(x, y3)
        return y4
""", ", c: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[32], pl.FP32]]"), (IN, OUT_EXISTING),
          (IN, INOUT))


def test_value_that_may_name_two_buffers_is_conservative():
    check(main("""        a = pl.create_tensor([32], dtype=pl.FP32)
        b = pl.create_tensor([32], dtype=pl.FP32)
        if c == 1:
            d = pl.yield_(b)
        else:
            d = pl.yield_(a)
        d = self.fill(x, d)
        return d
""", ", c: pl.Scalar[pl.INDEX]"), (IN, INOUT))


def test_slices_are_buffers_of_their_own():
    check(main("""        lo = pl.slice(y, [32], [0])
        lo = self.fill(x, lo)
        hi = pl.slice(y, [32], [32])
        hi = self.fill(x, hi)
        return y
""", ", y: pl.Out[pl.Tensor[[64], pl.FP32]]", 64), (IN, OUT_EXISTING), (IN, OUT_EXISTING))


def test_written_directions_are_authoritative_and_overrides_force_no_dep():
    body = """        b = pl.create_tensor([32], dtype=pl.FP32)
        b = self.fill(x, b, attrs={written})
        b = self.fill(x, b, attrs={{"arg_direction_overrides": [1]{derived}}})
        return b
"""
    out = derive(main(body.format(written=dirs(IN, INOUT), derived="")))
    want = main(body.format(written=dirs(IN, INOUT),
                            derived=f', "arg_directions": [{IN}, {NO_DEP}]'))
    assert_structural_equal(out, pl.parse_program(KERNELS + want))


def test_idempotent_and_resolves_the_property():
    once = derive(main("""        b = pl.create_tensor([32], dtype=pl.FP32)
        b = self.fill(x, b)
        return b
"""))
    with PassContext():
        twice = derive_call_directions()(once)
    assert twice is once
    assert check_property(IRProperty.CallDirectionsResolved, once) is True


def test_the_property_is_decided_per_program_for_a_shared_function():
    """The checker remembers each function's answer, but a call counts as a kernel call only
    in a program holding the callee: the same function object is judged again there."""
    import dataclasses

    program = pl.parse_program(KERNELS + main("""        b = pl.create_tensor([32], dtype=pl.FP32)
        b = self.fill(x, b)
        return b
"""))
    orchestration = program.get_function("main")
    alone = dataclasses.replace(program, functions=(orchestration,))
    assert check_property(IRProperty.CallDirectionsResolved, alone) is True   # no callee here
    assert check_property(IRProperty.CallDirectionsResolved, program) is False
    assert check_property(IRProperty.CallDirectionsResolved, alone) is True
