"""Elementwise binary kernels, broadcasting (inputs ``a``, ``b``; already promoted to one dtype by the ops)."""

from __future__ import annotations

import numpy as np

from tensorplug_numpy._factories import binary, quiet

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
