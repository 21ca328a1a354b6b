"""Kernels that read device values back to the host (a sync): declared with :func:`reads_to_host`, so that a CUDA
graph (``tensorplug_torch._graphs``) never tries to capture their calls. A leaf module: the kernel modules
import it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["reads_to_host"]

Kernel = TypeVar("Kernel", bound=Callable[..., Any])


def _always(specs: Mapping[str, Any]) -> bool:
    return True


def reads_to_host(kernel: Kernel, when: Callable[[Mapping[str, Any]], bool] | None = None) -> Kernel:
    """Declare that ``kernel`` reads device values back to the host (a device sync: to check an index, say), or
    does so for the inputs that ``when(specs)`` is true of (``specs``: each input's ``tp.TensorSpec`` by name, a
    list for a list input). A CUDA graph cannot capture such a call: a ``tp.function`` program that makes one keeps
    its plain replay on CUDA. Returns ``kernel``, so that it decorates::

        @reads_to_host
        def my_kernel(inputs, attrs, backend): ...
    """
    kernel.reads_to_host = when if when is not None else _always  # type: ignore[attr-defined]
    return kernel
