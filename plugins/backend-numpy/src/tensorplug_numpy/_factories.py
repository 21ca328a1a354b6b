"""Kernel factories shared by the numpy kernel modules: most kernels are one line with them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Kernel = Callable[[dict[str, Any], dict[str, Any], Any], Any]
"""``kernel(inputs, attrs, backend)`` on numpy arrays."""


def unary(fn: Callable[[Any], Any]) -> Kernel:
    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(inputs["x"])

    kernel.__name__ = getattr(fn, "__name__", "unary")
    return kernel


def binary(fn: Callable[[Any, Any], Any]) -> Kernel:
    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(inputs["a"], inputs["b"])

    kernel.__name__ = getattr(fn, "__name__", "binary")
    return kernel


def quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``fn`` with numpy's floating-point warnings off: inf and NaN results are the contract."""

    def quiet_fn(*args: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args)

    quiet_fn.__name__ = getattr(fn, "__name__", "quiet")
    return quiet_fn
