"""``ptoc run`` never reports a check that compared nothing as a pass: a file golden must
cover every output, the numpy matmul golden applies only to a plain matmul, and a run checked
only against a serialised run says so."""

from pathlib import Path

import pytest
from test_cli import ADD, EXAMPLES, GEMM, JIT, run

# the cube kernel of the jit tests, then a ReLU kernel: the entry (a, b, y) looks like a matmul
MATMUL_RELU = """\
import sys
import numpy as np
import ptoc.language as pl

sys.path.insert(0, {jit_dir!r})
from jit_kernels import cube


@pl.jit.incore
def relu(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.relu(pl.load(x, [0, 0], [64, 64])), [0, 0], y)
    return y


@pl.jit
def matmul_relu(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
    y = relu(cube(a, b, tmp), y)
    return y


def example_inputs():
    rng = np.random.default_rng(2)
    return (rng.standard_normal((64, 64)).astype(np.float32),
            rng.standard_normal((64, 64)).astype(np.float32), np.zeros((64, 64), np.float32))
"""

GOLDENS = {
    "misspelt": ("return {'Y': inputs['x'].astype(np.float32) @ inputs['w'].astype(np.float32)}",
                 "gave no value for output 'y', so it was not checked (it returned 'Y'; "
                 "did you mean 'y'?)"),
    "empty": ("return {}", "gave no value for output 'y', so it was not checked (fix:"),
    "none": ("inputs['y'][:] = 7.0\n    return None",
             "golden() returned None, so no output was checked (y)"),
    "misshaped": ("return {'y': np.zeros((2, 2))}",
                  "value for output 'y' has shape (2, 2) but the output is (32, 32)"),
    "extra": ("return {'y': inputs['x'].astype(np.float32) @ inputs['w'].astype(np.float32), "
              "'z': 0}", "returned 'z', which is not an output of the program"),
}


@pytest.mark.parametrize("case", GOLDENS)
def test_a_golden_that_does_not_cover_every_output_fails_the_run(capsys, tmp_path, case):
    body, message = GOLDENS[case]
    path = tmp_path / "jit_golden.py"
    path.write_text(JIT + EXAMPLES + f"\n\ndef golden(inputs):\n    {body}\n")
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 1, out
    assert message in out and out.rstrip().endswith("FAILED")


def test_matmul_then_relu_gets_no_matmul_golden(capsys, tmp_path):
    """Same (a[M,K], b[K,N]) -> c[M,N] signature as a matmul, but ReLU is applied: numpy's
    a @ b would be a false FAIL, so no golden exists and the run says what it compared."""
    path = tmp_path / "matmul_relu.py"
    path.write_text(MATMUL_RELU.format(jit_dir=str(Path(__file__).parents[1] / "jit")))
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 0, out
    assert "golden:     none (no golden() in the file and not a plain matmul)" in out
    assert "numpy matmul" not in out


def test_plain_matmul_still_gets_the_numpy_golden(capsys, tmp_path):
    path = tmp_path / "gemm.py"
    path.write_text(GEMM.format(M=32, N=32))
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 0 and "golden:     numpy matmul" in out and out.rstrip().endswith("\nOK")


def test_a_serialised_run_check_says_the_arithmetic_was_not_compared(capsys, tmp_path):
    path = tmp_path / "add.py"
    path.write_text(ADD)
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 0
    assert "compared with a serialised run of the same program, which checks the " \
           "synchronisation, not the arithmetic; max |error| out 0" in out
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("OK (synchronisation only: the arithmetic was not compared")


def test_a_core_group_runs_against_its_golden_and_without_one_asks_for_it(capsys, tmp_path):
    """A mixed kernel runs on a core group: ``ptoc run`` prints each core's pipes; with no
    golden() there is no serialised run to fall back on, and the error says to add one."""
    example = Path(__file__).resolve().parents[2] / "examples" / "06_mixed_kernel.py"
    code, out, _ = run(capsys, "run", example, "-o", tmp_path / "a", "--no-dump")
    assert code == 0 and "core group" in out and "aiv1/V" in out and "races:      0" in out
    bare = tmp_path / "mixed.py"
    bare.write_text(example.read_text().replace("def golden(", "def _unused_golden("))
    code, _, err = run(capsys, "run", bare, "-o", tmp_path / "b", "--no-dump")
    assert code != 0 and "add golden(inputs)" in err and "core group" in err
