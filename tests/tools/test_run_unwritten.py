"""``ptoc run`` reports a read of GM that nothing wrote (garbage on a device) and fails, even
when the output matches the golden computed from ptoc's zero-filled GM."""

import pytest
from test_cli import run

HALF = """\
import numpy as np
import ptoc.language as pl

N = 32


@pl.program
class Half:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, a: pl.Tensor[[N, N], pl.FP32], t: pl.Out[pl.Tensor[[N, N], pl.FP32]]
             ) -> pl.Tensor[[N, N], pl.FP32]:
        x = pl.load(a, [0, 0], [16, N], target_memory=pl.Mem.Vec)
        t = pl.store(pl.add(x, x), [0, 0], t)
        return t

    @pl.function(type=pl.FunctionType.InCore)
    def exp(self, t: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]
            ) -> pl.Tensor[[N, N], pl.FP32]:
        x = pl.load(t, [0, 0], [N, N], target_memory=pl.Mem.Vec)
        c = pl.store(pl.exp(x), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]
             ) -> pl.Tensor[[N, N], pl.FP32]:
        t = pl.create_tensor([N, N], dtype=pl.FP32{init})
        t = self.fill(a, t)
        c = self.exp(t, c)
        return c


def golden(inputs):
    t = np.zeros((N, N), np.float32)
    t[:16] = 2 * inputs["a"][:16]
    return {{"c": np.exp(t)}}
"""


@pytest.mark.filterwarnings("ignore::ptoc.errors.UnwrittenReadWarning")
def test_run_prints_the_unwritten_read_and_fails(capsys, tmp_path):
    path = tmp_path / "half.py"
    path.write_text(HALF.format(init=""))
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 1, out
    assert "unwritten reads: 1" in out and "reads 't' elements [512, 1024)" in out
    assert "fix: write the bytes before reading them" in out
    assert out.rstrip().endswith("FAILED")


def test_run_with_init_value_passes(capsys, tmp_path):
    path = tmp_path / "half.py"
    path.write_text(HALF.format(init=", init_value=0.0"))
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 0, out
    assert "unwritten" not in out and out.rstrip().endswith("OK")
