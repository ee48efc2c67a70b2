"""``ptoc run --chip`` runs the task graph on the chip and prints per-core utilisation."""

from __future__ import annotations

from ptoc.cli import main

PROGRAM = '''
import ptoc.language as pl

N = 32


@pl.program
class Two:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, a: pl.Tensor[[N, N], pl.FP32], t: pl.Out[pl.Tensor[[N, N], pl.FP32]]
               ) -> pl.Tensor[[N, N], pl.FP32]:
        x = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Vec)
        pl.store(pl.add(x, x), [0, 0], t)
        return t

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Out[pl.Tensor[[N, N], pl.FP32]],
             c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        b = self.double(a, b)
        c = self.double(a, c)
        return b, c


def golden(inputs):
    return {"b": 2 * inputs["a"], "c": 2 * inputs["a"]}
'''


def test_run_on_the_chip_prints_the_chip_and_its_cores(capsys, tmp_path):
    path = tmp_path / "two.py"
    path.write_text(PROGRAM)
    assert main(["run", str(path), "--chip", "--sim-mode", "fast", "-o",
                 str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "on the simulated a2a3 chip" in out
    assert "chip wall" in out and "2 tasks on 2 of 72 cores" in out
    rows = [line.split()[0] for line in out.splitlines() if line.strip().startswith("AIV")]
    assert rows == ["AIV0.0", "AIV0.1"]
    assert out.rstrip().endswith("OK")


def test_clusters_needs_chip(capsys, tmp_path):
    path = tmp_path / "two.py"
    path.write_text(PROGRAM)
    assert main(["run", str(path), "--clusters", "2", "-o", str(tmp_path / "out")]) == 2
    assert "--clusters applies to --chip runs" in capsys.readouterr().err
