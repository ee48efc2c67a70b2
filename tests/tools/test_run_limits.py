"""A program too large to simulate is refused from the compiled program alone, before any
tensor is made (issue 16 point 7); orchestration arithmetic errors and runaway orchestration
loops are PtocErrors naming the line (point 8)."""

import numpy as np
import pytest

from ptoc import ir
from ptoc.cli import main
from ptoc.errors import RuntimeConfigError
from ptoc.language import parse_program
from ptoc.sim import SimLimitError, SimLimits

TILED = """\
import ptoc.language as pl

S = {S}

@pl.program
class Tiled:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[S, S], pl.FP32], b: pl.Tensor[[S, S], pl.FP32],
               out: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        for i, (o0,) in pl.range(0, S // 64, 1, init_values=(out,)):
            for j, (o1,) in pl.range(0, S // 64, 1, init_values=(o0,)):
                acc0 = pl.tile.create([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
                for kb, (acc,) in pl.range(0, S // 64, 1, init_values=(acc0,)):
                    am = pl.load(a, [i * 64, kb * 64], [64, 64], target_memory=pl.Mem.Mat)
                    bm = pl.load(b, [kb * 64, j * 64], [64, 64], target_memory=pl.Mem.Mat)
                    if kb == 0:
                        r = pl.matmul(am, bm)
                        acc1 = pl.yield_(r)
                    else:
                        r2 = pl.matmul_acc(acc, am, bm)
                        acc1 = pl.yield_(r2)
                    acc2 = pl.yield_(acc1)
                o2 = pl.store(acc2, [i * 64, j * 64], o1)
                o3 = pl.yield_(o2)
            o4 = pl.yield_(o3)
        return o4

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[S, S], pl.FP32], b: pl.Tensor[[S, S], pl.FP32],
             out: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> pl.Tensor[[S, S], pl.FP32]:
        out = self.kernel(a, b, out)
        return out
"""


@pytest.fixture(scope="module")
def huge(tmp_path_factory):
    return ir.compile(parse_program(TILED.format(S=16384)),
                      tmp_path_factory.mktemp("huge"), dump_passes=False)


def test_a_huge_program_is_refused_before_its_tensors_exist(huge, monkeypatch):
    def no_allocation(*args, **kwargs):
        raise AssertionError("allocated a tensor before refusing the run")

    monkeypatch.setattr(np, "zeros", no_allocation)
    with pytest.raises(SimLimitError) as info:
        huge()                                   # inputs-only call: outputs would be made
    msg = str(info.value)
    assert "running main would need about" in msg and "(limit 5,000,000)" in msg
    assert "kernel.pto:" in msg and "(256 trips)" in msg and "3.0 GiB of tensors" in msg


def test_ptoc_run_refuses_before_making_inputs(tmp_path, capsys, monkeypatch):
    from ptoc.testing.specs import TensorSpec

    path = tmp_path / "tiled.py"
    path.write_text(TILED.format(S=16384))

    def no_inputs(*args, **kwargs):
        raise AssertionError("made the inputs of a run that must be refused")

    monkeypatch.setattr(TensorSpec, "create", no_inputs)
    assert main(["run", str(path), "-o", str(tmp_path / "o"), "--no-dump"]) == 2
    last = capsys.readouterr().err.splitlines()[-1]     # after the compile's summary lines
    assert last.startswith("ptoc: error: ")
    assert "pipe instructions (limit 5,000,000)" in last and "fix:" in last


def test_a_small_program_runs_under_the_same_checks():
    compiled = ir.compile(parse_program(TILED.format(S=128)), dump_passes=False)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 128, 128)).astype(np.float32)
    np.testing.assert_allclose(compiled(a, b), a @ b, rtol=1e-4, atol=1e-3)
    from ptoc.runtime import RunConfig

    with pytest.raises(SimLimitError, match=r"pipe instructions \(limit 10\)"):
        compiled(a, b, config=RunConfig(sim_limits=SimLimits(max_instructions=10)))


ORCH = """\
import ptoc.language as pl

@pl.program
class Orch:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
               ) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
             ) -> pl.Tensor[[16, 16], pl.FP32]:
        for i, (acc,) in pl.range(0, {N}, 1, init_values=(y,)):
{EXTRA}            r = self.kernel(x, acc)
            acc2 = pl.yield_(r)
        return acc2
"""


def test_a_runaway_orchestration_loop_is_refused():
    compiled = ir.compile(parse_program(ORCH.format(N=10 ** 10, EXTRA="")), dump_passes=False)
    x = np.ones((16, 16), np.float32)
    with pytest.raises(SimLimitError, match=r"TiB of memory .* 10,000,000,000 call\(s\)"):
        compiled(x, np.zeros_like(x))


def test_orchestration_loops_count_scalar_steps():
    from ptoc.runtime import RunConfig

    compiled = ir.compile(parse_program(ORCH.format(N=10 ** 6, EXTRA="")), dump_passes=False)
    x = np.ones((16, 16), np.float32)
    limits = SimLimits(max_scalar_steps=1000, max_bytes=1 << 50)
    with pytest.raises(SimLimitError, match="orchestration loop i runs 1,000,000 times") as info:
        compiled(x, np.zeros_like(x), config=RunConfig(sim_limits=limits))
    assert info.value.loc.line == 14


def test_orchestration_division_by_zero_names_the_line():
    extra = "            k = 64 // (i - i)\n"
    compiled = ir.compile(parse_program(ORCH.format(N=2, EXTRA=extra)), dump_passes=False)
    x = np.ones((16, 16), np.float32)
    with pytest.raises(RuntimeConfigError, match="64 // 0 fails") as info:
        compiled(x, np.zeros_like(x))
    assert info.value.loc.line == 15


DIV = """\
import ptoc.language as pl

@pl.program
class Div:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
               ) -> pl.Tensor[[64, 64], pl.FP32]:
        for i, (acc,) in pl.range(0, 2, 1, init_values=(y,)):
            t = pl.load(x, [(i * 32) // (i - i), 0], [32, 64])
            acc2 = pl.store(t, [i * 32, 0], acc)
            r = pl.yield_(acc2)
        return r
"""


def test_a_dsl_division_by_zero_names_the_pto_and_the_source_line():
    compiled = ir.compile(parse_program(DIV, "div.py"), dump_passes=False)
    x = np.ones((64, 64), np.float32)
    from ptoc.sim import SimProgramError

    with pytest.raises(SimProgramError, match=r"division by zero \(0 by 0\) \(source div.py:9"):
        compiled(x, np.zeros_like(x))
