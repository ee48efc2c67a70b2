"""Golden-string tests of the IR printer: every construct prints in PyPTO's dump format."""

from __future__ import annotations

import ast

import pytest

from ir_samples import INDEX, lst, make_matmul_program
from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstBool, ConstFloat, ConstInt, EvalStmt, ForStmt, Function, IfStmt,
    IterArg, ListExpr, Param, Program, ReturnStmt, SeqStmts, UnaryOp, Var, YieldStmt,
)
from ptoc.ir.printer import format_node, print_function, print_program
from ptoc.ir.types import MemRef, PtrType, ScalarType, TensorType, TileLayout, TileType, TileView

FP32 = DataType.FP32

MATMUL_GOLDEN = '''\
# ptoc.program: OracleMatmul
import ptoc.language as pl

@pl.program
class OracleMatmul:
    @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
    def kernel(a: pl.Tensor[[160, 64], pl.FP32], b: pl.Tensor[[64, 160], pl.FP32], out: pl.Out[pl.Tensor[[160, 160], pl.FP32]]) -> pl.Tensor[[160, 160], pl.FP32]:
        lm: pl.Tile[[160, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [160, 64], [160, 64], target_memory=pl.Mem.Mat)
        rm: pl.Tile[[64, 160], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 160], [64, 160], target_memory=pl.Mem.Mat)
        c_init: pl.Tile[[160, 160], pl.FP32, pl.Mem.Acc] = pl.tile.create([160, 160], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for ko, (c,) in pl.pipeline(0, 64, 32, stage=2, init_values=(c_init,)):
            c_a: pl.Tile[[160, 32], pl.FP32, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(lm, 0, ko, [160, 32], target_memory=pl.Mem.Left, attrs={"pipeline_membership": "0:0"})
            c_b: pl.Tile[[32, 160], pl.FP32, pl.Mem.Right] = pl.tile.extract(rm, ko, 0, [32, 160], target_memory=pl.Mem.Right)
            if ko == 0:
                c_first: pl.Tile[[160, 160], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(c_a, c_b)
                c_phi: pl.Tile[[160, 160], pl.FP32, pl.Mem.Acc] = pl.yield_(c_first)
            else:
                c_acc: pl.Tile[[160, 160], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c, c_a, c_b)
                c_phi: pl.Tile[[160, 160], pl.FP32, pl.Mem.Acc] = pl.yield_(c_acc)
            c_1: pl.Tile[[160, 160], pl.FP32, pl.Mem.Acc] = pl.yield_(c_phi)
        out: pl.Tensor[[160, 160], pl.FP32] = pl.tile.store(c_1, [0, 0], out)
        return out
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def orchestrator(self, a: pl.Tensor[[160, 64], pl.FP32], b: pl.Tensor[[64, 160], pl.FP32], out: pl.Out[pl.Tensor[[160, 160], pl.FP32]]) -> pl.Tensor[[160, 160], pl.FP32]:
        out: pl.Tensor[[160, 160], pl.FP32] = self.kernel(a, b, out)
        return out
'''


def test_matmul_program_prints_in_dump_format():
    text = make_matmul_program().as_python()
    assert text == MATMUL_GOLDEN
    ast.parse(text)  # valid Python


def test_memrefs_and_ptr_allocations_print_like_allocate_memory_addr():
    text = make_matmul_program(with_memref=True).as_python()
    assert ('a: pl.Tensor[[160, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 40960)]'
            in text)
    assert "        mem_mat_3: pl.Ptr = pl.tile.alloc(pl.Mem.Mat, 40960)\n" in text
    assert ("lm: pl.Tile[[160, 64], pl.FP32, pl.MemRef(mem_mat_3, pl.const(0, pl.INT64), 40960), "
            "pl.Mem.Mat] = " in text)
    ast.parse(text)


def _fn(body, params=(), rets=(), **kw):
    return Function("f", tuple(params), tuple(rets), SeqStmts(tuple(body)),
                    kw.pop("func_type", FunctionType.InCore), **kw)


def _body_text(fn) -> str:
    lines = print_function(fn).splitlines()[2:]
    return "\n".join(line[4:] for line in lines)


# ---- types --------------------------------------------------------------------------------

