"""Argument checks shared by the op families: float and numeric inputs, int and scalar attrs, index tensors,
kernels with several outputs."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from tensorplug._runtime import _dtypes
from tensorplug._runtime._engine import run_kernel
from tensorplug._runtime._errors import DTypeError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._convert import cast, float32_scalar

# -- argument helpers: integer and scalar attrs, index tensors, kernels with several outputs


def check_float(op: str, x: Tensor) -> None:
    if not _dtypes.is_floating(x.dtype):
        raise DTypeError(f"{op}: expects a float tensor, got {describe(x)}; cast it with tp.cast(x, 'float32')")


def to_float(x: Tensor) -> Tensor:
    """Integer and bool tensors become the default float; float tensors are returned as they are."""
    return x if _dtypes.is_floating(x.dtype) else cast(x, _dtypes.DEFAULT_FLOAT)


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
