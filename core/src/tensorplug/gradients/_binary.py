"""Gradient functions of the binary kernels whose gradient is more than a formula per input.

The simple ones are formulas of ``dy``, ``a`` and ``b`` on their kernel reference entries, made into rules
(``tensorplug.gradients.binary``) that sum each gradient back to its input's shape and compute it only when that
input needs a gradient.
"""

from __future__ import annotations

from typing import Any

from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import (
    greater,
    log,
    mul,
    pow,
    sub,
    sum_to_shape,
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
