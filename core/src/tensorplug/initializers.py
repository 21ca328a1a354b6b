"""Weight initialisers: the standard starting values of a layer's weights, as ``torch.nn.init`` and
TensorFlow.js's ``tf.initializers`` have them.

Each function takes a shape and returns a new tensor on the active backend
(wrap it in ``tp.variable`` to train it). With a ``seed``, the random ones
give the same values on every backend (numpy, torch, dask): they are drawn on
the host by one counter-based generator, numpy's Philox keyed by the seed,
and stored on the active backend. ``seed=None`` draws fresh values on every
call with the backend's own random kernels.
``dtype`` is any float dtype (float32 by default).

Fans follow this project's layouts, where the last two axes of a weight are
its inputs and outputs:

- a dense weight is ``[in, out]`` (``x @ w``): fan_in = in, fan_out = out;
- a conv2d filter is ``[fh, fw, in, out]`` (``tp.conv2d``'s layout, as
  TensorFlow's): fan_in = fh * fw * in, fan_out = fh * fw * out; in general
  the leading axes are the receptive field, whose size multiplies both;
- a 1-D shape ``[n]`` has fan_in = fan_out = n; a scalar has 1 and 1.

(A ``tp.conv2d_transpose`` filter is ``[fh, fw, out, in]``: pass
``mode="fan_out"`` to the He and LeCun functions to scale it by its inputs.)

>>> import tensorplug as tp
>>> w = tp.variable(tp.initializers.he_normal((64, 128), seed=0), name="w")
>>> w.shape, w.dtype
((64, 128), 'float32')
>>> tp.initializers.fans((3, 3, 16, 32))
(144, 288)
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from tensorplug import ops as _ops
from tensorplug._runtime import _dtypes
from tensorplug._runtime._errors import DTypeError, InvalidArgumentError
from tensorplug._runtime._state import no_grad
from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import ones, random_normal, random_uniform, zeros
from tensorplug.ops._shapes import normalize_shape

__all__ = [
    "constant",
    "fans",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "ones",
    "random_normal",
    "random_uniform",
    "truncated_normal",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]

Mode = Literal["fan_in", "fan_out", "fan_avg"]
Distribution = Literal["truncated_normal", "normal", "uniform"]

TRUNCATED_STDDEV = 0.87962566103423978
"""The standard deviation of a standard normal truncated to [-2, 2]: ``variance_scaling`` divides by it so that a
truncated normal has the variance asked for (as Keras does)."""
_MAX_REDRAWS = 64
"""Rounds of redrawing in ``truncated_normal``: each leaves ~4.6 % of the values before it, so 64 is never reached."""


def fans(shape: Any) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of ``shape`` in this project's layouts (see the module docstring).

    >>> fans((784, 128)), fans((5, 5, 1, 8)), fans((10,)), fans(())
    ((784, 128), (25, 200), (10, 10), (1, 1))
    """
    dims = normalize_shape("initializers.fans", shape)
    if len(dims) == 0:
        return 1, 1
    if len(dims) == 1:
        return dims[0], dims[0]
    receptive = math.prod(dims[:-2])
    return dims[-2] * receptive, dims[-1] * receptive


def truncated_normal(
    shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = "float32", seed: int | None = None
) -> Tensor:
    """Normal samples with values more than two ``stddev`` from ``mean`` drawn again, as TensorFlow's
    ``truncated_normal``: every value lies in [mean - 2 stddev, mean + 2 stddev], and their standard deviation is
    about 0.88 ``stddev``.

    >>> import tensorplug as tp
    >>> x = tp.initializers.truncated_normal((1000,), stddev=0.1, seed=0)
    >>> bool(tp.max(tp.abs(x)).item() <= 0.2)
    True
    """
    target = _float_dtype("truncated_normal", dtype)
    with no_grad():
        x = random_normal(shape, mean, stddev, target, seed)  # checks mean and stddev
        bound = 2.0 * float(stddev)
        for round_ in range(1, _MAX_REDRAWS + 1):
            outside = _ops.greater(_ops.abs(x - mean), bound)
            if not _ops.any(outside).item():
                return x
            redraw = random_normal(x.shape, mean, stddev, target, _derived_seed(seed, round_))
            x = _ops.where(outside, redraw, x)
    raise InvalidArgumentError(  # a probability below 1e-80
        f"initializers.truncated_normal: values stayed beyond two stddev after {_MAX_REDRAWS} draws"
    )


