"""Random kernels: numpy's default generator, seeded by the ``seed`` attr (None draws fresh entropy)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug_numpy._factories import quiet


@quiet  # bounds or a stddev beyond the dtype's range give inf, as elsewhere
def random_uniform(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    rng, dtype = np.random.default_rng(attrs["seed"]), np.dtype(attrs["dtype"])
    low, high = attrs["minval"], attrs["maxval"]
    if dtype.kind in "iu":
        return rng.integers(low, high, size=attrs["shape"], dtype=dtype)
    return (low + (high - low) * rng.random(attrs["shape"])).astype(dtype)


@quiet
def random_normal(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    rng = np.random.default_rng(attrs["seed"])
    return (attrs["mean"] + attrs["stddev"] * rng.standard_normal(attrs["shape"])).astype(attrs["dtype"])
