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

# Each entry is a zero-argument callable: the tape calls only those whose input needs a gradient.


def grad_add(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    a, b = saved
    return lambda: sum_to_shape(dy, a.shape), lambda: sum_to_shape(dy, b.shape)


def grad_sub(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    a, b = saved
    return lambda: sum_to_shape(dy, a.shape), lambda: sum_to_shape(neg(dy), b.shape)


def grad_multiply(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    a, b = saved
    return lambda: sum_to_shape(mul(dy, b), a.shape), lambda: sum_to_shape(mul(dy, a), b.shape)


def grad_real_div(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    a, b = saved
    return (
        lambda: sum_to_shape(div(dy, b), a.shape),
        lambda: sum_to_shape(neg(div(mul(dy, a), square(b))), b.shape),
    )


def grad_pow(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """d(a**b)/da = b * a**(b-1); d(a**b)/db = a**b * log(a), taken as 0 where a <= 0 (as TensorFlow.js)."""
    a, b, y = saved

    def db() -> Tensor:
        positive = greater(a, 0)
        log_a = where(positive, log(where(positive, a, 1.0)), zeros_like(a))
        return sum_to_shape(mul(dy, mul(y, log_a)), b.shape)

    return lambda: sum_to_shape(mul(dy, mul(b, pow(a, sub(b, 1.0)))), a.shape), db


def grad_maximum(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """The gradient goes to ``a`` where a >= b (ties included), else to ``b``."""
    a, b = saved
    return (
        lambda: sum_to_shape(mul(dy, cast(greater_equal(a, b), dy.dtype)), a.shape),
        lambda: sum_to_shape(mul(dy, cast(less(a, b), dy.dtype)), b.shape),
    )


def grad_select(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[None, Any, Any]:
    condition, t, e = saved
    return (
        None,
        lambda: sum_to_shape(where(condition, dy, zeros_like(dy)), t.shape),
        lambda: sum_to_shape(where(condition, zeros_like(dy), dy), e.shape),
    )


GRADIENTS = [
    GradientSpec(K.ADD, grad_add, inputs_to_save=AB),
    GradientSpec(K.SUB, grad_sub, inputs_to_save=AB),
    GradientSpec(K.MULTIPLY, grad_multiply, inputs_to_save=AB),
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
