"""IRVisitor walks everything in order; IRMutator rebuilds only what changed."""

from __future__ import annotations

from ir_samples import INDEX, make_matmul_program
from ptoc.dtypes import DataType, FunctionType, MemorySpace
from ptoc.ir.equality import assert_structural_equal, structural_equal
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, EvalStmt, ForStmt, Function, IfStmt, IterArg, Param,
    ReturnStmt, SeqStmts, Var, YieldStmt,
)
from ptoc.ir.types import MemRef, PtrType, TensorType, TileType
from ptoc.ir.verifier import verify
from ptoc.ir.visitor import IRMutator, IRVisitor, clone_with_fresh_vars, substitute
from ptoc.ir.printer import format_node

FP32 = DataType.FP32
T = TileType((16, 16), FP32, MemorySpace.Vec)


class _Collect(IRVisitor):
    def __init__(self):
        self.defs, self.uses, self.ops, self.iter_uses = [], [], [], []

    def visit_def(self, var):
        self.defs.append(var.name)
        super().visit_def(var)

    def visit_var(self, node):
        self.uses.append(node.name)

    def visit_iter_arg(self, node):
        self.iter_uses.append(node.name)
        super().visit_iter_arg(node)

    def visit_call(self, node):
        self.ops.append(node.op)
        super().visit_call(node)


def test_visitor_sees_defs_uses_and_calls_in_program_order():
    c = _Collect()
    c.visit(make_matmul_program(with_memref=True))
    kernel_defs = c.defs[:c.defs.index("a", 1)]
    assert kernel_defs == ["a", "b", "out", "mem_mat_3", "lm", "rm", "c_init", "ko", "c",
                           "c_a", "c_b", "c_first", "c_acc", "c_phi", "c", "out"]
    assert c.ops[:4] == ["tile.alloc", "tile.load", "tile.load", "tile.create"]
    assert "kernel" in c.ops
    assert c.iter_uses == ["c"]  # matmul_acc reads the iter arg
    assert "mem_mat_3" in c.uses  # MemRef bases are uses


def test_visitor_visits_dynamic_dims_and_loop_bounds():
    n = Var("n", INDEX)
    x = Var("x", TensorType((n, 16), FP32))
    i = Var("i", INDEX)
    loop = ForStmt(i, ConstInt(0), n, ConstInt(1), (), SeqStmts((EvalStmt(i),)), ())
    fn = Function("f", (Param(n), Param(x)), (), SeqStmts((loop,)))
    c = _Collect()
    c.visit(fn)
    assert c.uses == ["n", "n", "i"]


def test_identity_mutation_returns_same_objects():
    prog = make_matmul_program(with_memref=True)
    assert IRMutator().mutate(prog) is prog


def _scaled_loop():
    x = Var("x", T)
    i = Var("i", INDEX)
    acc = IterArg("acc", T, init=x)
    y = Var("y", T)
    off = Var("off", INDEX)
    r = Var("r", T)
    body = SeqStmts((
        AssignStmt(off, BinOp("*", i, ConstInt(16))),
        AssignStmt(y, Call("tile.add", (acc, x), (), T)),
        YieldStmt((y,)),
    ))
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (acc,), body, (r,))
    fn = Function("f", (Param(x),), (T,), SeqStmts((loop, ReturnStmt((r,)))), FunctionType.InCore)
    return fn, x, i, acc, y, off, r


def test_substitute_replaces_uses_and_shares_untouched_nodes():
    fn, x, i, acc, y, off, r = _scaled_loop()
    loop = fn.body.stmts[0]
    new_body = substitute(loop.body, {i: BinOp("+", i, ConstInt(32))})
    assert format_node(new_body.stmts[0]) == "off: pl.Scalar[pl.INDEX] = (i + 32) * 16"
    assert new_body.stmts[1] is loop.body.stmts[1]  # untouched statement shared
    assert new_body.stmts[0].var is off  # definitions keep their Var


