"""Dtypes are plain strings; this module owns their names, promotion and host mapping.

Promotion of two tensors follows TensorFlow.js: the higher kind wins (bool <
integer < float) and, within a kind, the wider dtype; an integer tensor
meeting a float tensor takes the float's dtype (int32 + float32 -> float32,
not NumPy's float64). Python scalars are "weak": they take the dtype of the
tensor they meet (a Python float turns an integer tensor into the default
float, float32).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import numpy as np

DType = Literal["float32", "float64", "int32", "int64", "bool"]

float32: Final = "float32"
float64: Final = "float64"
int32: Final = "int32"
int64: Final = "int64"
bool_: Final = "bool"

DTYPES: Final[tuple[str, ...]] = (float32, float64, int32, int64, bool_)
FLOAT_DTYPES: Final = frozenset({float32, float64})
INT_DTYPES: Final = frozenset({int32, int64})
DEFAULT_FLOAT: Final = float32
DEFAULT_INT: Final = int32

# Tensor with tensor: the higher of the two in this order (TensorFlow.js's upcast rule): an integer meeting a
# float takes the float's dtype, so int32 + float32 and int64 + float32 are float32 (NumPy would give float64).
_RANK = {bool_: 0, int32: 1, int64: 2, float32: 3, float64: 4}
_PROMOTE: Final[dict[tuple[str, str], str]] = {
    (_a, _b): (_a if _RANK[_a] >= _RANK[_b] else _b) for _a in DTYPES for _b in DTYPES
}


_NUMPY_NAMES: Final[dict[np.dtype[Any], str]] = {np.dtype(name): name for name in DTYPES}
NUMPY_DATA: Final = (np.ndarray, np.generic)
"""What ``isinstance`` takes for numpy data (a tuple: a ``X | Y`` union is built again at each call)."""
_NP_FLOAT32: Final = np.dtype(float32)
_NP_INT32: Final = np.dtype(int32)
_NP_INT64: Final = np.dtype(int64)


def name_of(dtype: np.dtype[Any]) -> str:
    """The name of a numpy dtype (numpy's own ``dtype.name`` is a slow Python property)."""
    name = _NUMPY_NAMES.get(dtype)
    return name if name is not None else str(dtype.name)


def check_dtype(dtype: object, where: str = "dtype") -> str:
    """Return ``dtype`` as one of DTYPES, or raise a DTypeError naming the choices."""
    if isinstance(dtype, str) and dtype in _RANK:
        return dtype
    name = getattr(dtype, "name", None)  # numpy dtypes and scalar types
    if name is None and isinstance(dtype, type) and issubclass(dtype, np.generic):
        name = np.dtype(dtype).name
    if dtype is bool:
        return bool_
    if dtype is float:
        return DEFAULT_FLOAT
    if dtype is int:
        return DEFAULT_INT
    if isinstance(name, str) and name in _RANK:
        return name
    from tensorplug._runtime._errors import DTypeError

    raise DTypeError(f"{where}: unsupported dtype {dtype!r}; tensorplug supports {', '.join(DTYPES)}")


def promote(a: str, b: str) -> str:
    """The result dtype of an elementwise op on two tensors of dtypes ``a`` and ``b``."""
    return _PROMOTE[(a, b)]


def is_floating(dtype: str) -> bool:
    """True for float32 and float64."""
    return dtype in FLOAT_DTYPES


def weak_scalar_dtype(value: bool | int | float, other: str) -> str:
    """The dtype a Python scalar takes when it meets a tensor of dtype ``other``."""
    if isinstance(value, bool):
        return other
    if isinstance(value, int):
        return other if other != bool_ else DEFAULT_INT
    return other if other in FLOAT_DTYPES else DEFAULT_FLOAT


def host_array(data: object, dtype: str | None) -> np.ndarray:
    """Convert host data (scalars, nested lists, numpy arrays) to a native-byte-order numpy array of a supported dtype.

    Integers are kept exact or refused: an integer that the dtype (int64 when
    inferred, the widest tensorplug has) cannot hold raises a DTypeError;
    an explicit float ``dtype`` converts it, rounding as floats do.
    """
    from tensorplug._runtime._errors import DTypeError

    if dtype is not None:
        if dtype in INT_DTYPES and isinstance(data, NUMPY_DATA):
            source = np.asarray(data)
            if source.dtype.kind in "iu" and not np.can_cast(source.dtype, dtype):
                _check_integer_range(source, dtype)
        try:
            return np.array(data, dtype=dtype)
        except OverflowError:
            _refuse_python_ints(data, dtype)
            raise
    arr = np.array(data)
    if isinstance(data, NUMPY_DATA):
        if _NUMPY_NAMES.get(arr.dtype) is not None:  # a supported dtype in native byte order: the common case
            return arr
        if not arr.dtype.isnative:  # big-endian data on a little-endian host, say: backends get native arrays
            arr = arr.astype(arr.dtype.newbyteorder("="))
            if _NUMPY_NAMES.get(arr.dtype) is not None:
                return arr
        kind = arr.dtype.kind
        if kind == "f":
            return arr.astype(DEFAULT_FLOAT if arr.dtype.itemsize < 4 else float64)
        if kind in "iu":
            if kind == "u" and arr.dtype.itemsize == 8:
                _check_integer_range(arr, int64)
            return arr.astype(int64 if arr.dtype.itemsize >= 4 else DEFAULT_INT)
        raise DTypeError(f"tensor(): unsupported numpy dtype {arr.dtype}; supported: {', '.join(DTYPES)}")
    kind = arr.dtype.kind
    # Python scalars and lists: floats become float32 and ints int32, as TensorFlow.js does. Data holding a
    # float is float data (its ints become floats); integer data must fit int64, the widest integer dtype.
    if kind == "b":
        return arr
    if kind == "f":
        leaf = data
        while (type(leaf) is list or type(leaf) is tuple) and leaf:
            leaf = leaf[0]
        if type(leaf) is not float and arr.size and arr.max() >= 2**63:  # numpy's float64 for ints past int64
            _refuse_python_ints(data, None)
        return arr.astype(_NP_FLOAT32)
    if kind in "iu":
        if kind == "u" and arr.dtype.itemsize == 8:  # numpy holds Python ints in [2**63, 2**64) as uint64
            _refuse_python_ints(data, None)
            _check_integer_range(arr, int64)  # numpy uint64 scalars in a list
        if arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
            return arr.astype(_NP_INT64)
        return arr.astype(_NP_INT32)
    if kind == "O":  # numpy holds ints past 64 bits as Python objects
        _refuse_python_ints(data, None)
        try:
            return np.array(data, dtype=float64).astype(DEFAULT_FLOAT)  # floats and big ints: float data
        except (TypeError, ValueError):
            pass
    raise DTypeError(
        f"tensor(): cannot make a tensor from {type(data).__name__} data (numpy sees dtype {arr.dtype}); "
        "pass numbers, booleans, nested lists of them, or a numpy array"
    )


def _check_integer_range(arr: np.ndarray, dtype: str) -> None:
    """Refuse a numpy integer array holding a value that integer ``dtype`` cannot hold."""
    if not arr.size:
        return
    info = np.iinfo(dtype)
    high, low = arr.max(), arr.min()
    if high <= info.max and low >= info.min:
        return
    from tensorplug._runtime._errors import DTypeError

    value = int(high) if high > info.max else int(low)
    widest = "; int64 is tensorplug's widest integer dtype" if dtype == int64 else ""
    raise DTypeError(
        f"tensor(): the numpy {arr.dtype} data of shape {arr.shape} holds {value}, which {dtype} cannot hold "
        f"({dtype} holds {info.min} to {info.max}{widest}). Pass dtype='float64' to store the values as floats "
        "(rounded to 53 bits), or bring them into range first"
    )


def _refuse_python_ints(data: object, dtype: str | None) -> None:
    """Raise a DTypeError naming the first integer of ``data`` (nested lists) that ``dtype`` (int64 if None)
    cannot hold. Return if there is none, or if ``dtype`` is None and ``data`` holds a float (float data)."""
    target = int64 if dtype is None else dtype
    info = np.iinfo(target)
    stack = [data]
    bad = None
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(reversed(item))
        elif isinstance(item, float | np.floating) and dtype is None:
            return
        elif isinstance(item, int | np.integer) and not isinstance(item, bool | np.bool_) and bad is None:
            bad = None if info.min <= int(item) <= info.max else int(item)
            if bad is not None and dtype is not None:
                break
    if bad is None:
        return
    from tensorplug._runtime._errors import DTypeError

    if dtype is None:
        hint = "int64, tensorplug's widest integer dtype, holds -2**63 to 2**63 - 1"
    else:
        hint = f"{target} holds {info.min} to {info.max}"
    raise DTypeError(
        f"tensor(): the integer {bad} does not fit {target} ({hint}); pass dtype='float64' to store it as a "
        "float (rounded to 53 bits), or bring it into range first"
    )