@pytest.mark.parametrize("ty, text", [
    (ScalarType(DataType.INDEX), "pl.Scalar[pl.INDEX]"),
    (ScalarType(DataType.BF16), "pl.Scalar[pl.BF16]"),
    (TensorType((160, 64), FP32), "pl.Tensor[[160, 64], pl.FP32]"),
    (TileType((80, 64), FP32), "pl.Tile[[80, 64], pl.FP32]"),
    (TileType((80, 64), FP32, MemorySpace.Vec), "pl.Tile[[80, 64], pl.FP32, pl.Mem.Vec]"),
    (TileType((80, 64), DataType.INT8, MemorySpace.Left,
              view=TileView((("blayout", TileLayout.row_major),))),
     "pl.Tile[[80, 64], pl.INT8, pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)]"),
    (TileType((80, 64), FP32, None, MemRef("buf", ConstInt(64, DataType.INT64), 20480)),
     'pl.Tile[[80, 64], pl.FP32, pl.MemRef("buf", pl.const(64, pl.INT64), 20480)]'),
    (PtrType(), "pl.Ptr"),
])
def test_type_spelling(ty, text):
    assert format_node(ty) == text


def test_tile_type_parts_print_in_order_memref_space_view():
    ptr = Var("mem_left_6", PtrType())
    ty = TileType((160, 32), FP32, MemorySpace.Left, MemRef(ptr, ConstInt(0, DataType.INT64), 20480),
                  TileView((("blayout", TileLayout.row_major),)))
    fn = _fn([AssignStmt(ptr, Call("tile.alloc", (MemorySpace.Left, 20480), (), PtrType())),
              AssignStmt(Var("t", ty), Call("tile.create", (lst(160, 32),), (), ty))])
    assert ("t: pl.Tile[[160, 32], pl.FP32, pl.MemRef(mem_left_6, pl.const(0, pl.INT64), 20480), "
            "pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)]") in print_function(fn)


def test_dynamic_dims_print_as_expressions():
    n = Var("n", INDEX)
    t = Var("x", TensorType((n, BinOp("*", n, ConstInt(2))), FP32))
    fn = _fn([ReturnStmt(())], params=[Param(n), Param(t)])
    assert "x: pl.Tensor[[n, n * 2], pl.FP32]" in print_function(fn)


# ---- functions ----------------------------------------------------------------------------

def test_function_header_forms():
    x = Var("x", TileType((16, 16), FP32))
    y = Var("y", TensorType((16, 16), FP32))
    z = Var("z", TensorType((16, 16), FP32))
    fn = Function("k", (Param(x), Param(y, Direction.Out), Param(z, Direction.InOut)),
                  (x.type, y.type), SeqStmts((ReturnStmt((x, y)),)), FunctionType.Opaque,
                  {"level": "AIC", "priority": 3, "role": "SubWorker"}, has_self=False)
    text = print_function(fn)
    assert text.splitlines()[0] == ("@pl.function(type=pl.FunctionType.Opaque, level=pl.Level.AIC, "
                                    "role=pl.Role.SubWorker, attrs={\"priority\": 3})")
    assert text.splitlines()[1] == (
        "def k(x: pl.Tile[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]], "
        "z: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tile[[16, 16], pl.FP32], "
        "pl.Tensor[[16, 16], pl.FP32]]:")
    assert text.splitlines()[2] == "    return x, y"


def test_function_without_returns_or_statements():
    fn = _fn([], func_type=FunctionType.Orchestration)
    # printed on its own (not as a program method) a function has no self, as in PyPTO
    assert print_function(fn) == ("@pl.function(type=pl.FunctionType.Orchestration)\n"
                                   "def f():\n    pass\n")


def test_bare_return():
    assert _body_text(_fn([ReturnStmt(())])) == "return"


# ---- expressions --------------------------------------------------------------------------

A, B, C = (Var(n, INDEX) for n in "abc")


def _b(op, l, r):
    return BinOp(op, l, r)


