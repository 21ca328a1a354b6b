"""Composite ops: written entirely with other ops, no kernel of their own."""

from __future__ import annotations

from typing import Any

from tensorplug._errors import TensorplugError
from tensorplug._tensor import Tensor
from tensorplug.ops._binary import add, div, mul, pow, sub
from tensorplug.ops._convert import as_tensor

__all__ = ["moving_average"]


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
    update = mul(sub(x, v), sub(1.0, decay))
    if zero_debias:
        if step is None:
            raise TensorplugError("moving_average: zero_debias=True needs the step (counting from 1)")
        update = div(update, sub(1.0, pow(as_tensor(decay, v.dtype), as_tensor(step, v.dtype))))
    return add(v, update)
