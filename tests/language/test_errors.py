"""Bad programs: each raises a PtocError subclass naming the line and saying what to fix."""

import pytest

import ptoc.language as pl
from ptoc.errors import ParseError, PtocError, TypeCheckError

HEAD = """import ptoc.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
          n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 64], pl.FP32]:
"""
FIRST = 8  # line number of the first body line


def body(*lines):
    return HEAD + "".join(f"        {line}\n" for line in lines)


CASES = [
    ("unknown_op", body("t = pl.lod(x, [0, 0], [64, 64])"), ParseError, 0, "did you mean pl.load"),
    ("unknown_tile_op", body("t = pl.tile.matmull(x, x)"), TypeCheckError, 0, "unknown op 'pl.tile.matmull'"),
    ("wrong_arity", body("t = pl.load(x, [0, 0])"), TypeCheckError, 0, "missing its required argument 'shapes'"),
    ("too_many_args", body("t = pl.tile.exp(x, x, x)"), TypeCheckError, 0, "at most 1 positional"),
    ("unknown_kwarg", body("t = pl.load(x, [0, 0], [64, 64], target_mem=pl.Mem.Vec)"), TypeCheckError, 0, "did you mean 'target_memory'"),
    ("load_into_left", body("t = pl.load(x, [0, 0], [64, 64], target_memory=pl.Mem.Left)"), TypeCheckError, 0, "lands only in pl.Mem.Vec or pl.Mem.Mat"),
    ("shape_mismatch", body("a = pl.load(x, [0, 0], [64, 64])", "b = pl.load(x, [0, 0], [32, 64])", "c = pl.add(a, b)"), TypeCheckError, 2, "different shapes"),
    ("dtype_mismatch", body("a = pl.load(x, [0, 0], [64, 64])", "b = pl.cast(a, pl.FP16)", "c = pl.add(a, b)"), TypeCheckError, 2, "different dtypes"),
    ("matmul_k_mismatch", body("a = pl.load(x, [0, 0], [64, 32], target_memory=pl.Mem.Mat)", "c = pl.tile.matmul(a, a)"), TypeCheckError, 1, "inner dimensions differ"),
    ("vector_op_on_acc", body("a = pl.tile.create([64, 64], pl.FP32, target_memory=pl.Mem.Acc)", "c = pl.exp(a)"), TypeCheckError, 1, "must be in pl.Mem.Vec"),
    ("tile_op_on_tensor", body("c = pl.tile.exp(x)"), TypeCheckError, 0, "load it first"),
    ("store_from_left", body("a = pl.load(x, [0, 0], [64, 64], target_memory=pl.Mem.Mat)", "b = pl.move(a, target_memory=pl.Mem.Left)", "y = pl.store(b, [0, 0], y)"), TypeCheckError, 2, "cannot store a tile in pl.Mem.Left"),
    ("undefined_name", body("t = pl.load(z, [0, 0], [64, 64])"), ParseError, 0, "name 'z' is not defined"),
    ("undefined_typo", body("tile = pl.load(x, [0, 0], [64, 64])", "u = pl.exp(tlie)"), ParseError, 1, "did you mean 'tile'"),
    ("plain_range", body("for i in range(4):", "    t = pl.load(x, [0, 0], [64, 64])"), ParseError, 0, "use pl.range"),
    ("split_aiv_region", body("for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):", "    t = pl.load(x, [0, 0], [64, 64])"), ParseError, 0, "optimizations=[pl.split("),
    ("while_else", body("while n > 0:", "    n = n - 1", "else:", "    pass"), ParseError, 0, "while-else is not supported"),
    ("while_without_inits", body("for (c,) in pl.while_():", "    pl.cond(c < 10)", "    d = pl.yield_(c + 1)"), ParseError, 0, "requires init_values"),
    ("while_cond_not_first", body("for (c,) in pl.while_(init_values=(n,)):", "    e = c + 1", "    pl.cond(c < 10)", "    d = pl.yield_(e)"), ParseError, 1, "first statement of a pl.while_ body must be pl.cond"),
    ("while_bare_yield", body("for (c,) in pl.while_(init_values=(n,)):", "    pl.cond(c < 10)", "    pl.yield_(c + 1)"), ParseError, 2, "must bind its pl.yield_"),
    ("while_name_target", body("for c in pl.while_(init_values=(n,)):", "    pl.cond(c < 10)", "    d = pl.yield_(c + 1)"), ParseError, 0, "bind the carried values as a tuple"),
    ("while_cond_not_bool", body("for (c,) in pl.while_(init_values=(n,)):", "    pl.cond(c + 10)", "    d = pl.yield_(c + 1)"), ParseError, 1, "must be a comparison or logic of scalars"),
    ("while_cond_calls_op", body("for (c,) in pl.while_(init_values=(n,)):", "    pl.cond(pl.tensor.read(x, [0, 0]) < 1.0)", "    d = pl.yield_(c + 1)"), ParseError, 1, "with no op call"),
    ("pl_cond_alone", body("pl.cond(n < 10)"), ParseError, 0, "may only be the first statement of its body"),
    ("break_in_parallel", body("for i in pl.parallel(4):", "    if i == n:", "        break"), ParseError, 2, "'break' is not supported here"),
    ("continue_with_init_values", body("for i, (c,) in pl.range(4, init_values=(n,)):", "    if i == n:", "        continue", "    d = pl.yield_(c + 1)"), ParseError, 2, "'continue' is not supported here"),
    ("break_in_pl_while_with_yield", body("for (c,) in pl.while_(init_values=(n,)):", "    pl.cond(c < 10)", "    if c == 3:", "        break", "    d = pl.yield_(c + 1)"), ParseError, 3, "only when its body rebinds the header names"),
    ("pipeline_without_stage", body("for i in pl.pipeline(0, 4, 1):", "    t = pl.load(x, [0, 0], [64, 64])"), ParseError, 0, "needs stage="),
    ("stage_on_range", body("for i in pl.range(0, 4, 1, stage=2):", "    pass"), ParseError, 0, "only valid on pl.pipeline"),
    ("zero_step", body("for i in pl.range(0, 4, 0):", "    pass"), ParseError, 0, "step of 0"),
    ("if_arms_yield_arity", body("a = pl.load(x, [0, 0], [64, 64])", "if n == 0:", "    r = pl.yield_(a)", "else:", "    r, s = pl.yield_(a, a)"), ParseError, 1, "different numbers of values"),
    ("if_one_arm_yields", body("a = pl.load(x, [0, 0], [64, 64])", "if n == 0:", "    r = pl.yield_(a)", "else:", "    b = pl.exp(a)"), ParseError, 1, "only one arm"),
    ("if_arms_differ_in_type", body("a = pl.load(x, [0, 0], [64, 64])", "if n == 0:", "    a = pl.cast(a, pl.FP16)", "else:", "    a = pl.exp(a)"), ParseError, 1, "different types"),
    ("carry_changes_type", body("a = pl.load(x, [0, 0], [64, 64])", "for i in pl.range(4):", "    a = pl.cast(a, pl.FP16)"), ParseError, 1, "changes type inside the loop"),
    ("yield_not_last", body("a = pl.load(x, [0, 0], [64, 64])", "for i, (c,) in pl.range(4, init_values=(a,)):", "    r = pl.yield_(c)", "    b = pl.exp(c)"), ParseError, 2, "last statement"),
    ("yield_outside", body("a = pl.load(x, [0, 0], [64, 64])", "b = pl.yield_(a)"), ParseError, 1, "outside a loop or if body"),
    ("init_values_without_yield", body("a = pl.load(x, [0, 0], [64, 64])", "for i, (c,) in pl.range(4, init_values=(a,)):", "    b = pl.exp(c)"), ParseError, 1, "must end with pl.yield_"),
    ("bad_annotation", body("t: pl.Tile[[32, 64], pl.FP32] = pl.load(x, [0, 0], [64, 64])"), ParseError, 0, "annotation of 't' says"),
    ("static_assert_fails", body("pl.static_assert(64 % 48 == 0, \"64 must divide by 48\")"), ParseError, 0, "64 must divide by 48"),
    ("static_assert_runtime", body("pl.static_assert(n == 3, \"n\")"), ParseError, 0, "known at parse time"),
    ("bad_cast_mode", body("a = pl.load(x, [0, 0], [64, 64])", "b = pl.cast(a, pl.FP16, mode=\"nearest\")"), TypeCheckError, 1, "is not one of"),
    ("offsets_rank", body("a = pl.load(x, [0, 0, 0], [64, 64])"), TypeCheckError, 0, "rank 2"),
    ("unknown_self_function", body("y = self.kernal(x, y, n)"), ParseError, 0, "no function 'kernal'"),
    ("python_print", body("print(x)"), ParseError, 0, "pl.static_print"),
    ("tuple_unpack", body("a, b = x, x"), ParseError, 0, "unpacking is only supported for pl.yield_"),
    ("scalar_first_operand", body("b = pl.exp(1.0)"), ParseError, 0, "as its first argument"),
    ("integer_true_division", body("a = pl.load(x, [n / 2, 0], [64, 64])"), ParseError, 0, "use // for integer"),
    ("yield_in_plain_loop", body("a = pl.load(x, [0, 0], [64, 64])", "for i in pl.range(4):", "    b = pl.yield_(a)"), ParseError, 2, "without init_values"),
    ("non_positive_dim", body("a = pl.load(x, [0, 0], [0, 64])"), TypeCheckError, 0, "non-positive dimension"),
]


