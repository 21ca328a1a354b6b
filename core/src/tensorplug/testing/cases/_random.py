"""Conformance cases: random.

Samples cannot be compared with fixed values (each backend has its own
generator), so the cases check what every backend must honour: shape and
dtype, the range, the moments over many samples (loosely: several standard
errors), that one seed gives one set of values and another seed (or no
seed) other values.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.testing._case import Case


def samples(
    dtype: str,
    shape: tuple[int, ...],
    low: float | None = None,
    high: float | None = None,
    mean: float | None = None,
    std: float | None = None,
) -> Callable[[np.ndarray], None]:
    """A check: dtype and shape, values in [low, high), and mean and standard deviation within 5% of ``std``."""

    def check(x: np.ndarray) -> None:
        assert x.dtype == np.dtype(dtype), f"dtype {x.dtype}, expected {dtype}"
        assert x.shape == shape, f"shape {x.shape}, expected {shape}"
        if low is not None and high is not None and x.size:
            assert low <= x.min(), f"minimum {x.min()}, expected at least {low}"
            assert x.max() < high, f"maximum {x.max()}, expected below {high}"
        if mean is not None and std is not None:
            assert abs(x.mean() - mean) < 0.05 * std, f"mean {x.mean()}, expected about {mean}"
            assert abs(x.std() - std) < 0.05 * std, f"standard deviation {x.std()}, expected about {std}"

    return check


def integers(dtype: str, shape: tuple[int, ...], low: int, high: int) -> Callable[[np.ndarray], None]:
    """A check: integer samples of ``dtype`` in [low, high), every value drawn (many samples, few values)."""

    def check(x: np.ndarray) -> None:
        assert x.dtype == np.dtype(dtype), f"dtype {x.dtype}, expected {dtype}"
        assert x.shape == shape, f"shape {x.shape}, expected {shape}"
        assert sorted(set(x.ravel().tolist())) == list(range(low, high)), f"values {sorted(set(x.ravel().tolist()))}"

    return check


def same_then_different(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """The first two draws are equal, the third differs from them."""
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c), "a different seed (or no seed) gave the same values"


def all_different(a: np.ndarray, b: np.ndarray) -> None:
    assert not np.array_equal(a, b), "two unseeded draws gave the same values"


def _uniform_std(low: float, high: float) -> float:
    return (high - low) / math.sqrt(12.0)


N = 20_000

RANDOM_UNIFORM = [
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((N,), seed=0),
         check=samples("float32", (N,), 0.0, 1.0, 0.5, _uniform_std(0.0, 1.0)), name="default"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((100, 200), -2.0, 3.0, "float64", seed=1),
         check=samples("float64", (100, 200), -2.0, 3.0, 0.5, _uniform_std(-2.0, 3.0)), name="range-float64"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((N,), -3, 4, "int32", seed=2),
         check=integers("int32", (N,), -3, 4), name="int32"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((50, 40), 2**40, 2**40 + 5, "int64", seed=3),
         check=integers("int64", (50, 40), 2**40, 2**40 + 5), name="int64"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((3, 4), 1.5, 1.5, seed=4),
         check=lambda x: np.testing.assert_array_equal(x, np.full((3, 4), 1.5, np.float32)), name="empty-range"),
    Case(K.RANDOM_UNIFORM,
         lambda: (tp.random_uniform((5, 7), seed=11), tp.random_uniform((5, 7), seed=11),
                  tp.random_uniform((5, 7), seed=12)),
         check=same_then_different, name="seeded"),
    Case(K.RANDOM_UNIFORM, lambda: (tp.random_uniform((64,)), tp.random_uniform((64,))), check=all_different,
         name="unseeded"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((0, 3), seed=5), check=samples("float32", (0, 3)), name="empty"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((), 2.0, 3.0, seed=6), check=samples("float32", (), 2.0, 3.0),
         name="scalar"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((2,), dtype="bool"), raises=tp.DTypeError,
         match="random_uniform: dtype must be a float or integer dtype", name="bool"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((2,), 1.0, 0.0), raises=tp.TensorplugError,
         match=r"minval \(1.0\) must not exceed maxval \(0.0\)", name="reversed-range"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((2,), 0, 0, "int32"), raises=tp.TensorplugError,
         match="int32 samples need minval < maxval", name="int-empty-range"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((2,), 0, 2**40, "int32"), raises=tp.TensorplugError,
         match=r"within \[-2147483648, 2147483648\]", name="int32-overflow"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((2,), 0.5, 3, "int32"), raises=tp.TensorplugError,
         match="minval must be a whole number", name="int-fractional-bound"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((2,), 0.0, math.inf), raises=tp.TensorplugError,
         match="maxval must be finite", name="infinite-bound"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((2, -1)), raises=tp.ShapeError, match="negative dimension",
         name="negative-shape"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((2,), seed=-1), raises=tp.TensorplugError,
         match="seed must be a non-negative int or None", name="negative-seed"),
    Case(K.RANDOM_UNIFORM, lambda: tp.random_uniform((2,), seed=1.5), raises=TypeError,  # type: ignore[arg-type]
         match="seed must be a non-negative int or None", name="float-seed"),
]  # fmt: skip

RANDOM_NORMAL = [
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((N,), seed=0), check=samples("float32", (N,), mean=0.0, std=1.0),
         name="default"),
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((100, 200), 5.0, 0.25, "float64", seed=1),
         check=samples("float64", (100, 200), mean=5.0, std=0.25), name="mean-stddev-float64"),
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((3,), 2.0, 0.0, seed=2),
         check=lambda x: np.testing.assert_array_equal(x, np.full(3, 2.0, np.float32)), name="zero-stddev"),
    Case(K.RANDOM_NORMAL,
         lambda: (tp.random_normal((4, 6), seed=21), tp.random_normal((4, 6), seed=21), tp.random_normal((4, 6))),
         check=same_then_different, name="seeded"),
    Case(K.RANDOM_NORMAL, lambda: (tp.random_normal((64,)), tp.random_normal((64,))), check=all_different,
         name="unseeded"),
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((2, 0), seed=3), check=samples("float32", (2, 0)), name="empty"),
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((), seed=4), check=samples("float32", ()), name="scalar"),
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((2,), dtype="int32"), raises=tp.DTypeError,
         match="random_normal: dtype must be float32 or float64", name="int"),
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((2,), dtype="float16"), raises=tp.DTypeError,
         match="unsupported dtype", name="unsupported-dtype"),
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((2,), stddev=-1.0), raises=tp.TensorplugError,
         match="stddev must be non-negative", name="negative-stddev"),
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((2,), mean=math.nan), raises=tp.TensorplugError,
         match="mean must be finite", name="nan-mean"),
    Case(K.RANDOM_NORMAL, lambda: tp.random_normal((2,), seed=True), raises=tp.TensorplugError,
         match="seed must be a non-negative int or None", name="bool-seed"),
]  # fmt: skip

CASES: list[Case] = [*RANDOM_UNIFORM, *RANDOM_NORMAL]
