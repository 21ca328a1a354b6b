"""Gradient of BatchMatMul (2-D, batched, broadcast batch axes, transposed operands)."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._registry import GradientSpec
from tensorplug._tensor import Tensor
from tensorplug.ops import matmul, sum_to_shape


def grad_batch_mat_mul(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """Lazy entries: the gradient of a constant operand (a batch of inputs, say) is never computed."""
    a, b = saved
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]

    def da() -> Tensor:
        if not ta:
            return sum_to_shape(matmul(dy, b, transpose_b=not tb), a.shape)
        return sum_to_shape(matmul(b, dy, transpose_a=tb, transpose_b=True), a.shape)

    def db() -> Tensor:
        if not tb:
            return sum_to_shape(matmul(a, dy, transpose_a=not ta), b.shape)
        return sum_to_shape(matmul(dy, a, transpose_a=True, transpose_b=ta), b.shape)

    return da, db


GRADIENTS = [GradientSpec(K.BATCH_MAT_MUL, grad_batch_mat_mul, inputs_to_save=("a", "b"))]