@pytest.mark.parametrize("expr, text", [
    (_b("+", A, _b("*", B, C)), "a + b * c"),
    (_b("*", _b("+", A, B), C), "(a + b) * c"),
    (_b("-", A, _b("-", B, C)), "a - (b - c)"),
    (_b("-", _b("-", A, B), C), "a - b - c"),
    (_b("//", A, ConstInt(2)), "a // 2"),
    (_b("%", _b("+", A, ConstInt(1)), ConstInt(2)), "(a + 1) % 2"),
    (_b("==", _b("+", A, ConstInt(32)), ConstInt(0)), "a + 32 == 0"),
    (_b("<", _b("<", A, B), C), "(a < b) < c"),
    (_b("and", _b("<", A, B), _b(">=", B, C)), "a < b and b >= c"),
    (_b("or", _b("and", A, B), C), "a and b or c"),
    (_b("and", A, _b("or", B, C)), "a and (b or c)"),
    (UnaryOp("-", A), "-a"),
    (UnaryOp("-", _b("+", A, B)), "-(a + b)"),
    (_b("*", UnaryOp("-", A), B), "-a * b"),
    (UnaryOp("not", _b("==", A, B)), "not a == b"),
    (_b("==", UnaryOp("not", A), B), "(not a) == b"),
    (_b("*", A, ConstInt(-3)), "a * -3"),
    (ListExpr((A, ConstInt(0))), "[a, 0]"),
])
def test_expression_precedence(expr, text):
    assert format_node(expr) == text
    ast.parse(text)


@pytest.mark.parametrize("expr, text", [
    (ConstInt(7), "7"),
    (ConstInt(0, DataType.INT64), "pl.const(0, pl.INT64)"),
    (ConstInt(-2, DataType.INT32), "pl.const(-2, pl.INT32)"),
    (ConstFloat(1.5), "1.5"),
    (ConstFloat(2.0), "2.0"),
    (ConstFloat(1.5, DataType.FP16), "pl.const(1.5, pl.FP16)"),
    (ConstBool(True), "True"),
    (ConstBool(False), "False"),
])
def test_constants(expr, text):
    assert format_node(expr) == text


def test_call_kwarg_values_and_attrs():
    t = Var("t", TileType((16, 16), FP32, MemorySpace.Vec))
    call = Call("tile.cast", (t,), (
        ("target_type", DataType.BF16), ("mode", "round"), ("space", MemorySpace.Vec),
        ("layout", TileLayout.col_major), ("n", 3), ("x", 0.5), ("flag", True), ("none", None),
        ("shape", (16, ConstInt(8))), ("e", BinOp("+", t, ConstInt(1))),
    ), t.type, attrs={"pipeline_membership": "0:1;1:0", "keep": False})
    assert format_node(call) == (
        'pl.tile.cast(t, target_type=pl.BF16, mode="round", space=pl.Mem.Vec, '
        'layout=pl.TileLayout.col_major, n=3, x=0.5, flag=True, none=None, shape=[16, 8], '
        'e=t + 1, attrs={"pipeline_membership": "0:1;1:0", "keep": False})')


def test_string_values_are_double_quoted_and_escaped():
    call = Call("tile.x", (), (("s", 'a"b\\c'),), ScalarType(DataType.INDEX))
    text = format_node(call)
    assert text == 'pl.tile.x(s="a\\"b\\\\c")'
    assert ast.literal_eval(text[len("pl.tile.x(s="):-1]) == 'a"b\\c'


def test_function_call_prints_self_dot_name():
    x = Var("x", INDEX)
    assert format_node(Call("kernel", (x, ConstInt(1)), (), INDEX, is_function=True)) == \
        "self.kernel(x, 1)"


def test_eval_stmt_prints_expression():
    t = Var("t", TileType((16, 16), FP32))
    assert _body_text(_fn([EvalStmt(Call("tile.free", (t,), (), PtrType()))], params=[Param(t)])) \
        == "pl.tile.free(t)"


# ---- loops and branches -------------------------------------------------------------------

def _loop(kind=ForKind.Sequential, attrs=None, iter_args=(), body=None, rvs=(), start=0, stop=8,
          step=1):
    i = Var("i", INDEX)
    return i, ForStmt(i, ConstInt(start), ConstInt(stop), ConstInt(step), tuple(iter_args),
                      SeqStmts(tuple(body or ())), tuple(rvs), kind, dict(attrs or {}))


