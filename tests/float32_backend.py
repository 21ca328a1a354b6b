"""A test backend without float64, as XLA with x64 off: numpy arrays, with float64 stored (and computed) as float32.

It declares ``unsupported_dtypes = {"float64"}`` and borrows every kernel of the numpy backend, each wrapped so
that a float64 result (a Cast to float64, a Fill of dtype float64, ...) is stored as float32, as such a device
does. ``Int32Backend`` ("int32only") is the same without int64: int64 stored as int32, float64 kept.
``FlushToZeroBackend`` also flushes subnormal inputs and results to zero, and says so. Used by
tests/unit/test_conformance.py, tests/unit/test_storable_dtypes.py and tests/unit/test_pytest_plugin.py (in a
subprocess, through ``register``).
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplug as tp

NAME = "float32only"
FTZ_NAME = "flushing"
INT32_NAME = "int32only"
_NARROWER = {"float64": np.float32, "int64": np.int32}


def _narrow(raw: Any, unsupported: frozenset[str] = frozenset({"float64"})) -> Any:
    """Storage of an ``unsupported`` dtype (float64, int64) as the narrower one (numpy scalars included)."""
    array = np.asarray(raw)
    name = array.dtype.name
    return array.astype(_NARROWER[name]) if name in unsupported else raw


def _flush(raw: Any) -> Any:
    array = np.asarray(raw)
    if array.dtype.kind != "f":
        return raw
    tiny = np.finfo(array.dtype).tiny
    return np.where(np.abs(array) < tiny, np.copysign(np.zeros_like(array), array), array)  # keeps the sign


class Float32Backend(tp.Backend):
    """numpy storage without float64."""

    name = NAME
    unsupported_dtypes = frozenset({"float64"})

    def from_host(self, array: np.ndarray) -> Any:
        return _narrow(np.array(array, copy=True), self.unsupported_dtypes)

    def to_host(self, raw: Any) -> np.ndarray:
        return np.asarray(raw)

    def dtype_of(self, raw: Any) -> str:
        return str(np.asarray(raw).dtype.name)


class Int32Backend(Float32Backend):
    """numpy storage without int64."""

    name = INT32_NAME
    unsupported_dtypes = frozenset({"int64"})


class FlushToZeroBackend(Float32Backend):
    """As Float32Backend, and subnormal numbers read and written as zero (flush_to_zero)."""

    name = FTZ_NAME
    flush_to_zero = True

    def from_host(self, array: np.ndarray) -> Any:
        return _flush(super().from_host(array))


def narrowing(fn: Callable[..., Any], flush: bool = False) -> Callable[..., Any]:
    """A numpy kernel whose float64 results become float32 (and whose subnormals become zero, with ``flush``)."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        if flush:
            inputs = {k: [_flush(r) for r in v] if isinstance(v, list) else _flush(v) for k, v in inputs.items()}
        out = fn(inputs, attrs, backend)
        unsupported = backend.unsupported_dtypes
        post = (lambda r: _flush(_narrow(r, unsupported))) if flush else (lambda r: _narrow(r, unsupported))
        if isinstance(out, tuple):
            return tuple(post(o) for o in out)
        return post(out)

    return kernel


def register(
    name: str = NAME,
    flush: bool = False,
    broken: dict[str, Callable[..., Any]] | None = None,
    backend: type[Float32Backend] | None = None,
) -> None:
    """Register the backend ``name`` (of class ``backend``: Float32Backend, or FlushToZeroBackend with ``flush``)
    with every numpy kernel, narrowed; ``broken`` replaces some kernels."""
    from tensorplug.kernel_factories import catalogue_kernels

    if backend is None:
        backend = FlushToZeroBackend if flush else Float32Backend
    tp.register_backend(name, backend, priority=-5)
    for spec in catalogue_kernels(name, "tensorplug_numpy"):
        kernel_name = spec.kernel_name
        fn = pkgutil.resolve_name(spec.kernel) if isinstance(spec.kernel, str) else spec.kernel
        if broken and kernel_name in broken:
            fn = broken[kernel_name]
        tp.register_kernel(kernel_name, name, narrowing(fn, flush))


def unregister(name: str = NAME) -> None:
    for spec in tp.kernels_for_backend(name):
        tp.unregister_kernel(spec.kernel_name, name)
    tp.remove_backend(name)
