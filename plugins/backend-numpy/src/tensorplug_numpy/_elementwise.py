"""Elementwise kernels: unary (input ``x``) and broadcasting binary (inputs ``a``, ``b``).

Inputs arrive already promoted to one dtype by the core's ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug_numpy._factories import binary, quiet, unary


def _sigmoid(x: Any) -> Any:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # equal to 1 / (1 + exp(-x)), with no overflow


# -- elementwise unary ---------------------------------------------------------
neg = unary(np.negative)
exp = unary(quiet(np.exp))
log = unary(quiet(np.log))
sqrt = unary(quiet(np.sqrt))
square = unary(np.square)
tanh = unary(np.tanh)
sigmoid = unary(_sigmoid)
relu = unary(lambda x: np.maximum(x, 0))

# -- elementwise binary --------------------------------------------------------
add = binary(np.add)
sub = binary(np.subtract)
multiply = binary(np.multiply)
real_div = binary(quiet(np.true_divide))
pow_ = binary(quiet(np.power))
maximum = binary(np.maximum)
equal = binary(np.equal)
not_equal = binary(np.not_equal)
less = binary(np.less)
less_equal = binary(np.less_equal)
greater = binary(np.greater)
greater_equal = binary(np.greater_equal)
