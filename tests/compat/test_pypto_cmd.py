"""``ptoc pypto FILE`` / ``-m MODULE``: argv, sys.path, exit codes and error reporting."""

from __future__ import annotations

import sys
import textwrap

import pytest

from ptoc.cli import main


def _script(tmp_path, body: str, name: str = "script.py"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


def test_script_runs_as_main_with_its_arguments(tmp_path, capsys):
    path = _script(tmp_path, """
        import sys
        import pypto.language as pl
        print("main" if __name__ == "__main__" else __name__, sys.argv[1:], pl.__name__)
    """)
    assert main(["pypto", str(path), "--size", "64", "-v"]) == 0
    assert capsys.readouterr().out.strip() == "main ['--size', '64', '-v'] ptoc.language"


def test_script_directory_is_importable(tmp_path, capsys):
    _script(tmp_path, "VALUE = 7\n", name="helper.py")
    path = _script(tmp_path, "import helper\nprint(helper.VALUE)\n")
    assert main(["pypto", str(path)]) == 0
    assert capsys.readouterr().out.strip() == "7"
    assert "helper" not in sys.modules or sys.modules["helper"].__file__ != str(path)


@pytest.mark.parametrize("body, code", [("raise SystemExit(5)", 5), ("import sys; sys.exit(0)", 0),
                                        ("import sys; sys.exit('bad input')", 1)])
def test_exit_code_is_the_scripts(tmp_path, body, code):
    assert main(["pypto", str(_script(tmp_path, body))]) == code


def test_script_exception_gives_its_traceback_and_exit_1(tmp_path, capsys):
    path = _script(tmp_path, "def check():\n    assert 1 == 2, 'mismatch'\ncheck()\n")
    assert main(["pypto", str(path)]) == 1
    err = capsys.readouterr().err
    assert "AssertionError: mismatch" in err and f'File "{path}", line 3' in err
    assert "runpy" not in err and "ptoc/compat" not in err


def test_ptoc_error_is_one_line_and_exit_2(tmp_path, capsys):
    path = _script(tmp_path, "import pypto.language.distributed\n")
    assert main(["pypto", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptoc: error: 'import pypto.language.distributed'")
    assert len(err.strip().splitlines()) == 1


def test_a_name_ptoc_lacks_in_an_aliased_module_is_a_user_error(tmp_path, capsys):
    path = _script(tmp_path, "from pypto.runtime import RunConfig, no_such_helper\n")
    assert main(["pypto", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptoc: error: 'from pypto.runtime import no_such_helper': ptoc does "
                          "not provide PyPTO's pypto.runtime.no_such_helper")
    other = _script(tmp_path, "from json import no_such_helper\n")
    assert main(["pypto", str(other)]) == 1, "a script's own import error stays the script's"


def test_module_runs_as_python_dash_m(tmp_path, monkeypatch, capsys):
    _script(tmp_path, "", name="pkg/__init__.py")
    _script(tmp_path, "from . import helper\nimport sys\nprint(__name__, helper.X, sys.argv[1:])\n",
            name="pkg/sub/main.py")
    _script(tmp_path, "", name="pkg/sub/__init__.py")
    _script(tmp_path, "X = 'rel'\n", name="pkg/sub/helper.py")
    monkeypatch.chdir(tmp_path)
    assert main(["pypto", "-m", "pkg.sub.main", "a", "--b"]) == 0
    assert capsys.readouterr().out.strip() == "__main__ rel ['a', '--b']"


def test_missing_module_and_missing_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["pypto", "-m", "no_such_pkg.mod"]) == 1
    assert "No module named" in capsys.readouterr().err
    assert main(["pypto", str(tmp_path / "absent.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["pypto"]) == 2


def test_state_is_restored_after_the_run(tmp_path):
    argv, path = sys.argv[:], sys.path[:]
    main(["pypto", str(_script(tmp_path, "import pypto\nimport sys\nsys.argv.append('x')\n"))])
    assert sys.argv == argv and sys.path == path
    assert not [n for n in sys.modules if n == "pypto" or n.startswith("pypto.")]
