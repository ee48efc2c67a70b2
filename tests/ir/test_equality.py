"""Structural equality: equal up to consistent renaming, and a readable first difference."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ir_samples import INDEX, make_matmul_program
from ptoc.dtypes import DataType, Direction, ForKind, FunctionType, MemorySpace
from ptoc.errors import SourceLoc
from ptoc.ir.equality import assert_structural_equal, first_difference, structural_equal, types_equal
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstFloat, ConstInt, ForStmt, Function, IfStmt, IterArg, Param,
    ReturnStmt, SeqStmts, Var, YieldStmt,
)
from ptoc.ir.types import MemRef, PtrType, ScalarType, TensorType, TileLayout, TileType, TileView

FP32 = DataType.FP32
T = TileType((16, 16), FP32, MemorySpace.Vec)


def _add_fn(names=("x", "y", "z"), op="tile.add", attrs=None, kwargs=(), loc=None, has_self=True):
    x = Var(names[0], T)
    y = Var(names[1], T, loc=loc)
    z = Var(names[2], T)
    body = SeqStmts((AssignStmt(y, Call(op, (x, x), tuple(kwargs), T, dict(attrs or {})), loc=loc),
                     AssignStmt(z, Call(op, (y, x), (), T)),
                     ReturnStmt((z,))))
    return Function("f", (Param(x),), (T,), body, FunctionType.InCore, has_self=has_self)


def test_identical_builds_are_equal():
    assert structural_equal(make_matmul_program(), make_matmul_program())
    assert structural_equal(make_matmul_program(with_memref=True),
                            make_matmul_program(with_memref=True))
    assert_structural_equal(make_matmul_program(), make_matmul_program())


def test_renaming_loc_and_has_self_are_ignored():
    a = _add_fn()
    b = _add_fn(names=("p", "q", "r"), loc=SourceLoc("k.py", 3, 4), has_self=False)
    assert structural_equal(a, b)


def test_inconsistent_renaming_is_a_difference():
    x, y = Var("x", T), Var("y", T)
    one = Function("f", (Param(x), Param(y)), (T,), SeqStmts((ReturnStmt((x,)),)))
    x2, y2 = Var("x", T), Var("y", T)
    other = Function("f", (Param(x2), Param(y2)), (T,), SeqStmts((ReturnStmt((y2,)),)))
    msg = first_difference(one, other)
    assert msg is not None and "body[0] (ReturnStmt)" in msg
    assert "corresponds to" in msg


def test_auto_mapping_must_be_bijective():
    x = Var("x", INDEX)
    y = Var("y", INDEX)
    # (x + x) vs (x + y): x->x then x->y
    assert not structural_equal(BinOp("+", x, x), BinOp("+", x, y), enable_auto_mapping=True)
    # (x + y) vs (x + x): y would map to x already taken by x
    assert not structural_equal(BinOp("+", x, y), BinOp("+", x, x), enable_auto_mapping=True)
    assert structural_equal(BinOp("+", x, y), BinOp("+", y, x), enable_auto_mapping=True)


def test_free_variables_pair_only_with_auto_mapping():
    x, y = Var("x", INDEX), Var("y", INDEX)
    assert structural_equal(BinOp("+", x, ConstInt(1)), BinOp("+", x, ConstInt(1)))
    assert not structural_equal(BinOp("+", x, ConstInt(1)), BinOp("+", y, ConstInt(1)))
    assert structural_equal(BinOp("+", x, ConstInt(1)), BinOp("+", y, ConstInt(1)),
                            enable_auto_mapping=True)
    assert "free variable 'x' is not the same variable as 'y'" in first_difference(x, y)
    # a variable defined inside the compared trees pairs without auto mapping
    a = AssignStmt(Var("p", INDEX), BinOp("+", x, ConstInt(1)))
    b = AssignStmt(Var("q", INDEX), BinOp("+", x, ConstInt(1)))
    assert structural_equal(a, b)
    assert not structural_equal(a, AssignStmt(Var("q", INDEX), BinOp("+", y, ConstInt(1))))


def test_program_name_and_function_order_are_ignored_function_names_are_keys():
    p = make_matmul_program()
    renamed = replace(p, name="Other", functions=tuple(reversed(p.functions)))
    assert structural_equal(p, renamed)
    fn = p.functions[0]
    other_name = replace(p, functions=(replace(fn, name="elsewhere"),) + p.functions[1:])
    assert "functions" in first_difference(p, other_name)
    assert structural_equal(fn, replace(fn, name="elsewhere"))


def test_assert_structural_equal_raises_an_assertion_and_value_error():
    x, y = Var("x", INDEX), Var("y", INDEX)
    for cls in (AssertionError, ValueError):
        with pytest.raises(cls, match="Structural equality assertion failed"):
            assert_structural_equal(x, y)


def test_different_shapes_report_path_and_snippets():
    with pytest.raises(AssertionError) as err:
        assert_structural_equal(make_matmul_program(), make_matmul_program(k_extent=96))
    text = str(err.value)
    assert "function 'kernel' > params[0].var.type.shape[1]: 64 != 96" in text
    assert "--- lhs ---" in text and "pl.Tensor[[160, 64], pl.FP32]" in text
    assert "--- rhs ---" in text and "pl.Tensor[[160, 96], pl.FP32]" in text


def test_difference_inside_loop_names_statement_path():
    with pytest.raises(AssertionError) as err:
        assert_structural_equal(make_matmul_program(stage=2), make_matmul_program(stage=3))
    assert "function 'kernel' > body[3] (ForStmt) > attrs['pipeline_stages']: 2 != 3" in str(err.value)
    assert "stage=2" in str(err.value) and "stage=3" in str(err.value)


def test_iter_arg_type_difference_path():
    def prog(n):
        t = TileType((16, n), FP32, MemorySpace.Vec)
        x = Var("x", t)
        ia = IterArg("acc", t, init=x)
        rv = Var("r", t)
        i = Var("i", INDEX)
        loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (ia,),
                       SeqStmts((YieldStmt((ia,)),)), (rv,))
        return Function("kernel", (Param(x),), (), SeqStmts((loop, ReturnStmt(()))))
    # the init Var is bound first as the parameter, so the first difference is there
    assert first_difference(prog(64), prog(32)) == \
        "function 'kernel' > params[0].var.type.shape[1]: 64 != 32"
    loop_a = prog(64).body.stmts[0]
    loop_b = replace(loop_a, iter_args=(IterArg("acc", TileType((16, 32), FP32, MemorySpace.Vec),
                                                init=loop_a.iter_args[0].init),))
    assert first_difference(loop_a, loop_b) == "iter_args[0].type.shape[1]: 64 != 32"


def test_attrs_compare_order_insensitively_but_values_matter():
    a = _add_fn(attrs={"pipeline_membership": "0:0", "k": 1})
    b = _add_fn(attrs={"k": 1, "pipeline_membership": "0:0"})
    c = _add_fn(attrs={"k": 1, "pipeline_membership": "0:1"})
    d = _add_fn(attrs={"k": 1})
    assert structural_equal(a, b)
    assert "'0:0' != '0:1'" in first_difference(a, c)
    assert "keys" in first_difference(a, d)


def test_kwargs_compare_in_order():
    a = _add_fn(kwargs=(("p", 1), ("q", 2)))
    b = _add_fn(kwargs=(("q", 2), ("p", 1)))
    assert not structural_equal(a, b)
    assert "kwargs ['p', 'q'] != ['q', 'p']" in first_difference(a, b)


def test_bool_and_int_values_differ():
    assert not structural_equal(_add_fn(kwargs=(("f", True),)), _add_fn(kwargs=(("f", 1),)))


def test_list_and_tuple_values_compare_alike():
    assert structural_equal(_add_fn(kwargs=(("s", [1, 2]),)), _add_fn(kwargs=(("s", (1, 2)),)))


def test_different_op_and_constants():
    assert "call of tile.add != tile.sub" in first_difference(_add_fn(), _add_fn(op="tile.sub"))
    assert not structural_equal(ConstInt(1), ConstInt(2))
    assert not structural_equal(ConstInt(1), ConstInt(1, DataType.INT32))
    assert not structural_equal(ConstInt(1), ConstFloat(1.0))
    assert structural_equal(ConstFloat(0.5), ConstFloat(0.5))


def test_memref_compares_base_offset_size():
    def tt(base, off=0, size=1024):
        return TileType((16, 16), FP32, MemorySpace.Vec, MemRef(base, ConstInt(off, DataType.INT64), size))
    assert types_equal(tt("mem_ddr_0"), tt("mem_ddr_0"))
    assert not types_equal(tt("mem_ddr_0"), tt("mem_ddr_1"))
    assert not types_equal(tt("m", 0), tt("m", 32))
    assert not types_equal(tt("m", 0, 1024), tt("m", 0, 2048))
    assert not types_equal(tt("m"), T)
    p1, p2 = Var("mem_vec_1", PtrType()), Var("mem_vec_2", PtrType())
    # bases are mapped like other Vars (free ones only with auto mapping)
    assert structural_equal(tt(p1), tt(p2), enable_auto_mapping=True)
    assert not structural_equal(tt(p1), tt(p2))
    assert not types_equal(tt(p1), tt(p2))  # identity mode: different allocations
    pair_a = BinOp("+", Var("u", tt(p1)), Var("v", tt(p1)))
    pair_b = BinOp("+", Var("u", tt(p1)), Var("v", tt(p2)))
    assert "base" in first_difference(pair_a, pair_b, enable_auto_mapping=True)


def test_memory_space_and_view_differences():
    view = TileView((("blayout", TileLayout.row_major),))
    a = TileType((16, 16), FP32, MemorySpace.Left, view=view)
    assert types_equal(a, TileType((16, 16), FP32, MemorySpace.Left,
                                   view=TileView((("blayout", TileLayout.row_major),))))
    assert "memory space" in first_difference(a, replace(a, memory_space=MemorySpace.Right))
    assert "view" in first_difference(a, replace(a, view=None))
    col = TileView((("blayout", TileLayout.col_major),))
    assert not types_equal(a, replace(a, view=col))


def test_statement_count_difference_names_first_extra_statement():
    a = _add_fn()
    b = replace(a, body=SeqStmts(a.body.stmts[:1] + a.body.stmts[2:]))
    msg = first_difference(a, b)
    assert msg is not None
    # the second statement differs (assign vs return)
    assert "body[1]" in msg


def test_missing_trailing_statement():
    a = _add_fn()
    b = replace(a, body=SeqStmts(a.body.stmts[:2]))
    assert "3 statements != 2; first extra lhs statement: return z" in first_difference(a, b)


def test_empty_else_equals_missing_else_and_nesting_is_ignored():
    x = Var("x", INDEX)
    i1 = IfStmt(BinOp("==", x, ConstInt(0)), SeqStmts((YieldStmt(()),)), None)
    i2 = IfStmt(BinOp("==", x, ConstInt(0)), SeqStmts((SeqStmts((YieldStmt(()),)),)), SeqStmts(()))
    assert structural_equal(i1, i2)


def test_function_level_differences():
    a = _add_fn()
    assert "function type" in first_difference(a, replace(a, func_type=FunctionType.AIC))
    assert "attrs" in first_difference(a, replace(a, attrs={"level": "AIC"}))
    p = a.params[0]
    assert "direction" in first_difference(a, replace(a, params=(Param(p.var, Direction.Out),)))


def test_program_level_differences():
    p = make_matmul_program()
    assert "functions" in first_difference(p, replace(p, functions=p.functions[:1]))


def test_var_versus_iterarg_and_kinds():
    x = Var("x", INDEX)
    ia = IterArg("x", INDEX, init=ConstInt(0))
    assert not structural_equal(x, ia)
    assert not structural_equal(x, ConstInt(0))
    assert not structural_equal(ScalarType(DataType.INDEX), TensorType((1,), FP32))
    i1, loop1 = Var("i", INDEX), None
    body = SeqStmts(())
    l1 = ForStmt(i1, ConstInt(0), ConstInt(4), ConstInt(1), (), body, ())
    l2 = replace(l1, kind=ForKind.Unroll)
    assert "loop kind Sequential != Unroll" in first_difference(l1, l2)


def test_expression_and_type_detail_messages():
    from ptoc.ir.nodes import ConstBool, ListExpr, UnaryOp
    from ptoc.ir.types import TupleType

    x = Var("x", INDEX)
    assert first_difference(BinOp("+", x, x), BinOp("-", x, x)) == "<root>: operator '+' != '-'"
    assert first_difference(UnaryOp("-", x), UnaryOp("not", x)) == "<root>: operator '-' != 'not'"
    assert first_difference(ConstBool(True), ConstBool(False)) == "<root>: True != False"
    assert first_difference(ListExpr((x,)), ListExpr((x, x))) == "items: 1 items != 2"
    assert "rank 2 != 1" in first_difference(TensorType((1, 2), FP32), TensorType((2,), FP32))
    assert "dtype FP32 != FP16" in first_difference(TensorType((2,), FP32),
                                                   TensorType((2,), DataType.FP16))
    assert "dtype INDEX != INT32" in first_difference(INDEX, ScalarType(DataType.INT32))
    assert first_difference(TupleType((INDEX,)), TupleType((INDEX, INDEX))) == "types: 1 items != 2"
    assert structural_equal(PtrType(), PtrType())
    assert "ConstInt `1` != ConstFloat `1.0`" in first_difference(ConstInt(1), ConstFloat(1.0))


def test_param_and_return_type_counts():
    a = _add_fn()
    extra = Param(Var("w", T))
    assert "1 params != 2" in first_difference(a, replace(a, params=a.params + (extra,)))
    assert "1 return types != 2" in first_difference(a, replace(a, return_types=(T, T)))


def test_loop_iter_arg_count_and_missing_init():
    i = Var("i", INDEX)
    x = Var("x", T)
    ia = IterArg("a", T, init=x)
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (ia,), SeqStmts((YieldStmt((ia,)),)),
                   (Var("r", T),))
    assert "1 iter_args != 0" in first_difference(loop, replace(loop, iter_args=()))
    no_init = replace(loop, iter_args=(IterArg("a", T),))
    assert "iter_args[0].init" in first_difference(loop, no_init)


def test_eval_stmt_and_nested_seq_compare():
    from ptoc.ir.nodes import EvalStmt

    x = Var("x", INDEX)
    a = SeqStmts((EvalStmt(x), SeqStmts((EvalStmt(ConstInt(1)),))))
    b = SeqStmts((SeqStmts((EvalStmt(x),)), EvalStmt(ConstInt(1))))
    assert structural_equal(a, b)
    c = SeqStmts((EvalStmt(x), EvalStmt(ConstInt(2))))
    assert first_difference(a, c) == "[1] (EvalStmt) > expr: 1 != 2"


def test_long_snippets_are_truncated():
    x = Var("x", INDEX)
    stmts = tuple(AssignStmt(Var(f"v{k}", INDEX), BinOp("+", x, ConstInt(k))) for k in range(10))
    a = Function("f", (Param(x),), (), SeqStmts(stmts))
    b = Function("f", (Param(x),), (), SeqStmts(stmts[:9] + (AssignStmt(Var("v9", INDEX),
                                                                      BinOp("+", x, ConstInt(99))),)))
    with pytest.raises(AssertionError) as err:
        assert_structural_equal(a, b)
    assert "body[9] (AssignStmt) > value.rhs: 9 != 99" in str(err.value)
    assert "v9: pl.Scalar[pl.INDEX] = x + 99" in str(err.value)


def test_top_level_statement_difference_shows_snippets():
    x = Var("x", INDEX)
    with pytest.raises(AssertionError) as err:
        assert_structural_equal(AssignStmt(Var("y", INDEX), BinOp("+", x, ConstInt(1))),
                                AssignStmt(Var("y", INDEX), BinOp("+", x, ConstInt(2))))
    assert str(err.value) == ("Structural equality assertion failed at value.rhs: 1 != 2\n--- lhs ---\n"
                              "y: pl.Scalar[pl.INDEX] = x + 1\n--- rhs ---\n"
                              "y: pl.Scalar[pl.INDEX] = x + 2")
