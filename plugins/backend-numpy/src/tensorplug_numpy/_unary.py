"""Elementwise unary kernels (input ``x``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug_numpy._factories import quiet, unary


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
