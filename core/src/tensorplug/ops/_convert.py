"""Tensor creation: ``tp.tensor``, ``tp.as_tensor``, ``tp.cast``, ``tp.from_dlpack``; host data entering a backend."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._runtime import _dtypes
from tensorplug._runtime._engine import dispatch, engine
from tensorplug._runtime._errors import BackendError, DTypeError, KernelError, TensorplugError
from tensorplug._runtime._tensor import (
    Tensor,
    describe,
    is_host_device,
    moved_storage,
    spec_text,
    stored_dtype_error,
    unsupported_dtype_error,
    wrap_storage,
)
from tensorplug.ops._dlpack import (
    _DL_CPU,
    _check_producer_dtype,
    _checked,
    _CopyRequest,
    _dlpack_device,
    _exportable,
    _host_copy,
    _host_view,
    _producer_text,
)
from tensorplug.ops._foreign import HOST_TYPES, foreign, refuse_masked

__all__ = ["tensor", "as_tensor", "cast", "from_dlpack"]


def from_host(array: np.ndarray) -> Tensor:
    """Wrap host data (a native-byte-order array of a tensorplug dtype) as a Tensor on the active backend
    (the one place host data enters), checking that the backend stores it in that dtype."""
    backend = engine.active or engine.ensure_active()
    dtype = _dtypes.name_of(array.dtype)
    if dtype == _dtypes.bool_:
        array = bool_bytes(array)
    unsupported = backend.unsupported_dtypes
    if unsupported and dtype in unsupported:
        raise unsupported_dtype_error("tensor()", backend, dtype, array.shape)
    try:
        raw = backend.from_host(array)
    except TensorplugError:
        raise
    except Exception as exc:
        raise BackendError(
            f"tensor(): backend {backend.name!r} (device {backend.device!r}) failed to store "
            f"{spec_text(dtype, array.shape)}: {type(exc).__name__}: {exc}"
        ) from exc
    if backend.dtype_of(raw) != dtype:
        raise stored_dtype_error("tensor()", backend, dtype, backend.dtype_of(raw), array.shape)
    return wrap_storage(raw, backend, dtype)


def tensor(data: Any, dtype: Any = None) -> Tensor:
    """Make a tensor on the active backend from a Python scalar, nested lists, a numpy array, a Tensor,
    or any DLPack producer (a torch tensor, say).

    Python floats become float32 and ints int32 (as in TensorFlow.js); arrays
    keep their dtype when it is supported. The data is copied, as ``np.array``
    and ``torch.tensor`` copy (a device array is copied on its device when the
    active backend lives there too); ``tp.from_dlpack`` shares memory instead.
    A Tensor on another backend is moved to the active one. An array of the
    active backend's own library is taken as it is (``Backend.adopt``: a
    dask array on the dask backend stays lazy, nothing computed); other
    array-likes are read through numpy, which computes a dask array.

    >>> import tensorplug as tp
    >>> tp.tensor([1, 2, 3]).dtype
    'int32'
    >>> tp.tensor([[1.5]], dtype="float64").shape
    (1, 1)
    """
    if isinstance(data, Tensor):
        if dtype is not None and _dtypes.check_dtype(dtype, "tensor()") != data.dtype:
            return cast(data, dtype)
        backend = engine.active or engine.ensure_active()
        # a plain Tensor sharing the storage (a snapshot of a Variable, say)
        raw = data._data if data._backend is backend else moved_storage(data, backend, "tensor()")
        return wrap_storage(raw, backend, data._dtype)
    checked = None if dtype is None else _dtypes.check_dtype(dtype, "tensor()")
    if type(data) is float and checked in (None, _dtypes.float32):
        data = float32_scalar(data)
    if type(data) not in HOST_TYPES:
        data = foreign(data)  # a Tensor when the backend adopts it (a dask array on dask, say)
        if type(data) is Tensor:
            return data if checked is None or checked == data.dtype else cast(data, checked)
    if hasattr(type(data), "__dlpack__") and not isinstance(data, _dtypes.NUMPY_DATA):
        return _copy_of_producer(data, checked)
    try:
        if isinstance(data, np.ndarray) and data.dtype.kind == "c":
            raise TypeError(f"complex data ({data.dtype}) has no tensorplug dtype; take its .real or .imag")
        if checked in _dtypes.INT_DTYPES and isinstance(data, np.ndarray) and data.dtype.kind == "f":
            with np.errstate(invalid="ignore"):  # NaN, inf and floats past the range: undefined, as for tp.cast
                array = _dtypes.host_array(data, checked)
        else:
            array = _dtypes.host_array(data, checked)
    except (TensorplugError, MemoryError):
        raise
    except Exception as exc:  # numpy's own errors, or those of an object's __array__ / __len__ / __getitem__
        kind = type(data)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        raise DTypeError(
            f"tensor(): cannot convert a {name} to a tensor of dtype {checked or 'inferred'} "
            f"({type(exc).__name__}: {exc}); pass numbers, booleans, nested lists of them, a numpy array or a "
            "DLPack producer"
        ) from exc
    return from_host(array)


def from_dlpack(obj: Any) -> Tensor:
    """A tensor on the active backend sharing the memory of a DLPack producer (a torch tensor, a numpy array, ...).

    Zero-copy where the active backend and the producer's device allow; a
    copy otherwise (device memory for a host backend is copied to the host).
    Writes to the producer afterwards show through: use ``tp.tensor`` for a copy.

    >>> import numpy as np, tensorplug as tp
    >>> tp.from_dlpack(np.arange(3.0)).tolist()
    [0.0, 1.0, 2.0]
    """
    backend = engine.active or engine.ensure_active()
    refuse_masked("from_dlpack()", obj)
    producer = _exportable(obj)
    _check_producer_dtype("from_dlpack()", producer, backend)
    if _dlpack_device("from_dlpack()", producer)[0] != _DL_CPU and is_host_device(backend.device):
        host = _host_copy("from_dlpack()", producer)  # a copy: its bool bytes may be normalised
        raw = backend.from_host(bool_bytes(host) if host.dtype == np.bool_ else host)
    else:
        try:
            raw = backend.from_dlpack(producer)
        except TensorplugError:
            raise
        except Exception as exc:
            raise BackendError(
                f"from_dlpack(): backend {backend.name!r} (device {backend.device!r}) cannot take "
                f"{_producer_text(producer)}: {type(exc).__name__}: {exc}"
            ) from exc
    return _shared_bools(_checked(wrap_storage(raw, backend), "from_dlpack()", producer), producer)


def _copy_of_producer(obj: Any, dtype: str | None) -> Tensor:
    """``tensor()`` of a DLPack producer: a copy, made on the producer's device when the backend lives there."""
    backend = engine.active or engine.ensure_active()
    producer = _exportable(obj)
    on_host = _dlpack_device("tensor()", producer)[0] == _DL_CPU
    if on_host or is_host_device(backend.device):
        host = _host_view(producer) if on_host else _host_copy("tensor()", producer)
        try:
            return from_host(_dtypes.host_array(host, dtype))  # copies, and converts dtypes as for numpy arrays
        except TensorplugError:
            raise
        except (TypeError, ValueError, OverflowError) as exc:
            raise DTypeError(
                f"tensor(): cannot convert {_producer_text(producer)} to a tensor of dtype {dtype or 'inferred'}: {exc}"
            ) from exc
    _check_producer_dtype("tensor()", producer, backend)
    try:
        raw = backend.from_dlpack(_CopyRequest(producer))
    except TensorplugError:
        raise
    except Exception as exc:
        raise BackendError(
            f"tensor(): backend {backend.name!r} (device {backend.device!r}) cannot take "
            f"{_producer_text(producer)}: {type(exc).__name__}: {exc}"
        ) from exc
    t = _checked(wrap_storage(raw, backend), "tensor()", producer)
    if t.dtype == _dtypes.bool_:
        host = backend.to_host(t._data)
        if _bad_bool_bytes(host):
            t = from_host(host)  # a copy whose bool bytes are 0 and 1
    return t if dtype is None else cast(t, dtype)


