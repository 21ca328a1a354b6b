"""Functions and constants that the unary kernels' gradients use.

Each gradient is stated on the kernel's reference entry: a formula of ``dy`` and the input ``x`` or the output
``y`` (made into a rule, ``tensorplug.gradients.unary``), which may call a function here where the formula would
not read well in one line; kernels whose gradient reads attrs name a ``grad(dy, saved, attrs)`` function here.
Every one is written with ops, so that it can be differentiated again.
"""

from __future__ import annotations

import math
from typing import Any

from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import (
    add,
    exp,
    greater,
    greater_equal,
    less_equal,
    mul,
    square,
    step,
    where,
)

# TensorFlow.js's selu constants (as the numpy kernel's).
SELU_SCALE = 1.0507009873554804934193349852946
SELU_SCALE_ALPHA = 1.7580993408473768599402175208123
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def grad_relu(dy: Tensor, x: Tensor) -> Tensor:
    """dy times the step function of x, as TensorFlow.js: a multiplication by a 0/1 mask, not a select (NumPy's
    ``where`` costs 9x a multiplication on a random mask: 87 vs 10 µs for 128x256 float32), so an upstream NaN
    still propagates where x <= 0, and a NaN x gives a NaN gradient. The mask is one Step kernel, not a
    comparison and a cast: one kernel fewer per layer in backprop."""
    return mul(dy, step(x))


def grad_relu6(dy: Tensor, x: Tensor) -> Tensor:
    """dy where 0 < x <= 6 (as TensorFlow.js), else 0."""
    return where(greater(x, 0), where(less_equal(x, 6), dy, 0.0), 0.0)


def grad_clip_by_value(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """dy where clip_value_min <= x <= clip_value_max (bounds included, as TensorFlow.js), else 0."""
    (x,) = saved
    inside = where(less_equal(x, attrs["clip_value_max"]), dy, 0.0)
    return (where(greater_equal(x, attrs["clip_value_min"]), inside, 0.0),)


def grad_leaky_relu(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    (x,) = saved
    return (where(greater(x, 0), dy, mul(dy, attrs["alpha"])),)


def grad_elu(dy: Tensor, y: Tensor) -> Tensor:
    """From the output y: dy where y > 0, else dy * (y + 1) (= dy * e**x)."""
    return where(greater(y, 0), dy, mul(dy, add(y, 1.0)))


def grad_selu(dy: Tensor, x: Tensor) -> Tensor:
    return where(greater(x, 0), mul(dy, SELU_SCALE), mul(dy, mul(exp(x), SELU_SCALE_ALPHA)))


def grad_rsqrt(dy: Tensor, y: Tensor) -> Tensor:
    """d(x**-1/2)/dx = -y**3 / 2, from the output y."""
    return mul(dy, mul(square(y), mul(y, -0.5)))
