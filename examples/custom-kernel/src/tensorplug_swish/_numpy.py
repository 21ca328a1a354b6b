"""The NumPy kernel: the kernel convention, raw arrays in and out (imported at the first call on numpy)."""

from __future__ import annotations

from typing import Any

import numpy as np


def swish(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    beta = x.dtype.type(attrs["beta"])  # a float32 x stays float32
    # sigmoid(z) written so that exp never overflows: exp(-|z|) is at most 1.
    z = beta * x
    e = np.exp(-np.abs(z))
    sigmoid = np.where(z >= 0, 1 / (1 + e), e / (1 + e))
    return x * sigmoid
