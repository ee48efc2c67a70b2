"""Conversions between user tensors (numpy arrays, torch tensors) and simulator arrays."""

from __future__ import annotations

import numpy as np

from ptoc.dtypes import DataType
from ptoc.errors import RuntimeConfigError


def is_torch(value) -> bool:
    return type(value).__module__.startswith("torch")


def is_device_tensor(value) -> bool:
    from ptoc.runtime.worker import DeviceTensor

    return isinstance(value, DeviceTensor)


def returns_torch(values) -> bool:
    """Whether a call with these arguments returns torch tensors (PyPTO's callers pass torch
    tensors or worker-resident ones, and get torch back)."""
    return any(is_torch(v) or is_device_tensor(v) for v in values)


def to_numpy(value, name: str) -> np.ndarray:
    """A numpy view/copy of a user tensor (torch tensors are converted, bf16 via ml_dtypes;
    a ChipWorker's DeviceTensor is its live device bytes)."""
    if isinstance(value, np.ndarray):
        return value
    if is_device_tensor(value):
        return value.array()
    if is_torch(value):
        import torch

        tensor = value.detach().cpu()
        if tensor.dtype == torch.bfloat16:
            return tensor.view(torch.int16).numpy().view(DataType.BF16.numpy)
        return tensor.numpy()
    raise RuntimeConfigError(f"tensor '{name}' is a {type(value).__name__}, not a numpy array, "
                             "torch tensor or DeviceTensor",
                             hint="pass numpy arrays (or torch tensors)")


def to_torch(values: np.ndarray):
    """A torch tensor holding a copy of a simulator array (bf16 via its bits)."""
    import torch

    if values.dtype == DataType.BF16.numpy:
        raw = np.ascontiguousarray(values).view(np.int16)
        return torch.from_numpy(raw.copy()).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(values).copy())


def write_back(target, values: np.ndarray) -> None:
    """Copy a result into the caller's tensor in place (numpy or torch)."""
    if isinstance(target, np.ndarray) or is_device_tensor(target):
        array = to_numpy(target, "")
        array[...] = values.reshape(array.shape).astype(array.dtype, copy=False)
        return
    import torch

    if target.dtype == torch.bfloat16:
        values = values.astype(DataType.BF16.numpy, copy=False)
    target.copy_(to_torch(values).reshape(target.shape))


def check_tensor(value: np.ndarray, name: str, shape: tuple, dtype: DataType) -> None:
    if tuple(value.shape) != tuple(shape):
        raise RuntimeConfigError(f"tensor '{name}' has shape {list(value.shape)} but the program "
                                 f"expects {list(shape)}", hint="pass a tensor of the declared shape")
    if np.dtype(value.dtype) != dtype.numpy:
        raise RuntimeConfigError(f"tensor '{name}' has dtype {value.dtype} but the program expects "
                                 f"{dtype.value} ({dtype.numpy})",
                                 hint=f"convert it, e.g. {dtype.astype_hint(name)}")
