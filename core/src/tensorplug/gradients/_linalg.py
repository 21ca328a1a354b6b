"""Gradient of BatchMatMul (2-D, batched, broadcast batch axes, transposed operands)."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._registry import GradientSpec
from tensorplug._tensor import Tensor
from tensorplug.ops import matmul, sum_to_shape


def grad_batch_mat_mul(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor, Tensor]:
    a, b = saved
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if not ta and not tb:
        da, db = matmul(dy, b, transpose_b=True), matmul(a, dy, transpose_a=True)
    elif not ta and tb:
        da, db = matmul(dy, b), matmul(dy, a, transpose_a=True)
    elif ta and not tb:
        da, db = matmul(b, dy, transpose_b=True), matmul(a, dy)
    else:
        da, db = matmul(b, dy, transpose_a=True, transpose_b=True), matmul(dy, a, transpose_a=True, transpose_b=True)
    return sum_to_shape(da, a.shape), sum_to_shape(db, b.shape)


GRADIENTS = [GradientSpec(K.BATCH_MAT_MUL, grad_batch_mat_mul, inputs_to_save=("a", "b"))]
