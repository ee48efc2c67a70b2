"""``break`` / ``continue`` are rewritten into structured control flow when a loop is
parsed (PyPTO's CtrlFlowTransform): each program below equals the same loop written with
the flags by hand."""

from __future__ import annotations

import ptoc.language as pl
from ptoc import ir

HEAD = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def f(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
"""


def program(*lines: str):
    return pl.parse_program(HEAD + "".join(f"        {line}\n" for line in lines))


def test_continue_runs_the_rest_of_the_trip_under_a_test():
    jumps = program("s = 0", "for i in pl.range(8):", "    if i == n:", "        continue",
                    "    s = s + i", "return s")
    by_hand = program("s = 0", "for i in pl.range(8):", "    c = False", "    if i == n:",
                      "        c = True", "    if not c:", "        s = s + i", "return s")
    ir.assert_structural_equal(jumps, by_hand)


def test_break_makes_a_range_loop_a_while_loop_over_its_variable():
    jumps = program("s = 0", "for i in pl.range(1, 8, 2):", "    s = s + i", "    if s > n:",
                    "        break", "return s")
    by_hand = program("s = 0", "i = 1", "stop = 8", "b = False",
                      "while i < stop and not b:",
                      "    s = s + i", "    if s > n:", "        b = True",
                      "    if not b:", "        i = i + 2", "return s")
    ir.assert_structural_equal(jumps, by_hand)


def test_break_in_a_while_loop_joins_its_condition():
    jumps = program("s = 0", "while s < n:", "    if s == 5:", "        break", "    s = s + 1",
                    "return s")
    by_hand = program("s = 0", "b = False", "while s < n and not b:", "    if s == 5:",
                      "        b = True", "    if not b:", "        s = s + 1", "return s")
    ir.assert_structural_equal(jumps, by_hand)


def test_a_jump_of_an_inner_loop_stays_in_it():
    jumps = program("s = 0", "for j in pl.range(3):", "    for i in pl.range(8):",
                    "        if i == n:", "            continue", "        s = s + i",
                    "return s")
    loop = jumps.functions[0].body.stmts[1]
    inner = [s for s in loop.body.stmts if isinstance(s, type(loop))]
    assert isinstance(loop, ir.ForStmt) and len(inner) == 1


def test_a_pre_ssa_pl_while_takes_jumps_as_the_python_while_it_means():
    jumps = program("for (s,) in pl.while_(init_values=(0,)):", "    pl.cond(s < n)",
                    "    if s == 5:", "        break", "    s = s + 1", "return s")
    by_hand = program("s = 0", "b = False", "while s < n and not b:", "    if s == 5:",
                      "        b = True", "    if not b:", "        s = s + 1", "return s")
    ir.assert_structural_equal(jumps, by_hand)
