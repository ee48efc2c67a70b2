"""The accuracy table in the simulator pages has the format ``benchmarks/calibration.py``
prints: the same sections, header lines, figures and rows (every training row, every pipe it
measured) and one numeric cell per profile — not the same numbers, which move with the
profiles (regenerate with ``python benchmarks/calibration.py --write-docs``)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from ptoc.backend import get_target
from ptoc.calibration import TRAINING_SET, read_measurements
from ptoc.calibration.report import quantity_name

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"^[+-]?[\d,]+(\.\d+)?( us)?$")


def script():
    spec = importlib.util.spec_from_file_location("calibration_bench",
                                                  ROOT / "benchmarks" / "calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def block(page: Path, cal) -> list[str]:
    text = page.read_text(encoding="utf-8")
    start, end = text.index(cal.BEGIN) + len(cal.BEGIN), text.index(cal.END)
    return text[start:end].strip().splitlines()


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


@pytest.mark.parametrize("lang", ["en", "zh-cn"])
def test_simulator_page_holds_the_calibration_report(lang):
    cal = script()
    lines = block(ROOT / "docs" / lang / "simulator.md", cal)
    names = cal.profiles()
    rows = [cells(ln) for ln in lines if ln.startswith("|")]
    second = next(i for i, r in enumerate(rows) if r[0] == "row")
    instr, kernels = rows[:second], rows[second:]
    assert instr[0] == ["figure", "device"] + [x for n in names for x in (n, "err %")]
    assert [r[0] for r in instr[2:]] == [label for label, *_ in cal.INSTRUCTIONS]
    found = read_measurements(TRAINING_SET, clock_hz=get_target("a2a3").clock_hz)
    want = [(m.name(), quantity_name(q)) for m in found.rows for q in m.observed]
    assert kernels[0] == ["row", "quantity", "device"] + [x for n in names
                                                          for x in (n, "err %")]
    assert [(r[0], r[1]) for r in kernels[2:]] == want
    for r in kernels[2:]:
        assert len(r) == 3 + 2 * len(names) and all(NUMBER.match(c) for c in r[2:]), r
    summary = [ln for ln in lines if ln.startswith("- ")]
    assert [ln.split(":")[0] for ln in summary] == [f"- {n}" for n in names]
    assert all("limit 10 %" in ln and "limit 20 %" in ln for ln in summary)
