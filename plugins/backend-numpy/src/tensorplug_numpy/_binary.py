"""Elementwise binary kernels, broadcasting (inputs ``a``, ``b``; already promoted to one dtype by the ops)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug_numpy._factories import binary, quiet


@quiet
def _squared_difference(a: Any, b: Any) -> Any:
    return np.square(np.subtract(a, b))


@quiet
def _floor_div(a: Any, b: Any) -> Any:
    """Integers as Python's //, x // 0 giving 0; floats as TensorFlow.js, floor(a / b) (1.0 // 0.1 is 10, not 9)."""
    if a.dtype.kind == "f":
        return np.floor(np.true_divide(a, b))
    return np.floor_divide(a, b)


@quiet
def _power(a: Any, b: Any) -> Any:
    """np.power, except that an exponent of exactly 0.5 follows C's pow as torch and TensorFlow.js do: NumPy takes
    sqrt there, which gives NaN for -inf (pow gives inf) and -0.0 for -0.0 (pow gives 0.0)."""
    out = np.power(a, b)
    if b.ndim == 0 and a.dtype.kind == "f" and b == 0.5 and a.size:
        return np.where(np.isneginf(a), np.inf, out + 0.0)  # -0.0 + 0.0 is 0.0; a 0-d a gives a numpy scalar out
    return out


# -- arithmetic ------------------------------------------------------------------
add = binary(np.add)
sub = binary(np.subtract)
multiply = binary(np.multiply)
real_div = binary(quiet(np.true_divide))
pow_ = binary(_power)
maximum = binary(np.maximum)
minimum = binary(np.minimum)
squared_difference = binary(_squared_difference)
atan2 = binary(np.arctan2)
floor_div = binary(_floor_div)
mod = binary(quiet(np.mod))  # the sign of the divisor, as Python's %; integer x % 0 is 0


@quiet
def prelu(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, alpha = inputs["x"], inputs["alpha"]
    return np.where(x < 0, x * alpha, x)


def add_n(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    tensors = inputs["tensors"]
    total = np.array(tensors[0], copy=True)
    for t in tensors[1:]:
        np.add(total, t, out=total)
    return total


# -- comparisons and logic: bool results ---------------------------------------------
equal = binary(np.equal)
not_equal = binary(np.not_equal)
less = binary(np.less)
less_equal = binary(np.less_equal)
greater = binary(np.greater)
greater_equal = binary(np.greater_equal)
logical_and = binary(np.logical_and)
logical_or = binary(np.logical_or)
logical_xor = binary(np.logical_xor)
