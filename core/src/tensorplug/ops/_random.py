"""Random ops: uniform and normal samples from a seed.

A ``seed`` gives the same values on every backend: seeded samples are drawn
on the host by one counter-based generator (numpy's Philox, keyed by the
seed) and then stored on the active backend, so a model initialised with a
seed starts from the same weights on numpy, torch and dask. ``seed=None``
draws fresh values on every call with the backend's own random kernel, on
its device (the fast path for dropout in a training loop).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._runtime import _dtypes
from tensorplug._runtime._errors import DTypeError, InvalidArgumentError
from tensorplug._runtime._tensor import Tensor
from tensorplug.ops._convert import check_storable, from_host, run_declared
from tensorplug.ops._shapes import normalize_shape

__all__ = ["random_uniform", "random_normal"]


def random_uniform(
    shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = "float32", seed: int | None = None
) -> Tensor:
    """Samples from the uniform distribution on [minval, maxval); integer dtypes draw integers.

    >>> import tensorplug as tp
    >>> x = tp.random_uniform((2, 3), -1.0, 1.0, seed=7)
    >>> x.shape, x.dtype, x.tolist() == tp.random_uniform((2, 3), -1.0, 1.0, seed=7).tolist()
    ((2, 3), 'float32', True)
    """
    op = "random_uniform"
    dims = normalize_shape(op, shape)
    target = _dtypes.check_dtype(dtype, f"{op}()")
    if target == _dtypes.bool_:
        raise DTypeError(f"{op}: dtype must be a float or integer dtype, got {target!r}")
    if _dtypes.is_floating(target):
        low, high = _finite(op, "minval", minval), _finite(op, "maxval", maxval)
        if low > high:
            raise InvalidArgumentError(f"{op}: minval ({minval!r}) must not exceed maxval ({maxval!r})")
    else:
        low, high = _integral(op, "minval", minval), _integral(op, "maxval", maxval)
        info = np.iinfo(target)
        if not info.min <= low < high <= info.max + 1:
            raise InvalidArgumentError(
                f"{op}: {target} samples need minval < maxval within [{info.min}, {info.max + 1}], got [{low}, {high})"
            )
    check_storable(op, target, dims)
    attrs = {"shape": dims, "minval": low, "maxval": high, "dtype": target, "seed": _seed(op, seed)}
    if attrs["seed"] is not None:
        return from_host(seeded_uniform(attrs))
    return run_declared(K.RANDOM_UNIFORM, op, {}, attrs)


def random_normal(
    shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = "float32", seed: int | None = None
) -> Tensor:
    """Samples from the normal distribution with ``mean`` and standard deviation ``stddev``.

    >>> import tensorplug as tp
    >>> tp.random_normal((1000,), mean=5.0, stddev=0.1, seed=0).dtype
    'float32'
    """
    op = "random_normal"
    dims = normalize_shape(op, shape)
    target = _dtypes.check_dtype(dtype, f"{op}()")
    if not _dtypes.is_floating(target):
        raise DTypeError(f"{op}: dtype must be float32 or float64, got {target!r}")
    center, spread = _finite(op, "mean", mean), _finite(op, "stddev", stddev)
    if spread < 0:
        raise InvalidArgumentError(f"{op}: stddev must be non-negative, got {spread}")
    check_storable(op, target, dims)
    attrs = {"shape": dims, "mean": center, "stddev": spread, "dtype": target, "seed": _seed(op, seed)}
    if attrs["seed"] is not None:
        return from_host(seeded_normal(attrs))
    return run_declared(K.RANDOM_NORMAL, op, {}, attrs)


def seeded_generator(seed: int) -> np.random.Generator:
    """The host generator of ``seed``: numpy's counter-based Philox, the same stream on every machine."""
    return np.random.Generator(np.random.Philox(seed))


def seeded_uniform(attrs: dict[str, Any]) -> np.ndarray:
    """The host samples of a seeded ``random_uniform`` (its checked attrs), the same for every backend."""
    rng, dtype = seeded_generator(attrs["seed"]), np.dtype(attrs["dtype"])
    low, high = attrs["minval"], attrs["maxval"]
    if dtype.kind in "iu":
        integers: np.ndarray = rng.integers(low, high, size=attrs["shape"], dtype=dtype)
        return integers
    with np.errstate(over="ignore"):  # bounds beyond the dtype's range give inf, as the kernels do
        return np.asarray(low + (high - low) * rng.random(attrs["shape"]), dtype=dtype)  # shape (): an array too


def seeded_normal(attrs: dict[str, Any]) -> np.ndarray:
    """The host samples of a seeded ``random_normal`` (its checked attrs), the same for every backend."""
    rng = seeded_generator(attrs["seed"])
    with np.errstate(over="ignore"):
        return np.asarray(attrs["mean"] + attrs["stddev"] * rng.standard_normal(attrs["shape"]), dtype=attrs["dtype"])


def _finite(op: str, name: str, value: Any) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise DTypeError(f"{op}: {name} must be a number, got {value!r}") from None
    if not math.isfinite(result):
        raise InvalidArgumentError(f"{op}: {name} must be finite, got {value!r}")
    return result


def _integral(op: str, name: str, value: Any) -> int:
    if not isinstance(value, bool | float):
        try:
            return operator.index(value)
        except TypeError:
            pass
    number = _finite(op, name, value)
    if not number.is_integer():
        raise InvalidArgumentError(f"{op}: {name} must be a whole number for an integer dtype, got {value!r}")
    return int(number)


def _seed(op: str, seed: Any) -> int | None:
    if seed is None:
        return None
    try:
        value = operator.index(seed)
    except TypeError:
        raise DTypeError(f"{op}: seed must be a non-negative int or None, got {seed!r}") from None
    if isinstance(seed, bool) or value < 0:
        raise InvalidArgumentError(f"{op}: seed must be a non-negative int or None, got {seed!r}")
    return value
