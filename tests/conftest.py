"""Suite-wide fixtures.

Every pass call in the test suite is followed by the full IR verifier and a print -> parse
-> structural-equality round trip (PyPTO's test fixture: verification before/after each
pass plus its round-trip instrument), so a pass that breaks an invariant fails in the pass
that broke it and a printer or parser gap shows up in the pass test that built the IR.
Compiles outside the tests verify on PyPTO's pipeline schedule instead (VerificationLevel
BASIC: full check on the pipeline's input and output). Installing the instruments appends
two objects to a list; it costs nothing until a pass actually runs, and the round trip stays
inert until the printer and parser exist.

Opt out of both for one test with ``@pytest.mark.no_roundtrip``, or for a whole run with
``PTOC_TEST_ROUNDTRIP=0`` (verification then follows the context's level, as in a compile).
A test running under ``VerificationLevel.NONE`` is not checked.
"""

from __future__ import annotations

import os
import sys
import warnings

import pytest

# Shared test helpers at the top of tests/ (``oracle_data``) are importable from every test.
sys.path.insert(0, os.path.dirname(__file__))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "no_roundtrip: do not print/parse/compare the IR after each pass in this test")


@pytest.fixture(scope="session", autouse=True)
def _ptoc_pass_roundtrip():
    if os.environ.get("PTOC_TEST_ROUNDTRIP", "1") == "0":
        yield None
        return
    try:
        from ptoc.passes.instruments import (
            RoundTripInstrument, VerificationInstrument, install_global_instrument,
            remove_global_instrument,
        )
    except Exception as exc:  # a broken ptoc.passes must not take unrelated test dirs down
        warnings.warn(f"pass round trip not installed: ptoc.passes failed to import: {exc!r}")
        yield None
        return
    inst = install_global_instrument(RoundTripInstrument(skip_if_unavailable=True))
    verify = install_global_instrument(VerificationInstrument(every_pass=True))
    yield inst
    remove_global_instrument(verify)
    remove_global_instrument(inst)


@pytest.fixture(autouse=True)
def _ptoc_roundtrip_opt_out(request):
    if request.node.get_closest_marker("no_roundtrip") is None:
        yield
        return
    from ptoc.passes.instruments import suspended_global_instruments

    with suspended_global_instruments():
        yield
