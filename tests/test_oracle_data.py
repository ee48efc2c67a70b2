"""The oracle data the conformance tests compare against is present (see oracle_data.py)."""

from oracle_data import ACC_CASES, CHOOSER_CASES, DUMPS, ORACLE_ROOT


def test_oracle_data_is_beside_the_checkout():
    assert ORACLE_ROOT.is_dir(), f"PyPTO oracle data not found at {ORACLE_ROOT}"
    assert ACC_CASES.is_file() and CHOOSER_CASES.is_file()
    assert len(list(DUMPS.glob("*/kernel.pto"))) >= 6
    assert len(list(DUMPS.glob("*/*.py"))) >= 100
