"""Elementwise binary kernels, broadcasting (inputs ``a``, ``b``; already promoted to one dtype by the ops).

Arithmetic is quiet (``binary``: inf - inf gives NaN without a warning); comparisons, logic and the
selections Maximum and Minimum cannot trigger NumPy's floating-point checks and run as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug_numpy._factories import binary, exact_binary, quiet


def _squared_difference(a: Any, b: Any) -> Any:
    return np.square(np.subtract(a, b))


def _floor_div(a: Any, b: Any) -> Any:
    """Integers as Python's //, x // 0 giving 0; floats as TensorFlow.js, floor(a / b) (1.0 // 0.1 is 10, not 9)."""
    if a.dtype.kind == "f":
        return np.floor(np.true_divide(a, b))
    return np.floor_divide(a, b)


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
real_div = binary(np.true_divide)
pow_ = binary(_power)
maximum = exact_binary(np.maximum)  # NaN propagates; a selection raises no floating-point flag
minimum = exact_binary(np.minimum)
squared_difference = binary(_squared_difference)
atan2 = binary(np.arctan2)
floor_div = binary(_floor_div)
mod = binary(np.mod)  # the sign of the divisor, as Python's %; integer x % 0 is 0


@quiet
def prelu(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, alpha = inputs["x"], inputs["alpha"]
    return np.where(x < 0, x * alpha, x)


@quiet
def add_n(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    tensors = inputs["tensors"]
    total = np.array(tensors[0], copy=True)
    for t in tensors[1:]:
        np.add(total, t, out=total)
    return total


# -- comparisons and logic: bool results ---------------------------------------------
equal = exact_binary(np.equal)
not_equal = exact_binary(np.not_equal)
less = exact_binary(np.less)
less_equal = exact_binary(np.less_equal)
greater = exact_binary(np.greater)
greater_equal = exact_binary(np.greater_equal)
logical_and = exact_binary(np.logical_and)
logical_or = exact_binary(np.logical_or)
logical_xor = exact_binary(np.logical_xor)
