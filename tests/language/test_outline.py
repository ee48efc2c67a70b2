"""``with pl.at(...)`` scopes become InCore kernels called from the enclosing function."""

import pytest

import ptoc.language as pl
from ptoc.dtypes import Direction, FunctionType
from ptoc.errors import ParseError
from ptoc.ir import assert_structural_equal
from ptoc.ir.nodes import AssignStmt
from ptoc.ir.verifier import verify
from ptoc.language.roundtrip import roundtrip

SRC = '''
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 256], pl.BF16], w: pl.Tensor[[256, 128], pl.BF16],
             b: pl.Tensor[[128, 128], pl.FP32], y: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        tmp = pl.create_tensor([128, 128], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
            tmp[:] = pl.matmul(x, w, out_dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(tmp, [0, 0], [128, 128])
            y = pl.store(pl.add(t, pl.load(b, [0, 0], [128, 128])), [0, 0], y)
        return y
'''


def test_scopes_become_kernels_and_calls():
    program = pl.parse_program(SRC)
    verify(program)
    roundtrip(program)
    assert [(f.name, f.func_type) for f in program.functions] == [
        ("mm", FunctionType.InCore), ("main_incore_0", FunctionType.InCore),
        ("main", FunctionType.Orchestration)]
    mm = program.functions[0]
    assert [(p.var.name, p.direction) for p in mm.params] == [
        ("x", Direction.In), ("w", Direction.In), ("tmp", Direction.Out)]
    calls = [s.value for s in program.functions[2].body.stmts if isinstance(s, AssignStmt)]
    assert [c.op for c in calls] == ["tensor.create", "mm", "main_incore_0"]
    assert calls[2].args[0] is program.functions[2].body.stmts[1].var, "the second scope reads mm's result"


@pytest.mark.parametrize("body,phrase", [
    ("with pl.at(level=pl.Level.CHIP):\n            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)",
     "is not supported; ptoc simulates one core group"),
    ("with pl.at(level=pl.Level.CORE_GROUP, optimizations=[1]):\n            y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)",
     "optimizations"),
    ("t = pl.load(x, [0, 0], [16, 16])\n        with pl.at(level=pl.Level.CORE_GROUP):\n            t = pl.exp(t)",
     "only DDR tensors cross a kernel boundary"),
    ("with open('f'):\n            pass", "is not a kernel scope"),
    ("with pl.at(level=pl.Level.CORE_GROUP) as (a, b):\n            pass", "optionally 'as task_id'"),
    ("with pl.at(level=pl.Level.CORE_GROUP, deps=[t]):\n            y[:] = pl.add(x, x)",
     "'t' is not the task id of an earlier scope"),
    ("with pl.at(level=pl.Level.CORE_GROUP, deps=[x]):\n            y[:] = pl.add(x, x)",
     "'x' is not the task id of an earlier scope"),
    ("with pl.at(level=pl.Level.CORE_GROUP, deps=t):\n            y[:] = pl.add(x, x)",
     "takes a list of task ids"),
    ("with pl.at(level=pl.Level.CORE_GROUP, deps=[t]) as t:\n            y[:] = pl.add(x, x)",
     "'t' is not the task id of an earlier scope"),
])
def test_scope_errors(body, phrase):
    src = ("import ptoc.language as pl\n@pl.program\nclass P:\n"
           "    @pl.function(type=pl.FunctionType.Orchestration)\n"
           "    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],"
           " z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n        " + body + "\n")
    with pytest.raises(ParseError, match=phrase) as info:
        pl.parse_program(src, filename="scope.py")
    assert info.value.loc.line >= 6


TASKS = """
import ptoc.language as pl

@pl.program
class Tasks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="main") as first:
            s[:] = pl.add(x, x)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="main", deps=[first]) as second:
            y[:] = pl.add(s, s)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="main", deps=[first, second]):
            y[:] = pl.add(y, s)
        return y
"""


def test_task_ids_and_deps_parse_and_keep_program_order():
    """``as t`` / ``deps=[t]`` are accepted; one core runs the scopes in order, so the
    program is the same as without them. A name_hint equal to the enclosing function's
    name (or an earlier scope's) takes the smallest free numeric suffix."""
    program = pl.parse_program(TASKS)
    verify(program)
    roundtrip(program)
    assert [f.name for f in program.functions] == ["main_0", "main_1", "main_2", "main"]
    plain = pl.parse_program(TASKS.replace(" as first", "").replace(" as second", "")
                             .replace(", deps=[first]", "").replace(", deps=[first, second]", ""))
    assert_structural_equal(program, plain)