@pytest.mark.parametrize("name,src,cls,offset,phrase", CASES, ids=[c[0] for c in CASES])
def test_bad_program(name, src, cls, offset, phrase):
    with pytest.raises(cls) as info:
        pl.parse_program(src, filename=f"{name}.py")
    err = info.value
    assert err.loc is not None and err.loc.file == f"{name}.py"
    assert err.loc.line == FIRST + offset, f"{err}"
    assert phrase in str(err), str(err)


SIGNATURE_CASES = [
    ("missing_annotation", "def k(self, x):\n        pass\n", "Parameter 'x' missing type annotation"),
    ("not_a_type", "def k(self, x: int):\n        pass\n", "is not a ptoc type"),
    ("out_on_scalar", "def k(self, n: pl.Out[pl.Scalar[pl.INDEX]]):\n        pass\n", "only tensors can be pl.Out"),
    ("bad_dtype", "def k(self, x: pl.Tensor[[16, 16], pl.FP31]):\n        pass\n", "not a dtype"),
]


@pytest.mark.parametrize("name,sig,phrase", SIGNATURE_CASES, ids=[c[0] for c in SIGNATURE_CASES])
def test_bad_signature(name, sig, phrase):
    src = ("import ptoc.language as pl\n\n@pl.program\nclass Bad:\n"
           "    @pl.function(type=pl.FunctionType.InCore)\n    " + sig)
    with pytest.raises(PtocError) as info:
        pl.parse_program(src, filename="sig.py")
    assert info.value.loc.line == 6
    assert phrase in str(info.value)