def bool_bytes(array: np.ndarray) -> np.ndarray:
    """A bool array whose every byte is 0 or 1: ``array`` itself, or its truth values where another library or a
    crafted file left other bytes (numpy reads such a byte as True, torch keeps its value: ``cast`` to int32
    would differ between backends)."""
    if _bad_bool_bytes(array):
        normalised: np.ndarray = array.view(np.uint8) != 0
        return normalised
    return array


def _bad_bool_bytes(array: np.ndarray) -> int:
    """How many bytes of a bool array are neither 0 nor 1."""
    if array.size == 0:
        return 0
    raw = array.view(np.uint8)
    if raw.max() <= 1:  # the common case, without a temporary array
        return 0
    return int(np.count_nonzero(raw > 1))


def _shared_bools(t: Tensor, producer: Any) -> Tensor:
    """``t``, sharing a producer's memory, unless it is bool data with bytes other than 0 and 1 (which the
    backends read differently, and which a shared tensor cannot normalise without a copy)."""
    if t.dtype != _dtypes.bool_:
        return t
    bad = _bad_bool_bytes(t._backend.to_host(t._data))
    if bad:
        raise DTypeError(
            f"from_dlpack(): {_producer_text(producer)} of shape {t.shape}, shared with backend {t.backend!r}, holds "
            f"{bad} bool byte(s) other than 0 and 1 (from np.frombuffer or a foreign library, say), which backends "
            "read differently; share "
            "`x != 0` instead, or copy it with tp.tensor(x), which turns them into True"
        )
    return t


