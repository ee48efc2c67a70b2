"""Property: the printer's minimal parentheses never change how Python groups an expression."""

from __future__ import annotations

import ast

from hypothesis import given, settings, strategies as st

from ir_samples import INDEX
from ptoc.ir.nodes import BinOp, ConstInt, UnaryOp, Var
from ptoc.ir.printer import format_node

VARS = [Var(n, INDEX) for n in ("a", "b", "c")]
BIN_OPS = ["+", "-", "*", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or"]

_AST_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
_AST_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}

leaves = st.one_of(st.sampled_from(VARS), st.integers(-5, 40).map(ConstInt))
exprs = st.recursive(
    leaves,
    lambda sub: st.one_of(
        st.builds(BinOp, st.sampled_from(BIN_OPS), sub, sub),
        st.builds(UnaryOp, st.sampled_from(["-", "not"]), sub),
    ),
    max_leaves=12,
)


def _from_ir(e):
    if isinstance(e, Var):
        return e.name
    if isinstance(e, ConstInt):
        return ("-", e.value.__abs__()) if e.value < 0 else e.value
    if isinstance(e, UnaryOp):
        return (e.op, _from_ir(e.operand))
    return (e.op, _from_ir(e.lhs), _from_ir(e.rhs))


def _from_ast(n):
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Constant):
        return n.value
    if isinstance(n, ast.UnaryOp):
        return ("-" if isinstance(n.op, ast.USub) else "not", _from_ast(n.operand))
    if isinstance(n, ast.BinOp):
        return (_AST_BIN[type(n.op)], _from_ast(n.left), _from_ast(n.right))
    if isinstance(n, ast.Compare):
        assert len(n.ops) == 1, "the printer must never produce a comparison chain"
        return (_AST_CMP[type(n.ops[0])], _from_ast(n.left), _from_ast(n.comparators[0]))
    if isinstance(n, ast.BoolOp):  # Python flattens `a and b and c`; IR nests to the left
        op = "and" if isinstance(n.op, ast.And) else "or"
        out = _from_ast(n.values[0])
        for v in n.values[1:]:
            out = (op, out, _from_ast(v))
        return out
    raise AssertionError(f"unexpected node {ast.dump(n)}")


@settings(max_examples=400, deadline=None)
@given(exprs)
def test_printed_expression_parses_to_the_same_tree(e):
    text = format_node(e)
    tree = ast.parse(text, mode="eval").body
    assert _from_ast(tree) == _from_ir(e), text
