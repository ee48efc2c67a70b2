"""The collector pause restores what it found: enabled stays enabled, a caller's own
disable is kept, an exception does not leave the collector off; a compile runs paused."""

import gc

import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.collector import collector_paused
from ptoc.passes import CallbackInstrument, PassContext


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


def test_a_compile_runs_with_the_collector_paused_and_restores_it():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 64], pl.FP32],
              o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            o[:] = pl.add(a, a)
            return o

    seen = []
    gc.enable()
    with PassContext(instruments=[CallbackInstrument(after=lambda p, _: seen.append(gc.isenabled()))]):
        ir.compile(P, None)
    assert seen and not any(seen)
    assert gc.isenabled()
