"""Argument handling shared by every op family: tensor conversion, dtype promotion, shapes, axes."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorplug import _dtypes
from tensorplug import kernel_names as K
from tensorplug._engine import dispatch, engine, run_kernel
from tensorplug._errors import BackendError, DTypeError, ShapeError, TensorplugError
from tensorplug._tensor import (
    Tensor,
    describe,
    is_host_device,
    moved_storage,
    spec_text,
    stored_dtype_error,
    unsupported_dtype_error,
    wrap_storage,
)
from tensorplug.ops._foreign import HOST_TYPES, foreign, lazy_array_hint

_new = object.__new__

__all__ = ["tensor", "as_tensor", "cast", "from_dlpack"]


def from_host(array: np.ndarray) -> Tensor:
    """Wrap host data (a native-byte-order array of a tensorplug dtype) as a Tensor on the active backend
    (the one place host data enters), checking that the backend stores it in that dtype."""
    backend = engine.active or engine.ensure_active()
    dtype = _dtypes.name_of(array.dtype)
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
    t = _new(Tensor)
    t._data = raw
    t._backend = backend
    t._tape = None
    t._dtype = dtype
    return t


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
        t = _new(Tensor)  # a plain Tensor sharing the storage (a snapshot of a Variable, say); built inline: hot
        t._data = data._data if data._backend is backend else moved_storage(data, backend, "tensor()")
        t._backend = backend
        t._tape = None
        t._dtype = data._dtype
        return t
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
    producer = _exportable(obj)
    _check_producer_dtype("from_dlpack()", producer, backend)
    if _dlpack_device("from_dlpack()", producer)[0] != _DL_CPU and is_host_device(backend.device):
        raw = backend.from_host(_host_copy("from_dlpack()", producer))
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
    return _checked(wrap_storage(raw, backend), "from_dlpack()", producer)


# -- DLPack producers ---------------------------------------------------------------

_DL_CPU = 1  # DLPack's kDLCPU device type


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
    return t if dtype is None else cast(t, dtype)


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


def as_tensor(value: Any, dtype: str | None = None) -> Tensor:
    """``value`` as a Tensor; Python scalars and host data take ``dtype`` when given."""
    if isinstance(value, Tensor):
        return value
    return tensor(value, dtype)


_MAX_ELEMENTS = 2**60  # elements of 8 bytes past this overflow a 64-bit byte count (numpy refuses, torch views)
_FLOAT32_OVERFLOW = 3.4028235677973366e38  # (2 - 2**-24) * 2**127: from here up a float rounds to float32 inf


def float32_scalar(value: float) -> float:
    """A Python float as float32 will hold it: ±inf past float32's range (as numpy's cast, without its warning)."""
    if _FLOAT32_OVERFLOW <= abs(value) < math.inf:
        return math.copysign(math.inf, value)
    return value


_SCALARS: dict[tuple[Any, type, str, str], Tensor] = {}
_SCALARS_MAX = 1024


def scalar_like(value: bool | int | float, other: Tensor) -> Tensor:
    """A Python scalar meeting tensor ``other``, as a tensor of its weak dtype.

    Tensors are immutable, so the scalars that ops and gradients use over
    and over (``1.0 - y``, ``x * 2.0``) are made once per backend and dtype.
    Float zeros are not cached: 0.0 == -0.0, with equal hashes, so the key
    would confuse them (np.float64 is a float too).
    """
    dtype = _dtypes.weak_scalar_dtype(value, other.dtype)
    backend = engine.active or engine.ensure_active()
    key = (value, type(value), dtype, backend.name)
    cached = _SCALARS.get(key)
    if cached is not None and cached._backend is backend:
        return cached
    t = tensor(value, dtype)
    if value or not isinstance(value, float):
        if len(_SCALARS) >= _SCALARS_MAX:
            _SCALARS.clear()
        _SCALARS[key] = t
    return t


def cast(x: Any, dtype: Any) -> Tensor:
    """Cast to ``dtype`` (float to int truncates toward zero). Returns ``x`` itself if the dtype matches."""
    target = _dtypes.check_dtype(dtype, "cast()")
    t = as_tensor(x)
    if t.dtype == target:
        return t
    backend = engine.active or t._backend
    if backend.unsupported_dtypes and target in backend.unsupported_dtypes:
        raise unsupported_dtype_error(f"cast(x, {target!r}) of {describe(t)}", backend, target, t.shape)
    return dispatch(K.CAST, {"x": t}, {"dtype": target})


def binary_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Convert and promote two operands to one dtype, and check that their shapes broadcast."""
    a, b = promote_operands(op, a, b)
    sa, sb = a._data.shape, b._data.shape
    if sa != sb:
        try:
            broadcast_shapes(op, sa, sb)
        except ShapeError:
            raise ShapeError(
                f"{op}: shapes {tuple(sa)} and {tuple(sb)} cannot be broadcast together "
                f"({describe(a)} and {describe(b)} on backend {a.backend!r}); each dimension must match or be 1"
            ) from None
    return a, b


