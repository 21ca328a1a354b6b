"""Gradients of the shape, dtype and creation kernels."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._runtime._dtypes import is_floating
from tensorplug._runtime._registry import GradientSpec
from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import cast, reshape, sum_to_shape, transpose, zeros_like


def grad_transpose(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    perm = attrs["perm"]
    inverse = tuple(sorted(range(len(perm)), key=lambda i: perm[i]))
    return (transpose(dy, inverse),)


def grad_cast(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor | None]:
    """Float to float casts pass the gradient through (cast back); integer sources get none."""
    (x,) = saved
    return (cast(dy, x.dtype) if is_floating(x.dtype) else None,)


GRADIENTS = [
    GradientSpec(K.RESHAPE, lambda dy, saved, attrs: (reshape(dy, saved[0].shape),), inputs_to_save=("x",)),
    GradientSpec(K.TRANSPOSE, grad_transpose),
    GradientSpec(K.BROADCAST_TO, lambda dy, saved, attrs: (sum_to_shape(dy, saved[0].shape),), inputs_to_save=("x",)),
    GradientSpec(K.CAST, grad_cast, inputs_to_save=("x",)),
    # The output does not change with the input: a zero gradient (lazy, so usually never built).
    GradientSpec(K.ZEROS_LIKE, lambda dy, saved, attrs: (lambda: zeros_like(dy),)),
    GradientSpec(K.ONES_LIKE, lambda dy, saved, attrs: (lambda: zeros_like(dy),)),
    # Creation kernels and integer-valued outputs: not differentiable.
    GradientSpec(K.FILL, None),
    GradientSpec(K.RANGE, None),
    GradientSpec(K.ONE_HOT, None),
]
