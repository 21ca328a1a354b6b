"""Linear-algebra kernels."""

from __future__ import annotations

from typing import Any

import numpy as np


def batch_mat_mul(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    a, b = inputs["a"], inputs["b"]
    if attrs["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if attrs["transpose_b"]:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b)