def promote_all(values: Sequence[Any]) -> list[Tensor]:
    """A non-empty sequence of tensor-likes as tensors cast to their common dtype (NumPy's promotion table)."""
    ts = [as_tensor(v) for v in values]
    dtype = ts[0].dtype
    for t in ts[1:]:
        dtype = _dtypes.promote(dtype, t.dtype)
    return [cast(t, dtype) for t in ts]


def promote_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Convert two operands to tensors and promote them to one dtype.

    Tensors (and numpy arrays, numpy scalars and lists, which become tensors
    first) promote by NumPy's table. A Python scalar is weak: it takes the
    other operand's dtype, unless its kind is higher (a float meeting an
    integer tensor), in which case both take the default dtype of that kind.
    """
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype == b.dtype:
        return a, b  # the common case: nothing to convert or promote
    weak_a = isinstance(a, bool | int | float)
    weak_b = isinstance(b, bool | int | float)
    if not isinstance(a, Tensor) and not weak_a:
        a = tensor(a)
    if not isinstance(b, Tensor) and not weak_b:
        b = tensor(b)
    if weak_a and weak_b:
        a = tensor(a)
        weak_a = False
    if weak_b:
        b = _weak_scalar(op, b, a)
        return (a if a.dtype == b.dtype else cast(a, b.dtype)), b
    if weak_a:
        a = _weak_scalar(op, a, b)
        return a, (b if b.dtype == a.dtype else cast(b, a.dtype))
    da, db = a.dtype, b.dtype
    if da != db:
        target = _dtypes.promote(da, db)
        if da != target:
            a = cast(a, target)
        if db != target:
            b = cast(b, target)
    return a, b


def _weak_scalar(op: str, value: bool | int | float, other: Tensor) -> Tensor:
    try:
        return scalar_like(value, other)
    except DTypeError as exc:  # an int past the range of other's integer dtype (as NumPy's OverflowError)
        raise DTypeError(
            f"{op}: the Python scalar {value!r} does not fit {other.dtype}, the dtype of the other operand "
            f"({describe(other)}); make it a tensor of a wider dtype first, e.g. tp.tensor({value!r}, 'int64')"
        ) from exc


_BROADCASTS: dict[tuple[Sequence[int], ...], tuple[int, ...]] = {}  # shapes -> their broadcast (successes only)
_CACHE_MAX = 4096


def broadcast_shapes(op: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """The broadcast of ``shapes`` (NumPy rules), or a ShapeError naming the op and the shapes."""
    cached = _BROADCASTS.get(shapes)
    if cached is not None:
        return cached
    result = _broadcast(op, shapes)
    if len(_BROADCASTS) >= _CACHE_MAX:
        _BROADCASTS.clear()
    _BROADCASTS[shapes] = result
    return result


def _broadcast(op: str, shapes: tuple[Sequence[int], ...]) -> tuple[int, ...]:
    ndim = max(len(s) for s in shapes)
    result = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            d = s[i] if -i <= len(s) else 1
            if d != 1:
                if size != 1 and d != size:
                    listed = " and ".join(str(tuple(s)) for s in shapes)
                    raise ShapeError(f"{op}: shapes {listed} cannot be broadcast together")
                size = d
        result.append(size)
    return tuple(result)


def check_float(op: str, x: Tensor) -> None:
    if not _dtypes.is_floating(x.dtype):
        raise DTypeError(f"{op}: expects a float tensor, got {describe(x)}; cast it with tp.cast(x, 'float32')")


def to_float(x: Tensor) -> Tensor:
    """Integer and bool tensors become the default float; float tensors are returned as they are."""
    return x if _dtypes.is_floating(x.dtype) else cast(x, _dtypes.DEFAULT_FLOAT)


_AXES: dict[tuple[Any, int], tuple[int, ...]] = {}  # (axis, ndim) -> normalized axes (successes only)


def normalize_axes(op: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int, or a sequence of ints) as a sorted tuple of non-negative axes."""
    plain = axis is None or type(axis) is int or (type(axis) is tuple and all(type(a) is int for a in axis))
    key = (axis, ndim) if plain else None  # only plain ints are keys: anything else may not even be hashable
    if key is not None:
        cached = _AXES.get(key)
        if cached is not None:
            return cached
    result = _normalize_axes(op, axis, ndim)
    if key is not None:
        if len(_AXES) >= _CACHE_MAX:
            _AXES.clear()
        _AXES[key] = result
    return result


