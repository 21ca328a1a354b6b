"""Gradients of the reductions: broadcast dy back over the reduced axes."""

from __future__ import annotations

import math
from typing import Any

from tensorplug import kernel_names as K
from tensorplug._registry import GradientSpec
from tensorplug._tensor import Tensor
from tensorplug.ops import broadcast_to, cast, div, equal, mul, reshape


def _expand(dy: Tensor, x_shape: tuple[int, ...], attrs: dict[str, Any]) -> Tensor:
    """``dy`` reshaped to keep the reduced axes (as size 1) and broadcast to the input's shape."""
    kept = tuple(1 if i in attrs["axis"] else d for i, d in enumerate(x_shape))
    return broadcast_to(reshape(dy, kept), x_shape)


def grad_sum(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    (x,) = saved
    return (_expand(dy, x.shape, attrs),)


def grad_mean(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    (x,) = saved
    count = math.prod(x.shape[a] for a in attrs["axis"])
    return (div(_expand(dy, x.shape, attrs), float(count)),)


def grad_max(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """The gradient goes to every element equal to the maximum (ties share it, as TensorFlow.js)."""
    x, y = saved
    mask = cast(equal(x, _expand(y, x.shape, attrs)), dy.dtype)
    return (mul(_expand(dy, x.shape, attrs), mask),)


GRADIENTS = [
    GradientSpec(K.SUM, grad_sum, inputs_to_save=("x",)),
    GradientSpec(K.MEAN, grad_mean, inputs_to_save=("x",)),
    GradientSpec(K.MAX, grad_max, inputs_to_save=("x",), outputs_to_save=(0,)),
]