def test_substitute_inside_types_remakes_definitions():
    n = Var("n", INDEX)
    m = Var("m", INDEX)
    t = TensorType((n, 16), FP32)
    x = Var("x", t)
    y = Var("y", t)
    body = SeqStmts((AssignStmt(y, Call("tile.x", (x,), (), t)), ReturnStmt((y,))))
    out = substitute(body, {n: m})
    new_y = out.stmts[0].var
    assert new_y is not y and new_y.type.shape[0] is m
    assert out.stmts[1].values[0] is new_y  # later uses follow the new definition
    assert out.stmts[0].value.type.shape[0] is m


def test_a_tiles_run_time_valid_extent_is_substituted_cloned_and_visited():
    """A tile valid over ``min(m - off, 16)`` rows: a clone's copy names the clone's ``off``
    (a pipeline replica named the original, defined nowhere), and the verifier sees it."""
    from ptoc.ir.types import TileView
    from ptoc.ops import make_call

    m, off = Var("m", INDEX), Var("off", INDEX)
    rows = make_call("tile.min", (BinOp("-", m, off), 16))
    t = TileType((16, 16), FP32, MemorySpace.Vec, view=TileView((("valid_shape", (rows, 16)),)))
    y = Var("y", t)
    body = SeqStmts((AssignStmt(off, BinOp("*", m, ConstInt(2))),
                     AssignStmt(y, Call("tile.x", (), (), t)), ReturnStmt((y,))))
    mapping = {}
    clone = clone_with_fresh_vars(body, var_map_out=mapping)
    new_rows = clone.stmts[1].var.type.view.get("valid_shape")[0]
    assert new_rows.args[0].rhs is mapping[off] is clone.stmts[0].var
    c = _Collect()
    c.visit(AssignStmt(y, Call("tile.x", (), (), t)))
    assert c.uses == ["m", "off"]


def test_substitute_memref_base():
    p1, p2 = Var("mem_1", PtrType()), Var("mem_2", PtrType())
    t = TileType((16, 16), FP32, MemorySpace.Vec, MemRef(p1, ConstInt(0, DataType.INT64), 1024))
    v = Var("v", t)
    s = AssignStmt(v, Call("tile.create", (), (), t))
    out = substitute(s, {p1: p2})
    assert out.var.type.memref.base is p2


def test_clone_with_fresh_vars_keeps_ssa_and_structure():
    fn, x, i, acc, y, off, r = _scaled_loop()
    loop = fn.body.stmts[0]
    mapping = {}
    clone = clone_with_fresh_vars(loop, var_map_out=mapping)
    assert clone is not loop
    assert clone.loop_var is not i and clone.iter_args[0] is not acc
    assert clone.iter_args[0].init is x  # free variable untouched
    assert clone.body.stmts[1].value.args[0] is clone.iter_args[0]
    assert mapping[y] is clone.body.stmts[1].var
    assert clone.body.stmts[2].values[0] is mapping[y]
    assert_structural_equal(clone, loop)
    # both copies in one function still verify as SSA (the clone takes the original's init)
    r2 = clone.return_vars[0]
    fn2 = Function("f", fn.params, (T, T), SeqStmts((loop, clone, ReturnStmt((r, r2)))))
    verify(fn2)


def test_clone_with_substitution_replicates_pipeline_body():
    fn, x, i, acc, y, off, r = _scaled_loop()
    loop = fn.body.stmts[0]
    first = loop.body.stmts[:2]
    mapping = {}
    second = clone_with_fresh_vars(SeqStmts(first), {i: BinOp("+", i, ConstInt(1)), acc: y},
                                   var_map_out=mapping)
    text = format_node(second).splitlines()
    assert text[0] == "off: pl.Scalar[pl.INDEX] = (i + 1) * 16"
    assert second.stmts[1].value.args[0] is y  # the iter arg became the previous clone's value
    assert second.stmts[1].var is mapping[y] and mapping[y] is not y
    unrolled = SeqStmts(tuple(first) + second.stmts + (YieldStmt((mapping[y],)),))
    fn2 = Function("f", fn.params, (T,), SeqStmts((
        ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(2), (acc,), unrolled, (r,)),
        ReturnStmt((r,)))))
    verify(fn2)
    # the clone's y rebinds the first y, which is dead after it (printed as PyPTO does)
    assert "y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(y, x)" in format_node(fn2)