@pytest.mark.parametrize("kind, attrs, head", [
    (ForKind.Sequential, {}, "for i in pl.range(8):"),
    (ForKind.Unroll, {}, "for i in pl.unroll(8):"),
    (ForKind.Parallel, {}, "for i in pl.parallel(8):"),
    (ForKind.Pipeline, {"pipeline_stages": 2}, "for i in pl.pipeline(8, stage=2):"),
    (ForKind.Pipeline, {"pipeline_overlap_stores": False, "pipeline_stages": 4, "tag": "x"},
     'for i in pl.pipeline(8, stage=4, attrs={"pipeline_overlap_stores": False, "tag": "x"}):'),
    (ForKind.Sequential, {"pipeline_double_buffer_c": True},
     'for i in pl.range(8, attrs={"pipeline_double_buffer_c": True}):'),
])
def test_loop_kinds_and_attrs(kind, attrs, head):
    _, loop = _loop(kind, attrs)
    assert _body_text(_fn([loop])) == head + "\n    pass"


def test_loop_with_two_iter_args_and_multi_yield():
    t = TileType((16, 16), FP32, MemorySpace.Vec)
    a0, b0 = Var("a0", t), Var("b0", t)
    a, b = IterArg("a", t, init=a0), IterArg("b", t, init=b0)
    s = Var("s", t)
    ra, rb = Var("a_out", t), Var("b_out", t)
    i, loop = _loop(iter_args=(a, b), rvs=(ra, rb), body=[
        AssignStmt(s, Call("tile.add", (a, b), (), t)), YieldStmt((s, b))])
    fn = _fn([loop, ReturnStmt((ra,))], params=[Param(a0), Param(b0)], rets=[t])
    assert _body_text(fn) == (
        "for i, (a, b,) in pl.range(8, init_values=(a0, b0,)):\n"
        "    s: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(a, b)\n"
        "    a_out, b_out = pl.yield_(s, b)\n"
        "return a_out")


def test_loop_bounds_are_expressions():
    n = Var("n", INDEX)
    i = Var("i", INDEX)
    loop = ForStmt(i, ConstInt(0), BinOp("*", n, ConstInt(2)), ConstInt(16), (), SeqStmts(()), ())
    assert _body_text(_fn([loop], params=[Param(n)])) == "for i in pl.range(0, n * 2, 16):\n    pass"


def test_yield_without_return_vars_and_if_without_else():
    x = Var("x", INDEX)
    branch = IfStmt(BinOp(">", x, ConstInt(0)), SeqStmts((YieldStmt(()),)), None)
    empty_else = IfStmt(ConstBool(True), SeqStmts((EvalStmt(x),)), SeqStmts(()))
    assert _body_text(_fn([branch, empty_else], params=[Param(x)])) == (
        "if x > 0:\n    pl.yield_()\nif True:\n    x")


def test_if_with_two_return_vars():
    x = Var("x", INDEX)
    p, q = Var("p", INDEX), Var("q", INDEX)
    branch = IfStmt(BinOp("==", x, ConstInt(0)), SeqStmts((YieldStmt((x, ConstInt(1))),)),
                    SeqStmts((YieldStmt((ConstInt(2), x)),)), (p, q))
    assert _body_text(_fn([branch], params=[Param(x)])) == (
        "if x == 0:\n    p, q = pl.yield_(x, 1)\nelse:\n    p, q = pl.yield_(2, x)")


def test_nested_seq_stmts_are_flattened():
    x = Var("x", INDEX)
    fn = _fn([SeqStmts((EvalStmt(x), SeqStmts((EvalStmt(ConstInt(1)),)))), ReturnStmt(())],
             params=[Param(x)])
    assert _body_text(fn) == "x\n1\nreturn"


# ---- names --------------------------------------------------------------------------------

def test_distinct_vars_with_one_hint_get_distinct_names_avoiding_other_hints():
    t = TileType((16, 16), FP32, MemorySpace.Vec)
    x0 = Var("x", t)
    x1 = Var("x", t)
    x_1 = Var("x_1", t)  # a real hint that a naive suffix would capture
    x2 = Var("x", t)
    stmts = [AssignStmt(v, Call("tile.add", (x0, x0), (), t)) for v in (x1, x_1, x2)]
    fn = _fn(stmts + [ReturnStmt((x1, x_1, x2))], params=[Param(x0)], rets=[t, t, t])
    body = _body_text(fn).splitlines()
    assert [line.split(":")[0] for line in body[:3]] == ["x_2", "x_1", "x_3"]
    assert body[3] == "return x_2, x_1, x_3"


