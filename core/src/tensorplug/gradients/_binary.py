"""Gradients of the broadcasting binary kernels; each is summed back to its input's shape."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._registry import GradientSpec
from tensorplug._tensor import Tensor
from tensorplug.ops import (
    add,
    cast,
    div,
    floor_div,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    mul,
    neg,
    pow,
    square,
    sub,
    sum_to_shape,
    tensor,
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


def grad_minimum(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """The gradient goes to ``a`` where a <= b (ties included), else to ``b``."""
    a, b = saved
    return (
        lambda: sum_to_shape(mul(dy, cast(less_equal(a, b), dy.dtype)), a.shape),
        lambda: sum_to_shape(mul(dy, cast(greater(a, b), dy.dtype)), b.shape),
    )


def grad_squared_difference(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """d(a-b)**2/da = 2(a-b); d/db = 2(b-a)."""
    a, b = saved
    return (
        lambda: sum_to_shape(mul(dy, mul(sub(a, b), 2.0)), a.shape),
        lambda: sum_to_shape(mul(dy, mul(sub(b, a), 2.0)), b.shape),
    )


def grad_atan2(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """d atan2(a, b)/da = b / (a² + b²); d/db = -a / (a² + b²)."""
    a, b = saved
    return (
        lambda: sum_to_shape(mul(dy, div(b, add(square(a), square(b)))), a.shape),
        lambda: sum_to_shape(neg(mul(dy, div(a, add(square(a), square(b))))), b.shape),
    )


def grad_prelu(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """dx = dy where x > 0, else dy * alpha; dalpha = dy * x where x <= 0, else 0 (as TensorFlow.js)."""
    x, alpha = saved
    positive = greater(x, 0)
    return (
        lambda: sum_to_shape(where(positive, dy, mul(dy, alpha)), x.shape),
        lambda: sum_to_shape(where(positive, zeros_like(dy), mul(dy, x)), alpha.shape),
    )


def grad_mod(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """d mod(a, b)/da = 1; d/db = -floor(a / b), a step function, so constant to autodiff (as TensorFlow.js)."""
    a, b = saved
    return (
        lambda: sum_to_shape(dy, a.shape),
        lambda: sum_to_shape(neg(mul(dy, tensor(floor_div(a, b)))), b.shape),  # tensor(...): a constant
    )


def grad_add_n(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[list[Tensor]]:
    """Each summand gets ``dy`` (a list, for the list input)."""
    (tensors,) = saved
    return ([dy for _ in tensors],)


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
    GradientSpec(K.MINIMUM, grad_minimum, inputs_to_save=AB),
    GradientSpec(K.SQUARED_DIFFERENCE, grad_squared_difference, inputs_to_save=AB),
    GradientSpec(K.ATAN2, grad_atan2, inputs_to_save=AB),
    GradientSpec(K.PRELU, grad_prelu, inputs_to_save=("x", "alpha")),
    GradientSpec(K.MOD, grad_mod, inputs_to_save=AB),
    GradientSpec(K.ADD_N, grad_add_n, inputs_to_save=("tensors",)),
    GradientSpec(K.SELECT, grad_select, inputs_to_save=("condition", "t", "e")),
    # Integer-valued or bool outputs: explicitly not differentiable.
    GradientSpec(K.FLOOR_DIV, None),
    GradientSpec(K.EQUAL, None),
    GradientSpec(K.NOT_EQUAL, None),
    GradientSpec(K.LESS, None),
    GradientSpec(K.LESS_EQUAL, None),
    GradientSpec(K.GREATER, None),
    GradientSpec(K.GREATER_EQUAL, None),
    GradientSpec(K.LOGICAL_AND, None),
    GradientSpec(K.LOGICAL_OR, None),
    GradientSpec(K.LOGICAL_XOR, None),
]
