"""A compiled program knows its platform: ``run()`` without a RunConfig, or with one that
names no platform, runs there; only a RunConfig naming another platform is refused."""

import runpy
from pathlib import Path

import numpy as np
import pytest

from ptoc import ir
from ptoc.errors import RuntimeConfigError
from ptoc.runtime import RunConfig

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "01_tile_matmul.py"


@pytest.fixture(scope="module")
def a5(tmp_path_factory):
    program = runpy.run_path(str(EXAMPLE))["TileMatmul"]
    return ir.compile(program, tmp_path_factory.mktemp("a5"), platform="a5sim", dump_passes=False)


def arrays(compiled):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(tuple(p.var.type.shape)).astype(p.var.type.dtype.numpy)
            for p in compiled.entry.params]


@pytest.mark.parametrize("config", [None, RunConfig(sim_mode="fast"), RunConfig(platform="a5sim")],
                         ids=["no config", "config without platform", "same platform"])
def test_a5_program_runs_on_a5_without_restating_it(a5, config):
    a, b, c = arrays(a5)
    result = a5.run(a, b, c, config=config)
    assert not result.races and result.cycles > 0
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-2,
                               atol=1e-2)
    assert a5.config_for(config).target == "a5"


def test_naming_another_platform_is_still_refused(a5):
    with pytest.raises(RuntimeConfigError, match="compiled for a5 but RunConfig.platform is "
                                                 "'a2a3sim'"):
        a5.run(*arrays(a5), config=RunConfig(platform="a2a3sim"))


def test_default_platform_still_reads_a2a3sim():
    assert RunConfig().platform == "a2a3sim" and RunConfig().target == "a2a3"