def test_missing_function_decorator():
    src = "import ptoc.language as pl\n@pl.program\nclass Bad:\n    def k(self):\n        pass\n"
    with pytest.raises(ParseError, match="needs a @pl.function"):
        pl.parse_program(src)


def test_syntax_error_has_line():
    with pytest.raises(ParseError) as info:
        pl.parse_program("import ptoc.language as pl\n@pl.program\nclass P:\n    def (:\n")
    assert info.value.loc.line == 4


def test_no_program_class():
    with pytest.raises(ParseError, match="no @pl.program class"):
        pl.parse_program("x = 1\n")


@pytest.mark.parametrize("call,phrase", [
    ("y = self.k(x, (1, 2), n)", "argument 'y' of k must be a tensor or a scalar value"),
    ("y = self.k(x, pl.Mem.Acc, n)", "argument 'y' of k must be a tensor or a scalar value"),
])
def test_bad_function_call_arguments(call, phrase):
    with pytest.raises(ParseError, match=phrase) as info:
        pl.parse_program(body(call), filename="call.py")
    assert info.value.loc.line == FIRST


def test_comparing_unrelated_constants():
    with pytest.raises(ParseError, match="cannot compare") as info:
        pl.parse_program(body("if [0, 0] > 3:", "    pass"), filename="cmp.py")
    assert info.value.loc.line == FIRST
