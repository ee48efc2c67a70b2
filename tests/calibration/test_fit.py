"""``ptoc calibrate``'s least squares recovers known constants from noisy measurements.

Synthetic measurements are generated from a known profile (a2a3-device with eight
constants moved by 10-30 %), each kernel "measured" 40 times with 5 % Gaussian noise on
every number; the fit starts from the unmoved profile and must land within 2 % of every
moved constant. The kernels are chosen so each constant dominates some measurement (tiny
MADs for the MAD head, lopsided tiles for the two MTE1 bandwidths, narrow and wide drains,
tiny and large staged kernels).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ptoc.backend import Pipe, get_profile
from ptoc.backend.profile_params import profile_constants, with_constants
from ptoc.calibration import TOTAL, Measurement, build_rows, fit_profile, predictions, screen
from ptoc.calibration.fit import time_row
from ptoc.cli import main

pytest.importorskip("scipy")

TRUE = {"mad.head_cycles": 1.3, "mte1.l0a_bytes_per_cycle": 0.8,
        "mte1.l0b_bytes_per_cycle": 1.2, "drain_gm.fixed_cycles": 1.25,
        "drain_gm.row_cycles": 0.85, "drain_gm.bytes_per_cycle": 1.15,
        "launch.fixed_cycles": 0.9, "launch.staging_bytes_per_cycle": 1.1}

# kloop kernels: (M, K, N) and tile (m, n, k)
KERNELS = [((16, 32, 16), (16, 16, 16)), ((64, 64, 64), (16, 16, 32)),
           ((256, 128, 32), (256, 16, 64)), ((32, 128, 256), (16, 256, 64)),
           ((128, 128, 512), (128, 256, 64)), ((256, 64, 64), (128, 32, 32)),
           ((512, 256, 512), (128, 256, 64)), ((128, 64, 128), (64, 64, 32)),
           ((128, 64, 1024), (64, 512, 32))]


def _base():
    return get_profile("a2a3-device")


def _truth():
    base = _base()
    values = profile_constants(base)
    return with_constants(base, {k: values[k] * f for k, f in TRUE.items()}, name="truth")


def synthetic(noise: float, repeats: int, seed: int = 7) -> list[Measurement]:
    """Every kernel measured ``repeats`` times under the true profile, times (1 + noise*N(0,1))."""
    rng = np.random.default_rng(seed)
    kernels = [Measurement("kloop", shape, "BF16", {}, tile=tile, staged=True)
               for shape, tile in KERNELS]
    truth = _truth()
    rows = build_rows(kernels, "a2a3")
    out = []
    for row in rows:
        t = time_row(row, truth)
        exact = {TOTAL: t.total_cycles, **{p: t.pipe_busy[p]
                                           for p in (Pipe.PIPE_M, Pipe.PIPE_MTE1, Pipe.PIPE_FIX)}}
        for _ in range(repeats):
            observed = {q: v * (1 + noise * rng.standard_normal()) for q, v in exact.items()}
            out.append(Measurement("kloop", row.measurement.shape, "BF16", observed,
                                   tile=row.measurement.tile, staged=True))
    return out


def test_noise_free_fit_is_exact():
    fit = fit_profile(synthetic(0.0, 1), _base(), names=list(TRUE))
    got, want = profile_constants(fit.profile), profile_constants(_truth())
    for name in TRUE:
        assert got[name] == pytest.approx(want[name], rel=1e-4), name
    assert all(abs(p / m - 1) < 1e-6 for _, _, m, p in fit.after)


def test_recovers_constants_within_2_percent_from_5_percent_noise():
    fit = fit_profile(synthetic(0.05, 40), _base(), names=list(TRUE))
    got, want = profile_constants(fit.profile), profile_constants(_truth())
    errors = {name: got[name] / want[name] - 1 for name in TRUE}
    assert all(abs(e) < 0.02 for e in errors.values()), errors
    assert set(fit.fitted) == set(TRUE) and not fit.not_informed and not fit.not_separable
    # the report's "before" is the start profile, "after" the fitted one, row for row
    assert [(r.measurement, q) for r, q, _, _ in fit.before] == \
        [(r.measurement, q) for r, q, _, _ in fit.after]


def test_screening_names_constants_the_data_cannot_inform_or_separate():
    rows = build_rows([Measurement("kloop", (64, 128, 64), "BF16", {Pipe.PIPE_MTE1: 1000.0},
                                   tile=(64, 64, 64))], "a2a3")
    fittable, not_informed, tied = screen(rows, _base(), ["mte1.l0a_bytes_per_cycle",
                                                          "mte1.l0b_bytes_per_cycle",
                                                          "mad.head_cycles"])
    # one MTE1 number cannot tell the two bandwidths apart; it says nothing about the MAD
    assert not_informed == ["mad.head_cycles"]
    assert len(fittable) == 1 and len(tied) == 1 and set(fittable + [tied[0][0]]) == {
        "mte1.l0a_bytes_per_cycle", "mte1.l0b_bytes_per_cycle"}


PLAIN_HEADER = "kernel,shape,tile,dtype,cores,staged,us,busy_cube,busy_mte1,busy_fix\n"


def test_ptoc_calibrate_writes_a_profile_runconfig_and_sim_load(tmp_path, capsys):
    clock = 1.85e9
    lines = [PLAIN_HEADER]
    for m in synthetic(0.0, 1):
        M, K, N = m.shape
        tm, tn, tk = m.tile
        lines.append(f"kloop,{M}x{K}x{N},{tm}x{tn}x{tk},bf16,1,1,{m.observed[TOTAL] / clock * 1e6},"
                     f"{m.observed[Pipe.PIPE_M]},{m.observed[Pipe.PIPE_MTE1]},"
                     f"{m.observed[Pipe.PIPE_FIX]}\n")
    csv = tmp_path / "measured.csv"
    csv.write_text("".join(lines))
    out = tmp_path / "fitted.json"
    assert main(["calibrate", str(csv), "--fit", ",".join(TRUE), "--name", "lab-910b",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| mte1.l0b_bytes_per_cycle |" in text and "residuals per row" in text
    data = json.loads(out.read_text())
    assert data["format"] == "ptoc-profile/1" and data["base"] == "a2a3-device"
    loaded = get_profile(str(out))
    assert loaded.name == "lab-910b"
    for name in TRUE:
        assert profile_constants(loaded)[name] == pytest.approx(
            profile_constants(_truth())[name], rel=1e-4)

    # the file is a profile everywhere a profile name is accepted
    from ptoc.runtime import RunConfig
    from ptoc.sim import simulate
    from ptoc.sim.examples import dbuf_matmul

    assert RunConfig(profile=str(out)).profile == str(out)
    text_pto = dbuf_matmul(128, 128, 128, 64)
    rng = np.random.default_rng(0)
    tensors = [rng.standard_normal((128, 128)).astype(np.float16) for _ in range(2)]
    tensors.append(np.zeros((128, 128), np.float32))
    a = simulate(text_pto.replace("bf16", "f16"), tensors, profile=str(out))
    b = simulate(text_pto.replace("bf16", "f16"), tensors, profile=loaded)
    assert a.profile == "lab-910b" and a.wall_cycles == b.wall_cycles
    pto = tmp_path / "k.pto"
    pto.write_text(text_pto)
    assert main(["sim", str(pto), "--profile", str(out), "--mode", "fast"]) == 0
    assert "(lab-910b, fast)" in capsys.readouterr().out


def test_calibrate_without_a_modelled_row_is_a_user_error(tmp_path, capsys):
    csv = tmp_path / "op_summary_0.csv"
    csv.write_text("Op Name,OP Type,Task Duration(us),Input Shapes,Input Data Types\n"
                   "add_1,Add,3.0,\"64,64;64,64\",DT_FLOAT;DT_FLOAT\n")
    assert main(["calibrate", str(csv)]) == 2
    captured = capsys.readouterr()
    assert "skipped:" in captured.out and "not a matmul" in captured.out
    assert "has no row ptoc can model" in captured.err


def test_predictions_follow_the_measured_quantities():
    rows = build_rows(synthetic(0.0, 1)[:2], "a2a3")
    preds = predictions(rows, _truth())
    assert [q for _, q, _, _ in preds] == [TOTAL, Pipe.PIPE_M, Pipe.PIPE_MTE1, Pipe.PIPE_FIX] * 2
    assert all(p == pytest.approx(m) for _, _, m, p in preds)
