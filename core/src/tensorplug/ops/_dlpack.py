"""DLPack producers: reading a producer's device and dtype, host views and copies, and messages naming it."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug._runtime import _dtypes
from tensorplug._runtime._engine import engine
from tensorplug._runtime._errors import BackendError, DTypeError
from tensorplug._runtime._tensor import Tensor, stored_dtype_error, unsupported_dtype_error
from tensorplug.ops._foreign import lazy_array_hint

_DL_CPU = 1  # DLPack's kDLCPU device type


class _CopyRequest:
    """A DLPack producer asked for a copy (DLPack's ``copy=True``), which it makes where its memory lives."""

    def __init__(self, producer: Any) -> None:
        self.producer = producer

    def __dlpack_device__(self) -> Any:
        return self.producer.__dlpack_device__()

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.producer.__dlpack__(**{**kwargs, "copy": True})


def _exportable(obj: Any) -> Any:
    """``obj``, detached when it is a torch-style tensor that requires grad (those refuse DLPack export), and
    with a lazy negation resolved (torch exports ``x.conj().imag`` without its sign)."""
    if getattr(obj, "requires_grad", False) is True and callable(getattr(obj, "detach", None)):
        obj = obj.detach()
    is_neg = getattr(obj, "is_neg", None)
    if callable(is_neg) and is_neg() is True:
        obj = obj.resolve_neg()
    return obj


def _dlpack_device(op: str, obj: Any) -> tuple[int, int]:
    """The producer's DLPack device as (device type, device id)."""
    try:
        device_type, device_id = obj.__dlpack_device__()
        return int(device_type), int(device_id)
    except Exception as exc:
        raise DTypeError(
            f"{op}: expects a DLPack producer (an object with __dlpack__ and __dlpack_device__, such as a torch "
            f"tensor or a numpy array), got {type(obj).__name__} ({type(exc).__name__}: {exc}){lazy_array_hint(obj)}"
        ) from exc


def _host_view(obj: Any) -> np.ndarray:
    """A numpy view of a host producer's memory."""
    try:
        return np.from_dlpack(obj)
    except Exception as exc:
        raise DTypeError(f"tensor(): numpy cannot read {_producer_text(obj)} through DLPack: {exc}") from exc


def _host_copy(op: str, obj: Any) -> np.ndarray:
    """A host copy of a producer's device memory: asked for through DLPack (``dl_device=CPU``), else by ``.cpu()``."""
    try:
        return np.from_dlpack(obj, device="cpu")  # type: ignore[call-arg,unused-ignore]  # numpy >= 2.1
    except Exception as exc:
        error = exc
    to_cpu = getattr(obj, "cpu", None)  # torch, cupy-style producers; numpy < 2.1 takes no device
    if callable(to_cpu):
        try:
            return np.from_dlpack(to_cpu())
        except Exception as exc:
            error = exc
    raise BackendError(
        f"{op}: {_producer_text(obj)} lives in device memory and cannot be copied to the host for the "
        f"{(engine.active or engine.ensure_active()).name!r} backend ({type(error).__name__}: {error}); "
        "move it to the CPU first, or switch to a backend on its device"
    ) from error


# DLPack's device types, for messages.
_DL_DEVICES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 10: "rocm", 13: "cuda_mem"}


def _producer_text(obj: Any) -> str:
    """``a torch.Tensor on cuda:0``: what a DLPack producer is and where its memory lives, for messages."""
    try:
        device_type, device_id = (int(v) for v in obj.__dlpack_device__())
        where = f"{_DL_DEVICES.get(device_type, f'DLPack device type {device_type}')}:{device_id}"
    except Exception:
        where = "an unknown device"
    dtype = getattr(obj, "dtype", None)
    of = "" if dtype is None else f" of dtype {dtype}"
    return f"a {type(obj).__module__}.{type(obj).__qualname__}{of} on {where}"


def _checked(t: Tensor, op: str, producer: Any) -> Tensor:
    """``t``, made by its backend from ``producer``, if its dtype is a tensorplug dtype and the producer's own."""
    dtype = t.dtype
    if dtype not in _dtypes.DTYPES:
        raise DTypeError(
            f"{op}: {_producer_text(producer)} has dtype {dtype}; tensorplug supports {', '.join(_dtypes.DTYPES)}: "
            "cast it to one of those first"
        )
    given = _producer_dtype(producer)
    if given is not None and given != dtype:
        raise stored_dtype_error(op, t._backend, given, dtype, t.shape)
    return t


def _producer_dtype(producer: Any) -> str | None:
    """The tensorplug name of a DLPack producer's dtype (numpy's and torch's spell it alike), None if unknown."""
    name = str(getattr(producer, "dtype", "")).removeprefix("torch.")
    return name if name in _dtypes.DTYPES else None


def _check_producer_dtype(op: str, producer: Any, backend: Any) -> None:
    """Refuse up front a producer whose dtype the backend declares it cannot store."""
    unsupported = backend.unsupported_dtypes
    if unsupported:
        given = _producer_dtype(producer)
        if given is not None and given in unsupported:
            raise unsupported_dtype_error(op, backend, given, tuple(getattr(producer, "shape", ())))
