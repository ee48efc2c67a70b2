"""WhileStmt: the DSL forms parse to the IR PyPTO defines, print -> parse is the identity,
equality/hash/visitors/verifier see the condition, and passes not written for while loops
refuse them by name."""

from __future__ import annotations

import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import DataType
from ptoc.errors import PassError, VerificationError
from ptoc.ir import nodes
from ptoc.ir.types import ScalarType

INDEX = ScalarType(DataType.INDEX)

HEAD = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def f(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
"""


def program(*lines: str) -> nodes.Program:
    return pl.parse_program(HEAD + "".join(f"        {line}\n" for line in lines))


def expected_counter(step: int = 1) -> nodes.Program:
    """``i = 0; s = 1; while i < n: i, s = i + step, s * 2; return s`` built node by node."""
    n = nodes.Var("n", INDEX)
    i = nodes.IterArg("i", INDEX, init=nodes.ConstInt(0))
    s = nodes.IterArg("s", INDEX, init=nodes.ConstInt(1))
    i2 = nodes.Var("i2", INDEX)
    s2 = nodes.Var("s2", INDEX)
    i_out, s_out = nodes.Var("i_out", INDEX), nodes.Var("s_out", INDEX)
    body = nodes.SeqStmts((
        nodes.AssignStmt(i2, nodes.BinOp("+", i, nodes.ConstInt(step))),
        nodes.AssignStmt(s2, nodes.BinOp("*", s, nodes.ConstInt(2))),
        nodes.YieldStmt((i2, s2)),
    ))
    loop = nodes.WhileStmt(nodes.BinOp("<", i, n), (i, s), body, (i_out, s_out))
    fn = nodes.Function("f", (nodes.Param(n),), (INDEX,),
                        nodes.SeqStmts((loop, nodes.ReturnStmt((s_out,)))))
    return nodes.Program("P", (fn,))


EXPLICIT = ("for (i, s) in pl.while_(init_values=(0, 1)):", "    pl.cond(i < n)",
            "    i2 = i + 1", "    s2 = s * 2", "    i_out, s_out = pl.yield_(i2, s2)",
            "return s_out")
NATURAL = ("i = 0", "s = 1", "while i < n:", "    i = i + 1", "    s = s * 2", "return s")


def test_pl_while_parses_to_pyptos_while_stmt():
    ir.assert_structural_equal(program(*EXPLICIT), expected_counter())
    assert not ir.structural_equal(program(*EXPLICIT), expected_counter(step=2))


def test_a_plain_python_while_carries_the_names_its_body_rebinds():
    parsed = program(*NATURAL)
    loop = parsed.functions[0].body.stmts[2]
    assert isinstance(loop, nodes.WhileStmt)
    assert [ia.name for ia in loop.iter_args] == ["i", "s"]
    explicit = program("i0 = 0", "s0 = 1", "for (i, s) in pl.while_(init_values=(i0, s0)):",
                       "    pl.cond(i < n)", "    i2 = i + 1", "    s2 = s * 2",
                       "    i_out, s_out = pl.yield_(i2, s2)", "return s_out")
    ir.assert_structural_equal(parsed, explicit)


def test_pre_ssa_while_body_rebinds_its_header_names():
    parsed = program("for (i, s) in pl.while_(init_values=(0, 1)):", "    pl.cond(i < n)",
                     "    i = i + 1", "    s = s * 2", "return s")
    ir.assert_structural_equal(parsed, expected_counter())


@pytest.mark.parametrize("lines", [EXPLICIT, NATURAL,
                                   ("k = 0", "while k < n:", "    pass", "return k")],
                         ids=["explicit", "natural", "no_carry"])
def test_print_parse_round_trip_and_hash(lines):
    before = program(*lines)
    text = ir.print_program(before)
    after = pl.parse_program(text)
    ir.assert_structural_equal(before, after)
    assert ir.structural_hash(before) == ir.structural_hash(after)
    assert ir.print_program(after) == text


def test_printed_forms_are_pyptos():
    text = ir.print_program(program(*EXPLICIT))
    assert "for (i, s) in pl.while_(init_values=(0, 1)):" in text     # PyPTO's spelling
    assert "pl.cond(i < n)" in text and "i_out, s_out = pl.yield_(i2, s2)" in text
    bare = ir.print_program(program("k = 0", "while k < n:", "    pass", "return k"))
    assert "while k < n:" in bare and "pl.while_" not in bare


def test_pypto_constructor_and_fields():
    span = ir.Span.unknown()
    x = ir.IterArg("x", ir.ScalarType(DataType.INT64), ir.ConstInt(0, DataType.INT64, span), span)
    cond = ir.Lt(x, ir.ConstInt(10, DataType.INT64, span), DataType.BOOL, span)
    final = ir.Var("x_final", ir.ScalarType(DataType.INT64), span)
    loop = ir.WhileStmt(cond, [x], ir.YieldStmt([ir.Add(x, ir.ConstInt(1, DataType.INT64, span),
                                                        DataType.INT64, span)], span),
                        [final], span)
    assert isinstance(loop, ir.WhileStmt) and isinstance(loop, ir.Stmt)
    assert loop.condition is cond and list(loop.iter_args) == [x] and list(loop.return_vars) == [final]
    with pytest.raises(AttributeError):
        loop.condition = cond
    assert "pl.while_(init_values=(pl.const(0, pl.INT64),))" in loop.as_python()


def test_mutator_keeps_the_condition_on_the_new_iter_arg():
    """A new init makes a new IterArg; the condition and body must read the new one."""
    before = program(*EXPLICIT)
    loop = before.functions[0].body.stmts[0]
    n = before.functions[0].params[0].var
    old_init = loop.iter_args[0].init
    after = ir.IRMutator({}).mutate(before)
    assert after is before      # identity rewrite keeps the nodes

    class NewInit(ir.IRMutator):
        def visit_const_int(self, node):
            return nodes.ConstInt(5) if node is old_init else node

    out = NewInit().mutate(before).functions[0].body.stmts[0]
    assert out.iter_args[0].init.value == 5
    assert out.cond.lhs is out.iter_args[0] and out.cond.rhs is n
    ir.verify(NewInit().mutate(before))


def test_visitor_sees_condition_uses_after_iter_arg_definitions():
    seen: list[str] = []

    class Order(ir.IRVisitor):
        def visit_def(self, var):
            seen.append(f"def {var.name}")

        def visit_var(self, node):
            seen.append(f"use {node.name}")

    Order().visit(program(*EXPLICIT).functions[0].body.stmts[0])
    assert seen[:4] == ["def i", "def s", "use i", "use n"]
    assert seen[-2:] == ["def i_out", "def s_out"]


@pytest.mark.parametrize("breakage,phrase", [
    (lambda w: nodes.WhileStmt(nodes.BinOp("+", w.iter_args[0], nodes.ConstInt(1)), w.iter_args,
                               w.body, w.return_vars), "not a BOOL scalar"),
    (lambda w: nodes.WhileStmt(w.cond, w.iter_args, w.body, w.return_vars[:1]),
     "2 iter arg(s) but 1 return variable(s)"),
    (lambda w: nodes.WhileStmt(w.cond, w.iter_args, nodes.SeqStmts(w.body.stmts[:-1]),
                               w.return_vars), "must end with pl.yield_"),
    (lambda w: nodes.WhileStmt(nodes.BinOp("<", w.return_vars[0], nodes.ConstInt(3)), w.iter_args,
                               w.body, w.return_vars), "used before it is defined"),
], ids=["cond_not_bool", "results", "no_yield", "cond_reads_result"])
def test_verifier_rules(breakage, phrase):
    prog = expected_counter()
    fn = prog.functions[0]
    loop = fn.body.stmts[0]
    bad = nodes.SeqStmts((breakage(loop), *fn.body.stmts[1:]))
    with pytest.raises(VerificationError, match="") as info:
        ir.verify(nodes.Program("P", (nodes.Function("f", fn.params, fn.return_types, bad),)))
    assert phrase in str(info.value)


def test_a_pass_not_written_for_while_loops_refuses_by_name():
    from ptoc.passes.base import program_pass

    @program_pass(name="CountsLoops")
    def counts_loops(prog, ctx):
        return prog

    with pytest.raises(PassError, match="pass CountsLoops does not support while loops"):
        counts_loops()(program(*EXPLICIT))
    assert counts_loops()(program("return n")) is not None


def test_pypto_builder_while_loop():
    """``IRBuilder.while_loop`` as PyPTO's: carries, a condition set once they exist, results."""
    i64 = ir.ScalarType(DataType.INT64)
    span = ir.Span.unknown()
    ib = ir.IRBuilder()
    with ib.function("count") as f:
        n = f.param("n", i64)
        f.return_type(i64)
        with ib.while_loop(ir.ConstBool(True, span)) as loop:
            x = loop.iter_arg("x", ir.ConstInt(0, DataType.INT64, span))
            loop.return_var("x_final")
            loop.set_condition(ir.Lt(x, n, DataType.BOOL, span))
            ib.emit(ir.YieldStmt([ir.Add(x, ir.ConstInt(1, DataType.INT64, span),
                                         DataType.INT64, span)], span))
        ib.return_stmt(loop.output())
    built = f.get_result()
    ir.verify(built)
    parsed = pl.parse_program(HEAD.replace("pl.INDEX", "pl.INT64").replace("def f", "def count")
                              + "        for (x,) in pl.while_(init_values=(pl.const(0, pl.INT64),)):\n"
                              "            pl.cond(x < n)\n"
                              "            x_final: pl.Scalar[pl.INT64] = pl.yield_(x + pl.const(1, pl.INT64))\n"
                              "        return x_final\n")
    ir.assert_structural_equal(built, parsed.functions[0])
    with pytest.raises(RuntimeError, match="1 iter args but 0 return vars"):
        with ib.function("bad") as g:
            with ib.while_loop(True) as loop:
                loop.iter_arg("x", 0)