def test_invalid_hints_become_identifiers():
    vs = [Var(n, INDEX) for n in ("", "in", "self", "pl", "2x", "a.b")]
    fn = _fn([ReturnStmt(())], params=[Param(v) for v in vs])
    header = print_function(fn).splitlines()[1]
    assert header == ("def f(v: pl.Scalar[pl.INDEX], in_: pl.Scalar[pl.INDEX], "
                      "self_: pl.Scalar[pl.INDEX], pl_: pl.Scalar[pl.INDEX], "
                      "v_2x: pl.Scalar[pl.INDEX], a_b: pl.Scalar[pl.INDEX]):")
    ast.parse(print_function(fn))


def test_names_restart_per_function():
    prog = make_matmul_program()
    text = print_program(prog)
    # both functions call their first parameter 'a' although they are different Vars
    assert text.count("(a: pl.Tensor") == 1 and text.count("(self, a: pl.Tensor") == 1


def test_program_output_is_valid_python_for_every_construct():
    prog = make_matmul_program(with_memref=True)
    ast.parse(prog.as_python())
    p2 = Program("Empty", ())
    assert p2.as_python() == ("# ptoc.program: Empty\nimport ptoc.language as pl\n\n"
                              "@pl.program\nclass Empty:\n    pass\n")


def test_remaining_value_spellings():
    import enum as _enum

    from ptoc.ir.types import TupleType

    class Mode(_enum.Enum):
        fast = 1

    assert format_node(TupleType((INDEX, PtrType()))) == "pl.Tuple[pl.Scalar[pl.INDEX], pl.Ptr]"
    assert format_node({"a": [1, "b"], "c": {"d": None}}) == '{"a": [1, "b"], "c": {"d": None}}'
    assert format_node(Mode.fast) == "pl.Mode.fast"
    assert format_node(FunctionType.AIC) == "pl.FunctionType.AIC"
    assert format_node(float("inf")) == 'float("inf")'
    assert format_node(float("-inf")) == '-float("inf")'
    assert format_node(float("nan")) == 'float("nan")'
    assert format_node(ConstFloat(float("inf"))) == 'pl.const(float("inf"), pl.FP32)'
    assert format_node(ConstFloat(-0.5)) == "-0.5"
    assert format_node(UnaryOp("-", ConstFloat(-0.5))) == "--0.5"
    assert format_node(MemRef("m", ConstInt(0, DataType.INT64), 4)) == \
        'pl.MemRef("m", pl.const(0, pl.INT64), 4)'
    assert format_node(TileView((("blayout", TileLayout.none_box),))) == \
        "pl.TileView(blayout=pl.TileLayout.none_box)"
    assert format_node(make_matmul_program()).startswith("# ptoc.program: OracleMatmul")


def test_unknown_nodes_are_rejected():
    class Odd:
        pass

    from ptoc.ir.nodes import Expr, Stmt
    from ptoc.ir.types import Type

    class OddStmt(Stmt):
        pass

    class OddExpr(Expr):
        pass

    class OddType(Type):
        pass

    with pytest.raises(TypeError):
        format_node(OddStmt())
    with pytest.raises(TypeError):
        format_node(OddExpr())
    with pytest.raises(TypeError):
        format_node(OddType())
    assert format_node(Odd()).startswith("<")


def test_many_vars_with_one_hint_get_consecutive_suffixes():
    t = TileType((16, 16), FP32, MemorySpace.Vec)
    x = Var("v", t)
    stmts, chain = [], [x]
    for _ in range(3000):
        nxt = Var("v", t)
        stmts.append(AssignStmt(nxt, Call("tile.add", (chain[-1], chain[-1]), (), t)))
        chain.append(nxt)
    # every v stays live to the return, so each needs its own name
    fn = _fn(stmts + [ReturnStmt(tuple(chain))], params=[Param(x)], rets=[t] * len(chain))
    text = print_function(fn)
    assert "    v_1: pl.Tile" in text and "    v_2999: pl.Tile" in text
    assert text.rstrip().endswith("v_2999, v_3000")
    # a chain of dead predecessors rebinds one name, as PyPTO prints it
    fn = _fn(stmts + [ReturnStmt((chain[-1],))], params=[Param(x)], rets=[t])
    text = print_function(fn)
    assert text.count("    v: pl.Tile") == 3000 and text.rstrip().endswith("return v")
