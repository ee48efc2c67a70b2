"""``ptoc sim`` verifies the PTO before running it, so a typo gets the verifier's "did you
mean" and its line instead of the simulator's "not supported"."""

from test_cli import GEMM, assert_one_line_error, run


def test_sim_runs_the_verifier_first(capsys, tmp_path):
    source = tmp_path / "gemm.py"
    source.write_text(GEMM.format(M=32, N=32))
    code, _, _ = run(capsys, "compile", source, "-o", tmp_path / "o", "--no-dump")
    assert code == 0
    text = (tmp_path / "o" / "pto" / "kernel.pto").read_text()
    bad = tmp_path / "bad.pto"
    bad.write_text(text.replace("pto.tmatmul ", "pto.tmatmull "))
    code, _, err = run(capsys, "sim", bad)
    assert code == 2
    assert_one_line_error(err)
    assert "unknown op 'pto.tmatmull' (fix: did you mean pto.tmatmul" in err
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "pto.tmatmul " in t)
    assert f"bad.pto:{line}:" in err