def as_tensor(value: Any, dtype: str | None = None) -> Tensor:
    """``value`` as a Tensor; Python scalars and host data take ``dtype`` when given."""
    if isinstance(value, Tensor):
        return value
    return tensor(value, dtype)


_FLOAT32_OVERFLOW = 3.4028235677973366e38  # (2 - 2**-24) * 2**127: from here up a float rounds to float32 inf


def float32_scalar(value: float) -> float:
    """A Python float as float32 will hold it: ±inf past float32's range (as numpy's cast, without its warning)."""
    if _FLOAT32_OVERFLOW <= abs(value) < math.inf:
        return math.copysign(math.inf, value)
    return value


def cast(x: Any, dtype: Any) -> Tensor:
    """Cast to ``dtype`` (float to int truncates toward zero). Returns ``x`` itself if the dtype matches."""
    target = _dtypes.check_dtype(dtype, "cast()")
    t = as_tensor(x)
    if t.dtype == target:
        return t
    check_storable("cast", target, t.shape, engine.active or t._backend, t)
    return run_declared(K.CAST, "cast", {"x": t}, {"dtype": target})


# (kernel, dtype) -> the dispatch table on which that kernel, asked for that dtype, returned it
_VERIFIED: dict[tuple[str, str], dict[str, Any]] = {}


def run_declared(kernel: str, op: str, inputs: dict[str, Any], attrs: dict[str, Any]) -> Tensor:
    """Run ``kernel`` for op ``op``, whose output must have the dtype of ``attrs["dtype"]``; a KernelError naming
    both otherwise. Checked on the first call per kernel and dtype of each dispatch table (as the checked calls
    check theirs, see ``ops._checked``); later calls trust it, and their output knows its dtype unread."""
    dtype = attrs["dtype"]
    table = engine.table
    out = dispatch(kernel, inputs, attrs)
    key = (kernel, dtype)
    if _VERIFIED.get(key) is table and out._backend is engine.active:
        out._dtype = dtype
        return out
    if out.dtype != dtype:
        raise wrong_output_dtype(kernel, f"{op}(..., dtype={dtype!r})", out, dtype)
    if engine.table is table:
        _VERIFIED[key] = table
    return out


def wrong_output_dtype(kernel: str, call: str, out: Tensor, dtype: str) -> KernelError:
    """The error for kernel ``kernel``, which returned ``out`` for ``call`` where its contract says ``dtype``."""
    return KernelError(
        f"kernel {kernel!r} on backend {out.backend!r} returned {describe(out)} for {call}, where it must return "
        f"{dtype} (tensorplug kernels {kernel} shows its contract); the kernel registered for it "
        f"(tp.kernel_stack({kernel!r}, {out.backend!r}) shows whose) must return {dtype}, casting its result if "
        "it computes in another dtype"
    )


def check_storable(op: str, dtype: str, shape: tuple[int, ...], backend: Any = None, x: Tensor | None = None) -> None:
    """Refuse to make a tensor of ``dtype`` and ``shape`` on ``backend`` (the active one by default) when the
    backend declares it cannot store that dtype (``Backend.unsupported_dtypes``): what every op asked for an
    explicit dtype (``cast`` of ``x``, ``fill``, ``range``...) checks before its kernel runs."""
    if backend is None:
        backend = engine.active or engine.ensure_active()
    unsupported = backend.unsupported_dtypes
    if unsupported and dtype in unsupported:
        call = f"{op}(..., dtype={dtype!r})" if x is None else f"{op}(x, {dtype!r}) of {describe(x)}"
        raise unsupported_dtype_error(call, backend, dtype, shape)
