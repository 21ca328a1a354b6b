"""Random kernels: dask's own generator (``da.random.default_rng``), chunked as the backend chunks that shape.

The ``seed`` attr seeds the generator (None draws fresh entropy); dask then
derives one seed per chunk when the graph is built, so a tensor's values are
fixed once it is made (reading it twice gives the same values) and one seed
gives the same values again for the same shape and ``chunks`` option. The
values are not the numpy backend's (each chunk draws from its own stream);
the contract asks only for the distribution, the range and the dtype.
"""

# (dask.array has no type annotations)

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np


def _generator_and_chunks(attrs: dict[str, Any], backend: Any) -> tuple[Any, tuple[int, ...], Any]:
    shape = tuple(attrs["shape"])
    chunks = backend._chunks_for(shape) if backend is not None else "auto"
    return da.random.default_rng(attrs["seed"]), shape, chunks


def random_uniform(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Floats in [minval, maxval) (minval + (maxval - minval) * U[0, 1)), or integers in [minval, maxval)."""
    rng, shape, chunks = _generator_and_chunks(attrs, backend)
    dtype, low, high = np.dtype(attrs["dtype"]), attrs["minval"], attrs["maxval"]
    if dtype.kind in "iu":
        return rng.integers(low, high, size=shape, dtype=dtype, chunks=chunks)
    return (low + (high - low) * rng.random(size=shape, chunks=chunks)).astype(dtype)


def random_normal(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """``mean + stddev * N(0, 1)``."""
    rng, shape, chunks = _generator_and_chunks(attrs, backend)
    return (attrs["mean"] + attrs["stddev"] * rng.standard_normal(size=shape, chunks=chunks)).astype(attrs["dtype"])
