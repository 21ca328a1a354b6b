"""Random kernels: one numpy generator per chunk, chunked as the backend chunks that shape.

``tp.random_uniform`` and ``tp.random_normal`` call these kernels only
unseeded: a seeded op draws on the host, the same values on every backend.
A seed reaches them only through ``tp.run_kernel``.

The ``seed`` attr seeds a ``numpy.random.SeedSequence`` (None draws fresh
entropy when the kernel runs); chunk ``i`` (in C order) draws from that
sequence's ``i``-th spawned child, made inside the chunk's task. So a
tensor's values are fixed once it is made (reading it twice gives the same
values), one seed gives the same values again for the same shape and
``chunks`` option, and building the graph costs the same for ten chunks or
a million (dask's ``da.random`` makes a generator per chunk while building:
minutes for a million chunks). The values are not the numpy backend's (each
chunk draws from its own stream); the contract asks only for the
distribution, the range and the dtype.
"""

# (dask.array has no type annotations)

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

from tensorplug import kernel_names as K
from tensorplug_dask._shape import _chunks, _meta


def random_uniform(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Floats in [minval, maxval) (minval + (maxval - minval) * U[0, 1)), or integers in [minval, maxval)."""
    return _random(K.RANDOM_UNIFORM, _uniform_block, attrs, backend, attrs["minval"], attrs["maxval"])


def random_normal(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """``mean + stddev * N(0, 1)``."""
    return _random(K.RANDOM_NORMAL, _normal_block, attrs, backend, attrs["mean"], attrs["stddev"])


def _random(kernel: str, draw: Any, attrs: dict[str, Any], backend: Any, *params: Any) -> Any:
    """An array whose every block ``draw`` fills, over an empty template (blockwise: no task is made per chunk)."""
    shape, dtype = tuple(attrs["shape"]), np.dtype(attrs["dtype"])
    template = da.empty(shape, dtype=dtype, chunks=_chunks(backend, shape, dtype, kernel))
    entropy = np.random.SeedSequence(attrs["seed"]).entropy
    return template.map_blocks(draw, entropy, template.numblocks, *params, dtype=dtype, meta=_meta(len(shape), dtype),
                               token=kernel.lower())  # fmt: skip


def _generator(entropy: Any, numblocks: tuple[int, ...], block_id: tuple[int, ...]) -> np.random.Generator:
    """The generator of the block at ``block_id``: the sequence's child numbered by the block's C-order index."""
    index = int(np.ravel_multi_index(block_id, numblocks)) if numblocks else 0
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(index,)))


def _uniform_block(template: np.ndarray, entropy: Any, numblocks: tuple[int, ...], low: Any, high: Any,
                   block_id: tuple[int, ...] = ()) -> np.ndarray:  # fmt: skip
    rng = _generator(entropy, numblocks, block_id)
    if template.dtype.kind in "iu":
        return rng.integers(low, high, size=template.shape, dtype=template.dtype)
    uniform: np.ndarray = low + (high - low) * rng.random(template.shape)  # low, high: Python numbers
    return uniform.astype(template.dtype)


def _normal_block(template: np.ndarray, entropy: Any, numblocks: tuple[int, ...], mean: float, stddev: float,
                  block_id: tuple[int, ...] = ()) -> np.ndarray:  # fmt: skip
    rng = _generator(entropy, numblocks, block_id)
    return (mean + stddev * rng.standard_normal(template.shape)).astype(template.dtype)
