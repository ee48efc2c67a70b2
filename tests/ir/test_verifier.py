"""The verifier accepts well-formed IR and names each fault with its location and a fix."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ir_samples import INDEX, make_matmul_program
from ptoc.dtypes import DataType, ForKind, FunctionType, MemorySpace
from ptoc.errors import PtocError, SourceLoc, VerificationError
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, EvalStmt, ForStmt, Function, IfStmt, IterArg, Param,
    Program, ReturnStmt, SeqStmts, Var, YieldStmt,
)
from ptoc.ir.types import MemRef, PtrType, ScalarType, TensorType, TileType
from ptoc.ir.verifier import type_mismatch, verify

FP32 = DataType.FP32
T = TileType((16, 16), FP32, MemorySpace.Vec)
LOC = SourceLoc("k.py", 7, 8)


def _fn(body, params=(), rets=(), name="f"):
    return Function(name, tuple(params), tuple(rets), SeqStmts(tuple(body)), FunctionType.InCore)


def _add(a, b, ty=T):
    return Call("tile.add", (a, b), (), ty)


def _raises(node, *phrases, line=None):
    with pytest.raises(VerificationError) as err:
        verify(node)
    text = str(err.value)
    for p in phrases:
        assert p in text, text
    assert err.value.hint, "every verification error carries a fix"
    if line is not None:
        assert err.value.line == line
    return err.value


def test_matmul_programs_verify():
    verify(make_matmul_program())
    verify(make_matmul_program(with_memref=True))
    verify(make_matmul_program().functions[0])


def test_verification_error_is_a_ptoc_error():
    assert issubclass(VerificationError, PtocError)


# ---- SSA ----------------------------------------------------------------------------------

def test_double_definition():
    x = Var("x", T)
    y = Var("y", T)
    fn = _fn([AssignStmt(y, _add(x, x)), AssignStmt(y, _add(x, x), loc=LOC)], [Param(x)])
    _raises(fn, "in function 'f'", "variable 'y' is defined twice", "SSA", line=7)


def test_use_before_definition():
    x, y, z = Var("x", T), Var("y", T), Var("z", T)
    fn = _fn([AssignStmt(y, _add(x, z), loc=LOC), AssignStmt(z, _add(x, x))], [Param(x)])
    _raises(fn, "variable 'z' is used before it is defined", line=7)


def test_loop_var_and_iter_arg_used_after_loop():
    x = Var("x", T)
    i = Var("i", INDEX)
    ia = IterArg("acc", T, init=x)
    rv = Var("r", T)
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (ia,), SeqStmts((YieldStmt((ia,)),)),
                   (rv,))
    ok = _fn([loop, ReturnStmt((rv,))], [Param(x)], [T])
    verify(ok)
    bad = _fn([loop, ReturnStmt((ia,), loc=LOC)], [Param(x)], [T])
    _raises(bad, "'acc' is used outside the loop or branch body that defines it", "return variable",
            line=7)
    bad_iv = _fn([loop, EvalStmt(i, loc=LOC), ReturnStmt((rv,))], [Param(x)], [T])
    _raises(bad_iv, "'i' is used outside", line=7)


def test_branch_local_used_after_if():
    x = Var("x", INDEX)
    y = Var("y", INDEX)
    br = IfStmt(BinOp("==", x, ConstInt(0)), SeqStmts((AssignStmt(y, BinOp("+", x, ConstInt(1))),)),
                None)
    _raises(_fn([br, EvalStmt(y)], [Param(x)]), "'y' is used outside")


def test_memref_base_must_be_defined_ptr():
    x = Var("x", T)
    p = Var("mem_vec_0", PtrType())
    ty = replace(T, memref=MemRef(p, ConstInt(0, DataType.INT64), 1024))
    y = Var("y", ty)
    _raises(_fn([AssignStmt(y, _add(x, x))], [Param(x)]), "'mem_vec_0' is used before it is defined")
    q = Var("q", INDEX)
    ty2 = replace(T, memref=MemRef(q, ConstInt(0, DataType.INT64), 1024))
    _raises(_fn([AssignStmt(Var("y", ty2), _add(x, x))], [Param(x), Param(q)]),
            "MemRef base 'q' has type pl.Scalar[pl.INDEX], not pl.Ptr")


# ---- types --------------------------------------------------------------------------------

def test_assign_type_must_match_value():
    x = Var("x", T)
    y = Var("y", TileType((16, 32), FP32, MemorySpace.Vec))
    fn = _fn([AssignStmt(y, _add(x, x), loc=LOC)], [Param(x)])
    _raises(fn, "'y' is declared pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] but its value has type "
            "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] (shape [16, 32] vs [16, 16])", line=7)


def test_call_type_must_match_registry():
    x = Var("x", T)
    wrong = TileType((16, 16), DataType.FP16, MemorySpace.Vec)
    y = Var("y", wrong)
    fn = _fn([AssignStmt(y, _add(x, x, wrong), loc=LOC)], [Param(x)])
    _raises(fn, "the call of pl.tile.add has type", "op registry infers", "dtype FP32 vs FP16",
            "make_call")


def test_bad_operands_are_reported_through_the_registry():
    a = Var("a", TensorType((16, 16), FP32))
    y = Var("y", T)
    fn = _fn([AssignStmt(y, _add(a, a), loc=LOC)], [Param(a)])
    _raises(fn, "invalid call of pl.tile.add", line=7)


def test_unknown_op():
    x = Var("x", T)
    fn = _fn([AssignStmt(Var("y", T), Call("tile.addd", (x, x), (), T), loc=LOC)], [Param(x)])
    _raises(fn, "unknown op 'pl.tile.addd'", "tile.add", line=7)


def test_memref_and_view_do_not_take_part_in_type_consistency():
    verify(make_matmul_program(with_memref=True))
    assert type_mismatch(T, replace(T, memref=MemRef("b", ConstInt(0, DataType.INT64), 1))) is None
    assert type_mismatch(T, replace(T, memory_space=None)) is None
    assert type_mismatch(T, replace(T, memory_space=MemorySpace.Mat)) == "memory space Vec vs Mat"
    assert type_mismatch(T, ScalarType(FP32)) == "TileType vs ScalarType"


def test_iter_arg_init_type_and_missing_init():
    x = Var("x", T)
    i = Var("i", INDEX)
    ia = IterArg("acc", TileType((16, 32), FP32, MemorySpace.Vec), init=x)
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (ia,), SeqStmts((YieldStmt((ia,)),)),
                   (Var("r", ia.type),), loc=LOC)
    _raises(_fn([loop], [Param(x)]), "iter arg 'acc' has type", "initial value `x`", line=7)
    ia2 = IterArg("acc", T)
    loop2 = replace(loop, iter_args=(ia2,), body=SeqStmts((YieldStmt((ia2,)),)),
                    return_vars=(Var("r", T),))
    _raises(_fn([loop2], [Param(x)]), "iter arg 'acc' of the loop over 'i' has no initial value")


def test_yield_arity_and_types_in_loops():
    x = Var("x", T)
    i = Var("i", INDEX)
    ia = IterArg("acc", T, init=x)
    rv = Var("r", T)

    def loop(body, rvs=(rv,)):
        return _fn([ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (ia,), SeqStmts(tuple(body)),
                            tuple(rvs))], [Param(x)])

    _raises(loop([YieldStmt((ia, x))]), "the loop over 'i' body yields 2 value(s) but 1 are expected")
    _raises(loop([EvalStmt(ia)]), "the loop over 'i' body must end with pl.yield_ of 1 value(s)")
    _raises(loop([YieldStmt((i,))]), "yielded value 0 (`i`) of the loop over 'i' has type "
            "pl.Scalar[pl.INDEX] but pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] is expected")
    _raises(loop([YieldStmt((ia,))], rvs=()), "1 iter arg(s) but 0 return variable(s)")
    _raises(loop([YieldStmt((ia,))], rvs=(Var("r", ScalarType(FP32)),)),
            "return variable 'r' has type pl.Scalar[pl.FP32] but iter arg 'acc'")
    _raises(loop([YieldStmt((ia,)), EvalStmt(ia)]), "pl.yield_ is not the last statement")


def test_if_results_need_both_arms_to_yield():
    x = Var("x", INDEX)
    p = Var("p", INDEX)
    cond = BinOp("==", x, ConstInt(0))
    no_else = IfStmt(cond, SeqStmts((YieldStmt((x,)),)), None, (p,), loc=LOC)
    _raises(_fn([no_else], [Param(x)]), "the if that produces 'p' has no else branch", line=7)
    short = IfStmt(cond, SeqStmts((YieldStmt((x,)),)), SeqStmts((EvalStmt(x),)), (p,))
    _raises(_fn([short], [Param(x)]), "the if (else) body must end with pl.yield_ of 1 value(s)")
    wrong = IfStmt(cond, SeqStmts((YieldStmt((x,)),)),
                   SeqStmts((YieldStmt((ConstInt(1, DataType.INT32),)),)), (p,))
    _raises(_fn([wrong], [Param(x)]), "yielded value 0 (`pl.const(1, pl.INT32)`) of the if (else)")
    good = IfStmt(cond, SeqStmts((YieldStmt((x,)),)), SeqStmts((YieldStmt((ConstInt(1),)),)), (p,))
    verify(_fn([good, EvalStmt(p)], [Param(x)]))
    extra = IfStmt(cond, SeqStmts((YieldStmt((x,)),)), None)
    _raises(_fn([extra], [Param(x)]), "the if (then) body yields 1 value(s) but 0 are expected")


def test_if_condition_must_be_scalar():
    x = Var("x", T)
    _raises(_fn([IfStmt(x, SeqStmts(()), None)], [Param(x)]), "the if condition `x` is not a scalar")


def test_yield_at_function_level():
    x = Var("x", INDEX)
    _raises(_fn([YieldStmt((x,), loc=LOC)], [Param(x)]), "pl.yield_ appears outside any loop", line=7)


def test_return_arity_and_type():
    x = Var("x", T)
    _raises(_fn([ReturnStmt((x, x))], [Param(x)], [T]),
            "return gives 2 value(s) but the function declares 1")
    _raises(_fn([ReturnStmt((x,))], [Param(x)], [TensorType((16, 16), FP32)]),
            "returned value 0 (`x`) has type")


def test_loop_bounds_and_var_must_be_scalars():
    x = Var("x", T)
    i = Var("i", INDEX)
    _raises(_fn([ForStmt(i, ConstInt(0), x, ConstInt(1), (), SeqStmts(()), ())], [Param(x)]),
            "the stop of the loop over 'i' is not a scalar")
    j = Var("j", T)
    _raises(_fn([ForStmt(j, ConstInt(0), ConstInt(2), ConstInt(1), (), SeqStmts(()), ())]),
            "loop variable 'j' has type")


# ---- pipeline invariant -------------------------------------------------------------------

@pytest.mark.parametrize("kind, attrs, phrase", [
    (ForKind.Pipeline, {}, "the pipeline loop over 'i' has no 'pipeline_stages' attr"),
    (ForKind.Sequential, {"pipeline_stages": 2}, "the Sequential loop over 'i' has a 'pipeline_stages'"),
    (ForKind.Unroll, {"pipeline_stages": 1}, "the Unroll loop over 'i' has a 'pipeline_stages'"),
    (ForKind.Pipeline, {"pipeline_stages": 0}, "pipeline_stages=0; it must be an int >= 1"),
    (ForKind.Pipeline, {"pipeline_stages": "2"}, "pipeline_stages='2'"),
    (ForKind.Pipeline, {"pipeline_stages": True}, "pipeline_stages=True"),
])
def test_pipeline_attr_invariant(kind, attrs, phrase):
    i = Var("i", INDEX)
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (), SeqStmts(()), (), kind, attrs, loc=LOC)
    _raises(_fn([loop]), phrase, line=7)


def test_pipeline_with_stages_verifies():
    i = Var("i", INDEX)
    verify(_fn([ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (), SeqStmts(()), (),
                        ForKind.Pipeline, {"pipeline_stages": 1})]))


# ---- function calls -----------------------------------------------------------------------

def _prog_with_call(args_n=3, callee="kernel", ret_type=None):
    prog = make_matmul_program()
    kernel, orch = prog.functions
    a, b, out = (p.var for p in orch.params)
    args = (a, b, out)[:args_n]
    r = Var("r", ret_type or out.type)
    call = Call(callee, args, (), ret_type or out.type, is_function=True)
    orch2 = replace(orch, body=SeqStmts((AssignStmt(r, call, loc=LOC), ReturnStmt((r,)))))
    return replace(prog, functions=(kernel, orch2))


def test_function_calls():
    verify(_prog_with_call())
    _raises(_prog_with_call(callee="kernal"), "program 'OracleMatmul' has no function 'kernal'",
            "functions: kernel, orchestrator", line=7)
    _raises(_prog_with_call(args_n=2), "self.kernel takes 3 argument(s) but is called with 2")
    _raises(_prog_with_call(ret_type=TensorType((160, 16), FP32)),
            "the call of self.kernel has type")


def test_function_call_argument_types():
    prog = make_matmul_program()
    kernel, orch = prog.functions
    a, b, out = (p.var for p in orch.params)
    call = Call("kernel", (b, a, out), (), out.type, is_function=True)
    r = Var("r", out.type)
    orch2 = replace(orch, body=SeqStmts((AssignStmt(r, call), ReturnStmt((r,)))))
    _raises(replace(prog, functions=(kernel, orch2)),
            "argument 0 of self.kernel has type pl.Tensor[[64, 160], pl.FP32] but parameter 'a'")


def test_duplicate_function_names():
    prog = make_matmul_program()
    k = prog.functions[0]
    _raises(replace(prog, functions=(k, k)), "defines function 'kernel' twice")


def test_verify_rejects_non_ir():
    with pytest.raises(TypeError):
        verify("not ir")


def test_dynamic_dims_across_function_calls_are_not_compared():
    def kernel_and_caller():
        n = Var("n", INDEX)
        x = Var("x", TensorType((n, 16), FP32))
        kernel = Function("kernel", (Param(n), Param(x)), (x.type,), SeqStmts((ReturnStmt((x,)),)),
                          FunctionType.InCore)
        m = Var("m", INDEX)
        y = Var("y", TensorType((m, 16), FP32))
        r = Var("r", y.type)
        call = Call("kernel", (m, y), (), y.type, is_function=True)
        orch = Function("orch", (Param(m), Param(y)), (y.type,),
                        SeqStmts((AssignStmt(r, call), ReturnStmt((r,)))), FunctionType.Orchestration)
        return Program("Dyn", (kernel, orch))
    verify(kernel_and_caller())


def test_dynamic_dims_within_a_function_compare_by_identity():
    n, m = Var("n", INDEX), Var("m", INDEX)
    x = Var("x", TensorType((n, 16), FP32))
    y = Var("y", TensorType((m, 16), FP32))
    fn = _fn([ReturnStmt((x,))], [Param(n), Param(m), Param(x)], [y.type])
    _raises(fn, "shape [m, 16] vs [n, 16]")
    verify(_fn([ReturnStmt((x,))], [Param(n), Param(x)], [TensorType((n, 16), FP32)]))


def test_structural_faults_in_hand_built_ir():
    x = Var("x", INDEX)
    _raises(_fn([AssignStmt(ConstInt(1), x)], [Param(x)]), "the assignment target is ConstInt")
    _raises(_fn([], [Param(x), Param(x)]), "parameter 'x' appears twice")
    i = Var("i", INDEX)
    plain = Var("acc", INDEX)
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (plain,), SeqStmts((YieldStmt((plain,)),)),
                   (Var("r", INDEX),))
    _raises(_fn([loop]), "iter arg 'acc' of the loop over 'i' is not an IterArg")


def test_nested_seq_stmts_and_tuple_returning_calls_verify():
    from ptoc.ir.types import TupleType

    x = Var("x", INDEX)
    two = Function("two", (Param(x),), (INDEX, INDEX), SeqStmts((ReturnStmt((x, x)),)))
    y = Var("y", INDEX)
    call = Call("two", (y,), (), TupleType((INDEX, INDEX)), is_function=True)
    caller = Function("main", (Param(y),), (), SeqStmts((SeqStmts((EvalStmt(call),)),)))
    verify(Program("P", (two, caller)))
    bad = replace(call, type=TupleType((INDEX,)))
    _raises(Program("P", (two, replace(caller, body=SeqStmts((EvalStmt(bad),))))),
            "the call of self.two has type", "2 elements vs 1")


def test_errors_after_a_loop_body_carry_the_loop_location():
    x = Var("x", T)
    i = Var("i", INDEX)
    ia = IterArg("acc", T, init=x)
    body = SeqStmts((AssignStmt(Var("y", T), _add(ia, ia), loc=SourceLoc("k.py", 9, 4)),
                     YieldStmt((ia,), loc=SourceLoc("k.py", 10, 4))))
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (ia,), body,
                   (Var("r", ScalarType(FP32)),), loc=SourceLoc("k.py", 8, 0))
    _raises(_fn([loop], [Param(x)]), "return variable 'r' has type", line=8)
    short = replace(loop, body=SeqStmts(body.stmts[:1]), return_vars=(Var("r", T),))
    _raises(_fn([short], [Param(x)]), "must end with pl.yield_", line=8)
    bad_yield = replace(loop, body=SeqStmts((body.stmts[0], YieldStmt((i,), loc=SourceLoc("k.py", 10, 4)))),
                        return_vars=(Var("r", T),))
    _raises(_fn([bad_yield], [Param(x)]), "yielded value 0", line=10)


def test_a_then_branch_value_is_not_visible_in_the_else_branch_nor_in_a_later_loop():
    x = Var("x", INDEX)
    y = Var("y", INDEX)
    then_only = IfStmt(BinOp("==", x, ConstInt(0)),
                       SeqStmts((AssignStmt(y, BinOp("+", x, ConstInt(1))),)),
                       SeqStmts((EvalStmt(y, loc=LOC),)))
    _raises(_fn([then_only], [Param(x)]), "'y' is used outside", line=7)
    i, j = Var("i", INDEX), Var("j", INDEX)
    first = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (),
                    SeqStmts((AssignStmt(y, BinOp("+", i, x)),)), ())
    second = ForStmt(j, ConstInt(0), ConstInt(4), ConstInt(1), (),
                     SeqStmts((EvalStmt(BinOp("+", y, j), loc=LOC),)), ())
    _raises(_fn([first, second], [Param(x)]), "'y' is used outside", line=7)
    nested = ForStmt(j, ConstInt(0), ConstInt(4), ConstInt(1), (),
                     SeqStmts((IfStmt(BinOp("==", j, x), SeqStmts((EvalStmt(BinOp("+", j, x)),)),
                                      None),)), ())
    verify(_fn([nested], [Param(x)]))   # outer names stay visible in nested bodies
