"""Reduction and scan kernels (input ``x``).

The ops hand over canonical attrs: ``axis`` is a sorted tuple of
non-negative axes for the reductions and one non-negative int for the
arg- and scan kernels. Sums and products keep the input's dtype (the
standard would widen int32 to the default integer dtype), arg-kernels
return int32.
"""

from __future__ import annotations

import math
from typing import Any

from tensorplug_array_api._factories import Kernel, along


def _reduce(name: str, keep_dtype: bool = False) -> Kernel:
    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x, fn = inputs["x"], getattr(backend.xp, name)
        if keep_dtype:
            return fn(x, axis=attrs["axis"], keepdims=attrs["keep_dims"], dtype=x.dtype)
        return fn(x, axis=attrs["axis"], keepdims=attrs["keep_dims"])

    kernel.__name__ = name
    return kernel


sum_ = _reduce("sum", keep_dtype=True)
prod = _reduce("prod", keep_dtype=True)
max_ = _reduce("max")
min_ = _reduce("min")
all_ = _reduce("all")
any_ = _reduce("any")


def mean(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    count = math.prod(x.shape[a] for a in attrs["axis"])
    total = backend.xp.sum(x, axis=attrs["axis"], keepdims=attrs["keep_dims"], dtype=x.dtype)
    return total / count  # NaN over zero elements


def arg_max(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    xp = backend.xp
    return xp.astype(xp.argmax(inputs["x"], axis=attrs["axis"]), xp.int32)


def arg_min(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    xp = backend.xp
    return xp.astype(xp.argmin(inputs["x"], axis=attrs["axis"]), xp.int32)


def _scan(name: str) -> Kernel:
    """A cumulative kernel with TensorFlow.js's ``exclusive`` (the identity first) and ``reverse``."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        xp, x, axis = backend.xp, inputs["x"], attrs["axis"]
        if attrs["reverse"]:
            x = xp.flip(x, axis=axis)
        exclusive = attrs["exclusive"]
        y = getattr(xp, name)(x, axis=axis, dtype=x.dtype, include_initial=exclusive)
        if exclusive:  # include_initial puts the identity first and one more element: drop the last
            y = y[along(axis, slice(0, x.shape[axis]))]
        return xp.flip(y, axis=axis) if attrs["reverse"] else y

    kernel.__name__ = name
    return kernel


cumsum = _scan("cumulative_sum")
cumprod = _scan("cumulative_prod")
