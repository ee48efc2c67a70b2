"""End to end: DSL -> passes -> PTO -> sync -> simulated core, vs numpy, zero races."""

import pytest

from cases import END_TO_END


@pytest.mark.parametrize("case", END_TO_END, ids=lambda c: c.get_name())
def test_end_to_end(case, tmp_path):
    outcome = case.run(tmp_path)
    assert outcome.result.races == []
    assert outcome.result.cycles > 0
    assert (tmp_path / "pto").is_dir() and list((tmp_path / "pto").glob("*.pto"))
