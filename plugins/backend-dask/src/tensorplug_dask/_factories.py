"""Kernel factories of the dask backend.

``chunkwise(name)`` is the per-chunk map: the numpy backend's own kernel
applied to each block (after broadcasting the inputs' blocks against each
other), so the dask result has exactly numpy's values and conventions (NaN,
inf, signed zeros, TensorFlow.js rounding) with one task per output chunk.
Elementwise kernels are all written this way: dask's own ufunc wrappers do
the same with bare ufuncs. ``tp.coverage()`` reports these kernels as
``per-chunk`` (see ``PER_CHUNK`` in ``tensorplug_dask.plugin``).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import dask.array as da
import numpy as np

import tensorplug as tp
from tensorplug.kernel_factories import Kernel as Kernel

FALLBACK = "numpy"


def numpy_kernel(name: str) -> Kernel:
    """The numpy backend's kernel ``name`` (the one registered now, overrides included)."""
    spec = tp.get_kernel(name, FALLBACK)
    if spec is None:
        raise tp.KernelNotFoundError(
            f"dask backend: the per-chunk kernel {name} needs the numpy backend's {name}, which is not registered; "
            "install tensorplug-numpy (a dependency of tensorplug-dask) or re-register its kernel"
        )
    fn = spec.kernel
    if isinstance(fn, str):
        module, _, attr = fn.partition(":")
        fn = getattr(importlib.import_module(module), attr)
    return fn


class Chunk:
    """A numpy kernel applied to one block of each input: the task function of a per-chunk map.

    Picklable (cloudpickle ships the kernel to a cluster's workers) and tokenized by kernel name and attrs, so
    that the same call on the same arrays names the same dask keys.
    """

    def __init__(self, name: str, fn: Kernel, input_names: Sequence[str], attrs: dict[str, Any], output: int = -1):
        self.name, self.fn, self.input_names, self.attrs, self.output = name, fn, tuple(input_names), attrs, output
        self.__name__ = name.lower()

    def __call__(self, *blocks: Any) -> Any:
        result = self.fn(dict(zip(self.input_names, blocks, strict=True)), self.attrs, None)
        if self.output >= 0:
            result = result[self.output]
        return np.asarray(result)  # a 0-d numpy kernel may give a numpy scalar; dask's blocks are arrays

    def __dask_tokenize__(self) -> Any:
        return (self.name, self.input_names, repr(sorted(self.attrs.items())), self.output)


def result_dtype(chunk: Chunk, arrays: Sequence[Any]) -> np.dtype[Any]:
    """The dtype ``chunk`` gives for inputs of these dtypes, from one element each (nothing of the graph runs)."""
    samples = [np.ones((1,) * a.ndim, dtype=a.dtype) for a in arrays]
    with np.errstate(all="ignore"):
        return np.asarray(chunk(*samples)).dtype


def chunkwise(name: str, input_names: Sequence[str] = ("x",)) -> Kernel:
    """The elementwise kernel ``name``: numpy's kernel mapped over the blocks of its broadcast inputs."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        arrays = [inputs[n] for n in input_names]
        chunk = Chunk(name, numpy_kernel(name), input_names, attrs)
        return da.core.elemwise(chunk, *arrays, dtype=result_dtype(chunk, arrays))

    kernel.__name__ = name.lower()
    return per_chunk(kernel)


def per_chunk(kernel: Kernel) -> Kernel:
    """Mark ``kernel`` as a per-chunk map of numpy's kernel (listed as such by ``tp.coverage()``)."""
    kernel.per_chunk = True  # type: ignore[attr-defined]
    return kernel


def unary(name: str) -> Kernel:
    return chunkwise(name, ("x",))


def binary(name: str) -> Kernel:
    return chunkwise(name, ("a", "b"))


def as_dask(raw: Any) -> Any:
    """``raw`` as a dask array (a kernel may be handed a numpy scalar from an attr-made constant)."""
    return raw if isinstance(raw, da.Array) else da.from_array(np.asarray(raw), chunks=-1)


__all__ = ["Chunk", "Kernel", "as_dask", "binary", "chunkwise", "numpy_kernel", "per_chunk", "result_dtype", "unary"]
