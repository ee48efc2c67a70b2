"""A small seeded run of the robustness fuzzer (benchmarks/fuzz_robustness.py; ``--full`` is
the 2000 + 2000 acceptance run): mutated PTO texts and DSL programs end in a PtocError or
in right numbers — no raw exception, no wrong result, no hang."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def fuzz():
    sys.path.insert(0, str(BENCH_DIR))
    spec = importlib.util.spec_from_file_location("ptoc_bench_fuzz", BENCH_DIR / "fuzz_robustness.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [16, 17])
def test_mutants_end_in_a_ptoc_error_or_right_numbers(fuzz, seed):
    pto, dsl = fuzz.run(pto=80, dsl=24, seed=seed)
    for table, count in ((pto, 80), (dsl, 24)):
        counts = table.outcomes.counts
        assert sum(counts.values()) == count
        assert not any(counts[bad] for bad in fuzz.BAD), table.outcomes.bad[:3]
    assert pto.outcomes.counts["ran, race-free, timing-independent"] > 0
    assert dsl.outcomes.counts["ran, matches numpy"] > 0


def test_the_oracles_catch_what_they_are_for(fuzz, monkeypatch):
    """A simulator whose outputs depend on the timing profile, and a compiler that adds 1,
    are both reported as wrong."""
    import ptoc.sim

    real = fuzz.simulate

    def profile_dependent(*args, **kwargs):
        result = real(*args, **kwargs)
        if kwargs.get("profile"):
            for out in result.outputs.values():
                out += 1
        return result

    monkeypatch.setattr(fuzz, "simulate", profile_dependent)
    assert fuzz.fuzz_pto(40, 1).counts["wrong"] > 0
    monkeypatch.setattr(fuzz, "simulate", real)
    monkeypatch.setattr(fuzz.ElementwiseCase, "golden",
                        lambda self, x, w, y: y + 1)
    monkeypatch.setattr(fuzz.RowSumCase, "golden", lambda self, x, y: y + 1)
    monkeypatch.setattr(fuzz.MatmulCase, "golden", lambda self, x, w, y: y + 1)
    assert fuzz.fuzz_dsl(12, 1).counts["wrong"] > 0
    assert ptoc.sim.simulate is real
