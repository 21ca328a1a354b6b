"""Gradients of the broadcasting binary kernels; each is summed back to its input's shape."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._registry import GradientSpec
from tensorplug._tensor import Tensor
from tensorplug.ops import (
    cast,
    div,
    greater,
    greater_equal,
    less,
    log,
    mul,
    neg,
    pow,
    square,
    sub,
    sum_to_shape,
    where,
    zeros_like,
)

AB = ("a", "b")


def grad_real_div(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor, Tensor]:
    a, b = saved
    da = div(dy, b)
    db = neg(div(mul(dy, a), square(b)))
    return sum_to_shape(da, a.shape), sum_to_shape(db, b.shape)


def grad_pow(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor, Tensor]:
    """d(a**b)/da = b * a**(b-1); d(a**b)/db = a**b * log(a), taken as 0 where a <= 0 (as TensorFlow.js)."""
    a, b, y = saved
    da = mul(dy, mul(b, pow(a, sub(b, 1.0))))
    positive = greater(a, 0)
    log_a = where(positive, log(where(positive, a, 1.0)), zeros_like(a))
    db = mul(dy, mul(y, log_a))
    return sum_to_shape(da, a.shape), sum_to_shape(db, b.shape)


def grad_maximum(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor, Tensor]:
    """The gradient goes to ``a`` where a >= b (ties included), else to ``b``."""
    a, b = saved
    da = mul(dy, cast(greater_equal(a, b), dy.dtype))
    db = mul(dy, cast(less(a, b), dy.dtype))
    return sum_to_shape(da, a.shape), sum_to_shape(db, b.shape)


def grad_select(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[None, Tensor, Tensor]:
    condition, t, e = saved
    zeros = zeros_like(dy)
    return None, sum_to_shape(where(condition, dy, zeros), t.shape), sum_to_shape(where(condition, zeros, dy), e.shape)


GRADIENTS = [
    GradientSpec(
        K.ADD,
        lambda dy, saved, attrs: (sum_to_shape(dy, saved[0].shape), sum_to_shape(dy, saved[1].shape)),
        inputs_to_save=AB,
    ),
    GradientSpec(
        K.SUB,
        lambda dy, saved, attrs: (sum_to_shape(dy, saved[0].shape), sum_to_shape(neg(dy), saved[1].shape)),
        inputs_to_save=AB,
    ),
    GradientSpec(
        K.MULTIPLY,
        lambda dy, saved, attrs: (
            sum_to_shape(mul(dy, saved[1]), saved[0].shape),
            sum_to_shape(mul(dy, saved[0]), saved[1].shape),
        ),
        inputs_to_save=AB,
    ),
    GradientSpec(K.REAL_DIV, grad_real_div, inputs_to_save=AB),
    GradientSpec(K.POW, grad_pow, inputs_to_save=AB, outputs_to_save=(0,)),
    GradientSpec(K.MAXIMUM, grad_maximum, inputs_to_save=AB),
    GradientSpec(K.SELECT, grad_select, inputs_to_save=("condition", "t", "e")),
    # Comparisons have bool outputs: explicitly not differentiable.
    GradientSpec(K.EQUAL, None),
    GradientSpec(K.NOT_EQUAL, None),
    GradientSpec(K.LESS, None),
    GradientSpec(K.LESS_EQUAL, None),
    GradientSpec(K.GREATER, None),
    GradientSpec(K.GREATER_EQUAL, None),
]
