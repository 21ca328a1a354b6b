"""A seed gives the dask backend the values it gives numpy (and torch: tests/all holds torch to them), across chunks."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tensorplug as tp

DRAWS: dict[str, Callable[[], tp.Tensor]] = {
    "he_normal": lambda: tp.initializers.he_normal((3, 3, 4, 8), seed=0),
    "glorot_uniform": lambda: tp.initializers.glorot_uniform((64, 32), dtype="float64", seed=1),
    "truncated_normal": lambda: tp.initializers.truncated_normal((4000,), stddev=0.5, seed=2),
    "random_uniform_int": lambda: tp.random_uniform((50,), -5, 5, "int32", seed=4),
    "random_normal": lambda: tp.random_normal((7, 5), 1.0, 2.0, seed=5),
    "dropout": lambda: tp.dropout(tp.ones((10, 10)), 0.5, seed=6),
    "random_uniform_scalar": lambda: tp.random_uniform((), 2.0, 3.0, seed=7),
}


def on(backend: str, draw: Callable[[], tp.Tensor]) -> np.ndarray:
    tp.set_backend(backend)
    try:
        t = draw()
        assert t.backend == backend
        return t.numpy()
    finally:
        tp.set_backend("dask")


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_the_same_seed_gives_the_same_values_on_dask_as_on_numpy(name: str) -> None:
    np.testing.assert_array_equal(on("dask", DRAWS[name]), on("numpy", DRAWS[name]))


def test_seeded_samples_on_dask_are_the_documented_philox_stream() -> None:
    """docs/initializers.md: seeded samples come from numpy's Philox generator keyed by the seed."""
    expected = 1.0 + 2.0 * np.random.Generator(np.random.Philox(5)).standard_normal((7, 5))
    np.testing.assert_array_equal(on("dask", DRAWS["random_normal"]), expected.astype(np.float32))


def test_unseeded_draws_on_dask_stay_fresh() -> None:
    first, second = on("dask", lambda: tp.random_uniform((64,))), on("dask", lambda: tp.random_uniform((64,)))
    assert not np.array_equal(first, second)
