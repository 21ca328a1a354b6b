"""A seed gives the same values on every shipped backend: the same program starts from the same model anywhere.

numpy and torch here; plugins/backend-dask/tests/test_dask_seeded.py holds dask to the same values."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import tensorplug as tp

BACKENDS = ["numpy", "torch"]

DRAWS: dict[str, Callable[[], tp.Tensor]] = {
    "he_normal": lambda: tp.initializers.he_normal((3, 3, 4, 8), seed=0),
    "glorot_uniform": lambda: tp.initializers.glorot_uniform((64, 32), dtype="float64", seed=1),
    "truncated_normal": lambda: tp.initializers.truncated_normal((4000,), stddev=0.5, seed=2),
    "lecun_uniform": lambda: tp.initializers.lecun_uniform((16, 16), seed=3),
    "random_uniform_int": lambda: tp.random_uniform((50,), -5, 5, "int32", seed=4),
    "random_normal": lambda: tp.random_normal((7, 5), 1.0, 2.0, seed=5),
    "dropout": lambda: tp.dropout(tp.ones((10, 10)), 0.5, seed=6),
    "random_uniform_scalar": lambda: tp.random_uniform((), 2.0, 3.0, seed=7),
    "random_normal_scalar": lambda: tp.random_normal((), 1.0, 2.0, "float64", seed=8),
    "he_normal_scalar": lambda: tp.initializers.he_normal((), seed=9),
    "random_uniform_int_scalar": lambda: tp.random_uniform((), 0, 5, "int64", seed=10),
}


def on(backend: str, draw: Callable[[], tp.Tensor]) -> np.ndarray:
    tp.set_backend(backend)
    try:
        t = draw()
        assert t.backend == backend
        return t.numpy()
    finally:
        tp.set_backend("numpy")


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_the_same_seed_gives_the_same_values_on_torch_as_on_numpy(name: str) -> None:
    np.testing.assert_array_equal(on("torch", DRAWS[name]), on("numpy", DRAWS[name]))


def test_seeded_samples_are_the_documented_philox_stream() -> None:
    """docs/initializers.md: seeded samples come from numpy's Philox generator keyed by the seed."""
    expected = 1.0 + 2.0 * np.random.Generator(np.random.Philox(5)).standard_normal((7, 5))
    for backend in BACKENDS:
        np.testing.assert_array_equal(on(backend, DRAWS["random_normal"]), expected.astype(np.float32))


def test_unseeded_draws_stay_fresh_on_every_backend() -> None:
    for backend in BACKENDS:
        first, second = on(backend, lambda: tp.random_uniform((64,))), on(backend, lambda: tp.random_uniform((64,)))
        assert not np.array_equal(first, second)
