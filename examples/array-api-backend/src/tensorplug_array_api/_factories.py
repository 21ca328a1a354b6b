"""Kernel factories: most kernels are one line with them.

A kernel is ``kernel(inputs, attrs, backend)``: a dict of input name to raw
array (or list of arrays) in, an array (or a tuple of arrays) out. These
kernels take their namespace from the backend (``backend.xp``), so the same
module serves array_api_strict, numpy or torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import array_api_compat

Kernel = Callable[[dict[str, Any], dict[str, Any], Any], Any]
"""``kernel(inputs, attrs, backend)`` on arrays of ``backend.xp``."""


def unary(name: str) -> Kernel:
    """The kernel of input ``x`` that is the standard's function ``name``."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return getattr(backend.xp, name)(inputs["x"])

    kernel.__name__ = name
    return kernel


def binary(name: str) -> Kernel:
    """The kernel of inputs ``a`` and ``b`` that is the standard's function ``name``."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return getattr(backend.xp, name)(inputs["a"], inputs["b"])

    kernel.__name__ = name
    return kernel


def unary_with(fn: Callable[[Any, Any], Any]) -> Kernel:
    """The kernel of input ``x`` computing ``fn(xp, x)``."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(backend.xp, inputs["x"])

    kernel.__name__ = fn.__name__
    return kernel


def binary_with(fn: Callable[[Any, Any, Any], Any]) -> Kernel:
    """The kernel of inputs ``a`` and ``b`` computing ``fn(xp, a, b)``."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(backend.xp, inputs["a"], inputs["b"])

    kernel.__name__ = fn.__name__
    return kernel


def is_bool(xp: Any, x: Any) -> bool:
    return bool(xp.isdtype(x.dtype, "bool"))


def is_float(xp: Any, x: Any) -> bool:
    return bool(xp.isdtype(x.dtype, "real floating"))


def device_of(x: Any) -> Any:
    """The device of array ``x``, for arrays made beside it (``xp.full(..., device=device_of(x))``)."""
    return array_api_compat.device(x)


def along(axis: int, index: Any) -> tuple[Any, ...]:
    """An index tuple applying ``index`` (a slice or an int) to axis ``axis`` alone."""
    return (*(slice(None),) * axis, index, ...)  # the standard wants the axes after it named: the ellipsis does
