"""Gradients of the reductions (dy broadcast back over the reduced axes) and of the scans.

Products are differentiated without dividing by the input, so that they are
right where it has zeros: Prod through the product of the other elements
(exclusive cumulative products from both sides), Cumprod by the first-zero
split described at :func:`grad_cumprod`.
"""

from __future__ import annotations

import math
from typing import Any

from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import (
    broadcast_to,
    cast,
    cumprod,
    cumsum,
    div,
    equal,
    mul,
    reshape,
    transpose,
    where,
    zeros_like,
)
from tensorplug.ops import sum as sum_


def _expand(dy: Tensor, x_shape: tuple[int, ...], attrs: dict[str, Any]) -> Tensor:
    """``dy`` reshaped to keep the reduced axes (as size 1) and broadcast to the input's shape.

    When the reduced axes are the leading ones (a full reduction, a sum over the batch), broadcasting alone
    puts ``dy`` back in place: no Reshape kernel.
    """
    axes = attrs["axis"]
    if attrs["keep_dims"] or tuple(axes) == tuple(range(len(axes))):
        return broadcast_to(dy, x_shape)
    kept = tuple(1 if i in axes else d for i, d in enumerate(x_shape))
    return broadcast_to(reshape(dy, kept), x_shape)


def grad_sum(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    (x,) = saved
    return (_expand(dy, x.shape, attrs),)


def grad_mean(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    (x,) = saved
    count = math.prod(x.shape[a] for a in attrs["axis"])
    return (div(_expand(dy, x.shape, attrs), float(count)),)


def grad_extremum(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """Max and Min: every element equal to the extremum gets the gradient (ties each get all of it, as TF.js)."""
    x, y = saved
    mask = cast(equal(x, _expand(y, x.shape, attrs)), dy.dtype)
    return (mul(_expand(dy, x.shape, attrs), mask),)


def grad_prod(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """d prod(x) / dx_k is the product of the other elements: exclusive cumprods from the left and the right."""
    (x,) = saved
    axes = attrs["axis"]
    if not axes:
        return (reshape(dy, x.shape),)
    kept = [i for i in range(x.ndim) if i not in axes]
    perm = kept + list(axes)
    moved_shape = tuple(x.shape[i] for i in perm)
    flat = reshape(transpose(x, perm), (*moved_shape[: len(kept)], math.prod(x.shape[a] for a in axes)))
    last = flat.ndim - 1
    others = mul(cumprod(flat, last, exclusive=True), cumprod(flat, last, exclusive=True, reverse=True))
    inverse = [perm.index(i) for i in range(x.ndim)]
    others = transpose(reshape(others, moved_shape), inverse)
    return (mul(_expand(dy, x.shape, attrs), others),)


def grad_cumsum(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """Each input feeds the outputs after it (before it, reversed): sum dy the other way round."""
    return (cumsum(dy, attrs["axis"], attrs["exclusive"], not attrs["reverse"]),)


def grad_cumprod(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """Exact where x has zeros, to second order.

    dx_k sums dy_i times the product of the elements of y_i other than x_k,
    over the outputs y_i that x_k feeds. In scan order: before the first
    zero of x, that is ``sum(dy_i * y_i) / x_k``; at the first zero, the
    same sum with y recomputed with that zero replaced by 1; after it, each
    such product holds the first zero, so dx_k is that zero times the
    gradient at x with the zero replaced by 1 (0 in value, but with the right
    derivative with respect to the zero).
    """
    x, y = saved
    return (_cumprod_grad(x, y, dy, attrs, exact_after=True),)


def _cumprod_grad(x: Tensor, y: Tensor, dy: Tensor, attrs: dict[str, Any], exact_after: bool) -> Tensor:
    axis, exclusive, reverse = attrs["axis"], attrs["exclusive"], attrs["reverse"]

    def over_fed_outputs(t: Tensor) -> Tensor:
        """For each position, the sum of ``t`` over the outputs that its input feeds."""
        return cumsum(t, axis, exclusive, not reverse)

    is_zero = cast(equal(x, 0.0), "int32")
    zeros_so_far = cumsum(is_zero, axis, reverse=reverse)
    before = equal(zeros_so_far, 0)
    first = equal(mul(zeros_so_far, is_zero), 1)
    before_grad = div(over_fed_outputs(mul(dy, y)), where(before, x, 1.0))
    x1 = where(first, 1.0, x)
    y1 = cumprod(x1, axis, exclusive, reverse)
    first_grad = over_fed_outputs(mul(dy, y1))
    if exact_after:
        first_zero = sum_(where(first, x, 0.0), axis, keepdims=True)
        after_grad = mul(first_zero, _cumprod_grad(x1, y1, dy, attrs, exact_after=False))
    else:
        after_grad = zeros_like(x)
    return where(before, before_grad, where(first, first_grad, after_grad))
