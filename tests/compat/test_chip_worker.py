"""ChipWorker on the simulated chip: registered handles, device-resident tensors, raw
device memory, and the errors for misuse."""

from __future__ import annotations

import pytest
import torch

import ptoc.language as pl
from ptoc.errors import RuntimeConfigError
from ptoc.runtime import ChipWorker, RunConfig, run

from add_program import ADD  # c = a + b on [16, 64] FP32


@pytest.fixture(scope="module")
def compiled():
    return run(pl.parse_program(ADD))


def test_registered_handle_with_a_resident_weight_and_a_resident_output(compiled):
    weight = torch.randn(16, 64)
    with ChipWorker(config=RunConfig()) as worker:
        w_dev = worker.alloc_tensor(weight.shape, weight.dtype, init=weight)
        y_dev = worker.alloc_tensor((16, 64), torch.float32)
        handle = worker.register(compiled)
        assert worker.register(compiled) is not handle and worker.aicpu_dlopen_count == 1
        for step in range(3):
            x = torch.full((16, 64), float(step))
            handle(x, w_dev, y_dev)
            host = torch.empty(16, 64)
            worker.copy_from(host.data_ptr(), y_dev.data_ptr, y_dev.nbytes)
            torch.testing.assert_close(host, x + weight)
        returned = worker.run(compiled, torch.ones(16, 64), w_dev)
        assert isinstance(returned, torch.Tensor)
        torch.testing.assert_close(returned, 1 + weight)
    assert handle.closed and not worker.initialized


def test_raw_device_memory_round_trip():
    worker = ChipWorker()
    src = torch.arange(32, dtype=torch.int32)
    ptr = worker.malloc(src.numel() * 4)
    worker.copy_to(ptr, src.data_ptr(), 128)
    back = torch.zeros(32, dtype=torch.int32)
    worker.copy_from(back.data_ptr(), ptr, 128)
    assert torch.equal(back, src)
    with pytest.raises(RuntimeConfigError, match="do not fit"):
        worker.copy_from(back.data_ptr(), ptr, 256)
    worker.free(ptr)
    with pytest.raises(RuntimeConfigError, match="not a live allocation"):
        worker.copy_to(ptr, src.data_ptr(), 128)
    worker.close()


def test_misuse_is_an_error_not_a_silent_result(compiled):
    with pytest.raises(RuntimeConfigError, match="level 2"):
        ChipWorker(level=3)
    worker = ChipWorker(auto_init=False)
    with pytest.raises(RuntimeConfigError, match="needs an initialized worker"):
        worker.register(compiled)
    worker.init()
    with pytest.raises(RuntimeConfigError, match="init is"):
        worker.alloc_tensor((4,), torch.float32, init=torch.zeros(4, dtype=torch.float16))
    stale = worker.alloc_tensor((16, 64), torch.float32)
    worker.free_tensor(stale)
    worker.free_tensor(stale)  # a second free is a no-op, as in PyPTO
    with pytest.raises(RuntimeConfigError, match="not a live allocation"):
        worker.run(compiled, torch.zeros(16, 64), stale, torch.zeros(16, 64))
    handle = worker.register(compiled)
    handle.unregister()
    with pytest.raises(RuntimeConfigError, match="unregistered"):
        handle(torch.zeros(16, 64), torch.zeros(16, 64))
    with pytest.raises(RuntimeConfigError, match="compiled for a2a3"):
        ChipWorker(config=RunConfig(platform="a5sim")).run(compiled, torch.zeros(16, 64),
                                                          torch.zeros(16, 64))
