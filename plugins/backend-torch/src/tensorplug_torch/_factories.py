"""Kernel factories shared by the torch kernel modules: most kernels are one line with them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Kernel = Callable[[dict[str, Any], dict[str, Any], Any], Any]
"""``kernel(inputs, attrs, backend)`` on torch tensors (``backend.torch_device`` is the device)."""


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
