"""``ChipWorker``: PyPTO's explicit single-chip dispatch handle, on the simulated chip.

A PyPTO script can hold a worker, register compiled programs on it and call the returned
handles, and keep tensors "on the device" between calls (``alloc_tensor`` ->
``DeviceTensor``, ``malloc`` / ``copy_to`` / ``copy_from`` with raw pointers). Here the
device memory is host memory the worker owns: a ``DeviceTensor`` passed to a compiled
program is read and written in place, so a weight uploaded once stays put across calls and
an output written into one is read back with ``copy_from``. ``aicpu_dlopen_count`` counts
the distinct programs this worker has loaded (registered or run), the quantity PyPTO's
counter lets a script check. Multi-chip workers (``level`` above 2) are not simulated.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ptoc.dtypes import DataType
from ptoc.errors import RuntimeConfigError
from ptoc.runtime.config import RunConfig

#: device pointers start here and keep this alignment (a fake address space; 0 is never valid)
_BASE, _ALIGN = 0x10000, 512


@dataclass(frozen=True, eq=False)
class DeviceTensor:
    """A tensor resident on a ``ChipWorker``: its pointer, shape and torch dtype."""

    data_ptr: int
    shape: tuple[int, ...]
    dtype: Any
    worker: "ChipWorker" = field(repr=False)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * _numpy_dtype(self.dtype).itemsize

    def array(self) -> np.ndarray:
        """The live device bytes as an array (writes go to the device)."""
        raw = self.worker._allocation(self.data_ptr, "a DeviceTensor argument")
        return raw[:self.nbytes].view(_numpy_dtype(self.dtype)).reshape(self.shape)


class ChipWorker:
    """One simulated chip (``level=2``), bound to a platform by its ``RunConfig``."""

    def __init__(self, config: RunConfig | None = None, *, level: int = 2,
                 runtime: str = "tensormap_and_ringbuffer", enable_sdma: bool = False,
                 auto_init: bool | None = None):
        if level != 2:
            raise RuntimeConfigError(f"ChipWorker(level={level}): ptoc simulates one chip "
                                     "(level 2); multi-chip workers are not simulated",
                                     hint="use level=2")
        self.config = config or RunConfig()
        self.level, self.runtime, self.enable_sdma = level, runtime, enable_sdma
        self.initialized = False
        self._memory: dict[int, np.ndarray] = {}
        self._next = _BASE
        self._loaded: dict[int, Any] = {}
        self._handles: list[RegistrationHandle] = []
        if auto_init is None or auto_init:
            self.init()

    @property
    def platform(self) -> str:
        return self.config.platform

    @property
    def device_id(self) -> int:
        return self.config.device_id

    @property
    def aicpu_dlopen_count(self) -> int:
        return len(self._loaded)

    def init(self) -> None:
        self.initialized = True

    def close(self) -> None:
        """Free every allocation and invalidate every handle; ``init()`` starts afresh."""
        self._memory.clear()
        self._loaded.clear()
        for handle in self._handles:
            handle.closed = True
        self._handles.clear()
        self.initialized = False

    def __enter__(self) -> "ChipWorker":
        self.init()
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    # ---- device memory ----------------------------------------------------------------
    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        self._ready("malloc", worker_id)
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
            raise RuntimeConfigError(f"ChipWorker.malloc({nbytes!r}): nbytes must be a "
                                     "positive int")
        ptr = self._next
        self._next += -(-nbytes // _ALIGN) * _ALIGN
        self._memory[ptr] = np.zeros(nbytes, np.uint8)
        return ptr

    def free(self, ptr: int, *, worker_id: int = 0) -> None:
        self._ready("free", worker_id)
        self._allocation(ptr, "ChipWorker.free")
        del self._memory[ptr]

    def copy_to(self, dst_dev_ptr: int, src_host_ptr: int, nbytes: int, *,
                worker_id: int = 0) -> None:
        """Host -> device: ``nbytes`` from the host address ``src_host_ptr``."""
        self._ready("copy_to", worker_id)
        ctypes.memmove(self._span(dst_dev_ptr, nbytes, "copy_to").ctypes.data, src_host_ptr,
                       nbytes)

    def copy_from(self, dst_host_ptr: int, src_dev_ptr: int, nbytes: int, *,
                  worker_id: int = 0) -> None:
        """Device -> host: ``nbytes`` to the host address ``dst_host_ptr``."""
        self._ready("copy_from", worker_id)
        ctypes.memmove(dst_host_ptr, self._span(src_dev_ptr, nbytes, "copy_from").ctypes.data,
                       nbytes)

    def alloc_tensor(self, shape, dtype, *, init=None, worker_id: int = 0) -> DeviceTensor:
        """A device tensor of ``shape`` and torch ``dtype``, zeroed or holding ``init``."""
        shape = tuple(int(d) for d in shape)
        if not shape or any(d <= 0 for d in shape):
            raise RuntimeConfigError(f"ChipWorker.alloc_tensor: shape {list(shape)} must be "
                                     "non-empty with positive dims")
        nbytes = int(np.prod(shape)) * _numpy_dtype(dtype).itemsize
        tensor = DeviceTensor(self.malloc(nbytes, worker_id=worker_id), shape, dtype, self)
        if init is not None:
            if tuple(init.shape) != shape or init.dtype != dtype:
                self.free(tensor.data_ptr)
                raise RuntimeConfigError(
                    f"ChipWorker.alloc_tensor: init is {tuple(init.shape)} {init.dtype}, the "
                    f"tensor {shape} {dtype}", hint="pass an init of the same shape and dtype")
            from ptoc.runtime.tensors import to_numpy

            tensor.array()[...] = to_numpy(init, "init")
        return tensor

    def free_tensor(self, tensor: DeviceTensor, *, worker_id: int = 0) -> None:
        """Release a tensor from ``alloc_tensor``; a second free is a no-op (as in PyPTO)."""
        if tensor.data_ptr in self._memory:
            self.free(tensor.data_ptr, worker_id=worker_id)

    # ---- dispatch ---------------------------------------------------------------------
    def register(self, compiled) -> "RegistrationHandle":
        """Load ``compiled`` on this worker (once) and return a handle that runs it."""
        self._ready("register")
        self._check_platform(compiled)
        self._loaded.setdefault(id(compiled), compiled)
        handle = RegistrationHandle(self, compiled)
        self._handles.append(handle)
        return handle

    def run(self, compiled, *args, config: RunConfig | None = None):
        """``compiled(*args)`` on this worker; same return as calling the program."""
        self._ready("run")
        self._check_platform(compiled)
        self._loaded.setdefault(id(compiled), compiled)
        return compiled(*args, config=config)

    # ---- checks -----------------------------------------------------------------------
    def _ready(self, op: str, worker_id: int = 0) -> None:
        if not self.initialized:
            raise RuntimeConfigError(f"ChipWorker.{op}() needs an initialized worker",
                                     hint="use 'with worker:' or call worker.init() first")
        if worker_id != 0:
            raise RuntimeConfigError(f"ChipWorker.{op}(worker_id={worker_id}): a chip worker "
                                     "has worker 0 only")

    def _allocation(self, ptr: int, what: str) -> np.ndarray:
        raw = self._memory.get(ptr)
        if raw is None:
            raise RuntimeConfigError(f"{what}: 0x{ptr:x} is not a live allocation of this "
                                     "ChipWorker", hint="allocate with this worker and do not "
                                     "use memory after free / close")
        return raw

    def _span(self, ptr: int, nbytes: int, op: str) -> np.ndarray:
        raw = self._allocation(ptr, f"ChipWorker.{op}")
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or not 0 < nbytes <= raw.size:
            raise RuntimeConfigError(f"ChipWorker.{op}: {nbytes!r} bytes do not fit the "
                                     f"{raw.size}-byte allocation at 0x{ptr:x}")
        return raw[:nbytes]

    def _check_platform(self, compiled) -> None:
        if self.config.names_platform and self.config.target != compiled.target:
            raise RuntimeConfigError(
                f"the program was compiled for {compiled.target} but this ChipWorker runs "
                f"{self.platform!r}", hint="compile for the worker's platform, or make a "
                f"ChipWorker(config=RunConfig(platform=...)) for the program's")


class RegistrationHandle:
    """A program registered on a worker: calling it runs the program there."""

    __test__ = False

    def __init__(self, worker: ChipWorker, compiled):
        self.worker, self.compiled, self.closed = worker, compiled, False

    def __call__(self, *args, config: RunConfig | None = None):
        if self.closed:
            raise RuntimeConfigError("this RegistrationHandle was unregistered (or its worker "
                                     "closed)", hint="register the program again")
        return self.worker.run(self.compiled, *args, config=config)

    def unregister(self) -> None:
        self.closed = True

    def __enter__(self) -> "RegistrationHandle":
        return self

    def __exit__(self, *_exc) -> None:
        self.unregister()


def _numpy_dtype(dtype) -> np.dtype:
    """The numpy dtype of a torch dtype (bf16 as ml_dtypes' bfloat16) or a numpy dtype."""
    name = str(dtype).removeprefix("torch.")
    numpy_names = {"bfloat16": DataType.BF16.numpy, "float": np.float32, "half": np.float16}
    try:
        return np.dtype(numpy_names.get(name, name))
    except TypeError:
        raise RuntimeConfigError(f"dtype {dtype} has no simulator counterpart",
                                 hint="use float32, float16, bfloat16 or an integer dtype"
                                 ) from None
