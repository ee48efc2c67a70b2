"""The ``ptoc`` subcommands compile/run/explain through ``ptoc.cli.main``: output, exit codes
(0 ok, 1 check failed, 2 user error, 3 internal error) and one-line errors."""

import json
import textwrap

import pytest

from ptoc.cli import main
from ptoc.errors import InternalError, PtocError

GEMM = """\
import ptoc.language as pl

M, K, N = {M}, 64, {N}

@pl.program
class Gemm:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        am = pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat)
        acc = pl.matmul(am, bm)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.kernel(a, b, c)
        return c
"""

JIT = """\
import numpy as np
import ptoc.language as pl


@pl.jit
def mm32(x: pl.Tensor[[32, 32], pl.FP16], w: pl.Tensor[[32, 32], pl.FP16],
         y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm32_kernel"):
        xl1 = pl.load(x, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        wl1 = pl.load(w, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(xl1, target_memory=pl.Mem.Left),
                        pl.move(wl1, target_memory=pl.Mem.Right))
        y = pl.store(acc, [0, 0], y)
    return y
"""

EXAMPLES = """

def example_inputs():
    rng = np.random.default_rng(1)
    return (rng.standard_normal((32, 32)).astype(np.float16),
            rng.standard_normal((32, 32)).astype(np.float16), np.zeros((32, 32), np.float32))
"""

GOLDEN = """

def golden(inputs):
    return inputs["x"].astype(np.float32) @ inputs["w"].astype(np.float32) {op}
"""


