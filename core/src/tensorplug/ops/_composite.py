"""Composite ops: written entirely with other ops, no kernel of their own."""

from __future__ import annotations

import math
from typing import Any

from tensorplug._runtime._errors import DTypeError, InvalidArgumentError, ShapeError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._args import check_float
from tensorplug.ops._binary import add, div, mul, pow, sub, where
from tensorplug.ops._convert import as_tensor
from tensorplug.ops._random import random_uniform
from tensorplug.ops._reduction import max, min, sum
from tensorplug.ops._shape import reshape
from tensorplug.ops._shapes import normalize_axes, normalize_shape
from tensorplug.ops._unary import abs, sqrt, square

__all__ = ["dropout", "moving_average", "norm"]


def moving_average(
    v: Any, x: Any, decay: float | Tensor, step: int | Tensor | None = None, zero_debias: bool = True
) -> Tensor:
    """The exponential moving average update of ``v`` towards ``x``, as TensorFlow.js's ``movingAverage``.

    Returns ``v + (x - v) * (1 - decay)``; with ``zero_debias`` (the default)
    the update is divided by ``1 - decay ** step`` to undo the bias towards
    the zero initial value, and ``step`` (counting from 1) is required.

    >>> import tensorplug as tp
    >>> tp.moving_average(tp.tensor([0.0]), tp.tensor([1.0]), 0.5, step=1).tolist()
    [1.0]
    """
    v = as_tensor(v)
    check_float("moving_average", v)  # decay and step become v's dtype: an integer v would truncate them
    for name, value in (("decay", decay), ("step", 1 if step is None else step)):
        if not isinstance(value, Tensor | int | float) or isinstance(value, bool):
            raise DTypeError(
                f"moving_average: {name} must be a number or a tensor, got {value!r} ({type(value).__name__}); "
                f"v is {describe(v)}"
            )
    update = mul(sub(x, v), sub(1.0, decay))
    if zero_debias:
        if step is None:
            raise InvalidArgumentError(
                f"moving_average: zero_debias=True needs the step (counting from 1), got step=None for v {describe(v)}"
            )
        update = div(update, sub(1.0, pow(as_tensor(decay, v.dtype), as_tensor(step, v.dtype))))
    return add(v, update)


def norm(x: Any, ord: float | str = "euclidean", axis: Any = None, keepdims: bool = False) -> Tensor:
    """Vector or matrix norm, as TensorFlow.js's ``norm``.

    With ``axis`` None or one axis: a vector norm (``ord`` "euclidean"/"fro"/2,
    1, inf, -inf, or any p > 0). With two axes: a matrix norm ("euclidean"/
    "fro", 1: largest column sum, inf: largest row sum). The Euclidean norm's
    gradient is NaN at the zero vector (tensorplug-grads-extra offers a safe one).

    >>> import tensorplug as tp
    >>> tp.norm(tp.tensor([3.0, 4.0])).item()
    5.0
    """
    t = as_tensor(x)
    check_float("norm", t)
    axes = normalize_axes("norm", axis, t.ndim) if axis is not None else tuple(range(t.ndim))
    if axis is None or len(axes) == 1:
        return _vector_norm(t, ord, axes, keepdims)
    if len(axes) != 2:
        raise ShapeError(f"norm: axis must name one or two axes of {describe(t)}, got {axis!r}")
    if ord in ("euclidean", "fro"):
        return sqrt(sum(square(t), axes, keepdims))
    rows, cols = _matrix_axes(axis, t.ndim)
    if ord == 1:
        column_sums = sum(abs(t), rows, keepdims=True)
        return _squeeze_axes(max(column_sums, cols, keepdims=True), axes, keepdims)
    if ord == math.inf:
        row_sums = sum(abs(t), cols, keepdims=True)
        return _squeeze_axes(max(row_sums, rows, keepdims=True), axes, keepdims)
    raise InvalidArgumentError(f"norm: matrix ord must be 'euclidean', 'fro', 1 or inf, got {ord!r}")


def _matrix_axes(axis: Any, ndim: int) -> tuple[int, int]:
    """The (row, column) axes of a matrix norm, in the order the caller gave them."""
    first, second = (a % ndim for a in axis)
    return first, second


def _vector_norm(t: Tensor, ord: float | str, axes: tuple[int, ...], keepdims: bool) -> Tensor:
    if ord in ("euclidean", "fro", 2):
        return sqrt(sum(square(t), axes, keepdims))
    if ord == 1:
        return sum(abs(t), axes, keepdims)
    if ord == math.inf:
        return max(abs(t), axes, keepdims)
    if ord == -math.inf:
        return min(abs(t), axes, keepdims)
    if isinstance(ord, int | float) and ord > 0:
        return pow(sum(pow(abs(t), float(ord)), axes, keepdims), 1.0 / ord)
    raise InvalidArgumentError(f"norm: vector ord must be 'euclidean', 'fro', a number > 0, inf or -inf, got {ord!r}")


def _squeeze_axes(t: Tensor, axes: tuple[int, ...], keepdims: bool) -> Tensor:
    if keepdims:
        return t
    return reshape(t, tuple(d for i, d in enumerate(t.shape) if i not in axes))


def dropout(x: Any, rate: float, noise_shape: Any = None, seed: int | None = None) -> Tensor:
    """Zero each element with probability ``rate`` and scale the rest by 1 / (1 - rate), as TensorFlow.js.

    ``noise_shape`` (broadcastable to x's shape) shares one keep/drop draw
    along its size-1 axes. ``rate`` 0 returns ``x`` unchanged.
    """
    t = as_tensor(x)
    check_float("dropout", t)
    if isinstance(rate, bool) or not isinstance(rate, int | float):
        raise DTypeError(f"dropout: rate must be a number in [0, 1), got {rate!r} ({type(rate).__name__})")
    if not 0.0 <= rate < 1.0:
        raise InvalidArgumentError(f"dropout: rate must be in [0, 1), got {rate!r}")
    if rate == 0.0:
        return t
    shape = t.shape if noise_shape is None else normalize_shape("dropout", noise_shape)
    keep = random_uniform(shape, dtype=t.dtype, seed=seed) >= rate
    return where(keep, div(t, 1.0 - rate), 0.0)
