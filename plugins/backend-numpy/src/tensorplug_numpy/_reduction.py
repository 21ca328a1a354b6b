"""Reduction and scan kernels (input ``x``).

The ops hand over canonical attrs: ``axis`` is a sorted tuple of
non-negative axes for the reductions and one non-negative int for the
arg- and scan kernels. Sums and products keep the input's dtype (numpy
would widen int32 to int64), arg-kernels return int32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorplug_numpy._factories import Kernel, quiet


def _reduce(fn: Callable[..., Any], keep_dtype: bool = False) -> Kernel:
    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x = inputs["x"]
        if keep_dtype:
            return fn(x, axis=attrs["axis"], keepdims=attrs["keep_dims"], dtype=x.dtype)
        return fn(x, axis=attrs["axis"], keepdims=attrs["keep_dims"])

    kernel.__name__ = getattr(fn, "__name__", "reduce")
    return kernel


# Sum, Prod and the scans are quiet (inf - inf and inf * 0 give NaN, as the contract says); Max, Min, All and Any
# only select, which raises no floating-point flag.
# The ufuncs' own reduce methods, not np.sum & co.: those wrap them in Python (3.1 vs 1.3 µs on a small array).
sum_ = quiet(_reduce(np.add.reduce, keep_dtype=True))
prod = quiet(_reduce(np.multiply.reduce, keep_dtype=True))
max_ = _reduce(np.maximum.reduce)
min_ = _reduce(np.minimum.reduce)
all_ = _reduce(np.logical_and.reduce)
any_ = _reduce(np.logical_or.reduce)


@quiet
def mean(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    count = 1
    for a in attrs["axis"]:
        count *= x.shape[a]
    total = np.add.reduce(x, axis=attrs["axis"], keepdims=attrs["keep_dims"], dtype=x.dtype)
    return np.divide(total, count, dtype=x.dtype)  # NaN over zero elements


def arg_max(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.argmax(inputs["x"], axis=attrs["axis"]).astype(np.int32)  # the first of ties, or of NaNs


def arg_min(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.argmin(inputs["x"], axis=attrs["axis"]).astype(np.int32)


def _scan(fn: Callable[..., Any], identity: int) -> Kernel:
    """A cumulative kernel with TensorFlow.js's ``exclusive`` (shift in the identity) and ``reverse``."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x, axis = inputs["x"], attrs["axis"]
        if attrs["reverse"]:
            x = np.flip(x, axis)
        y = fn(x, axis=axis, dtype=x.dtype)
        if attrs["exclusive"] and y.shape[axis]:
            y = np.roll(y, 1, axis)  # a fresh array: safe to write into
            y[(slice(None),) * axis + (0,)] = identity
        return np.flip(y, axis) if attrs["reverse"] else y

    kernel.__name__ = getattr(fn, "__name__", "reduce")
    return quiet(kernel)


cumsum = _scan(np.cumsum, 0)
cumprod = _scan(np.cumprod, 1)