def test_mutator_hook_can_delete_and_expand_statements():
    fn, x, i, acc, y, off, r = _scaled_loop()

    class DropScalarsDoubleAdds(IRMutator):
        def mutate_assign_stmt(self, node):
            if node.var is off:
                return None
            if isinstance(node.value, Call) and node.value.op == "tile.add":
                extra = Var("pre", T)
                return SeqStmts((AssignStmt(extra, Call("tile.add", (x, x), (), T)),
                                 super().mutate_assign_stmt(node)))
            return super().mutate_assign_stmt(node)

    out = DropScalarsDoubleAdds().mutate(fn)
    body = out.body.stmts[0].body.stmts
    assert [type(s).__name__ for s in body] == ["AssignStmt", "AssignStmt", "YieldStmt"]
    assert body[0].var.name == "pre"
    verify(out)


def test_mutator_changes_call_and_rebuilds_parents_only():
    prog = make_matmul_program()

    class Rename(IRMutator):
        def mutate_call(self, node):
            node = super().mutate_call(node)
            if node.op == "tile.matmul":
                return Call("tile.matmul", node.args, node.kwargs, node.type, {"tag": 1})
            return node

    out = Rename().mutate(prog)
    assert out is not prog
    assert out.functions[1] is prog.functions[1]  # orchestrator untouched
    k0, k1 = prog.functions[0].body.stmts, out.functions[0].body.stmts
    assert k1[0] is k0[0] and k1[3] is not k0[3] and k1[4] is k0[4]
    assert not structural_equal(prog, out)
    assert 'attrs={"tag": 1}' in out.as_python()


def test_iter_arg_init_substitution_keeps_uses_consistent():
    fn, x, i, acc, y, off, r = _scaled_loop()
    z = Var("z", T)
    loop = fn.body.stmts[0]
    out = substitute(loop, {x: z})
    new_acc = out.iter_args[0]
    assert new_acc.init is z and new_acc is not acc
    assert out.body.stmts[1].value.args[0] is new_acc
    assert out.body.stmts[1].value.args[1] is z


def test_if_stmt_mutation():
    x = Var("x", INDEX)
    p = Var("p", INDEX)
    br = IfStmt(BinOp("==", x, ConstInt(0)), SeqStmts((YieldStmt((x,)),)),
                SeqStmts((YieldStmt((ConstInt(1),)),)), (p,))
    out = clone_with_fresh_vars(br)
    assert out.return_vars[0] is not p
    assert_structural_equal(out, br)
    out2 = substitute(br, {x: ConstInt(5)})
    # substitution folds arithmetic on two constants, as the DSL parser does
    assert format_node(out2.cond) == "False"


def test_substitution_folds_constant_index_arithmetic():
    i = Var("i", INDEX)
    e = BinOp("+", BinOp("*", i, ConstInt(16)), ConstInt(4))
    assert format_node(substitute(e, {i: ConstInt(3)})) == "52"
    assert format_node(substitute(e, {i: BinOp("+", i, ConstInt(1))})) == "(i + 1) * 16 + 4"
    assert format_node(substitute(BinOp("//", i, ConstInt(0)), {i: ConstInt(3)})) == "3 // 0"
    assert format_node(substitute(BinOp("<", i, ConstInt(4)), {i: ConstInt(3)})) == "True"
    mixed = BinOp("+", i, ConstInt(1, DataType.INT32))
    assert format_node(substitute(mixed, {i: ConstInt(3)})) == "3 + pl.const(1, pl.INT32)"