@pytest.fixture
def gemm_file(tmp_path):
    path = tmp_path / "gemm.py"
    path.write_text(GEMM.format(M=160, N=160))
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(err):
    assert err.startswith("ptoc: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


# ---- compile ---------------------------------------------------------------------------------

def test_compile_writes_artifacts_and_prints_a_summary(capsys, gemm_file, tmp_path):
    out_dir = tmp_path / "out"
    code, out, _ = run(capsys, "compile", gemm_file, "-o", out_dir)
    assert code == 0
    assert "kernels:      kernel" in out and "Acc buffers:  1 (kernel:0+" in out
    assert "diagnostics:  1" in out and "1 tile_choice, 1 dbc" in out  # PH001: a's 256 B rows
    assert (out_dir / "pto" / "kernel.pto").is_file()
    assert (out_dir / "report" / "decisions.json").is_file()
    assert (out_dir / "report" / "decisions.md").is_file()
    assert (out_dir / "passes_dump").is_dir()


def test_compile_dbc_flag_gives_two_acc_buffers(capsys, gemm_file, tmp_path):
    code, out, _ = run(capsys, "compile", gemm_file, "-o", tmp_path / "o", "--dbc", "--no-dump")
    assert code == 0 and "Acc buffers:  2" in out and "dbC flag on" in out
    assert not (tmp_path / "o" / "passes_dump").exists()


@pytest.mark.parametrize("flag,sign", [((), -1), (("--dbc",), +1)], ids=["off_to_on", "on_to_off"])
def test_what_if_dbc_reports_the_cycle_delta(capsys, gemm_file, tmp_path, flag, sign):
    """160x160 FP32: dbC=2 is faster, so flipping off -> on saves cycles and on -> off costs."""
    out_dir = tmp_path / "o"
    code, out, _ = run(capsys, "compile", gemm_file, "-o", out_dir, "--no-dump", *flag,
                       "--what-if", "dbc")
    assert code == 0
    data = json.loads((out_dir / "report" / "what_if_dbc.json").read_text())
    assert data["taken"]["dbc_flag"] is bool(flag)
    assert data["delta_cycles"] * sign > 0
    assert data["alternative"]["cycles"] - data["taken"]["cycles"] == data["delta_cycles"]
    assert "what-if dbc:" in out and ("faster" if sign < 0 else "slower") in out
    assert {data["taken"]["acc_buffers"], data["alternative"]["acc_buffers"]} == {1, 2}


def test_what_if_dbc_needs_the_pypto_planner(capsys, gemm_file, tmp_path):
    code, _, err = run(capsys, "compile", gemm_file, "-o", tmp_path / "o", "--no-dump",
                       "--planner", "ptoas", "--what-if", "dbc")
    assert code == 2
    assert_one_line_error(err)
    assert "PYPTO planner" in err


# ---- run -------------------------------------------------------------------------------------

def test_run_checks_the_derived_matmul_golden(capsys, gemm_file, tmp_path):
    code, out, _ = run(capsys, "run", gemm_file, "-o", tmp_path / "o", "--no-dump", "--dbc")
    assert code == 0
    assert "golden:     numpy matmul" in out and "races:      0" in out
    assert "cycles:" in out and "FIX" in out and out.rstrip().endswith("OK")


def test_run_exits_1_when_the_file_golden_disagrees(capsys, tmp_path):
    path = tmp_path / "jit_bad.py"
    path.write_text(JIT + EXAMPLES + GOLDEN.format(op="+ 1.0"))
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 1
    assert "FAIL: output 'y' differs from the file golden" in out
    assert out.rstrip().endswith("FAILED")


def test_run_jit_file_with_example_inputs_and_golden(capsys, tmp_path):
    path = tmp_path / "jit_ok.py"
    path.write_text(JIT + EXAMPLES + GOLDEN.format(op=""))
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 0, out
    assert "golden:     file" in out


def test_run_without_derivable_golden_uses_a_serialised_run(capsys, tmp_path):
    path = tmp_path / "jit_plain.py"
    path.write_text(JIT + EXAMPLES)
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    # (x, w, y) is a plain matmul signature, so the numpy golden applies here
    assert code == 0 and "golden:     numpy matmul" in out


ADD = """\
import ptoc.language as pl


@pl.program
class Add:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        s = pl.add(pl.load(x, [0, 0], [32, 64]), pl.load(y, [0, 0], [32, 64]))
        out = pl.store(s, [0, 0], out)
        return out
"""


def test_run_non_matmul_without_golden_compares_with_a_serialised_run(capsys, tmp_path):
    path = tmp_path / "add.py"
    path.write_text(ADD)
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 0 and "serialised run of the same program" in out and "max |error| out 0" in out


def test_run_golden_for_a_vector_program(capsys, tmp_path):
    path = tmp_path / "add_golden.py"
    path.write_text(ADD + "\n\ndef golden(inputs):\n    return {'out': inputs['x'] + inputs['y']}\n")
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump", "--seed", "3")
    assert code == 0 and "golden:     file" in out and "seed 3" in out


SCALED = """\
import numpy as np
import ptoc.language as pl


@pl.jit
def scaled(x: pl.Tensor, y: pl.Out[pl.Tensor], s: pl.FP32):
    t = pl.load(x, [0, 0], [32, 64])
    y = pl.store(pl.muls(t, s), [0, 0], y)
    return y


def example_inputs():
    return np.ones((32, 64), np.float32), np.zeros((32, 64), np.float32), 2.5{extra}


def golden(inputs):
    return inputs["x"] * 2.5
"""


def test_run_jit_with_a_scalar_parameter(capsys, tmp_path):
    path = tmp_path / "scaled.py"
    path.write_text(SCALED.format(extra=""))
    code, out, _ = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 0 and "max |error| y 0" in out


def test_example_inputs_of_the_wrong_arity_is_a_user_error(capsys, tmp_path):
    path = tmp_path / "scaled.py"
    path.write_text(SCALED.format(extra=", 1.0"))
    code, _, err = run(capsys, "run", path, "-o", tmp_path / "o", "--no-dump")
    assert code == 2
    assert_one_line_error(err)
    assert "returned 4 values but scaled() takes 3 (x, y, s)" in err


def test_jit_file_without_example_inputs_is_a_user_error(capsys, tmp_path):
    path = tmp_path / "jit_noinputs.py"
    path.write_text(JIT)
    code, _, err = run(capsys, "compile", path, "-o", tmp_path / "o")
    assert code == 2
    assert_one_line_error(err)
    assert "example_inputs()" in err


# ---- bad files: one line, exit 2, --debug shows the traceback --------------------------------

BAD_FILES = {
    "raises": ("import ptoc.language as pl\nx = 1 / 0\n", "bad.py:2: ZeroDivisionError"),
    "syntax": ("def f(:\n", "SyntaxError"),
    "empty": ("x = 1\n", "defines no @pl.program"),
    "two": (GEMM.format(M=16, N=16) + "\nOther = Gemm\n", "defines 2 programs"),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_bad_file_is_one_line_exit_2(capsys, tmp_path, name):
    text, expected = BAD_FILES[name]
    path = tmp_path / "bad.py"
    path.write_text(text)
    for command in ("compile", "run"):
        code, out, err = run(capsys, command, path, "-o", tmp_path / "o")
        assert code == 2 and out == ""
        assert_one_line_error(err)
        assert expected in err


def test_missing_file_is_one_line_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, "compile", tmp_path / "nope.py")
    assert code == 2
    assert_one_line_error(err)
    assert "no such file" in err


def test_debug_shows_the_traceback(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(textwrap.dedent(BAD_FILES["raises"][0]))
    with pytest.raises(PtocError) as info:
        main(["--debug", "compile", str(path)])
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_program_option_selects_one_of_several(capsys, tmp_path):
    path = tmp_path / "two.py"
    path.write_text(GEMM.format(M=16, N=16) + "\nOther = Gemm\n")
    code, out, _ = run(capsys, "compile", path, "--program", "Other", "-o", tmp_path / "o",
                       "--no-dump")
    assert code == 0 and "compiled Gemm" in out
    code, _, err = run(capsys, "compile", path, "--program", "Nope", "-o", tmp_path / "o")
    assert code == 2 and "found: Gemm, Other" in err


@pytest.mark.parametrize("exc, message", [
    (RuntimeError("simulated bug"), "RuntimeError: simulated bug"),
    (InternalError("internal error in pass Buggy: KeyError: 'x'"), "internal error in pass Buggy"),
], ids=["python_exception", "ptoc_internal_error"])
def test_internal_error_is_one_line_exit_3(capsys, monkeypatch, exc, message):
    import ptoc.tools.explain_cmd as explain_cmd

    def boom(entry):
        raise exc

    monkeypatch.setattr(explain_cmd, "render", boom)
    code, _, err = run(capsys, "explain", "PH001")
    assert code == 3 and err.startswith(f"ptoc: internal error: {message}")
    assert err.count("\n") == 1
    with pytest.raises(RuntimeError):
        main(["--debug", "explain", "PH001"])


def test_help_documents_exit_codes(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for text in ("0 success", "1 a check failed", "2 user error", "3 internal error"):
        assert text in " ".join(out.split())
    for command in ("compile", "run", "explain", "bench"):
        assert command in out
