"""The race checker's work grows like n log n, not n^2, when one pipe idles until the end
(issue 16 point 5). Work is counted as executed lines of ``ptoc.sim.races`` (deterministic),
never as time; the timings are in ``benchmarks/race_scaling.py``."""

import sys

import numpy as np

import ptoc.sim.races as races
from ptoc.sim import simulate
from ptoc.sim.examples import k_loop_sum


def checker_lines(trips: int) -> int:
    """Lines of ptoc.sim.races executed while checking a ``k_loop_sum(trips)`` run."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != races.__file__:
            return None
        if event == "line":
            count += 1
        return tracer

    x = np.ones((16, 16), np.float32)
    sys.settrace(tracer)
    try:
        result = simulate(k_loop_sum(trips), [x, np.zeros_like(x)], mode="fast")
    finally:
        sys.settrace(None)
    assert result.races == []
    np.testing.assert_array_equal(result.outputs["arg1"].reshape(16, 16), trips * x)
    return count


def test_work_per_instruction_does_not_grow_with_the_loop():
    small, large = checker_lines(256), checker_lines(1024)
    assert large / small < 4.4, f"4x the trips cost {large / small:.1f}x the work (n^2 is 16x)"