def test_mutator_covers_eval_unary_list_and_tuple_types():
    from ptoc.ir.nodes import ListExpr, UnaryOp
    from ptoc.ir.types import TupleType

    n, m = Var("n", INDEX), Var("m", INDEX)
    t = TensorType((n, 4), FP32)
    stmt = EvalStmt(Call("f", (UnaryOp("-", n), ListExpr((n, ConstInt(1)))), (),
                         TupleType((t, INDEX)), is_function=True))
    out = substitute(stmt, {n: m})
    call = out.expr
    assert format_node(call) == "self.f(-m, [m, 1])"
    assert call.type.types[0].shape[0] is m
    assert substitute(stmt, {}) is stmt


def test_mutator_body_hooks_may_return_none_or_a_single_statement():
    x = Var("x", INDEX)
    i = Var("i", INDEX)
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), (), SeqStmts((EvalStmt(x),)), ())

    class DropBody(IRMutator):
        def mutate_seq_stmts(self, node):
            return None if node is loop.body else super().mutate_seq_stmts(node)

    class SingleBody(IRMutator):
        def mutate_seq_stmts(self, node):
            return EvalStmt(ConstInt(1)) if node is loop.body else super().mutate_seq_stmts(node)

    assert DropBody().mutate(loop).body.stmts == ()
    assert format_node(SingleBody().mutate(loop).body) == "1"


def test_user_mapping_of_a_definition_to_a_var_is_followed():
    fn, x, i, acc, y, off, r = _scaled_loop()
    loop = fn.body.stmts[0]
    acc2 = IterArg("acc2", T, init=x)
    j = Var("j", INDEX)
    out = substitute(loop, {acc: acc2, i: j})
    assert out.iter_args[0] is acc2 and out.loop_var is j
    assert out.body.stmts[1].value.args[0] is acc2
    z = Var("z", T)
    out2 = substitute(loop, {acc: acc2, x: z})
    assert out2.iter_args[0].init is z and out2.iter_args[0].name == "acc2"


def test_visitor_dispatches_types_unary_ops_and_constants():
    from ptoc.ir.nodes import ConstBool, ConstFloat, UnaryOp
    from ptoc.ir.types import TupleType

    n = Var("n", INDEX)
    c = _Collect()
    c.visit(TupleType((TensorType((n, 2), FP32),)))
    c.visit(UnaryOp("not", BinOp("<", n, ConstInt(2))))
    c.visit(ConstFloat(1.0))
    c.visit(ConstBool(True))
    c.visit(None)
    c.visit(5)
    assert c.uses == ["n", "n"]


def test_statement_level_mutators_skip_assignments_and_others_do_not():
    """A mutator that overrides only statement hooks, with no substitution, leaves every
    assignment as it is without walking it; one that overrides an expression hook (or has a
    substitution) still reaches every call."""
    from ptoc.ir import visitor

    program = make_matmul_program()

    class LoopsOnly(IRMutator):
        def mutate_for_stmt(self, node):
            return super().mutate_for_stmt(node)

    class SeesCalls(LoopsOnly):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def mutate_call(self, node):
            self.calls += 1
            return super().mutate_call(node)

    assert visitor._statements_only(LoopsOnly) and not visitor._statements_only(SeesCalls)
    assert LoopsOnly().mutate(program) is program
    seer = SeesCalls()
    assert seer.mutate(program) is program and seer.calls > 0
    expected = 0

    class Count(IRVisitor):
        def visit_call(self, node):
            nonlocal expected
            expected += 1
            super().visit_call(node)

    Count().visit(program)
    assert seer.calls == expected


