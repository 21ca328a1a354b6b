"""Linear-algebra kernels."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug_numpy._factories import quiet


@quiet  # inf * 0 gives NaN, as the contract says
def batch_mat_mul(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    a, b = inputs["a"], inputs["b"]
    if attrs["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if attrs["transpose_b"]:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b)


@quiet  # inf * 0 gives NaN, as the contract says
def einsum(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    # The op hands over an explicit equation ("ij,jk->ik": no ellipsis, no implicit output) and one dtype.
    return np.einsum(attrs["equation"], *inputs["tensors"], optimize=True)
