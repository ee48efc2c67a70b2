"""Re-timing a built stream gives exactly what a full simulation gives, under any profile.

Streams carry the profile method and arguments of every cost; a calibration re-times the
same stream hundreds of times, so any instruction whose cost key is lost (e.g. one issued
from the scalar unit's per-op template cache inside a loop) would silently keep its old
cost. Each case here changes every constant a kernel uses and compares with ``simulate``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ptoc.backend import get_profile
from ptoc.backend.profile_params import profile_constants, with_constants
from ptoc.sim import simulate
from ptoc.sim.examples import dbuf_matmul, reference_gemm, two_acc_matmul
from ptoc.sim.retime import build_stream, retime

BF16 = ml_dtypes.bfloat16


def _inputs(M, K, N, dtype=BF16):
    rng = np.random.default_rng(0)
    return [rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype),
            np.zeros((M, N), np.float32)]


KERNELS = {
    "dbuf": (lambda: dbuf_matmul(256, 256, 256, 64, m=128, n=128), (256, 256, 256, BF16)),
    "dbc": (lambda: two_acc_matmul(), (128, 64, 512, BF16)),
    "gemm": (lambda: reference_gemm(256, 256, 512), (256, 512, 256, np.float16)),
}


def _scaled(profile, factor):
    """Every named constant of ``profile`` times ``factor`` (fixed parts too)."""
    return with_constants(profile, {k: v * factor for k, v in profile_constants(profile).items()})


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("profile", ["a2a3-device", "a2a3-ptoisa"])
@pytest.mark.parametrize("factor,cores", [(1.0, 1), (1.37, 1), (0.8, 24)])
def test_retime_equals_a_full_simulation(kernel, profile, factor, cores):
    make, (M, K, N, dtype) = KERNELS[kernel]
    prof = _scaled(get_profile(profile), factor).for_cores(cores)
    stream = build_stream(make(), _inputs(M, K, N, dtype))   # built under the default profile
    timed = retime(stream, prof)
    full = simulate(make(), _inputs(M, K, N, dtype), profile=prof, mode="fast")
    assert timed.wall_cycles == pytest.approx(full.wall_cycles, rel=1e-12)
    assert timed.pipe_busy == pytest.approx(full.pipe_busy, rel=1e-12)
    assert timed.floor_cycles == pytest.approx(full.floor_cycles, rel=1e-12)
    assert timed.total_cycles == pytest.approx(full.total_cycles, rel=1e-12)


def test_floor_counts_launch_blocks_and_staged_bytes():
    make, (M, K, N, dtype) = KERNELS["dbuf"]
    stream = build_stream(make(), _inputs(M, K, N, dtype))
    prof = get_profile("a2a3-device")
    assert stream.staged_bytes == (M * K + K * N) * 2 + M * N * 4
    t = retime(stream, prof, blocks=3, staged=False)
    assert t.floor_cycles == pytest.approx(prof.floor_cycles(blocks=3))
    t = retime(stream, prof)
    assert t.floor_cycles == pytest.approx(prof.floor_cycles(staged_bytes=stream.staged_bytes))
    assert t.total_cycles == t.wall_cycles + t.floor_cycles


def test_simulation_reports_the_floor_on_its_own_line():
    make, (M, K, N, dtype) = KERNELS["dbuf"]
    res = simulate(make(), _inputs(M, K, N, dtype))
    assert res.floor_cycles > 0 and res.total_cycles == res.wall_cycles + res.floor_cycles
    line = [ln for ln in res.summary().splitlines() if ln.startswith("launch/staging floor")]
    assert line == [f"launch/staging floor {res.floor_cycles:.1f} cycles (outside the core); "
                    f"with it {res.total_cycles:.1f} cycles"]
    assert res.summary().splitlines()[0].startswith(f"wall {res.wall_cycles:.1f} cycles")
    plain = simulate(make(), _inputs(M, K, N, dtype), profile="a2a3-ptoisa")
    assert plain.floor_cycles == 0 and "launch/staging" not in plain.summary()
