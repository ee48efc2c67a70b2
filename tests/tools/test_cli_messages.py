"""What a new user meets first: usage errors, help texts and error messages say the right
thing in plain words (issue 15, items 4-7)."""

import re
import textwrap

import numpy as np
import pytest
from test_cli import GEMM, assert_one_line_error, run

from ptoc import ir
from ptoc.cli import main
from ptoc.dtypes import DataType
from ptoc.errors import AllocationError, PtocError, RuntimeConfigError, TypeCheckError

COMMANDS = ("demo", "sim", "memmap", "trace", "compile", "run", "explain", "bench")


# ---- 4. usage --------------------------------------------------------------------------------

def test_no_command_is_a_usage_error_on_stderr(capsys):
    code, out, err = run(capsys)
    assert code == 2 and out == ""
    assert err.startswith("usage: ptoc") and "a command is required" in err


# ---- 5. wrong file kinds and places ----------------------------------------------------------

def test_run_on_a_pto_file_points_to_ptoc_sim(capsys, tmp_path):
    path = tmp_path / "k.pto"
    path.write_text("module {\n}\n")
    for command in ("run", "compile"):
        code, _, err = run(capsys, command, path)
        assert code == 2
        assert_one_line_error(err)
        assert "is PTO assembly, not a Python file" in err and f"ptoc sim {path}" in err


@pytest.mark.parametrize("command", ["memmap", "trace"])
def test_a_missing_output_directory_is_no_such_directory(capsys, tmp_path, command):
    code, _, err = run(capsys, command, tmp_path / "nope")
    assert code == 2
    assert_one_line_error(err)
    assert f"{tmp_path / 'nope'}: no such directory" in err


def test_bench_outside_a_source_checkout_says_how(capsys, tmp_path, monkeypatch):
    import ptoc

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PTOC_BENCH_DIR", raising=False)
    monkeypatch.setattr(ptoc, "__file__", str(tmp_path / "site-packages" / "ptoc" / "__init__.py"))
    code, _, err = run(capsys, "bench", "--list")
    assert code == 2
    assert_one_line_error(err)
    assert "not in the installed package" in err and "clone of the ptoc repository" in err
    code, _, err = run(capsys, "bench", "--list", "--dir", tmp_path)
    assert code == 2 and "holds no run_all.py" in err


# ---- 6. help texts ---------------------------------------------------------------------------

def help_text(capsys, command: str) -> str:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_source_markup(capsys, command):
    text = help_text(capsys, command)
    assert "``" not in text and "%%" not in text


def test_sim_help_says_level_2_gets_insert_sync(capsys):
    text = help_text(capsys, "sim")
    assert "InsertSync" in text and "serialised" not in text


def test_platform_option_lists_its_choices(capsys):
    text = help_text(capsys, "compile")
    assert "a2a3sim or a5sim" in text
    with pytest.raises(SystemExit) as info:
        main(["compile", "x.py", "--platform", "a9"])
    assert info.value.code == 2
    assert "a5sim" in capsys.readouterr().err


# ---- 7. messages -----------------------------------------------------------------------------

def test_golden_mismatch_prints_plain_floats():
    from ptoc.testing.compare import mismatches

    line = mismatches(np.array([1.0]), np.array([-1.5]), 0.0, 0.0)[0]
    assert "np." not in line and "actual 1.0, expected -1.5" in line


@pytest.fixture(scope="module")
def compiled_gemm(tmp_path_factory):
    import runpy

    path = tmp_path_factory.mktemp("gemm") / "gemm.py"
    path.write_text(GEMM.format(M=32, N=32))
    program = runpy.run_path(str(path))["Gemm"]
    return ir.compile(program, tmp_path_factory.mktemp("out"), dump_passes=False)


def test_argument_counts_are_in_correct_english(compiled_gemm):
    with pytest.raises(RuntimeConfigError, match=r"or its 2 inputs, but 1 was given"):
        compiled_gemm.run(np.zeros((32, 64), np.float32))


def test_dtype_fix_says_where_bfloat16_comes_from():
    from ptoc.runtime.tensors import check_tensor

    with pytest.raises(RuntimeConfigError) as info:
        check_tensor(np.zeros((2, 2), np.float32), "a", (2, 2), DataType.BF16)
    assert "a.astype(ml_dtypes.bfloat16) after `import ml_dtypes`" in str(info.value)
    with pytest.raises(RuntimeConfigError, match=r"a\.astype\(numpy\.float16\)"):
        check_tensor(np.zeros((2, 2), np.float32), "a", (2, 2), DataType.FP16)


def test_unknown_namespaced_op_has_a_fix():
    from ptoc.ops import get_op

    with pytest.raises(TypeCheckError) as info:
        get_op("tile.lod")
    assert "unknown op 'pl.tile.lod' (fix: did you mean pl.tile.load" in str(info.value)


OVERFLOW = """\
import ptoc.language as pl


@pl.program
class Big:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 256], pl.FP32],
          y: pl.Out[pl.Tensor[[64, 256], pl.FP32]]) -> pl.Tensor[[64, 256], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 256])
        u = pl.exp(t)
        v = pl.add(pl.exp(u), t)
        y = pl.store(pl.add(v, u), [0, 0], y)
        return y
"""


def test_capacity_error_names_user_statements_and_points_at_one(tmp_path):
    import runpy

    path = tmp_path / "big.py"
    path.write_text(OVERFLOW)
    with pytest.raises(AllocationError) as info:
        ir.compile(runpy.run_path(str(path))["Big"], tmp_path / "o", dump_passes=False)
    text = str(info.value)
    assert info.value.loc.line == 9  # `t = pl.load(...)`, not the `def` line
    assert "t (line 9)" in text and "u (line 10)" in text and "v (line 11)" in text
    assert "the pl.exp result (line 11)" in text and "the pl.add result (line 12)" in text
    assert not re.search(r"\bt_(exp|add)\b", text)


def test_race_message_names_each_location_once(compiled_gemm):
    from ptoc.pto import parse
    from ptoc.sim import simulate
    from ptoc.sim.inputs import random_inputs

    lines = compiled_gemm.pto_text["kernel"].splitlines()
    wait = next(line for line in lines if "wait_flag" in line)
    pair = {wait, wait.replace("wait_flag", "set_flag")}  # drop one flag: its wait and its set
    module = parse("\n".join(line for line in lines if line not in pair), filename="kernel.pto")
    result = simulate(module, random_inputs(module.kernel(), seed=0), target="a2a3")
    assert result.races
    for race in result.races:
        message = str(race)
        locations = re.findall(r"kernel\.pto line \d+ \(loc [^)]*\)", message)
        assert len(locations) == 2 and len(set(locations)) == 2, message
        assert message.count("kernel.pto line") == 2, message
