"""Our own PyPTO-style programs (``pypto_programs/``: ``import pypto.language as pl``, bare
stores, torch tensors, ``@pl.jit``, ``RunConfig``) run unchanged through ``ptoc pypto``.

Each script checks its own result against torch and prints OK, exactly as a PyPTO user's
script would; ``catches_zeros.py`` proves such a check fails the command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ptoc.cli import main

PROGRAMS = Path(__file__).parent / "pypto_programs"
PASSING = sorted(p.name for p in PROGRAMS.glob("*.py") if p.name != "catches_zeros.py")


@pytest.mark.parametrize("name", PASSING)
def test_program_runs_unchanged_and_passes_its_check(name, capsys):
    code = main(["pypto", str(PROGRAMS / name), "--flag", "value"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.splitlines()[-1].startswith("OK")


def test_arguments_reach_the_script(capsys):
    assert main(["pypto", str(PROGRAMS / "program_api.py"), "a", "--b"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "OK ['a', '--b']"


def test_a_failing_check_fails_the_command(capsys):
    assert main(["pypto", str(PROGRAMS / "catches_zeros.py")]) == 1
    assert "AssertionError: copy is not a doubling" in capsys.readouterr().err


def test_device_only_config_is_reported_not_fatal(capsys, recwarn):
    from ptoc.runtime import config

    config._reported.discard("RunConfig.device_id")
    config._reported.discard("RunConfig.enable_pmu")
    assert main(["pypto", str(PROGRAMS / "matmul_then_bias.py")]) == 0
    # device_id=0 and enable_pmu=0 are PyPTO's defaults: nothing to report
    assert not [w for w in recwarn if "does not apply" in str(w.message)]
