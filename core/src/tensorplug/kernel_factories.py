"""Factories for backend authors: most elementwise kernels are one line with them.

The kernel calling convention is ``kernel(inputs, attrs, backend)``;
``unary(np.exp)`` makes the kernel of input ``x``, ``binary(np.add)`` the
kernel of inputs ``a`` and ``b``, for any array library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Kernel = Callable[[dict[str, Any], dict[str, Any], Any], Any]
"""``kernel(inputs, attrs, backend)``: raw storage in, raw storage (or a tuple of them) out."""


def unary(fn: Callable[[Any], Any]) -> Kernel:
    """The kernel applying ``fn`` to input ``x``."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(inputs["x"])

    kernel.__name__ = getattr(fn, "__name__", "unary")
    return kernel


def binary(fn: Callable[[Any, Any], Any]) -> Kernel:
    """The kernel applying ``fn`` to inputs ``a`` and ``b``."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(inputs["a"], inputs["b"])

    kernel.__name__ = getattr(fn, "__name__", "binary")
    return kernel