def variance_scaling(
    shape: Any,
    scale: float = 1.0,
    mode: Mode = "fan_in",
    distribution: Distribution = "truncated_normal",
    dtype: Any = "float32",
    seed: int | None = None,
) -> Tensor:
    """Samples of variance ``scale / n``, with n the fan that ``mode`` names (``fan_avg``: their mean), as
    TensorFlow.js's ``varianceScaling``: a ``uniform`` on [-limit, limit] with limit = sqrt(3 scale / n), a
    ``normal`` of stddev sqrt(scale / n), or a ``truncated_normal`` whose stddev is corrected for the truncation.
    The named initialisers below are this with a given scale, mode and distribution.

    >>> import tensorplug as tp
    >>> tp.initializers.variance_scaling((256, 128), 2.0, "fan_in", "normal", seed=0).shape
    (256, 128)
    """
    op = "variance_scaling"
    target = _float_dtype(op, dtype)
    fan_in, fan_out = fans(shape)
    counts = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}
    if mode not in counts:
        raise InvalidArgumentError(f"initializers.{op}: mode must be 'fan_in', 'fan_out' or 'fan_avg', got {mode!r}")
    n = counts[mode]
    if n == 0:
        dims = normalize_shape(f"initializers.{op}", shape)
        raise InvalidArgumentError(f"initializers.{op}: a weight of shape {dims} has {mode} 0: nothing to scale by")
    try:
        variance = float(scale) / n
    except (TypeError, ValueError):
        raise DTypeError(f"initializers.{op}: scale must be a number, got {scale!r}") from None
    if not (math.isfinite(variance) and variance > 0):
        raise InvalidArgumentError(f"initializers.{op}: scale must be a positive finite number, got {scale!r}")
    if distribution == "uniform":
        limit = math.sqrt(3.0 * variance)
        return random_uniform(shape, -limit, limit, target, seed)
    if distribution == "normal":
        return random_normal(shape, 0.0, math.sqrt(variance), target, seed)
    if distribution == "truncated_normal":
        return truncated_normal(shape, 0.0, math.sqrt(variance) / TRUNCATED_STDDEV, target, seed)
    raise InvalidArgumentError(
        f"initializers.{op}: distribution must be 'truncated_normal', 'normal' or 'uniform', got {distribution!r}"
    )


# -- Glorot (Xavier), He (Kaiming), LeCun ---------------------------------------------------------------------------


def glorot_uniform(shape: Any, gain: float = 1.0, dtype: Any = "float32", seed: int | None = None) -> Tensor:
    """Uniform on [-limit, limit], limit = gain * sqrt(6 / (fan_in + fan_out)), as ``torch.nn.init.xavier_uniform_``
    (Glorot & Bengio, 2010): for tanh and sigmoid layers."""
    return variance_scaling(shape, gain * gain, "fan_avg", "uniform", dtype, seed)


def glorot_normal(shape: Any, gain: float = 1.0, dtype: Any = "float32", seed: int | None = None) -> Tensor:
    """Normal with stddev = gain * sqrt(2 / (fan_in + fan_out)), as ``torch.nn.init.xavier_normal_``."""
    return variance_scaling(shape, gain * gain, "fan_avg", "normal", dtype, seed)


def he_uniform(
    shape: Any, negative_slope: float = 0.0, mode: Mode = "fan_in", dtype: Any = "float32", seed: int | None = None
) -> Tensor:
    """Uniform on [-limit, limit], limit = sqrt(6 / ((1 + negative_slope**2) fan)), as
    ``torch.nn.init.kaiming_uniform_(nonlinearity="leaky_relu", a=negative_slope)`` (He et al., 2015): for ReLU
    layers (``negative_slope=0``, the default) and leaky ReLU ones."""
    return variance_scaling(shape, _relu_scale(negative_slope), mode, "uniform", dtype, seed)


def he_normal(
    shape: Any, negative_slope: float = 0.0, mode: Mode = "fan_in", dtype: Any = "float32", seed: int | None = None
) -> Tensor:
    """Normal with stddev = sqrt(2 / ((1 + negative_slope**2) fan)), as ``torch.nn.init.kaiming_normal_``."""
    return variance_scaling(shape, _relu_scale(negative_slope), mode, "normal", dtype, seed)


def lecun_uniform(shape: Any, mode: Mode = "fan_in", dtype: Any = "float32", seed: int | None = None) -> Tensor:
    """Uniform on [-limit, limit], limit = sqrt(3 / fan_in) (LeCun et al., 1998): for SELU layers."""
    return variance_scaling(shape, 1.0, mode, "uniform", dtype, seed)


def lecun_normal(shape: Any, mode: Mode = "fan_in", dtype: Any = "float32", seed: int | None = None) -> Tensor:
    """Normal with stddev = sqrt(1 / fan_in)."""
    return variance_scaling(shape, 1.0, mode, "normal", dtype, seed)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


# -- constants ------------------------------------------------------------------------------------------------------


def constant(shape: Any, value: float, dtype: Any = "float32") -> Tensor:
    """Every element ``value`` (a bias that starts at 0.1, say); zeros and ones are ``tp.zeros`` and ``tp.ones``."""
    return _ops.fill(shape, value, _dtypes.check_dtype(dtype, "initializers.constant()"))


def _float_dtype(op: str, dtype: Any) -> str:
    target = _dtypes.check_dtype(dtype, f"initializers.{op}()")
    if not _dtypes.is_floating(target):
        raise DTypeError(f"initializers.{op}: dtype must be a float dtype (float32 or float64), got {target!r}")
    return target


def _relu_scale(negative_slope: float) -> float:
    """2 / (1 + a**2): the gain squared of a (leaky) ReLU, as ``torch.nn.init.calculate_gain("leaky_relu", a)``."""
    return 2.0 / (1.0 + float(negative_slope) ** 2)


def _derived_seed(seed: int | None, round_: int) -> int | None:
    """The seed of redraw ``round_`` of ``seed``: mixed, so that it never equals another call's seed stream."""
    if seed is None:
        return None
    return int(np.random.SeedSequence([seed, round_]).generate_state(1)[0])
