"""The collector pause restores what it found: enabled stays enabled, a caller's own
disable is kept, an exception does not leave the collector off."""

import gc

import pytest

from ptoc.collector import collector_paused


@pytest.fixture(autouse=True)
def _restore_collector():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_the_pause_restores_an_enabled_collector_even_after_an_error():
    gc.enable()
    with pytest.raises(KeyError):
        with collector_paused():
            assert not gc.isenabled()
            raise KeyError("x")
    assert gc.isenabled()


def test_a_nested_pause_and_a_callers_own_disable_are_respected():
    gc.enable()
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()        # the inner pause did not re-enable it
    assert gc.isenabled()
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()            # the caller had it off: it stays off
