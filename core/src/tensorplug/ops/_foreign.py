"""``tp.tensor`` of arrays from other libraries: taken as they are by the active backend, or read through numpy.

A backend may adopt an array of its own library (``Backend.adopt``): the
dask backend wraps a ``dask.array`` array lazily, nothing computed. Other
array-likes with a numpy dtype (a dask array on an eager backend, a pandas
Series) are read with ``numpy.asarray``, which computes a lazy array, and
then keep their dtype as numpy arrays do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug._runtime import _dtypes
from tensorplug._runtime._engine import engine
from tensorplug._runtime._errors import BackendError, DTypeError, TensorplugError
from tensorplug._runtime._tensor import Tensor, unsupported_dtype_error, wrap_storage

# What tensor() converts on the host without asking the backend (other numpy scalars are recognised inside).
HOST_TYPES = frozenset(
    {list, tuple, float, int, bool, np.ndarray, np.float32, np.float64, np.int32, np.int64, np.bool_}
)


def foreign(data: Any) -> Any:
    """``data`` as ``tensor()`` takes it: a Tensor that the active backend adopted, a numpy array read from an
    array-like, or ``data`` itself (numpy data, DLPack producers and the rest go their usual way)."""
    if isinstance(data, _dtypes.NUMPY_DATA):
        refuse_masked("tensor()", data)
        return data
    backend = engine.active or engine.ensure_active()
    try:
        raw = backend.adopt(data)
    except TensorplugError:
        raise
    except Exception as exc:
        raise BackendError(
            f"tensor(): backend {backend.name!r} (device {backend.device!r}) failed to take {_name(data)}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if raw is not NotImplemented:
        return _checked(wrap_storage(raw, backend), data)
    kind = type(data)
    if (
        hasattr(kind, "__array__")
        and not hasattr(kind, "__dlpack__")
        and isinstance(getattr(data, "dtype", None), np.dtype)
    ):
        try:
            return np.asarray(data)  # computes a lazy array (dask's on its scheduler)
        except (TensorplugError, MemoryError):
            raise
        except Exception as exc:
            raise DTypeError(
                f"tensor(): cannot read {_name(data)} as a numpy array: {type(exc).__name__}: {exc}"
            ) from exc
    return data


def _checked(t: Tensor, data: Any) -> Tensor:
    """``t``, adopted from ``data``, if its backend stores it in a tensorplug dtype it supports."""
    dtype = t.dtype
    if dtype not in _dtypes.DTYPES:
        raise DTypeError(
            f"tensor(): backend {t.backend!r} took {_name(data)} as {dtype} storage; tensorplug supports "
            f"{', '.join(_dtypes.DTYPES)}: cast it to one of those first"
        )
    unsupported = t._backend.unsupported_dtypes
    if unsupported and dtype in unsupported:
        raise unsupported_dtype_error("tensor()", t._backend, dtype, t.shape)
    return t


def refuse_masked(op: str, data: Any) -> None:
    """Refuse a numpy masked array: a tensor has no mask, and reading its data would drop it silently."""
    if isinstance(data, np.ma.MaskedArray):
        masked = int(np.count_nonzero(np.ma.getmaskarray(data)))
        raise DTypeError(
            f"{op}: got a numpy masked array (shape {data.shape}, dtype {data.dtype}, {masked} masked value(s)); a "
            "tensor has no mask. Pass x.filled(value) to choose what the masked entries become (or x.data to take "
            "the values under the mask as they are)"
        )


def lazy_array_hint(obj: Any) -> str:
    """For ``from_dlpack`` of a lazy array (a dask collection): why it cannot be shared, and what to use."""
    if not callable(getattr(obj, "__dask_graph__", None)):
        return ""
    return (
        f"; {_name(obj)} is lazy: it holds no memory to share. Use tp.tensor(x): on the dask backend it wraps the "
        "array as it is (nothing computed), on an eager backend it computes it"
    )


def _name(data: Any) -> str:
    kind = type(data)
    return f"a {kind.__module__}.{kind.__qualname__}"
