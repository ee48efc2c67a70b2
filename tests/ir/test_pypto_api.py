"""PyPTO's Python IR API on ptoc's nodes: constructors, attribute names, hashing, visitors.

Everything here is written the way PyPTO code builds and rewrites IR (``ir.Var(name, type,
span)``, ``ir.Add(lhs, rhs, dtype, span)``, ``ir.Program(functions, name, span)``,
``IRVisitor``/``IRMutator`` subclasses overriding ``visit_*``) and checks that the result is
ptoc's own IR: it prints, parses back, compiles passes and compares like parsed IR.
"""

from __future__ import annotations

import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import DataType
from ptoc.ir import nodes, types

SPAN = ir.Span.unknown()
I64 = ir.ScalarType(DataType.INT64)


def scalar_program(name="P"):
    """``f(x, y) -> x + y * 2`` built with PyPTO's constructors."""
    x = ir.Var("x", I64, SPAN)
    y = ir.Var("y", I64, SPAN)
    prod = ir.Var("prod", I64, SPAN)
    r = ir.Var("r", I64, SPAN)
    body = ir.SeqStmts([
        ir.AssignStmt(prod, ir.Mul(y, ir.ConstInt(2, DataType.INT64, SPAN), DataType.INT64, SPAN),
                      SPAN),
        ir.AssignStmt(r, ir.Add(x, prod, DataType.INT64, SPAN), SPAN),
        ir.ReturnStmt([r], SPAN),
    ], SPAN)
    fn = ir.Function("f", [x, y], [I64], body, SPAN, type=ir.FunctionType.Opaque)
    return ir.Program([fn], name, SPAN)


def test_constructors_build_ptoc_nodes_that_print_and_parse_back():
    prog = scalar_program()
    assert type(prog) is nodes.Program and isinstance(prog, ir.Program)
    fn = prog.functions[0]
    assert type(fn.body.stmts[1].value) is nodes.BinOp and fn.body.stmts[1].value.op == "+"
    text = prog.as_python()
    assert "r: pl.Scalar[pl.INT64] = x + prod" in text
    ir.assert_structural_equal(prog, pl.parse_program(text))


def test_pypto_attribute_names():
    prog = scalar_program()
    fn = prog.functions["f"]
    assert fn.params[0].name_hint == "x" and fn.param_directions == (ir.ParamDirection.In,) * 2
    add = fn.body.stmts[1].value
    assert isinstance(add, ir.Add) and not isinstance(add, ir.Mul)
    assert isinstance(add, ir.BinaryExpr) and isinstance(add, ir.Expr)
    assert add.left.name_hint == "x" and add.dtype is DataType.INT64
    assert fn.body.stmts[2].value[0] is fn.body.stmts[1].var
    assert fn.span.is_valid() is False and ir.Span("k.py", 3, 4).begin_line == 3
    assert prog.get_global_var("f").name == "f" and prog["f"] is fn


def test_program_functions_is_a_sorted_name_mapping():
    g = scalar_program().functions[0]
    h = nodes.Function("a_first", g.params, g.return_types, g.body)
    prog = ir.Program([g, h], "P", SPAN)
    assert [f.name for f in prog.functions] == ["a_first", "f"]  # PyPTO sorts by name
    assert len(prog.functions) == 2 and prog.functions["f"] is g
    assert [gv.name for gv in prog.functions.keys()] == ["a_first", "f"]
    assert [f.name for f in prog.functions.values()] == ["a_first", "f"]
    assert all(prog.functions[gv] is fn for gv, fn in prog.functions.items())
    assert "f" in prog.functions and "nope" not in prog.functions
    with pytest.raises(ir.PyptoApiError, match="two functions named f"):
        ir.Program([g, g], "P", SPAN)


def test_structural_hash_agrees_with_structural_equal():
    a, b = scalar_program("A"), scalar_program("B")
    assert ir.structural_equal(a, b)
    assert ir.structural_hash(a) == ir.structural_hash(b)  # names and hints never matter
    x, y = ir.Var("x", I64, SPAN), ir.Var("y", I64, SPAN)
    one = ir.ConstInt(1, DataType.INT64, SPAN)
    ex, ey = ir.Add(x, one, DataType.INT64, SPAN), ir.Add(y, one, DataType.INT64, SPAN)
    assert ir.structural_hash(ex) != ir.structural_hash(ey)  # free variables by identity
    assert ir.structural_hash(ex, enable_auto_mapping=True) == \
        ir.structural_hash(ey, enable_auto_mapping=True)
    two = ir.ConstInt(2, DataType.INT64, SPAN)
    assert ir.structural_hash(ex) != ir.structural_hash(ir.Add(x, two, DataType.INT64, SPAN))


TILE_SRC = """\
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for i, (acc,) in pl.range(4, init_values=(out,)):
            t = pl.load(a, [0, 0], [16, 64])
            u = pl.add(t, t)
            v = pl.mul(u, t)
            nxt = pl.store(v, [0, 0], acc)
            res = pl.yield_(nxt)
        return res
"""


def test_visitor_subclass_overriding_pypto_hooks():
    class Counter(ir.IRVisitor):
        def __init__(self):
            super().__init__()
            self.loops, self.ops, self.exprs = 0, [], 0

        def visit_for_stmt(self, op):
            self.loops += 1
            super().visit_for_stmt(op)

        def visit_call(self, op):
            self.ops.append(op.op.name)
            super().visit_call(op)

    counter = Counter()
    counter.visit_program(pl.parse_program(TILE_SRC))
    assert counter.loops == 1
    assert counter.ops == ["tile.load", "tile.add", "tile.mul", "tile.store"]


