"""Every construct parses, prints, re-parses to a structurally equal program and verifies."""

import glob
import os

import pytest

from oracle_data import ORACLE_ROOT
import ptoc.language as pl
from ptoc.dtypes import Direction, ForKind, FunctionType, MemorySpace
from ptoc.ir.nodes import AssignStmt, ForStmt, IfStmt, ReturnStmt, YieldStmt
from ptoc.ir.types import TileType
from ptoc.ir.verifier import verify
from ptoc.language.roundtrip import roundtrip
from programs import ALL

ORACLE = sorted(glob.glob(os.path.join(str(ORACLE_ROOT), "dumps", "*", "*.py")))


@pytest.mark.parametrize("name", sorted(ALL))
def test_construct_roundtrips(name):
    program = pl.parse_program(ALL[name], filename=f"{name}.py")
    verify(program)
    again = roundtrip(program, label=name)
    assert again.as_python() == program.as_python()


def test_oracle_dumps_are_present():
    assert len(ORACLE) >= 100, "the PyPTO oracle dumps are expected beside the project"


@pytest.mark.parametrize("path", ORACLE, ids=lambda p: "/".join(p.split(os.sep)[-2:]))
def test_reads_what_pypto_prints(path):
    with open(path) as fh:
        program = pl.parse_program(fh.read(), filename=path)
    verify(program)
    roundtrip(program, label=os.path.basename(path))


def _body(program, fn=0):
    return program.functions[fn].body.stmts


def test_explicit_carry_binds_yield_names():
    program = pl.parse_program(ALL["explicit_carry"])
    loop = next(s for s in _body(program) if isinstance(s, ForStmt))
    assert [ia.name for ia in loop.iter_args] == ["m", "l"]
    assert [rv.name for rv in loop.return_vars] == ["m_out", "l_out"]
    assert isinstance(loop.body.stmts[-1], YieldStmt)
    after = [s for s in _body(program) if isinstance(s, AssignStmt) and s.var.name == "r"][0]
    assert after.value.args[0] is loop.return_vars[0]


def test_implicit_carry_threads_rebound_names():
    program = pl.parse_program(ALL["k_loop"])
    loop = next(s for s in _body(program) if isinstance(s, ForStmt))
    assert [ia.name for ia in loop.iter_args] == ["acc"]
    init = loop.iter_args[0].init
    assert isinstance(init.type, TileType) and init.type.memory_space is MemorySpace.Acc
    matmul = [s for s in loop.body.stmts if isinstance(s, AssignStmt)
              and s.value.op == "tile.matmul_acc"][0]
    assert matmul.value.args[0] is loop.iter_args[0]
    assert matmul.value.args[3].op == "=="  # init_cond is positional, as PyPTO prints it
    ret = _body(program)[-1]
    assert isinstance(ret, ReturnStmt)


def test_if_phi_and_pipeline_attrs():
    program = pl.parse_program(ALL["pipeline_if"])
    loop = next(s for s in _body(program) if isinstance(s, ForStmt))
    assert loop.kind is ForKind.Pipeline
    assert loop.attrs == {"pipeline_stages": 2, "pipeline_overlap_stores": False}
    branch = next(s for s in loop.body.stmts if isinstance(s, IfStmt))
    assert len(branch.return_vars) == 1
    assert branch.then_body.stmts[-1].values[0].type.memory_space is MemorySpace.Acc
    assert loop.body.stmts[-1].values[0] is branch.return_vars[0]


def test_nested_calls_are_hoisted_into_statements():
    program = pl.parse_program(ALL["tile_matmul"].replace(
        "al = pl.move(am, target_memory=pl.Mem.Left)\n        bl = pl.move(bm, target_memory=pl.Mem.Right)\n        acc = pl.matmul(al, bl)",
        "acc = pl.matmul(pl.move(am, target_memory=pl.Mem.Left), pl.move(bm, target_memory=pl.Mem.Right))"))
    ops = [s.value.op for s in _body(program) if isinstance(s, AssignStmt)]
    assert ops == ["tile.load", "tile.load", "tile.move", "tile.move", "tile.matmul", "tile.store"]


def test_directions_function_types_and_calls():
    program = pl.parse_program(ALL["tensor_level"])
    main = program.get_function("main")
    assert main.func_type is FunctionType.Orchestration
    assert [p.direction for p in main.params] == [Direction.In] * 3 + [Direction.Out]
    calls = [s.value for s in main.body.stmts if isinstance(s, AssignStmt) and s.value.is_function]
    assert [c.op for c in calls] == ["mm", "vec"]
    create = main.body.stmts[0].value
    assert create.op == "tensor.create"


def test_sugar_lowers_to_ops():
    program = pl.parse_program(ALL["vector_ops"])
    ops = [s.value.op for s in _body(program) if isinstance(s, AssignStmt)]
    assert ops[:3] == ["tile.load", "tile.load", "tile.add"]
    assert "tile.muls" in ops and "tile.adds" in ops and "tile.slice" in ops
    cast = [s.value for s in _body(program) if isinstance(s, AssignStmt) and s.value.op == "tile.cast"][0]
    assert cast.kwarg("mode") == "rint"
    vec = pl.parse_program(ALL["tensor_level"]).get_function("vec")
    assembles = [s.value for s in vec.body.stmts if isinstance(s, AssignStmt)
                 and s.value.op == "tensor.assemble"]
    assert len(assembles) == 2


def test_static_if_folds_and_closure_constants_fold():
    src = """
import ptoc.language as pl
USE_EXP = True
R = 16 * 4

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[R, R // 2], pl.FP32], y: pl.Out[pl.Tensor[[R, R // 2], pl.FP32]]) -> pl.Tensor[[R, R // 2], pl.FP32]:
        t = pl.load(x, [0, 0], [R, R // 2])
        if USE_EXP:
            t = pl.exp(t)
        else:
            t = pl.neg(t)
        y = pl.store(t, [0, 0], y)
        return y
"""
    program = pl.parse_program(src)
    assert program.functions[0].params[0].var.type.shape == (64, 32)
    ops = [s.value.op for s in _body(program) if isinstance(s, AssignStmt)]
    assert ops == ["tile.load", "tile.exp", "tile.store"]


def test_static_print_reports_at_parse_time(capsys):
    src = """
import ptoc.language as pl
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
        t = pl.load(x, [0, 0], [16, 16])
        pl.static_print("tile is", t)
"""
    pl.parse_program(src, filename="sp.py")
    err = capsys.readouterr().err
    assert "sp.py:8" in err and "static_print" in err and "Tile[[16, 16], FP32, Vec]" in err