def _normalize_axes(op: str, axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    try:
        given = [axis] if isinstance(axis, int | np.integer) else list(axis)
        if isinstance(axis, str) or any(isinstance(a, bool | np.bool_) for a in given):
            raise TypeError(axis)
        axes = [operator.index(a) for a in given]
    except TypeError:
        raise DTypeError(f"{op}: axis must be an int, a sequence of ints, or None; got {axis!r}") from None
    result = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
        result.append(a % ndim if ndim else 0)
    if len(set(result)) != len(result):
        raise ShapeError(f"{op}: axis {axis!r} repeats an axis")
    return tuple(sorted(result))


def normalize_axis(op: str, axis: int, ndim: int) -> int:
    try:
        if isinstance(axis, bool | np.bool_):
            raise TypeError(axis)
        a = operator.index(axis)
    except TypeError:
        raise DTypeError(f"{op}: axis must be an int, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise ShapeError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
    return a % ndim


def normalize_shape(op: str, shape: Any) -> tuple[int, ...]:
    """A shape argument (an int or a sequence of ints) as a tuple of non-negative ints."""
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    try:
        dims = [shape] if isinstance(shape, int | np.integer) else list(shape)
        if isinstance(shape, str) or any(isinstance(d, bool | np.bool_) for d in dims):
            raise TypeError(shape)
        result = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise DTypeError(f"{op}: shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in result):
        raise ShapeError(f"{op}: shape {result} has a negative dimension")
    if math.prod(result) >= _MAX_ELEMENTS:
        raise ShapeError(f"{op}: shape {result} has more elements than any backend can address (2**60)")
    return result


# -- argument helpers: integer and scalar attrs, index tensors, kernels with several outputs


def int_arg(op: str, name: str, value: Any) -> int:
    """``value`` as a Python int, or a DTypeError naming the op and the argument."""
    if isinstance(value, bool):
        raise DTypeError(f"{op}: {name} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise DTypeError(f"{op}: {name} must be an int, got {value!r}") from None


def ints_arg(op: str, name: str, value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints (tensors are refused: these are host attrs)."""
    if isinstance(value, Tensor):
        raise DTypeError(f"{op}: {name} must be an int or a sequence of ints (host values), got {describe(value)}")
    if isinstance(value, int | np.integer):
        return (int_arg(op, name, value),)
    try:
        if isinstance(value, str | dict):
            raise TypeError(value)
        items = list(value)
        if any(isinstance(v, bool) for v in items):
            raise TypeError(value)
        return tuple(operator.index(v) for v in items)
    except TypeError:
        raise DTypeError(f"{op}: {name} must be an int or a sequence of ints, got {value!r}") from None


def scalar_of(op: str, name: str, value: Any, dtype: str) -> bool | int | float:
    """A Python scalar attr converted to ``dtype``'s kind; values the dtype cannot hold are refused."""
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, bool | int | float):
        raise DTypeError(f"{op}: {name} must be a Python number or bool, got {type(value).__name__}")
    if dtype == _dtypes.bool_:
        return bool(value)
    if dtype in _dtypes.INT_DTYPES:
        if isinstance(value, float) and not value.is_integer():
            raise DTypeError(f"{op}: {name}={value!r} is not an integer, so it does not fit dtype {dtype}")
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise DTypeError(f"{op}: {name}={value!r} is out of range for dtype {dtype}")
        return int(value)
    return float32_scalar(float(value)) if dtype == _dtypes.float32 else float(value)


def dispatch_several(name: str, inputs: dict[str, Any], attrs: dict[str, Any]) -> list[Tensor]:
    """``run_kernel`` for kernels with several outputs, typed as returning a list."""
    outputs = run_kernel(name, inputs, attrs)
    assert isinstance(outputs, list)
    return outputs


def check_numeric(op: str, x: Tensor) -> None:
    if x.dtype == _dtypes.bool_:
        raise DTypeError(f"{op}: expects a numeric tensor, got {describe(x)}; cast it with tp.cast(x, 'int32')")


def check_indices(op: str, name: str, indices: Tensor) -> None:
    if indices.dtype not in _dtypes.INT_DTYPES:
        raise DTypeError(f"{op}: {name} must be an int32 or int64 tensor, got {describe(indices)}")


# -- shape ---------------------------------------------------------------------
