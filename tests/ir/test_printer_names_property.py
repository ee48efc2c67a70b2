"""Property: printed names never change meaning, even when dead variables pass names on.

Programs are built with only two hints ("x" and "y"), so almost every definition collides
with an earlier one; loops (with and without carried values) and branches put the
collisions in every kind of block. Printing and parsing back must give the same program.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from ir_samples import INDEX
from ptoc.dtypes import FunctionType
from ptoc.ir.equality import assert_structural_equal
from ptoc.ir.nodes import (
    AssignStmt, BinOp, ConstInt, ForStmt, Function, IfStmt, IterArg, Param, Program, ReturnStmt,
    SeqStmts, Var, YieldStmt,
)
from ptoc.ir.verifier import verify
from ptoc.language import parse_program

HINTS = ("x", "y")


class _Gen:
    def __init__(self, data):
        self.data = data

    def pick(self, visible):
        return self.data.draw(st.sampled_from(visible))

    def value(self, visible):
        return BinOp("+", self.pick(visible), ConstInt(self.data.draw(st.integers(0, 9))))

    def block(self, visible, depth):
        """Statements plus the variables still visible after them."""
        visible = list(visible)
        out = []
        for _ in range(self.data.draw(st.integers(1, 4))):
            kind = self.data.draw(st.sampled_from(["assign"] * 3 + (["for", "if"] if depth < 2 else [])))
            if kind == "assign":
                v = Var(self.data.draw(st.sampled_from(HINTS)), INDEX)
                out.append(AssignStmt(v, self.value(visible)))
                visible.append(v)
            elif kind == "for":
                i = Var(self.data.draw(st.sampled_from(HINTS)), INDEX)
                carried = self.data.draw(st.booleans())
                iter_args = (IterArg(self.data.draw(st.sampled_from(HINTS)), INDEX,
                                     init=self.pick(visible)),) if carried else ()
                body, inner = self.block(visible + [i, *iter_args], depth + 1)
                rvs = ()
                if carried:
                    body.append(YieldStmt((self.pick(inner),)))
                    rvs = (Var(self.data.draw(st.sampled_from(HINTS)), INDEX),)
                out.append(ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), iter_args,
                                   SeqStmts(tuple(body)), rvs))
                visible.extend(rvs)
            else:
                then_b, then_v = self.block(visible, depth + 1)
                else_b, else_v = self.block(visible, depth + 1)
                then_b.append(YieldStmt((self.pick(then_v),)))
                else_b.append(YieldStmt((self.pick(else_v),)))
                rv = Var(self.data.draw(st.sampled_from(HINTS)), INDEX)
                out.append(IfStmt(BinOp("<", self.pick(visible), ConstInt(3)),
                                  SeqStmts(tuple(then_b)), SeqStmts(tuple(else_b)), (rv,)))
                visible.append(rv)
        return out, visible


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_colliding_hints_roundtrip(data):
    params = [Var(h, INDEX) for h in HINTS]
    body, visible = _Gen(data).block(params, 0)
    ret = data.draw(st.sampled_from(visible))
    fn = Function("k", tuple(Param(p) for p in params), (INDEX,),
                  SeqStmts(tuple(body) + (ReturnStmt((ret,)),)), FunctionType.Opaque)
    program = Program("Names", (fn,))
    verify(program)
    assert_structural_equal(program, parse_program(program.as_python()))
