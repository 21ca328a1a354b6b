"""Linear-algebra kernels. Einsum is missing (not in the standard): it runs on the fallback backend."""

from __future__ import annotations

from typing import Any


def batch_mat_mul(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    xp, a, b = backend.xp, inputs["a"], inputs["b"]
    if attrs["transpose_a"]:
        a = xp.matrix_transpose(a)
    if attrs["transpose_b"]:
        b = xp.matrix_transpose(b)
    return xp.matmul(a, b)
