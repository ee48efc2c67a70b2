"""Where PyPTO's oracle data lives for the tests.

CI clones the project next to a copy of ``shared/``, as developers' checkouts are laid out,
so the data is ``../shared/data/pypto-oracle`` from the repository root (or
``$PTOC_ORACLE_DIR``). Conformance tests parametrise over these files, and
``tests/test_oracle_data.py`` fails loudly when they are missing instead of letting those
tests silently collect nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ORACLE_ROOT = Path(os.environ.get("PTOC_ORACLE_DIR")
                   or REPO.parent / "shared" / "data" / "pypto-oracle")
DUMPS = ORACLE_ROOT / "dumps"
ACC_CASES = ORACLE_ROOT / "acc_cases.json"
CHOOSER_CASES = ORACLE_ROOT / "chooser_cases.json"


def pypto_exact_pipeline():
    """The default pass pipeline of the current context, with ptoc's refinements over PyPTO's
    output switched off (AutoTileMatmulL0's dbC tail spreading), for exact comparisons with
    the oracle dumps."""
    from ptoc.passes import PassManager
    from ptoc.passes.auto_tile_matmul_l0 import auto_tile_matmul_l0

    default = PassManager.get_strategy()
    return PassManager([auto_tile_matmul_l0(spread_dbc_tails=False)
                        if p.name == "AutoTileMatmulL0" else p for p in default.passes])
