"""Gradients of the broadcasting binary kernels; each is summed back to its input's shape.

A rule (``tensorplug.gradients.binary``) gives the gradient of each input as a formula of ``dy``, ``a`` and ``b``;
the rule sums it back to the input's shape and computes it only when that input needs a gradient.
"""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._runtime._registry import GradientSpec
from tensorplug._runtime._tensor import Tensor
from tensorplug.gradients._rules import binary
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


def grad_pow(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """d(a**b)/da = b * a**(b-1); d(a**b)/db = a**b * log(a), taken as 0 where a <= 0 (as TensorFlow.js)."""
    a, b, y = saved

    def db() -> Tensor:
        positive = greater(a, 0)
        log_a = where(positive, log(where(positive, a, 1.0)), zeros_like(a))
        return sum_to_shape(mul(dy, mul(y, log_a)), b.shape)

    return lambda: sum_to_shape(mul(dy, mul(b, pow(a, sub(b, 1.0)))), a.shape), db


def grad_prelu(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """dx = dy where x > 0, else dy * alpha; dalpha = dy * x where x <= 0, else 0 (as TensorFlow.js)."""
    x, alpha = saved
    positive = greater(x, 0)
    return (
        lambda: sum_to_shape(where(positive, dy, mul(dy, alpha)), x.shape),
        lambda: sum_to_shape(where(positive, zeros_like(dy), mul(dy, x)), alpha.shape),
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
    binary(K.ADD, lambda dy, a, b: dy, lambda dy, a, b: dy),
    binary(K.SUB, lambda dy, a, b: dy, lambda dy, a, b: neg(dy)),
    binary(K.MULTIPLY, lambda dy, a, b: mul(dy, b), lambda dy, a, b: mul(dy, a)),
    binary(K.REAL_DIV, lambda dy, a, b: div(dy, b), lambda dy, a, b: neg(div(mul(dy, a), square(b)))),
    GradientSpec(K.POW, grad_pow, inputs_to_save=AB, outputs_to_save=(0,)),
    # The gradient goes to a where a >= b (maximum) or a <= b (minimum), ties included, else to b.
    binary(
        K.MAXIMUM,
        lambda dy, a, b: mul(dy, cast(greater_equal(a, b), dy.dtype)),
        lambda dy, a, b: mul(dy, cast(less(a, b), dy.dtype)),
    ),
    binary(
        K.MINIMUM,
        lambda dy, a, b: mul(dy, cast(less_equal(a, b), dy.dtype)),
        lambda dy, a, b: mul(dy, cast(greater(a, b), dy.dtype)),
    ),
    # d(a-b)**2/da = 2(a-b); d/db = 2(b-a)
    binary(
        K.SQUARED_DIFFERENCE,
        lambda dy, a, b: mul(dy, mul(sub(a, b), 2.0)),
        lambda dy, a, b: mul(dy, mul(sub(b, a), 2.0)),
    ),
    # d atan2(a, b)/da = b / (a² + b²); d/db = -a / (a² + b²)
    binary(
        K.ATAN2,
        lambda dy, a, b: mul(dy, div(b, add(square(a), square(b)))),
        lambda dy, a, b: neg(mul(dy, div(a, add(square(a), square(b))))),
    ),
    GradientSpec(K.PRELU, grad_prelu, inputs_to_save=("x", "alpha")),
    # d mod(a, b)/da = 1; d/db = -floor(a / b), a step function, so constant to autodiff (as TensorFlow.js);
    # tensor(...) makes it a constant
    binary(K.MOD, lambda dy, a, b: dy, lambda dy, a, b: neg(mul(dy, tensor(floor_div(a, b))))),
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