def test_a_visitor_class_made_per_call_is_routed_by_its_hooks_and_not_kept_alive():
    """Passes define small visitor classes inside functions (a new class per call): each
    must dispatch to its own hook functions, and the dispatch caches must not keep the
    classes alive (they are keyed by a class's bases and the names it defines)."""
    import gc
    import weakref

    program = make_matmul_program()

    def make(kind):
        class _Count(IRVisitor):
            def __init__(self):
                self.seen = 0

            def visit_call(self, node):
                self.seen += 1 if kind == "calls" else 0
                super().visit_call(node)

        class _Rename(IRMutator):
            def mutate_var(self, node):
                return node

        return _Count, _Rename

    counts, refs = [], []
    for kind in ("calls", "none", "calls"):
        visitor_cls, mutator_cls = make(kind)
        v = visitor_cls()
        v.visit(program)
        counts.append(v.seen)
        assert mutator_cls().mutate(program) is program
        refs += [weakref.ref(visitor_cls), weakref.ref(mutator_cls)]
        del v, visitor_cls, mutator_cls
    assert counts[0] == counts[2] > 0 and counts[1] == 0
    gc.collect()
    assert all(ref() is None for ref in refs)


def test_calls_in_finds_the_calls_a_call_visitor_sees_in_program_order():
    from ptoc.ir.visitor import calls_in

    program = make_matmul_program(with_memref=True)
    c = _Collect()
    c.visit(program)
    assert [call.op for call in calls_in(program)] == c.ops
    loads = calls_in(program, lambda call: call.op == "tile.load")
    assert [call.args[0].name for call in loads] == ["a", "b"]
    kernel = program.functions[0]
    assert calls_in(kernel.body) == calls_in(kernel) and calls_in(kernel)[0].op == "tile.alloc"


def test_an_assignment_hook_is_statement_level_and_sees_every_assignment():
    """Overriding the assignment hook itself keeps the shortcut: the hook runs on every
    assignment (loop bodies included) and what it returns is kept; the default rewrite it
    defers to has nothing to walk without a substitution."""
    import dataclasses

    from ptoc.errors import SourceLoc
    from ptoc.ir import visitor

    program = make_matmul_program()
    seen = []
    tag = SourceLoc("tag.py", 1, 1)

    class Tags(IRMutator):
        def mutate_assign_stmt(self, node):
            seen.append(node.var.name)
            if node.var.name == "c_init":
                return dataclasses.replace(node, loc=tag)
            return super().mutate_assign_stmt(node)

    assert visitor._statements_only(Tags)
    out = Tags().mutate(program)
    assert {"lm", "rm", "c_init", "c_a", "c_b"} <= set(seen)
    tagged = [s for s in out.functions[0].body.stmts
              if isinstance(s, AssignStmt) and s.var.name == "c_init"]
    assert tagged[0].loc is tag and out is not program


def test_leaves_reach_every_hook_a_class_overrides():
    """The traversal resolves a Var use and a constant inline only when the class leaves
    them to IRVisitor's / IRMutator's own hooks: an override of the leaf hook, or of
    ``visit`` / ``mutate`` itself, still sees every leaf (call arguments, list items,
    yielded values, a MemRef offset)."""
    program = make_matmul_program(with_memref=True)

    class _Everything(IRVisitor):
        def __init__(self):
            self.seen = []

        def visit(self, node):
            self.seen.append(node)
            super().visit(node)

    class _Consts(IRVisitor):
        def __init__(self):
            self.seen = []

        def visit_const_int(self, node):
            self.seen.append(node)

    everything, consts = _Everything(), _Consts()
    everything.visit(program)
    consts.visit(program)
    assert consts.seen and all(c in everything.seen for c in consts.seen)

    class _Bump(IRMutator):
        def mutate_const_int(self, node):
            return ConstInt(node.value + 1, node.dtype)

    class _BumpAll(IRMutator):
        def mutate(self, node):
            out = super().mutate(node)
            return ConstInt(out.value + 1, out.dtype) if type(out) is ConstInt else out

    for mutator in (_Bump(), _BumpAll()):
        bumped = _Consts()
        bumped.visit(mutator.mutate(program))
        assert [c.value for c in bumped.seen] == [c.value + 1 for c in consts.seen]
