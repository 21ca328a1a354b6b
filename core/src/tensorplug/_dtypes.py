"""Dtypes are plain strings; this module owns their names, promotion and host mapping.

Promotion follows NumPy's rules for array-array operations. Python scalars
are "weak": they take the dtype of the tensor they meet (a Python float
turns an integer tensor into the default float, float32).
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

# The NumPy promotion lattice restricted to our five dtypes (array with array).
_RANK = {bool_: 0, int32: 1, int64: 2, float32: 3, float64: 4}
_PROMOTE: Final[dict[tuple[str, str], str]] = {}
for _a in DTYPES:
    for _b in DTYPES:
        _hi, _lo = (_a, _b) if _RANK[_a] >= _RANK[_b] else (_b, _a)
        if _hi == float32 and _lo in INT_DTYPES:
            _PROMOTE[(_a, _b)] = float64  # as NumPy: int32 + float32 -> float64
        else:
            _PROMOTE[(_a, _b)] = _hi
del _a, _b, _hi, _lo


_NUMPY_NAMES: Final[dict[np.dtype[Any], str]] = {np.dtype(name): name for name in DTYPES}


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
    from tensorplug._errors import DTypeError

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
    """Convert host data (scalars, nested lists, numpy arrays) to a numpy array of a supported dtype."""
    from tensorplug._errors import DTypeError

    if dtype is not None:
        return np.array(data, dtype=dtype)
    arr = np.array(data)
    kind = arr.dtype.kind
    if isinstance(data, np.ndarray | np.generic):
        name = arr.dtype.name
        if name in _RANK:
            return arr
        if kind == "f":
            return arr.astype(DEFAULT_FLOAT if arr.dtype.itemsize < 4 else float64)
        if kind in "iu":
            return arr.astype(int64 if arr.dtype.itemsize >= 4 else DEFAULT_INT)
        raise DTypeError(f"tensor(): unsupported numpy dtype {arr.dtype}; supported: {', '.join(DTYPES)}")
    # Python scalars and lists: floats become float32 and ints int32, as TensorFlow.js does.
    if kind == "b":
        return arr
    if kind == "f":
        return arr.astype(DEFAULT_FLOAT)
    if kind in "iu":
        if arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
            return arr.astype(int64)
        return arr.astype(DEFAULT_INT)
    raise DTypeError(
        f"tensor(): cannot make a tensor from {type(data).__name__} data (numpy sees dtype {arr.dtype}); "
        "pass numbers, booleans, nested lists of them, or a numpy array"
    )