def test_visitor_generic_and_binary_hooks():
    class Seen(ir.IRVisitor):
        def __init__(self):
            super().__init__()
            self.exprs, self.binary, self.adds = 0, 0, 0

        def visit_expr(self, op):
            self.exprs += 1
            super().visit_expr(op)

        def visit_binary_expr(self, op):
            self.binary += 1
            super().visit_binary_expr(op)

        def visit_add(self, op):
            self.adds += 1
            super().visit_add(op)

    seen = Seen()
    seen.visit_program(scalar_program())
    assert (seen.adds, seen.binary) == (1, 2)  # x + prod, y * 2
    assert seen.exprs == 7  # 2 BinOps, their 4 operands, the returned r


def test_mutator_subclass_rewrites_calls():
    class AddToSub(ir.IRMutator):
        def visit_call(self, op):
            op = super().visit_call(op)
            if op.op.name == "tile.add":
                return ir.create_op_call("tile.sub", list(op.args), {}, op.span)
            return op

    before = pl.parse_program(TILE_SRC)
    after = AddToSub().visit_program(before)
    expected = pl.parse_program(TILE_SRC.replace("pl.add(t, t)", "pl.sub(t, t)"))
    ir.assert_structural_equal(after, expected)
    # an identity mutator returns the very same program
    assert ir.IRMutator().visit_program(before) is before


def test_mutator_binary_hook_and_visit_expr():
    class DoubleConstants(ir.IRMutator):
        def visit_const_int(self, op):
            return ir.ConstInt(op.value * 2, op.dtype, op.span)

    class SwapAdd(ir.IRMutator):
        def visit_add(self, op):
            return ir.Add(op.right, op.left, op.dtype, op.span)

    prog = scalar_program()
    doubled = DoubleConstants().visit_program(prog)
    assert "y * pl.const(4, pl.INT64)" in doubled.as_python()
    swapped = SwapAdd().visit_program(prog)
    assert "r: pl.Scalar[pl.INT64] = prod + x" in swapped.as_python()


def test_tile_ir_with_registered_ops():
    a = ir.Var("a", ir.TensorType([16, 64], DataType.FP32), SPAN)
    t = ir.Var("t", ir.TileType([16, 64], DataType.FP32, None, None, ir.MemorySpace.Vec), SPAN)
    load = ir.Call(ir.get_op("tile.load"), [a, ir.MakeTuple([0, 0], SPAN),
                                            ir.MakeTuple([16, 64], SPAN)], SPAN)
    assert type(load.type) is types.TileType and load.type.memory_space is ir.MemorySpace.Vec
    exp = ir.op.tile.exp(t)
    assert exp.op.name == "tile.exp" and exp.type.memory_space is ir.MemorySpace.Vec
    assert isinstance(t.type, ir.TileType) and t.type.tile_view is None
    view = ir.TileView(valid_shape=[16, 32], blayout=ir.TileLayout.row_major)
    assert view.fields == (("valid_shape", (16, 32)),)  # defaults are not kept
    assert ir.python_print(ir.TileType([16, 64], DataType.FP32, None, view)) == \
        "pl.Tile[[16, 64], pl.FP32, pl.TileView(valid_shape=[16, 32])]"
    mr = ir.MemRef("mem_vec_0", 0, 4096, SPAN)
    assert mr.offset.dtype is DataType.INT64


def test_loops_and_branches():
    i = ir.Var("i", ir.ScalarType(DataType.INDEX), SPAN)
    x = ir.Var("x", I64, SPAN)
    acc = ir.IterArg("acc", I64, x, SPAN)
    nxt = ir.Var("nxt", I64, SPAN)
    res = ir.Var("res", I64, SPAN)
    body = ir.SeqStmts([ir.AssignStmt(nxt, ir.Add(acc, x, DataType.INT64, SPAN), SPAN),
                        ir.YieldStmt([nxt], SPAN)], SPAN)
    loop = ir.ForStmt(i, 0, 8, 1, [acc], body, [res], SPAN, ir.ForKind.Pipeline,
                      {"pipeline_stages": 2})
    phi = ir.Var("phi", I64, SPAN)
    branch = ir.IfStmt(ir.Lt(res, ir.ConstInt(3, DataType.INT64, SPAN), DataType.BOOL, SPAN),
                       ir.YieldStmt([res], SPAN), ir.YieldStmt([x], SPAN), [phi], SPAN)
    fn = ir.Function("g", [(x, ir.ParamDirection.In)], [I64],
                     [loop, branch, ir.ReturnStmt([phi], SPAN)], SPAN)
    prog = ir.Program([fn], "Loops", SPAN)
    text = prog.as_python()
    assert "for i, (acc,) in pl.pipeline(8, stage=2, init_values=(x,)):" in text
    assert isinstance(branch, ir.IfStmt) and branch.condition.op == "<"
    assert loop.iter_args[0].initValue is x
    ir.assert_structural_equal(prog, pl.parse_program(text))
    with pytest.raises(ir.PyptoApiError, match="pipeline_stages"):
        ir.ForStmt(i, 0, 8, 1, [], body, [], SPAN, ir.ForKind.Pipeline)


def test_bad_arguments_are_errors_that_say_so():
    with pytest.raises(TypeError, match="ir.Var has no argument 'nme'"):
        ir.Var(nme="x", type=I64)
    with pytest.raises(ValueError, match="unknown op 'pl.tile.ad'"):
        ir.get_op("tile.ad")
    assert isinstance(ir.Call(ir.GlobalVar("f"), [], SPAN).type, ir.UnknownType)
    with pytest.raises(AttributeError, match="ir.op.tile.nope"):
        ir.op.tile.nope
